"""run(): the Gymnasium loop's semantics, seeding, checkpoints, metadata, errors."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from experiment_helpers import ENV_ID, ENV_KWARGS, HORIZON, tiny_run

import bco_gym
from bco_gym.agents import make_agent
from bco_gym.engine import tally as tally_module
from bco_gym.engine.preparation import agent_seed_for
from bco_gym.engine.runner import run
from bco_gym.engine.tally import DEFAULT_CHECKPOINT_COUNT, default_checkpoints, resolve_checkpoints
from bco_gym.wrappers import RegretRecorder


def test_same_seed_same_outcome_and_different_seed_differs():
    first, again, other = tiny_run(seed=3), tiny_run(seed=3), tiny_run(seed=4)
    assert first.same_outcome(again)
    assert not np.array_equal(first.round_losses, other.round_losses)
    assert first.agent_seed == agent_seed_for(3) != other.agent_seed


def test_agent_seed_is_a_stream_independent_of_the_env_seed():
    seeds = [agent_seed_for(s) for s in range(50)]
    assert len(set(seeds)) == 50
    assert all(a != s for s, a in enumerate(seeds))
    # The agent's generator is not the env's (which is SeedSequence(seed) itself).
    env_stream = np.random.default_rng(7).random(8)
    agent_stream = np.random.default_rng(agent_seed_for(7)).random(8)
    assert not np.array_equal(env_stream, agent_stream)


@pytest.mark.parametrize("agent_name", ["bbcg", "fkm", "bfw"])
def test_matches_the_loop_written_by_hand(agent_name):
    """The DESIGN.md loop through RegretRecorder gives the same losses and regret."""
    seed = 5
    result = tiny_run(agent_name, seed=seed)
    env = RegretRecorder(gym.make(ENV_ID, horizon=HORIZON, **ENV_KWARGS))
    agent = make_agent(agent_name, env)
    observation, info = env.reset(seed=seed)
    agent.reset(seed=agent_seed_for(seed))
    done = False
    while not done:
        action = agent.act(observation)
        observation, _, terminated, truncated, info = env.step(action)
        agent.update(info["loss"], info)
        done = terminated or truncated
    assert np.array_equal(result.round_losses, env.round_losses)
    assert result.cumulative_loss[-1] == info["cumulative_loss"]
    # the comparator sums its vectors per checkpoint segment: equal up to rounding
    assert result.final_regret == pytest.approx(info["regret"], rel=1e-12, abs=1e-12)
    assert result.final_gap == info["comparator_gap"]
    regret, gap = env.regret_curve(result.checkpoints.tolist())
    np.testing.assert_allclose(result.regret, regret, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(result.comparator_gap, gap)
    assert result.lmo_calls == agent.stats["lmo_calls"]
    assert result.projections == agent.stats["projections"]


def test_curves_at_checkpoints_are_consistent(tiny_results):
    for result in tiny_results:
        prefix = np.cumsum(result.round_losses)[result.checkpoints - 1]
        np.testing.assert_allclose(result.cumulative_loss, prefix, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(
            result.regret, result.cumulative_loss - result.comparator_loss
        )
        assert result.cumulative_loss[-1] == math.fsum(result.round_losses.tolist())
        assert result.checkpoints[-1] == result.horizon
        assert result.final_regret == result.regret[-1]


def test_one_comparator_call_serves_every_checkpoint(monkeypatch):
    calls = []
    original = bco_gym.losses.LinearLoss.comparator

    def spy(self, checkpoints):
        calls.append(list(checkpoints))
        return original(self, checkpoints)

    monkeypatch.setattr(bco_gym.losses.LinearLoss, "comparator", spy)
    result = tiny_run(checkpoints=[10, 50])
    assert result.checkpoints.tolist() == [10, 50, HORIZON]
    # no call per checkpoint: the play sums all checkpoints' comparators in its one pass
    # (tests/engine/test_changing_metrics.py), else one call by the runner for all of them
    # (the recorder adds its own for T only)
    assert calls.count([10, 50, HORIZON]) <= 1
    env = gym.make(ENV_ID, horizon=HORIZON, **ENV_KWARGS)
    env.reset(seed=0)
    expected = [c.value for c in original(env.unwrapped.losses, [10, 50, HORIZON])]
    assert result.comparator_loss.tolist() == expected
    assert all(call in ([10, 50, HORIZON], [HORIZON]) for call in calls)


def test_per_round_losses_are_dropped_above_the_limit(monkeypatch):
    full = tiny_run(seed=2)
    monkeypatch.setattr(tally_module, "ROUND_LOSSES_LIMIT", HORIZON - 1)
    trimmed = tiny_run(seed=2)
    assert full.round_losses is not None and trimmed.round_losses is None
    np.testing.assert_array_equal(full.regret, trimmed.regret)
    assert full.final_regret == trimmed.final_regret


def test_default_checkpoints_are_log_spaced_and_end_at_the_horizon():
    for horizon in (1, 7, 1000, 10**6):
        points = default_checkpoints(horizon)
        assert points == sorted(set(points))
        assert points[0] == 1 and points[-1] == horizon
        assert len(points) <= DEFAULT_CHECKPOINT_COUNT + 1
    big = np.array(default_checkpoints(10**6), dtype=float)
    ratios = big[10:] / big[9:-1]  # past the small values where rounding dominates
    np.testing.assert_allclose(ratios, 10 ** (6 / (DEFAULT_CHECKPOINT_COUNT - 1)), rtol=0.03)
    assert resolve_checkpoints([3, 3, 1], 10) == [1, 3, 10]


def test_metadata_and_labels():
    theory = tiny_run("bbcg")
    assert theory.constants == "theory" and theory.scale_param == "c"
    assert theory.params["c"] == pytest.approx(theory.scale_value)
    assert theory.lmo_calls > 0 and theory.projections == 0
    assert theory.regret_bound is not None and theory.regret_bound > 0
    assert set(theory.versions) == {"bco_gym", "numpy", "scipy", "gymnasium", "python"}
    assert theory.problem["aff_dim"] == 3 and theory.loss["name"] == "linear"
    assert theory.loop == "block"  # the fast path, picked by default for bbcg
    assert 0 <= theory.agent_seconds + theory.env_seconds <= theory.wall_seconds
    custom = tiny_run("bbcg", agent_kwargs={"c": 0.5})
    assert custom.constants == "custom" and custom.params["c"] == 0.5
    assert tiny_run("bbcg", agent_kwargs={"c": 0.5}, constants="tuned").constants == "tuned"
    fkm = tiny_run("fkm")
    assert fkm.projections == HORIZON  # one projection per round


def test_accepts_a_made_env_and_a_built_agent():
    env = gym.make(ENV_ID, horizon=HORIZON, **ENV_KWARGS)
    result = run(env, make_agent("bbcg", env), seed=1)
    by_name = tiny_run("bbcg", seed=1)
    assert result.env_id == ENV_ID and result.agent == "bbcg"
    assert result.constants == "custom"  # a built agent's constants are not known to be theory
    np.testing.assert_array_equal(result.round_losses, by_name.round_losses)
    np.testing.assert_array_equal(result.regret, by_name.regret)
    assert result.params == by_name.params and result.lmo_calls == by_name.lmo_calls


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"horizon": 0}, "horizon=0 must be a positive integer"),
        ({"seed": -1}, "seed=-1 must be a non-negative integer"),
        ({"checkpoints": [0]}, r"checkpoint 0 must be an integer in \[1, T=200\]"),
        ({"checkpoints": [201]}, "checkpoint 201"),
        ({"constants": "lucky"}, "constants='lucky'; allowed: theory, default, tuned, custom"),
        ({"agent_kwargs": {"nope": 1}}, "unknown keyword"),
    ],
)
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tiny_run(**kwargs)


def test_unknown_ids_and_names_list_the_valid_ones():
    with pytest.raises(ValueError, match="unknown env id 'BCO-Nope-v0'; valid ids: BCO-Simplex"):
        run("BCO-Nope-v0", "bbcg", horizon=10)
    with pytest.raises(ValueError, match="valid names: bbcg"):
        run(ENV_ID, "nope", horizon=10)
    wrapped = gym.wrappers.RecordEpisodeStatistics(gym.make(ENV_ID, horizon=HORIZON, **ENV_KWARGS))
    with pytest.raises(ValueError, match="fast=True needs the runner's own loop"):
        run(wrapped, "bbcg", fast=True)
    env = gym.make(ENV_ID, horizon=HORIZON, **ENV_KWARGS)
    with pytest.raises(ValueError, match="differs from the given env's horizon 200"):
        run(env, "bbcg", horizon=100)
    with pytest.raises(ValueError, match="agent_kwargs apply only"):
        run(env, make_agent("bbcg", env), agent_kwargs={"c": 1.0})


def test_warnings_are_recorded_once_and_shown_to_the_caller():
    """Theory's smoothing radius capped at r on the simplex at tiny T: kept in the result."""
    with pytest.warns(UserWarning, match="inner radius"):
        result = run("BCO-Simplex-v0", "bfw", horizon=50, seed=0)
    capped = [w for w in result.warnings if "inner radius" in w]
    assert len(capped) == 1 and capped[0].startswith("UserWarning: BanditFrankWolfe")
    assert run("BCO-Simplex-v0", "bfw", horizon=50, seed=0).warnings == result.warnings
