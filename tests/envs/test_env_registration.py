"""The registered ids: Gymnasium's checker, vector envs, fresh-interpreter import, bad kwargs."""

from __future__ import annotations

import pickle
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import bco_gym
from bco_gym import ENV_IDS, BanditConvexEnv

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


def test_every_id_is_registered_without_a_time_limit():
    assert set(SMALL) == set(ENV_IDS) and len(ENV_IDS) == 8
    for env_id in ENV_IDS:
        spec = gym.spec(env_id)
        assert spec.max_episode_steps is None
        assert spec.entry_point.startswith("bco_gym.envs.registration:")


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gymnasium_env_checker_passes_without_warnings(env_id):
    env = gym.make(env_id, horizon=20, **SMALL[env_id])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    assert isinstance(env.unwrapped, BanditConvexEnv)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_short_episode_of_samples_runs_and_reports(env_id):
    env = gym.make(env_id, horizon=6, feedback="full", **SMALL[env_id])
    env.reset(seed=0)
    problem = env.unwrapped.problem
    for t in range(6):
        action = env.action_space.sample()
        assert problem.set.contains(action)
        observation, reward, terminated, truncated, info = env.step(action)
        assert observation[0] == np.float32((t + 1) / 6)
        assert reward == -info["loss"] and abs(info["loss"]) <= problem.bound * (1 + 1e-9)
        assert info["gradient"].shape == problem.set.shape
        assert np.linalg.norm(info["gradient"]) <= problem.lipschitz * (1 + 1e-9)
        assert (terminated, truncated) == (False, t == 5)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_action_space_is_the_set_and_survives_pickling(env_id):
    env = gym.make(env_id, horizon=5, **SMALL[env_id]).unwrapped
    space, convex_set = env.action_space, env.set
    rng = np.random.default_rng(0)
    inside = [space.sample() for _ in range(20)]
    pushed = [x + 1e-3 * rng.standard_normal(x.shape) for x in inside]
    vertices = [convex_set.lmo(rng.standard_normal(convex_set.shape)) for _ in range(20)]
    outside = [convex_set.center + 1.5 * (v - convex_set.center) for v in vertices]
    assert all(convex_set.contains(x) and x in space for x in inside)
    for x in [*pushed, *outside]:
        assert space.contains(x) == convex_set.contains(x, atol=env.atol)
    assert not any(space.contains(x) for x in outside)
    clone = pickle.loads(pickle.dumps(space))
    assert clone == space and clone == gym.make(env_id, horizon=5, **SMALL[env_id]).action_space
    assert [clone.contains(x) for x in pushed] == [space.contains(x) for x in pushed]


def test_defaults():
    expected = {
        "BCO-Simplex-v0": ((10,), 10_000, "linear"),
        "BCO-Ball-v0": ((10,), 10_000, "linear"),
        "BCO-L1Ball-v0": ((10,), 10_000, "linear"),
        "BCO-Hypercube-v0": ((10,), 10_000, "linear"),
        "BCO-NuclearBall-v0": ((10, 10), 2_000, "completion"),
        "BCO-Birkhoff-v0": ((5, 5), 2_000, "assignment"),
    }
    for env_id, (shape, horizon, loss) in expected.items():
        env = gym.make(env_id).unwrapped
        assert (env.set.shape, env.horizon, env.losses.name) == (shape, horizon, loss)
        assert env.problem.feedback == "bandit" and env.on_infeasible == "raise"
    path = gym.make("BCO-ShortestPath-v0").unwrapped
    assert path.horizon == 2_000 and path.losses.name == "edge-costs"
    assert path.set.shape == (2 * 5 * 4,)  # 5 x 5 grid: 4 right and 4 down edges per row/column


@pytest.mark.parametrize(
    ("env_id", "kwargs", "message"),
    [
        ("BCO-Simplex-v0", {"horizon": 0}, "horizon=0 is not allowed; expected an integer >= 1"),
        ("BCO-Ball-v0", {"horizon": -5}, "horizon=-5"),
        ("BCO-Simplex-v0", {"loss": "nope"}, r"unknown loss family 'nope'; allowed: linear, "),
        ("BCO-Ball-v0", {"loss_kwargs": {"speed": 1}}, r"unknown parameter\(s\) speed; allowed: "),
        (
            "BCO-Simplex-v0",
            {"feedback": "semi"},
            "feedback='semi' is not allowed; allowed: 'bandit', 'full'",
        ),
        ("BCO-Ball-v0", {"on_infeasible": "clip"}, "on_infeasible='clip' is not allowed"),
        (
            "BCO-Simplex-v0",
            {"n": 1},
            "BCO-Simplex-v0: n=1 is not allowed; expected an integer >= 2",
        ),
        ("BCO-Ball-v0", {"n": 2.5}, "BCO-Ball-v0: n=2.5 is not allowed"),
        ("BCO-NuclearBall-v0", {"rows": 0}, "rows=0 is not allowed; expected an integer >= 1"),
        ("BCO-ShortestPath-v0", {"grid": 1}, "grid=1 is not allowed; expected an integer >= 2"),
        ("BCO-Birkhoff-v0", {"n": True}, "n=True is not allowed"),
        ("BCO-Simplex-v0", {"n": 10, "render_mode": "human"}, "allowed: None, 'rgb_array'"),
        ("BCO-Simplex-v0", {"dim": 5}, r"unknown keyword\(s\) 'dim'; accepted: n, horizon, loss"),
    ],
)
def test_invalid_make_kwargs_raise_value_errors(env_id, kwargs, message):
    with pytest.raises(ValueError, match=message):
        gym.make(env_id, **kwargs)


def test_a_family_not_available_for_the_set_is_refused():
    families = bco_gym.losses.families_for(bco_gym.sets.L2Ball(3))
    others = sorted(set(bco_gym.losses.FAMILIES) - set(families))
    assert others, "every family is valid on the ball; pick another set for this test"
    pattern = rf"'{others[0]}' is not defined on L2Ball.*; families for this set: {families[0]}"
    with pytest.raises(ValueError, match=pattern):
        gym.make("BCO-Ball-v0", n=3, loss=others[0])


def test_loss_kwargs_reach_the_family():
    env = gym.make("BCO-Ball-v0", n=3, loss_kwargs={"mean_norm": 0.2, "noise": 0.1})
    assert env.unwrapped.problem.lipschitz == pytest.approx(0.3)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("env_id", ["BCO-Simplex-v0", "BCO-NuclearBall-v0"])
def test_vector_envs_run_through_an_autoreset(env_id, mode):
    envs = gym.make_vec(env_id, num_envs=3, vectorization_mode=mode, horizon=3, **SMALL[env_id])
    try:
        single = envs.single_action_space
        observations, _ = envs.reset(seed=7)
        assert observations.shape == (3, 1) and observations.dtype == np.float32
        envs.action_space.seed(0)
        for t in range(5):
            actions = envs.action_space.sample()
            assert actions.shape == (3, *single.shape) and envs.action_space.contains(actions)
            observations, rewards, terminated, truncated, _ = envs.step(actions)
            assert rewards.shape == (3,) and not terminated.any()
            assert truncated.all() == (t == 2)
    finally:
        envs.close()


def test_same_seed_gives_the_same_vector_rollout():
    def rollout() -> np.ndarray:
        envs = gym.make_vec("BCO-Ball-v0", num_envs=2, vectorization_mode="sync", n=3, horizon=4)
        envs.reset(seed=3)
        envs.action_space.seed(1)
        rewards = np.stack([envs.step(envs.action_space.sample())[1] for _ in range(4)])
        envs.close()
        return rewards

    first = rollout()
    np.testing.assert_array_equal(first, rollout())
    assert first[:, 0].tolist() != first[:, 1].tolist()  # sub-envs draw different sequences


def test_make_with_module_prefix_in_a_fresh_interpreter():
    script = (
        "import sys, gymnasium as gym\n"
        "assert 'bco_gym' not in sys.modules\n"
        "env = gym.make('bco_gym:BCO-Simplex-v0', n=3, horizon=2)\n"
        "env.reset(seed=0)\n"
        "print(type(env.unwrapped).__name__, env.step(env.action_space.sample())[4]['t'])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["BanditConvexEnv", "1"]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_id_refuses_unknown_keywords_listing_the_accepted_ones(env_id):
    with pytest.raises(
        ValueError, match=rf"{env_id}: unknown keyword\(s\) 'dim'; accepted: .*atol"
    ):
        gym.make(env_id, dim=5)
