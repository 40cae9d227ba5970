"""Adaptive and dynamic regret in every path: Gymnasium, block, lean and batched runs agree."""

from __future__ import annotations

import itertools

import gymnasium as gym
import numpy as np
import pytest

import bco_gym  # noqa: F401  (registers the ids)
from bco_gym.engine.many import run_many
from bco_gym.engine.runner import run
from bco_gym.losses.intervals import IntervalRegret
from bco_gym.wrappers import RegretRecorder

SWITCHING = {"n": 4, "loss": "linear-switching", "loss_kwargs": {"segments": 5}}
FIELDS = ("adaptive_regret", "dynamic_regret", "interval_regret")


@pytest.mark.parametrize("agent", ["random", "fkm", "bbcg"])
def test_every_loop_gives_the_same_interval_regrets(agent):
    results = [
        run("BCO-Simplex-v0", agent, horizon=300, seed=4, env_kwargs=SWITCHING, fast=fast)
        for fast in (False, True)
    ]
    results += run_many("BCO-Simplex-v0", agent, [3, 4], horizon=300, env_kwargs=SWITCHING)[1:]
    gym_run = results[0]
    assert gym_run.loop == "gym" and results[1].loop != "gym"
    for other in results[1:]:
        for name in FIELDS:
            assert getattr(other, name) == getattr(gym_run, name), (other.loop, name)


def test_the_result_matches_a_recomputation_from_the_sequence():
    result = run("BCO-Simplex-v0", "fkm", horizon=257, seed=1, env_kwargs=SWITCHING)
    env = gym.make("BCO-Simplex-v0", horizon=257, **SWITCHING)
    env.reset(seed=1)
    losses = env.unwrapped.losses
    starts = losses.segment_starts(257)
    assert starts == [0, 51, 102, 154, 205]  # floor(p T / S), recorded with the loss
    assert result.loss["segment_starts"] == starts == result.interval_regret["segments"]
    tracker = IntervalRegret(losses.set, 257, starts)
    for t in range(257):  # one round at a time
        theta, constant = losses.linear_terms(*_round_params(losses, t))
        tracker.update(theta, constant, result.round_losses[t : t + 1])
    metrics = tracker.result()
    assert result.adaptive_regret == metrics.adaptive_regret
    assert result.dynamic_regret == metrics.dynamic_regret
    assert result.interval_regret["switching_regret"] == metrics.switching_regret
    # dynamic >= switching >= static; the adaptive regret: the dyadic intervals and the whole run
    assert result.dynamic_regret >= metrics.switching_regret >= result.final_regret - 1e-9
    assert result.adaptive_regret == max(*metrics.max_interval_regret, metrics.whole_run_regret)
    assert metrics.whole_run_regret == pytest.approx(result.final_regret, rel=1e-12)


def _round_params(losses, t):
    index, offset = divmod(t, losses.chunk_size)
    return losses.chunk(index), slice(offset, offset + 1)


def test_recorder_reports_them_at_the_end_only():
    env = RegretRecorder(gym.make("BCO-Simplex-v0", horizon=20, n=3, loss="linear"))
    env.reset(seed=0)
    infos = [env.step(env.unwrapped.set.center)[4] for _ in range(20)]
    assert all("adaptive_regret" not in info for info in infos[:-1])
    final = infos[-1]
    assert final["dynamic_regret"] >= final["adaptive_regret"] >= 0.0
    assert final["interval_regret"]["lengths"] == [1, 2, 4, 8, 16]


def test_non_linear_families_report_none_with_the_reason():
    result = run("BCO-Simplex-v0", "random", horizon=50, env_kwargs={"loss": "quadratic"})
    assert result.adaptive_regret is None and result.dynamic_regret is None
    assert "not linear" in result.interval_regret["reason"]
    env = RegretRecorder(gym.make("BCO-Simplex-v0", horizon=5, loss="quadratic"))
    env.reset(seed=0)
    final = [env.step(env.unwrapped.set.center)[4] for _ in range(5)][-1]
    assert final["adaptive_regret"] is None and "not linear" in final["interval_regret"]["reason"]


def test_segments_option_and_its_errors():
    env = gym.make("BCO-Ball-v0", horizon=10, loss="linear-switching", loss_kwargs={"segments": 3})
    assert env.unwrapped.losses.segment_starts(10) == [0, 3, 6]
    with pytest.raises(ValueError, match="not both"):
        gym.make(
            "BCO-Ball-v0",
            horizon=10,
            loss="linear-switching",
            loss_kwargs={"segments": 3, "period": 4},
        )
    with pytest.raises(ValueError, match="more than the horizon"):
        gym.make("BCO-Ball-v0", horizon=2, loss="linear-switching", loss_kwargs={"segments": 3})
    with pytest.raises(ValueError, match="segments=0"):
        gym.make("BCO-Ball-v0", horizon=9, loss="linear-switching", loss_kwargs={"segments": 0})
    # the mean changes exactly at the segment starts
    env.reset(seed=2)
    losses = env.unwrapped.losses
    means = [tuple(losses._means(t, 1)[0]) for t in range(10)]
    changes = [t for t, (a, b) in enumerate(itertools.pairwise(means), start=1) if a != b]
    assert changes == [3, 6]
    assert np.allclose(np.linalg.norm(losses._means(0, 10), axis=1), losses.mean_norm)


@pytest.mark.parametrize("loss", ["linear", "linear-switching", "linear-drift", "from_array"])
@pytest.mark.parametrize("agent, loop", [("fkm", "lean"), ("bbcg", "block"), ("fkm", "gym")])
def test_one_pass_comparators_equal_the_second_pass(monkeypatch, agent, loop, loss):
    """The NumPy loops' comparators, summed while the tallies read the chunks, are
    ``comparator(checkpoints)``'s bit for bit, across chunk boundaries (4096 rounds)."""
    from bco_gym.agents import make_agent
    from bco_gym.engine.loops import play_block, play_gym, play_lean
    from bco_gym.engine.rows import RowAgents
    from bco_gym.engine.runner import single_stage

    monkeypatch.setenv("BCO_GYM_KERNELS", "off")
    horizon, checkpoints = 9000, [1, 100, 4095, 4096, 4097, 8192, 8193, 9000]
    if loss == "from_array":  # no one pass: its comparator is not LinearLoss's
        from bco_gym.envs import BanditConvexEnv
        from bco_gym.losses import from_array
        from bco_gym.sets import L2Ball

        rng = np.random.default_rng(3)
        base = BanditConvexEnv(L2Ball(4), from_array(L2Ball(4), rng.normal(size=(horizon, 4))))
        env = RegretRecorder(base) if loop == "gym" else base
    else:
        env = gym.make("BCO-Ball-v0", n=4, horizon=horizon, loss=loss)
        base = env.unwrapped
        env = RegretRecorder(env) if loop == "gym" else env
    observation, _ = env.reset(seed=2)
    agent = make_agent(agent, base.problem)
    agent.reset(seed=9)
    if loop == "gym":
        played = play_gym(env, agent, observation, checkpoints=checkpoints)
    else:
        play = play_block if loop == "block" else play_lean
        played = play(single_stage(base), RowAgents([agent]), checkpoints=checkpoints)
    if loss == "from_array":
        assert played.comparators is None
        return
    assert played.comparators is not None
    expected = base.losses.comparator(checkpoints)
    for found, wanted in zip(played.comparators[0], expected, strict=True):
        assert found.horizon == wanted.horizon and found.value == wanted.value
        assert np.array_equal(found.point, wanted.point) and found.gap == wanted.gap == 0.0


def test_the_audit_case_adaptive_regret_is_not_below_the_static_regret():
    """bbcg on the simplex, linear-switching, T = 1,500, seed 0 reported an adaptive regret
    of 89.2 beside a static regret of 199.1: [0, 1500) is not in the dyadic cover."""
    switching = {"loss": "linear-switching"}
    result = run("BCO-Simplex-v0", "bbcg", horizon=1500, seed=0, env_kwargs=switching)
    assert result.adaptive_regret >= result.final_regret * (1 - 1e-12)
    assert max(result.interval_regret["max_interval_regret"]) < result.final_regret
    assert result.interval_regret["worst_interval"] == [0, 1500]
    assert result.adaptive_regret == result.interval_regret["whole_run_regret"]


@pytest.mark.parametrize("agent, loop", [("fkm", "lean"), ("bbcg", "block"), ("fkm", "gym")])
def test_one_pass_comparators_without_interval_metrics(monkeypatch, agent, loop):
    """``linear-low-rank`` computes no interval metrics (their cost), yet its comparators
    are still summed in the pass, ``comparator(checkpoints)``'s bit for bit."""
    from bco_gym.agents import make_agent
    from bco_gym.engine.loops import play_block, play_gym, play_lean
    from bco_gym.engine.rows import RowAgents
    from bco_gym.engine.runner import single_stage

    monkeypatch.setenv("BCO_GYM_KERNELS", "off")
    horizon, checkpoints = 9000, [1, 100, 4095, 4096, 4097, 8192, 8193, 9000]
    env = gym.make("BCO-NuclearBall-v0", rows=4, cols=3, horizon=horizon, loss="linear-low-rank")
    base = env.unwrapped
    env = RegretRecorder(env) if loop == "gym" else env
    observation, _ = env.reset(seed=2)
    agent = make_agent(agent, base.problem)
    agent.reset(seed=9)
    if loop == "gym":
        played = play_gym(env, agent, observation, checkpoints=checkpoints)
    else:
        play = play_block if loop == "block" else play_lean
        played = play(single_stage(base), RowAgents([agent]), checkpoints=checkpoints)
    assert played.comparators is not None
    expected = base.losses.comparator(checkpoints)
    for found, wanted in zip(played.comparators[0], expected, strict=True):
        assert found.horizon == wanted.horizon and found.value == wanted.value
        assert np.array_equal(found.point, wanted.point) and found.gap == wanted.gap == 0.0
    result = run("BCO-NuclearBall-v0", "bbcg", horizon=300,
                 env_kwargs={"rows": 4, "cols": 3, "loss": "linear-low-rank"})  # fmt: skip
    assert result.adaptive_regret is None and "2T SVDs" in result.interval_regret["reason"]
