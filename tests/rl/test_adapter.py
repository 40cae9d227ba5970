"""BoxActionAdapter: every registered env, adapted, passes SB3's env checker cleanly."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3.common.env_checker import check_env

import bco_gym  # noqa: F401  (registers the env ids)
from bco_gym.envs import ENV_IDS
from bco_gym.sets.box_maps import box_map
from bco_gym.wrappers import BoxActionAdapter

SMALL = {
    "BCO-Simplex-v0": {"n": 3},
    "BCO-Ball-v0": {"n": 3},
    "BCO-L1Ball-v0": {"n": 3},
    "BCO-Hypercube-v0": {"n": 3},
    "BCO-NuclearBall-v0": {"rows": 3, "cols": 2},
    "BCO-ShortestPath-v0": {"grid": 3},
    "BCO-Birkhoff-v0": {"n": 3},
    "BCO-Portfolio-v0": {"dataset": "djia"},
}


def test_every_registered_id_has_small_sizes_here():
    assert set(SMALL) == set(ENV_IDS)


@pytest.mark.parametrize("env_id", sorted(SMALL))
def test_sb3_check_env_passes_without_warnings(env_id):
    env = BoxActionAdapter(gym.make(env_id, horizon=6, **SMALL[env_id]))
    shape = env.unwrapped.problem.set.shape
    assert env.action_space == gym.spaces.Box(-1.0, 1.0, shape, np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, warn=True)
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("env_id", sorted(SMALL))
def test_adapted_steps_play_the_mapped_point(env_id):
    """Python float rewards and bool flags; the loss is the loss of box_map(action)."""
    env = BoxActionAdapter(gym.make(env_id, horizon=4, **SMALL[env_id]))
    mapping = box_map(env.unwrapped.problem.set)
    env.reset(seed=3)
    env.action_space.seed(3)
    for t in range(4):
        action = env.action_space.sample()
        _, reward, terminated, truncated, info = env.step(action)
        assert type(reward) is float and type(terminated) is bool and type(truncated) is bool
        expected = env.unwrapped.losses.loss(t, mapping(action))
        assert reward == -info["loss"] and info["loss"] == pytest.approx(expected, abs=1e-9)
    assert truncated and not terminated


def test_adapter_needs_a_bco_env():
    with pytest.raises(TypeError, match="BoxActionAdapter needs a bco_gym env"):
        BoxActionAdapter(gym.make("CartPole-v1"))


def test_vertex_tolerance_reaches_the_simplex_vertex():
    env = BoxActionAdapter(gym.make("BCO-Simplex-v0", n=4, horizon=2), vertex_tolerance=1e-6)
    point = env.action(np.array([-1.0, -1.0, 1.0, -1.0], dtype=np.float32))
    assert np.abs(point - np.eye(4)[2]).sum() <= 1e-6


def test_rl_baselines_example_runs_at_a_tiny_horizon(tmp_path, capsys):
    path = Path(__file__).parents[2] / "examples" / "rl_baselines.py"
    spec = importlib.util.spec_from_file_location("rl_baselines", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    figure = tmp_path / "rl.png"
    results = module.main(
        ["--horizon", "120", "--seeds", "0", "1", "--n", "4", "--figure", str(figure)]
    )
    assert figure.stat().st_size > 0
    assert set(results) == {"sb3-ppo", "sb3-a2c", "sb3-td3", "bbcg", "fkm", "random"}
    for runs in results.values():
        assert len(runs) == 2 and all(np.isfinite(r.regret[-1]) for r in runs)
    # same env seed, same loss sequence: every agent faced identical comparators
    comparators = {r.comparator_loss[-1] for runs in results.values() for r in runs if r.seed == 0}
    assert len(comparators) == 1
    output = capsys.readouterr().out
    assert "sb3-td3" in output and "rounds/s" in output
