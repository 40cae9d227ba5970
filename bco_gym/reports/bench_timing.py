"""Like-with-like timings: every row of a scenario timed live, in turns, with the load.

The µs per round of a reference row read from the shipped archive were measured when the
archive was built, on the machine that built it; a given agent's were measured here, now,
under this machine's load. Side by side in one table they are not comparable (0.5 µs
against 97 µs in one table, once). ``bco-gym bench --timings`` measures them fairly:
in each scenario, :func:`time_rows` plays every row (the reference agents' theory and tuned
rows and the given agents') on the scenario's first evaluation seed for T' = min(T,
:data:`TIMING_ROUNDS`) rounds through the engine's own run path (one cell each), in
:data:`PASSES` passes, each in a rotated order of the rows, so that a change of the
machine's load falls on every row alike; after one untimed warm-up per row (compiled
kernels are built there). Each row's median µs per round (agent plus environment, as the
paired tables' column) stands beside the µs per round recorded with its cells, with the
load average before and after and the number of cores. Without ``--timings``, the
report's first lines say where the recorded timings were measured
(:func:`~bco_gym.reports.bench_provenance.recorded_timings_line`).
"""

from __future__ import annotations

import os
import statistics
import warnings
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from bco_gym.engine.result import RunResult
from bco_gym.stats.paired import group_series

#: Rounds each row plays per timed pass (fewer where the scenario's horizon is shorter).
TIMING_ROUNDS = 2_000
#: Timed passes over the rows, each in a rotated order.
PASSES = 3
#: Rounds of the untimed warm-up of each row.
WARM_UP_ROUNDS = 50


@dataclass(frozen=True)
class LiveTiming:
    """One row timed live: µs per round of each pass, and what its cells recorded."""

    label: str
    microseconds: tuple[float, ...]
    recorded: float
    source: str  # where its cells were timed: "archive" or "here"

    @property
    def median(self) -> float:
        return float(statistics.median(self.microseconds))


@dataclass(frozen=True)
class ScenarioTimings:
    """A scenario's rows timed live (:func:`time_rows`)."""

    seed: int
    rounds: int
    horizon: int
    rows: tuple[LiveTiming, ...]
    load: tuple[float, float]  # the 1-minute load average before and after
    cores: int


def load_average() -> float:
    """The 1-minute load average (nan where the platform has none)."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return float("nan")


def _play(result: RunResult, rounds: int) -> RunResult:
    """Play ``result``'s cell again for ``rounds`` rounds, its warnings kept in the result
    (they were reported when the cell was first computed)."""
    from bco_gym.sweeps.sweep import Cell

    spec = result.agent_spec or {}
    cell = Cell(
        result.env_id,
        spec.get("import_path") or result.agent,
        rounds,
        result.seed,
        dict(result.env_kwargs),
        dict(result.agent_kwargs),
        result.constants,
        label=result.agent,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cell.run(progress=False)


def _per_round(result: RunResult) -> float:
    return 1e6 * (result.agent_seconds + result.env_seconds) / result.horizon


def time_rows(
    results: Sequence[RunResult],
    archived: Collection[str] = (),
    *,
    rounds: int = TIMING_ROUNDS,
    passes: int = PASSES,
) -> ScenarioTimings:
    """Every series of ``results`` (one scenario, one horizon) timed live (module
    docstring); ``archived``: the labels whose cells were read from the archive."""
    groups = group_series(results)
    horizon = next(iter(groups.values()))[0].horizon
    seed = min(result.seed for result in results)
    rounds = min(rounds, horizon)
    firsts = {label: next(r for r in group if r.seed == seed) for label, group in groups.items()}
    for first in firsts.values():
        _play(first, min(WARM_UP_ROUNDS, rounds))
    labels = list(firsts)
    timed: dict[str, list[float]] = {label: [] for label in labels}
    before = load_average()
    for turn in range(passes):
        for label in labels[turn % len(labels) :] + labels[: turn % len(labels)]:
            played = _play(firsts[label], rounds)
            timed[label].append(_per_round(played))
    after = load_average()
    rows = tuple(
        LiveTiming(
            label,
            tuple(timed[label]),
            float(statistics.mean(_per_round(r) for r in groups[label])),
            "archive" if label in archived else "here",
        )
        for label in labels
    )
    return ScenarioTimings(seed, rounds, horizon, rows, (before, after), os.cpu_count() or 1)


def timing_lines(timings: ScenarioTimings) -> list[str]:
    """A scenario's live timings as the report shows them."""
    from bco_gym.reports.summary import render_markdown

    header = [
        "row",
        f"live µs/round (median of {len(timings.rows[0].microseconds)} passes)",
        "passes (µs/round)",
        f"recorded µs/round (T = {timings.horizon:,})",
        "recorded where",
    ]
    body = [
        [
            row.label,
            f"{row.median:.3g}",
            ", ".join(f"{value:.3g}" for value in row.microseconds),
            f"{row.recorded:.3g}",
            "the shipped archive" if row.source == "archive" else "here",
        ]
        for row in sorted(timings.rows, key=lambda row: row.median)
    ]
    before, after = timings.load
    return [
        "### Timings, like with like",
        "",
        f"Every row timed here on seed {timings.seed} for {timings.rounds:,} rounds, in turns "
        f"(each pass in a rotated order), after an untimed warm-up; load average {before:.2f} "
        f"before and {after:.2f} after, on {timings.cores} cores. The live column compares "
        "the rows; the recorded column is what their cells measured, where they were computed.",
        "",
        render_markdown(header, body),
        "",
    ]
