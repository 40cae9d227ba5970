"""Two-point feedback: the pair action space, the env's step, RegretRecorder, the vector env.

Every id with ``feedback="two-point"``: Gymnasium's checker, a short episode whose
regret counts the mean of the two losses; refusals naming the point (0 or 1) and the
row; the vector env against Gymnasium's sync vector env bit for bit.
"""

from __future__ import annotations

import math
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env, data_equivalence
from gymnasium.vector.utils import batch_space

import bco_gym
from bco_gym import ENV_IDS, InfeasibleActionError
from bco_gym.envs import BanditConvexVectorEnv
from bco_gym.envs.pairs import PairSpace
from bco_gym.sets import L2Ball, Simplex
from bco_gym.wrappers import RegretRecorder

SMALL = {
    "BCO-Simplex-v0": {"n": 3},
    "BCO-Ball-v0": {"n": 2},
    "BCO-L1Ball-v0": {"n": 3},
    "BCO-Hypercube-v0": {"n": 3},
    "BCO-NuclearBall-v0": {"rows": 3, "cols": 2},
    "BCO-ShortestPath-v0": {"grid": 3},
    "BCO-Birkhoff-v0": {"n": 3},
    "BCO-Portfolio-v0": {"dataset": "djia"},
}


def _pairs(convex_set, rng, rows=None):
    count = 2 if rows is None else 2 * rows
    points = np.stack([convex_set.sample(rng) for _ in range(count)])
    return points.reshape(((2,) if rows is None else (rows, 2)) + convex_set.shape)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gymnasium_env_checker_passes_with_two_point_feedback(env_id):
    env = gym.make(env_id, horizon=20, feedback="two-point", **SMALL[env_id])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    space = env.action_space
    assert isinstance(space, PairSpace) and space.shape == (2, *env.unwrapped.set.shape)
    assert env.unwrapped.problem.feedback == "two-point"


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_regret_counts_the_mean_of_the_two_losses(env_id):
    horizon = 12
    env = RegretRecorder(gym.make(env_id, horizon=horizon, feedback="two-point", **SMALL[env_id]))
    env.reset(seed=3)
    convex_set, losses = env.unwrapped.set, env.unwrapped.losses
    rng = np.random.default_rng(0)
    means = []
    for t in range(horizon):
        action = _pairs(convex_set, rng)
        _, reward, _, _, info = env.step(action)
        expected = np.array([losses.loss(t, action[0]), losses.loss(t, action[1])])
        np.testing.assert_array_equal(info["losses"], expected)
        assert info["loss"] == (expected[0] + expected[1]) / 2 and reward == -info["loss"]
        means.append(info["loss"])
    comparator = losses.comparator([horizon])[0].value
    assert info["regret"] == pytest.approx(math.fsum(means) - comparator, abs=1e-12)
    np.testing.assert_array_equal(env.round_losses, means)


def test_each_point_is_checked_and_named():
    env = gym.make("BCO-Simplex-v0", n=3, horizon=5, feedback="two-point")
    env.reset(seed=0)
    good = np.array([1.0, 0.0, 0.0])
    bad = np.array([0.7, 0.7, 0.0])
    with pytest.raises(InfeasibleActionError, match="point 1 of the two-point action: round 0"):
        env.step(np.stack([good, bad]))
    with pytest.raises(InfeasibleActionError, match="point 0 of the two-point action: round 0"):
        env.step(np.stack([bad, good]))
    with pytest.raises(InfeasibleActionError, match=r"shape \(3,\), expected \(2, 3\)"):
        env.step(good)
    assert env.unwrapped.round == 0  # nothing was counted
    assert not env.action_space.contains(np.stack([good, bad]))
    assert env.action_space.contains(np.stack([good, good]))


def test_projection_mode_projects_the_point_outside():
    env = gym.make("BCO-Ball-v0", n=2, horizon=5, feedback="two-point", on_infeasible="project")
    env.reset(seed=0)
    *_, info = env.step(np.array([[0.0, 0.5], [3.0, 0.0]]))
    np.testing.assert_array_equal(info["projected"], [False, True])
    np.testing.assert_allclose(
        info["losses"][1], env.unwrapped.losses.loss(0, np.array([1.0, 0.0])), rtol=1e-12
    )


def test_pair_space_samples_pairs_of_the_set_and_batches():
    space = PairSpace(Simplex(4), seed=2)
    for _ in range(5):
        sample = space.sample()
        assert sample.shape == (2, 4) and space.contains(sample)
    batched = batch_space(space, 3)
    assert batched.shape == (3, 2, 4) and batched.contains(batched.sample())
    assert not batched.contains(np.zeros((3, 2, 4)))
    with pytest.raises(ValueError, match="already a batch"):
        batch_space(batched, 2)
    assert PairSpace(L2Ball(2)) == PairSpace(L2Ball(2)) != PairSpace(L2Ball(3))
    with pytest.raises(ValueError, match="batch=0"):
        PairSpace(L2Ball(2), batch=0)


@pytest.mark.parametrize("env_id", ["BCO-Ball-v0", "BCO-Simplex-v0", "BCO-Birkhoff-v0"])
def test_vector_env_matches_sync_vector_env(env_id):
    options = {**SMALL[env_id], "horizon": 4, "feedback": "two-point"}
    native = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", **options)
    sync = gym.make_vec(env_id, num_envs=3, vectorization_mode="sync", **options)
    assert isinstance(native, BanditConvexVectorEnv)
    assert native.action_space.shape == (3, 2, *native.set.shape)
    assert data_equivalence(native.reset(seed=5), sync.reset(seed=5), exact=True)
    rng = np.random.default_rng(1)
    for _ in range(9):  # two autoresets
        actions = _pairs(native.set, rng, rows=3)
        result = native.step(actions)
        expected = sync.step(actions.copy())
        assert data_equivalence(result, expected, exact=True)
        if "losses" in result[4]:
            assert result[4]["losses"].shape == (3, 2)


def test_vector_env_names_the_row_and_the_point():
    envs = gym.make_vec(
        "BCO-Ball-v0", num_envs=3, vectorization_mode="vector_entry_point", n=2, horizon=4,
        feedback="two-point",
    )  # fmt: skip
    envs.reset(seed=0)
    actions = np.zeros((3, 2, 2))
    actions[2, 1] = [2.0, 0.0]
    with pytest.raises(
        InfeasibleActionError, match="point 1 of the two-point action: round 0, row 2"
    ):
        envs.step(actions)
    with pytest.raises(InfeasibleActionError, match=r"expected \(S, 2, 2\)"):
        envs.step(np.zeros((3, 2)))
    assert envs.round == 0


def test_two_point_is_listed_and_other_values_are_refused():
    assert "two-point" in bco_gym.problem.FEEDBACKS
    with pytest.raises(ValueError, match="feedback='two_point' is not allowed"):
        gym.make("BCO-Ball-v0", n=2, horizon=5, feedback="two_point")
