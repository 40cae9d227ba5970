"""RunResult.latency_us: the log-bucket histogram against exact quantiles, and every loop."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bco_gym.engine import latency as latency_module
from bco_gym.engine import loops
from bco_gym.engine.latency import BUCKETS, PER_OCTAVE, LatencyHistogram
from bco_gym.engine.many import run_many
from bco_gym.engine.runner import run

KEYS = ["max", "p50", "p90", "p99"]
RESOLUTION = 2.0 ** (1 / PER_OCTAVE)


def nearest_rank(values: np.ndarray, q: float) -> float:
    ordered = np.sort(values)
    return float(ordered[max(1, math.ceil(q * len(ordered))) - 1])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_quantiles_bracket_the_exact_nearest_rank_quantiles(seed):
    rng = np.random.default_rng(seed)
    # Heavy-tailed round times over six decades, as a run with rare expensive rounds.
    times = np.exp(rng.normal(2.0, 2.5, size=5_000))
    histogram = LatencyHistogram()
    for chunk in np.array_split(times, 7):
        histogram.add(chunk)
    summary = histogram.summary()
    assert sorted(summary) == KEYS
    assert summary["max"] == times.max()
    for key, q in latency_module.QUANTILES.items():
        exact = nearest_rank(times, q)
        assert exact * (1 - 1e-12) <= summary[key] <= exact * RESOLUTION * (1 + 1e-12)
    assert summary["p50"] <= summary["p90"] <= summary["p99"] <= summary["max"]


def test_weights_count_a_time_as_many_rounds():
    weighted, repeated = LatencyHistogram(), LatencyHistogram()
    weighted.add(np.array([3.0, 50.0]), weight=9)
    repeated.add(np.repeat([3.0, 50.0], 9))
    assert weighted.rounds == 18
    assert np.array_equal(weighted.counts, repeated.counts)
    assert weighted.summary() == repeated.summary()


def test_a_weight_per_time_counts_each_time_as_its_own_rounds():
    weighted, repeated = LatencyHistogram(), LatencyHistogram()
    times = np.array([3.0, 50.0, 3.0, 1e-6])
    weighted.add(times, weight=np.array([2, 5, 1, 4]))
    repeated.add(np.repeat(times, [2, 5, 1, 4]))
    assert weighted.rounds == 12
    assert np.array_equal(weighted.counts, repeated.counts)
    assert weighted.summary() == repeated.summary()
    for bad in (np.array([2, 0, 1, 1]), np.array([2.0, 1.0, 1.0, 1.0]), np.array([1, 2])):
        with pytest.raises(ValueError, match="weight must be"):
            LatencyHistogram().add(times, weight=bad)


def test_extremes_land_in_the_underflow_and_overflow_buckets():
    histogram = LatencyHistogram()
    histogram.add(np.array([0.0, 1e-9, 1e12]))
    assert histogram.counts[0] == 2 and histogram.counts[-1] == 1
    assert histogram.summary()["max"] == 1e12
    assert histogram.quantile(0.5) == latency_module.LOW


def test_memory_does_not_grow_with_the_rounds():
    histogram = LatencyHistogram()
    for _ in range(50):
        histogram.add(np.random.default_rng(0).random(10_000) * 1e3)
    assert histogram.counts.shape == (BUCKETS,) and histogram.rounds == 500_000
    assert LatencyHistogram().summary() == {}


def test_a_bad_weight_is_refused():
    with pytest.raises(ValueError, match="weight must be a positive count of rounds, got 0"):
        LatencyHistogram().add(np.array([1.0]), weight=0)


@pytest.fixture
def histograms(monkeypatch):
    """Every histogram the loops make, to count the rounds they hold."""
    made: list[LatencyHistogram] = []

    class Recorded(LatencyHistogram):
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    monkeypatch.setattr(loops, "LatencyHistogram", Recorded)
    return made


@pytest.mark.parametrize(
    ("agent", "fast", "loop"),
    [("bbcg", None, "block"), ("fkm", None, "lean"), ("fkm", False, "gym")],
)
def test_a_run_reports_every_round_once(histograms, agent, fast, loop):
    result = run("BCO-Ball-v0", agent, horizon=300, env_kwargs={"n": 3}, fast=fast)
    assert result.loop == loop
    (histogram,) = histograms
    assert histogram.rounds == 300
    latency = result.latency_us
    assert sorted(latency) == KEYS
    assert 0 < latency["p50"] <= latency["p90"] <= latency["p99"] <= latency["max"]
    # The mean round time lies between the smallest bucket edge and the max.
    assert latency["max"] >= (result.agent_seconds + result.env_seconds) / 300 * 1e6


@pytest.mark.parametrize("agent", ["bbcg", "fkm"])
def test_a_batch_shares_its_round_time_among_its_rows(histograms, agent):
    results = run_many("BCO-Ball-v0", agent, horizon=200, seeds=[0, 1, 2], env_kwargs={"n": 3})
    assert results[0].loop.startswith("batched")
    (histogram,) = histograms
    assert histogram.rounds == 200
    assert results[0].latency_us == results[1].latency_us == results[2].latency_us
    spent = results[0].agent_seconds + results[0].env_seconds  # one row's share
    assert results[0].latency_us["max"] >= spent / 200 * 1e6


def test_latency_is_a_timing_not_an_outcome():
    first = run("BCO-Ball-v0", "fkm", horizon=50, env_kwargs={"n": 2})
    again = run("BCO-Ball-v0", "fkm", horizon=50, env_kwargs={"n": 2})
    assert "latency_us" not in first.outcome()
    assert first.same_outcome(again)
