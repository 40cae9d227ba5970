"""The compute frontier: regret against CPU seconds, one curve per agent.

Runs of one scenario at several horizons T give, per series (agent and constants) and
horizon, the mean over seeds of the CPU seconds spent in the agent and the environment
(:func:`run_seconds`: the comparator is excluded) and of the final regret.
Regrets at different horizons are compared per round: the frontier plots the average
regret R_T / T against the seconds, so moving right buys rounds and moving down buys
learning, and a curve below another at equal seconds learned more for the same compute.

* :func:`frontier_points` -- the points of every curve;
* :func:`budget_rows` -- within a fixed CPU budget (seconds per run), the largest horizon
  each series reaches on each seed and its R_T / T there, paired over seeds with a
  reference series (mean difference, Student-t interval, wins);
* :func:`seconds_to_reach` and :func:`equal_regret_rows` -- the seconds each series
  needs to reach a level of R_T / T, interpolated log-linearly between its horizons (no
  extrapolation), and the speed-up against a reference series at a level both reach.

Times are process CPU seconds (``RunResult.cpu_seconds``, ``time.process_time`` over
the loop that played the rounds, every thread of the process counted), which do not
count waiting for a core on a loaded machine; results saved before that field existed
fall back to the wall-clock ``agent_seconds + env_seconds`` (perf_counter), which do.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from bco_gym.engine.result import RunResult
from bco_gym.stats.paired import group_series, t_interval


@dataclass(frozen=True)
class FrontierPoint:
    """One series at one horizon: mean seconds and mean final regret over its seeds."""

    label: str
    agent: str
    horizon: int
    seeds: int
    seconds: float
    regret: float
    regret_low: float
    regret_high: float

    @property
    def per_round(self) -> float:
        """The mean average regret R_T / T."""
        return self.regret / self.horizon


def run_seconds(result: RunResult) -> float:
    """Agent plus environment CPU seconds of one run (the comparator excluded); the
    wall-clock ``agent_seconds + env_seconds`` for a result without ``cpu_seconds``."""
    if result.cpu_seconds is not None:
        return result.cpu_seconds
    return result.agent_seconds + result.env_seconds


def reference_budget(results: Iterable[RunResult], reference: str) -> float | None:
    """The most seconds any seed of ``reference`` spent at its largest horizon (so the
    reference reaches that horizon on every seed within the budget); None if absent."""
    group = group_series(results).get(reference)
    if not group:
        return None
    largest = max(result.horizon for result in group)
    return max(run_seconds(result) for result in group if result.horizon == largest)


def frontier_points(results: Iterable[RunResult]) -> dict[str, list[FrontierPoint]]:
    """Per series label (first-seen order), its points by increasing horizon."""
    curves: dict[str, list[FrontierPoint]] = {}
    for label, group in group_series(results).items():
        by_horizon: dict[int, list[RunResult]] = {}
        for result in group:
            by_horizon.setdefault(result.horizon, []).append(result)
        points = []
        for horizon in sorted(by_horizon):
            runs = by_horizon[horizon]
            mean, low, high = t_interval([r.final_regret for r in runs])
            points.append(
                FrontierPoint(
                    label=label,
                    agent=runs[0].agent,
                    horizon=horizon,
                    seeds=len(runs),
                    seconds=float(np.mean([run_seconds(r) for r in runs])),
                    regret=float(mean),
                    regret_low=float(low),
                    regret_high=float(high),
                )
            )
        curves[label] = points
    return curves


@dataclass(frozen=True)
class BudgetRow:
    """What one series reaches within the budget, paired with the reference per seed."""

    label: str
    pairs: int
    horizons: tuple[int, ...]
    per_round: float | None
    difference: float | None
    difference_low: float | None
    difference_high: float | None
    wins: int | None


def within_budget(group: Sequence[RunResult], budget: float) -> dict[int, RunResult]:
    """Per seed, the run of the largest horizon whose seconds are at most ``budget``."""
    best: dict[int, RunResult] = {}
    for result in group:
        if run_seconds(result) <= budget:
            held = best.get(result.seed)
            if held is None or result.horizon > held.horizon:
                best[result.seed] = result
    return best


def budget_rows(results: Iterable[RunResult], budget: float, reference: str) -> list[BudgetRow]:
    """R_T / T each series reaches within ``budget`` seconds per run, paired by seed with
    the ``reference`` series (its own largest horizon within the budget on that seed)."""
    if not (budget > 0 and math.isfinite(budget)):
        raise ValueError(f"budget must be a positive number of seconds, got {budget!r}")
    groups = group_series(results)
    if reference not in groups:
        raise ValueError(f"reference {reference!r} is not one of the series {list(groups)}")
    base = within_budget(groups[reference], budget)
    rows = []
    for label, group in groups.items():
        reached = within_budget(group, budget)
        if not reached:
            rows.append(BudgetRow(label, 0, (), None, None, None, None, None))
            continue
        per_round = {seed: r.final_regret / r.horizon for seed, r in reached.items()}
        seeds = sorted(set(reached) & set(base))
        horizons = tuple(reached[seed].horizon for seed in sorted(reached))
        mean_per_round = float(np.mean(list(per_round.values())))
        if label == reference or not seeds:
            rows.append(BudgetRow(label, 0, horizons, mean_per_round, None, None, None, None))
            continue
        differences = np.array(
            [per_round[s] - base[s].final_regret / base[s].horizon for s in seeds]
        )
        mean, low, high = t_interval(differences)
        rows.append(
            BudgetRow(
                label,
                len(seeds),
                horizons,
                mean_per_round,
                float(mean),
                float(low),
                float(high),
                int((differences < 0).sum()),
            )
        )
    return rows


def seconds_to_reach(points: Sequence[FrontierPoint], level: float) -> float | None:
    """The seconds at which a curve first reaches R_T / T <= ``level``, interpolating
    log-linearly (log seconds, R_T / T) between consecutive horizons; None if it never
    does within its horizons (no extrapolation)."""
    previous = None
    for point in points:
        if point.per_round <= level:
            if previous is None:
                return point.seconds
            drop = previous.per_round - point.per_round
            share = (previous.per_round - level) / drop if drop > 0 else 1.0
            log_time = math.log(previous.seconds) + share * (
                math.log(point.seconds) - math.log(previous.seconds)
            )
            return math.exp(log_time)
        previous = point
    return None


@dataclass(frozen=True)
class EqualRegretRow:
    """Seconds a series needs to reach ``level`` and the reference's over its own."""

    label: str
    level: float
    seconds: float | None
    speedup: float | None


def equal_regret_rows(
    curves: dict[str, list[FrontierPoint]], reference: str, level: float
) -> list[EqualRegretRow]:
    """Seconds to reach R_T / T <= ``level`` and the speed-up t_reference / t_series."""
    if reference not in curves:
        raise ValueError(f"reference {reference!r} is not one of the series {list(curves)}")
    base = seconds_to_reach(curves[reference], level)
    rows = []
    for label, points in curves.items():
        needed = seconds_to_reach(points, level)
        speedup = None if needed is None or base is None else base / needed
        rows.append(EqualRegretRow(label, level, needed, speedup))
    return rows


def common_level(curves: dict[str, list[FrontierPoint]], labels: Sequence[str]) -> float | None:
    """The lowest R_T / T that every one of ``labels`` reaches (None if one is missing)."""
    if not labels or any(label not in curves for label in labels):
        return None
    return max(min(p.per_round for p in curves[label]) for label in labels)


__all__ = [
    "BudgetRow",
    "EqualRegretRow",
    "FrontierPoint",
    "budget_rows",
    "common_level",
    "equal_regret_rows",
    "frontier_points",
    "reference_budget",
    "run_seconds",
    "seconds_to_reach",
    "within_budget",
]
