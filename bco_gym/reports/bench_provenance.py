"""What a bench ran and where its numbers come from: the scenario runs, the suite they
cover, and the report's first lines.

* :class:`ScenarioRun` -- one scenario as ``bco-gym bench`` ran it (or read it from the
  directory: an earlier bench's cells);
* :class:`Coverage` -- the scenarios of its suite a report covers (a subset says so in
  the report's title and in scores.csv's suite column);
* :func:`provenance_lines` -- what a reviewer asks first: the suite and the scenarios
  covered, the reference archive by its digest
  (:func:`~bco_gym.reports.references.archive_digest`) and whether its cells were read,
  the library version, the evaluation seeds (:func:`seeds_line`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bco_gym.engine.result import RunResult
from bco_gym.reports.bench_horizons import SHORT
from bco_gym.reports.page import md_text
from bco_gym.reports.suites import SMOKE_TESTS, Scenario

#: Random play: a reference row of every scenario (the score's baseline).
BASELINE = "random"


@dataclass(frozen=True)
class ScenarioRun:
    """One scenario as the bench ran it: its agents, the ones left out, its results."""

    scenario: Scenario
    agents: tuple[str, ...]
    skipped: Mapping[str, str]
    results: list[RunResult]
    failures: list[str] = field(default_factory=list)
    failed: list[Any] = field(default_factory=list)  # the CellFailure records
    #: Cells whose files were damaged or tampered with, computed again (one line each).
    recomputed: list[str] = field(default_factory=list)
    #: Why the shipped reference cells were not used (another version, a damaged file).
    archive_notes: list[str] = field(default_factory=list)
    #: Read from the directory (an earlier bench's cells), not run by this command.
    earlier: bool = False
    #: Where the reference agents' cells came from (:data:`SOURCES`): "archive" (the
    #: shipped one), "archive in part", "computed here", or "" (not known: a scenario of
    #: an earlier bench).
    references: str = ""
    #: ``--tune``: the given agents (labels) left without a tuned row here, and why.
    untuned: Mapping[str, str] = field(default_factory=dict)
    #: ``--timings``: every row timed live here, in turns
    #: (:class:`~bco_gym.reports.bench_timing.ScenarioTimings`), or None.
    timings: Any = None

    @property
    def reference_agents(self) -> tuple[str, ...]:
        """The scenario's reference agents: its own and random play (the score's baseline)."""
        return tuple(dict.fromkeys([*self.scenario.agents, BASELINE]))


@dataclass(frozen=True)
class Coverage:
    """Which scenarios of its suite a report covers (a subset says so everywhere)."""

    suite: str
    scenarios: Sequence[str]
    total: int

    @property
    def subset(self) -> bool:
        return len(self.scenarios) < self.total

    @property
    def note(self) -> str:
        """``subset: 2 of 18 scenarios`` for a subset, else ``""``."""
        return f"subset: {len(self.scenarios)} of {self.total} scenarios" if self.subset else ""

    @property
    def label(self) -> str:
        """scores.csv's suite column: ``standard-v2``, ``quick-v2 (smoke test)``,
        ``standard-v2 (subset: 2 of 18 scenarios)``."""
        notes = [note for note in ("smoke test" * (self.suite in SMOKE_TESTS), self.note) if note]
        return f"{self.suite} ({'; '.join(notes)})" if notes else self.suite


def provenance_lines(
    suite: str, runs: Sequence[ScenarioRun], coverage: Coverage | None = None
) -> list[str]:
    """The suite and the scenarios covered, the reference archive's digest and where the
    reference cells came from, the library version, the evaluation seeds."""
    from bco_gym.reports.references import library_version

    names = [run.scenario.name for run in runs if run.results]
    covered = (
        f"; this report covers {len(names)} of its {coverage.total} scenarios: " + ", ".join(names)
        if coverage is not None and coverage.subset
        else f", {'all ' if coverage is not None else ''}{scenario_count(len(names))}"
    )
    return [
        f"- **Suite**: {md_text(suite + covered)}.",
        f"- **Reference archive**: {archive_line(suite, runs)}.",
        f"- **Library**: bco_gym {library_version()} wrote this report (the version that "
        "computed each agent's cells is in the Agents table).",
        f"- **Evaluation seeds**: {seeds_line(runs)}.",
        *filter(None, [recorded_timings_line(runs)]),
        *short_lines(runs),
    ]


def archive_line(suite: str, runs: Sequence[ScenarioRun]) -> str:
    """The shipped archive's digest (:func:`~bco_gym.reports.references.archive_digest`)
    and in how many scenarios its cells were read or the references computed here."""
    from bco_gym.reports.references import ARCHIVED, INDEX, archive_digest, read_index

    digest = archive_digest(suite) if suite in ARCHIVED else None
    if digest is None:
        return f"none ships for {suite}; the reference agents' cells were computed here"
    index = read_index(suite) or {}
    text = (
        f"`sha256:{digest}` (bco_gym/data/references/{suite}/{INDEX}: cells of bco_gym "
        f"{index.get('library_version', '?')}, code digest "
        f"`{str(index.get('code_digest', '?'))[:12]}`)"
    )
    counts = {
        source: sum(run.references == source for run in runs if run.results) for source in SOURCES
    }
    parts = [
        f"{what} in {scenario_count(counts[source])}"
        for source, what in SOURCES.items()
        if counts[source]
    ]
    return text + ("; " + "; ".join(parts) if parts else "")


#: Where a scenario's reference rows came from (``ScenarioRun.references``) -> what the
#: archive's line says of them.
SOURCES = {
    "archive": "its cells read",
    "archive in part": "its cells read for some reference rows, the others computed here",
    "computed here": "not used (refused, or its cells of other code), the reference cells "
    "computed here",
    "": "from an earlier bench into this directory",
}


def seeds_line(runs: Sequence[ScenarioRun]) -> str:
    """The evaluation seeds of every scenario (and the tuning seeds of the reference
    constants, disjoint from them): e.g. ``0-7 in every scenario; the references'
    constants tuned on seeds 100-101``."""
    evaluation: dict[str, list[str]] = {}
    tuning: dict[str, list[str]] = {}
    for run in runs:
        if not run.results:
            continue
        evaluation.setdefault(seed_text(run.scenario.seeds), []).append(run.scenario.name)
        if run.scenario.tuning is not None:
            tuning.setdefault(seed_text(run.scenario.tuning.seeds), []).append(run.scenario.name)
    count = sum(len(names) for names in evaluation.values())
    text = _grouped(evaluation, count)
    if tuning:
        text += f"; the references' constants tuned on seeds {_grouped(tuning, count)}"
    return text


def seed_text(seeds: Sequence[int]) -> str:
    """``0-7`` for a run of consecutive seeds, else the seeds listed."""
    ordered = sorted(seeds)
    if len(ordered) > 1 and ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"{ordered[0]}-{ordered[-1]}"
    return ", ".join(str(seed) for seed in ordered)


def _grouped(found: Mapping[str, Sequence[str]], total: int) -> str:
    if len(found) == 1:
        ((text, names),) = found.items()
        return f"{text} in {'every scenario' if len(names) == total else ', '.join(names)}"
    return "; ".join(f"{text} in {', '.join(names)}" for text, names in found.items())


def scenario_count(count: int) -> str:
    """``1 scenario``, ``2 scenarios``."""
    return f"{count} scenario" + ("" if count == 1 else "s")


def recorded_timings_line(runs: Sequence[ScenarioRun]) -> str | None:
    """Where the recorded timings of the rows were measured, when some reference rows were
    read from the archive and not timed live (``--timings``); None otherwise."""
    archived = [
        result.computed_at[:10]
        for run in runs
        if run.references == "archive" and run.timings is None
        for result in run.results
        if result.agent in run.reference_agents and result.computed_at
    ]
    if not archived:
        return None
    dates = sorted(set(archived))
    when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
    return (
        "- **Timings**: the µs per round of the reference rows read from the shipped archive "
        f"were measured when it was built ({when}, on the machine that built it), not here; "
        "the given agents' where and when their cells were computed (the Agents table says "
        "when), under that machine's load then. They are not like with like: `--timings` "
        "times every row here, in turns, side by side."
    )


def short_lines(runs: Sequence[ScenarioRun]) -> list[str]:
    """The report's line saying where given agents played fewer rounds than the scenario."""
    found = []
    for run in runs:
        match = SHORT.match(run.scenario.name)
        if match is None or not run.results:
            continue
        given = sorted({r.agent for r in run.results if r.agent not in run.reference_agents})
        if given:
            found.append(
                f"{', '.join(given)} played {run.scenario.horizon:,} rounds of "
                f"{match['name']} (the rounds it can afford), beside the references at the "
                f"same horizon: {run.scenario.name}"
            )
    if not found:
        return []
    return [f"- **Fewer rounds**: {md_text('; '.join(found))}."]
