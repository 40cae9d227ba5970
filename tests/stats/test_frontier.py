"""The compute frontier against hand computations on hand-made results."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from synthetic_results import synthetic_result

from bco_gym.stats.frontier import (
    budget_rows,
    common_level,
    equal_regret_rows,
    frontier_points,
    reference_budget,
    run_seconds,
    seconds_to_reach,
    within_budget,
)

# (agent, horizon) -> (seconds per run on seeds 0..2, final regret on seeds 0..2)
RUNS = {
    ("fast", 100): ((1.0, 1.2, 0.8), (50.0, 60.0, 40.0)),
    ("fast", 1000): ((10.0, 12.0, 8.0), (200.0, 300.0, 250.0)),
    ("slow", 100): ((4.0, 4.0, 4.0), (30.0, 30.0, 36.0)),
    ("slow", 1000): ((40.0, 40.0, 40.0), (150.0, 120.0, 180.0)),
}


def results():
    made = []
    for (agent, horizon), (seconds, finals) in RUNS.items():
        for seed, (spent, final) in enumerate(zip(seconds, finals, strict=True)):
            made.append(
                synthetic_result(
                    agent, seed, [final / 10, final], checkpoints=(horizon // 10, horizon),
                    seconds=(spent * 0.75, spent * 0.25),
                )
            )  # fmt: skip
    return made


def test_points_are_means_over_seeds_by_increasing_horizon():
    curves = frontier_points(results())
    assert list(curves) == ["fast", "slow"]
    fast = curves["fast"]
    assert [p.horizon for p in fast] == [100, 1000]
    assert fast[1].seconds == pytest.approx(10.0)
    assert fast[1].regret == pytest.approx(250.0)
    assert fast[1].per_round == pytest.approx(0.25)
    assert fast[0].regret_low < 50.0 < fast[0].regret_high


def test_the_budget_takes_each_seeds_largest_affordable_horizon():
    groups = within_budget([r for r in results() if r.agent == "fast"], 10.0)
    # Seed 1 spent 12 s at T = 1000: over the budget, so its T = 100 run counts.
    assert {seed: r.horizon for seed, r in groups.items()} == {0: 1000, 1: 100, 2: 1000}


def test_budget_rows_pair_the_per_round_regret_by_seed():
    rows = {row.label: row for row in budget_rows(results(), 10.0, "slow")}
    fast, slow = rows["fast"], rows["slow"]
    # slow reaches only T = 100 within 10 s: 0.30, 0.30, 0.36 per round.
    assert slow.horizons == (100, 100, 100) and slow.difference is None
    # fast: seed 0 200/1000, seed 1 60/100, seed 2 250/1000.
    differences = np.array([0.2 - 0.3, 0.6 - 0.3, 0.25 - 0.36])
    assert fast.difference == pytest.approx(differences.mean())
    assert fast.wins == 2 and fast.pairs == 3
    assert fast.difference_low < fast.difference < fast.difference_high
    assert fast.per_round == pytest.approx(np.mean([0.2, 0.6, 0.25]))


def test_a_series_that_reaches_nothing_within_the_budget_says_so():
    rows = {row.label: row for row in budget_rows(results(), 2.0, "fast")}
    assert rows["slow"].horizons == () and rows["slow"].per_round is None


@pytest.mark.parametrize("budget", [0.0, -1.0, math.inf, math.nan])
def test_a_bad_budget_is_refused(budget):
    with pytest.raises(ValueError, match="budget must be a positive number of seconds"):
        budget_rows(results(), budget, "fast")


def test_seconds_to_reach_interpolates_log_linearly_without_extrapolating():
    curves = frontier_points(results())
    fast = curves["fast"]  # (1 s, 0.5 per round), (10 s, 0.25 per round)
    assert seconds_to_reach(fast, 0.5) == pytest.approx(1.0)
    # Halfway down in R_T/T is halfway in log seconds: sqrt(1 * 10).
    assert seconds_to_reach(fast, 0.375) == pytest.approx(math.sqrt(10.0))
    assert seconds_to_reach(fast, 0.2) is None
    assert seconds_to_reach(fast, 0.9) == pytest.approx(1.0)


def test_equal_regret_speedup_is_the_references_seconds_over_the_series():
    curves = frontier_points(results())  # slow: (4 s, 0.32), (40 s, 0.15)
    level = common_level(curves, ["fast", "slow"])
    assert level == pytest.approx(0.25)  # fast goes no lower than 0.25
    rows = {row.label: row for row in equal_regret_rows(curves, "slow", level)}
    share = (0.32 - 0.25) / (0.32 - 0.15)
    slow_seconds = math.exp(math.log(4.0) + share * (math.log(40.0) - math.log(4.0)))
    assert rows["slow"].seconds == pytest.approx(slow_seconds)
    assert rows["fast"].seconds == pytest.approx(10.0)
    assert rows["fast"].speedup == pytest.approx(slow_seconds / 10.0)
    assert rows["slow"].speedup == pytest.approx(1.0)
    with pytest.raises(ValueError, match="reference 'nobody' is not one of the series"):
        equal_regret_rows(curves, "nobody", level)


def test_seconds_are_cpu_seconds_when_the_result_has_them():
    run = results()[0]  # 0.75 s agent + 0.25 s env, wall-clock
    assert run_seconds(run) == pytest.approx(1.0)
    timed = dataclasses.replace(run, cpu_seconds=0.4)
    assert run_seconds(timed) == 0.4
    curves = frontier_points([dataclasses.replace(r, cpu_seconds=2.0) for r in results()])
    assert {p.seconds for points in curves.values() for p in points} == {2.0}


def test_the_reference_budget_is_its_costliest_seed_at_its_largest_horizon():
    assert reference_budget(results(), "fast") == 12.0  # seed 1 at T = 1000
    assert reference_budget(results(), "slow") == 40.0
    assert reference_budget(results(), "nobody") is None
    # Within it the reference reaches its largest horizon on every seed.
    rows = {row.label: row for row in budget_rows(results(), 12.0, "fast")}
    assert rows["fast"].horizons == (1000, 1000, 1000)
