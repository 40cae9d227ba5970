"""BanditConvexVectorEnv against Gymnasium's sync vector env of the same id, bit for bit.

Every id: reset with an int and with a list of seeds, steps through an autoreset, full
feedback (gradients); an infeasible row refused naming the row before any row steps;
projection mode; the metadata and spaces Gymnasium 1.x expects. Gymnasium has no
``check_env`` for vector envs, so its checks that apply are written out here
(observations in the space, fresh arrays, determinism under a seed).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode

import bco_gym  # noqa: F401  (registers the ids)
from bco_gym import InfeasibleActionError
from bco_gym.envs import ENV_IDS, BanditConvexVectorEnv

SIZES = {
    "BCO-Simplex-v0": {"n": 4},
    "BCO-Ball-v0": {"n": 3},
    "BCO-L1Ball-v0": {"n": 3},
    "BCO-Hypercube-v0": {"n": 3},
    "BCO-NuclearBall-v0": {"rows": 3, "cols": 2},
    "BCO-ShortestPath-v0": {"grid": 3},
    "BCO-Birkhoff-v0": {"n": 3},
    "BCO-Portfolio-v0": {"dataset": "djia"},
}
ROWS = 3
HORIZON = 4


def pair(env_id: str, **kwargs):
    """(vector env, sync vector env) of the same id and kwargs."""
    options = {**SIZES[env_id], "horizon": HORIZON, **kwargs}
    native = gym.make_vec(env_id, num_envs=ROWS, vectorization_mode="vector_entry_point", **options)
    sync = gym.make_vec(env_id, num_envs=ROWS, vectorization_mode="sync", **options)
    return native, sync


def feasible_actions(env: BanditConvexVectorEnv, rng: np.random.Generator) -> np.ndarray:
    return np.stack([env.set.sample(rng) for _ in range(env.num_envs)])


def assert_same(first, second):
    assert data_equivalence(first, second, exact=True), (first, second)
    for left, right in zip(first, second, strict=True):  # dtypes too, key by key
        if isinstance(left, dict):
            assert left.keys() == right.keys()
            for key in left:
                assert np.asarray(left[key]).dtype == np.asarray(right[key]).dtype, key


def test_every_id_has_a_vector_entry_point():
    assert set(SIZES) == set(ENV_IDS)
    for env_id in ENV_IDS:
        assert gym.spec(env_id).vector_entry_point is not None


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("seed", [7, [11, 3, 11]], ids=["int", "list"])
def test_matches_sync_vector_env_through_autoreset(env_id, seed):
    native, sync = pair(env_id)
    assert isinstance(native, BanditConvexVectorEnv)
    assert_same(native.reset(seed=seed), sync.reset(seed=seed))
    rng = np.random.default_rng(0)
    for _ in range(2 * HORIZON + 3):  # two episodes, two autoresets
        actions = feasible_actions(native, rng)
        assert_same(native.step(actions), sync.step(actions.copy()))
    assert_same(native.reset(), sync.reset())  # unseeded: each row's generator continues
    actions = feasible_actions(native, rng)
    assert_same(native.step(actions), sync.step(actions))


@pytest.mark.parametrize("env_id", ["BCO-Simplex-v0", "BCO-NuclearBall-v0", "BCO-Birkhoff-v0"])
def test_full_feedback_gradients_match(env_id):
    native, sync = pair(env_id, feedback="full")
    assert_same(native.reset(seed=1), sync.reset(seed=1))
    rng = np.random.default_rng(1)
    for _ in range(HORIZON):
        actions = feasible_actions(native, rng)
        result = native.step(actions)
        assert result[4]["gradient"].shape == (ROWS, *native.set.shape)
        assert_same(result, sync.step(actions))


def test_infeasible_row_is_refused_naming_the_row_before_any_row_steps():
    native, sync = pair("BCO-Ball-v0")
    native.reset(seed=0)
    sync.reset(seed=0)
    actions = np.zeros((ROWS, 3))
    actions[2] = [2.0, 0.0, 0.0]
    with pytest.raises(InfeasibleActionError) as single:
        sync.step(actions)
    with pytest.raises(InfeasibleActionError) as batched:
        native.step(actions)
    # the single env's message (one validation for both), with the row named
    assert str(batched.value) == str(single.value).replace("round 0:", "round 0, row 2:", 1)
    with pytest.raises(InfeasibleActionError, match=r"round 0, row 2: action not in L2Ball"):
        native.step(actions)
    assert native.round == 0  # nothing stepped: the env is usable
    actions[2] = [0.0, np.nan, 0.0]
    with pytest.raises(InfeasibleActionError, match="row 2"):
        native.step(actions)
    with pytest.raises(InfeasibleActionError, match="shape"):
        native.step(np.zeros((ROWS, 4)))
    native.step(np.zeros((ROWS, 3)))
    assert native.round == 1


def test_projection_mode_matches_sync():
    native, sync = pair("BCO-Simplex-v0", on_infeasible="project")
    assert_same(native.reset(seed=4), sync.reset(seed=4))
    actions = np.full((ROWS, 4), 0.25)
    actions[1] = [1.0, 1.0, 0.0, 0.0]
    result = native.step(actions)
    assert result[4]["projected"].tolist() == [False, True, False]
    assert_same(result, sync.step(actions))
    actions[0] = [np.inf, 0.0, 0.0, 0.0]
    with pytest.raises(InfeasibleActionError, match="round 1, row 0"):
        native.step(actions)


def test_gymnasium_vector_api():
    native, sync = pair("BCO-Simplex-v0")
    assert native.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert native.num_envs == ROWS
    assert native.single_action_space == sync.single_action_space
    assert native.action_space == sync.action_space
    assert native.single_observation_space == sync.single_observation_space
    assert native.observation_space == sync.observation_space
    single = gym.make("BCO-Simplex-v0", **SIZES["BCO-Simplex-v0"], horizon=HORIZON)
    problem, expected = native.problem, single.unwrapped.problem
    assert repr(problem.set) == repr(expected.set)
    assert (problem.horizon, problem.lipschitz, problem.bound, problem.feedback) == (
        expected.horizon,
        expected.lipschitz,
        expected.bound,
        expected.feedback,
    )
    observations, _ = native.reset(seed=0)
    assert observations in native.observation_space
    actions = native.action_space.sample()
    first = native.step(actions)
    second = native.step(actions)
    assert first[0] in native.observation_space and second[0] in native.observation_space
    assert not np.shares_memory(first[0], second[0])
    assert not np.shares_memory(first[4]["loss"], second[4]["loss"])
    again, _ = pair("BCO-Simplex-v0")
    again.reset(seed=0)
    assert_same(again.step(actions), first)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="num_envs=0"):
        gym.make_vec("BCO-Ball-v0", num_envs=0, vectorization_mode="vector_entry_point")
    native, _ = pair("BCO-Ball-v0")
    with pytest.raises(ValueError, match="list of 3 seeds"):
        native.reset(seed=[1, 2])
    with pytest.raises(gym.error.ResetNeeded):
        native.step(np.zeros((ROWS, 3)))
    with pytest.raises(ValueError, match="render_mode"):
        gym.make_vec(
            "BCO-Ball-v0",
            num_envs=2,
            vectorization_mode="vector_entry_point",
            n=2,
            render_mode="rgb_array",
        )


def test_docstring_example_runs():
    import doctest

    import bco_gym.envs.vector

    result = doctest.testmod(bco_gym.envs.vector, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted >= 3
