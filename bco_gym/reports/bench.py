"""``bco-gym bench``: score agents on a suite, beside its reference agents, on the same seeds.

:func:`run_bench` runs every scenario of a suite (:data:`~bco_gym.reports.suites.SUITES`)
with the scenario's reference agents plus the given agents, on the scenario's seeds (or
seeds 0..K-1), as one resumable sweep per scenario under ``<out>/runs/<scenario>``: a
re-run with more agents computes only the new cells. Then it writes, in ``<out>``:

* ``scores.csv`` -- one row per run: ``suite, scenario, agent, feedback, seed, horizon,
  regret, score, adaptive_regret, dynamic_regret, version, computed_at`` with score =
  final regret / random's on the same scenario and seed (:mod:`~bco_gym.stats.scores`);
  ``feedback`` what the row learned from (bandit, two-point, full); the regrets of
  changing environments empty where the loss family has no exact interval comparators
  (:mod:`bco_gym.losses.intervals`); the suite column says ``subset: k of n scenarios``
  when the directory covers only some of the suite;
* ``report.md`` (:mod:`~bco_gym.reports.bench_report`) -- the suite, the reference
  archive's digest, the library version and the evaluation seeds; a verdict per agent
  (the scenarios where it is separated from bbcg and from fkm, better or worse, tested
  within a fixed family: the agent against the scenario's reference rows, Holm-corrected
  within those tests; against each reference's tuned row where the scenario has one,
  else its theory row, then against its theory row); the IQM and mean score of every
  agent with stratified-bootstrap 95% intervals, the probability of improvement of every
  agent over every other (a matrix, table and figure), the performance profiles with
  their 95% bands; the failed cells; and per scenario the ordered groups (the all-pairs
  ranking of its bandit rows), the pairwise matrix and the paired tables against the
  scenario's references. Full-information and two-point rows are marked everywhere and
  ranked apart.

The directory accumulates: report.md and scores.csv cover every agent and every scenario
computed into it for the suite (:func:`stored_results`), unless ``agents_only``.

An agent is given by name or by anything :func:`~bco_gym.agents.registry.resolve_agent`
accepts as a string (a registered name, an entry point, ``"package.module:Class"``).
A given agent that needs full-information or two-point feedback is not run on a
scenario whose env gives bandit feedback (the report says where). ``<out>`` holds a
``bench.json`` naming its suite: a non-empty directory without one, or of another
suite, is refused.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bco_gym.engine.result import RunResult, computed_now
from bco_gym.reports.bench_fresh import FRESH_SCORES, FRESH_SEEDS, fresh_pass, write_fresh
from bco_gym.reports.bench_plan import (
    FORMAT,
    MARKER,
    OWNER_FILE,
    SupersededSuiteWarning,
    check_agents,
    claim_directory,
    plan,
    row_groups,
    scenario_horizon,
    sweep_options,
)
from bco_gym.reports.bench_provenance import BASELINE, Coverage, ScenarioRun
from bco_gym.reports.bench_report import write_bench_report
from bco_gym.reports.bench_scores import archived_rows, label_of, rows_source, write_scores
from bco_gym.reports.bench_stored import (
    noting_recomputed_cells,
    stored_results,
    sweep_failures,
    with_earlier_scenarios,
)
from bco_gym.reports.integrity import draw_fresh_seeds
from bco_gym.reports.references import ARCHIVED
from bco_gym.reports.suites import (
    SUPERSEDED,
    Scenario,
    check_scenario,
    resolve_suite,
)
from bco_gym.stats.paired import series_label
from bco_gym.stats.scores import (
    ScoreRow,
    score_rows,
)
from bco_gym.sweeps.failures import CellFailure


@dataclass(frozen=True)
class BenchOutcome:
    """What :func:`run_bench` wrote and found."""

    report: Path
    scores: Path
    rows: list[ScoreRow]
    failures: list[str]
    runs: list[ScenarioRun]
    #: Cells found damaged or tampered with and computed again, one line each.
    recomputed: list[str] = field(default_factory=list)
    #: Scenarios whose shipped reference cells were not used, and why (one line each).
    archive_notes: list[str] = field(default_factory=list)


# -- running --------------------------------------------------------------------------------------
def _run_scenario(
    scenario: Scenario,
    agents: Sequence[str],
    out: Path,
    *,
    backend: str,
    batch_size: int | None,
    progress: bool | str | None,
    agent_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
    labels: Mapping[str, str] | None = None,
    reuse_stale: bool = False,
    agents_only: bool = False,
    tune: bool = False,
    isolate: Sequence[str] = (),
) -> tuple[list[RunResult], list[CellFailure]]:
    """The scenario's results: its agents' now, and unless ``agents_only`` every other
    agent's finished cells in its directory on the same seeds and horizon. A scenario
    with a tuning protocol plays its references by it (theory and tuned rows,
    :func:`~bco_gym.reports.scale.play_scenario`), and with ``tune`` the given agents too
    (:func:`~bco_gym.reports.bench_tuning.tune_given`); the agents of ``isolate`` play in
    their own process (:mod:`bco_gym.engine.isolation`)."""
    directory = out / "runs" / scenario.name
    horizon = scenario_horizon(scenario)
    references = [a for a in agents if a in scenario.agents or a == BASELINE]
    given = [a for a in agents if a not in references]
    common: dict[str, Any] = {
        "backend": backend,
        "batch_size": batch_size,
        "progress": progress,
        "reuse_stale": reuse_stale,
    }
    if scenario.tuning is None:
        results = _sweep_agents(
            scenario, agents, directory, horizon, (agent_kwargs, labels, isolate), common
        )
    else:
        from bco_gym.reports.scale import play_scenario

        played, _ = play_scenario(
            scenario.as_benched(references),
            out,
            [horizon],
            backend=backend,
            progress=progress,
            failures="record",
            isolate=isolate,
            reuse_stale=reuse_stale,
        )
        results = [result for result in played if result.horizon == horizon]
        if given:
            results += _sweep_agents(
                scenario, given, directory, horizon, (agent_kwargs, labels, isolate), common
            )
    if tune and given:
        from bco_gym.reports.bench_tuning import tune_given

        results += tune_given(
            scenario,
            given,
            out,
            dict.fromkeys(given, horizon),
            agent_kwargs=agent_kwargs,
            labels=labels,
            **common,
        )
    failed = [
        *sweep_failures(directory, scenario, agents if agents_only else None),
        *sweep_failures(out / "runs" / f"{scenario.name}-tuned", scenario, given),
    ]
    if agents_only:
        return list(results), failed
    return stored_results(out, scenario, results), failed


def _sweep_agents(
    scenario: Scenario,
    agents: Sequence[str],
    directory: Path,
    horizon: int,
    given: tuple[Mapping[str, Mapping[str, Any]] | None, Mapping[str, str] | None, Sequence[str]],
    common: Mapping[str, Any],
) -> list[RunResult]:
    """``agents``' cells of the scenario at ``horizon``, one resumable sweep in
    ``directory``; ``given`` (agent keyword arguments, labels, agents to isolate) as
    :func:`~bco_gym.reports.bench_plan.sweep_options` reads them. A row of its own
    feedback plays the scenario's env with it (:func:`~bco_gym.reports.bench_plan.row_groups`)."""
    from bco_gym.sweeps.sweep import sweep

    results: list[RunResult] = []
    for env_kwargs, members in row_groups(scenario, agents):
        options = {**sweep_options(scenario, members, *given), "env_kwargs": env_kwargs}
        results += sweep(
            scenario.env_id,
            members,
            [horizon],
            list(scenario.seeds),
            out=directory,
            failures="record",
            **options,
            **common,
        )
    return results


def _use_archive(
    suite: str,
    scenario: Scenario,
    out: Path,
    announce: Callable[[str], None] | None,
    notes: list[str] | None = None,
) -> int:
    """Write the shipped reference cells of ``scenario`` into ``out`` (the number written);
    with another version's archive or a damaged one, say so (a warning, ``announce`` and
    a line appended to ``notes``) and write nothing: they are recomputed. A damaged
    archive's line starts with :data:`DAMAGED_ARCHIVE`."""
    from bco_gym.reports.references import (
        ArchiveCorruptError,
        ArchiveVersionError,
        ReferenceArchiveWarning,
        materialise,
    )

    try:
        return materialise(suite, scenario, out)
    except ArchiveVersionError as error:
        note = str(error)
    except ArchiveCorruptError as error:
        note = f"{DAMAGED_ARCHIVE}: {error}; its reference cells are recomputed"
    warnings.warn(note, ReferenceArchiveWarning, stacklevel=3)
    if announce is not None:
        announce(f"note: {note}")
    if notes is not None:
        notes.append(note)
    return 0


#: How a note on a damaged reference archive begins.
DAMAGED_ARCHIVE = "the shipped reference archive is damaged"


def run_bench(
    agents: Sequence[str],
    out: str | os.PathLike,
    *,
    suite: str = "quick-v2",
    scenarios: Sequence[str] | None = None,
    seeds: int | None = None,
    backend: str = "serial",
    batch_size: int | None = None,
    progress: bool | str | None = None,
    announce: Callable[[str], None] | None = None,
    command: str | None = None,
    recompute_references: bool = False,
    agent_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
    labels: Mapping[str, str] | None = None,
    reuse_stale: bool = False,
    agents_only: bool = False,
    isolate: bool = False,
    fresh_seeds: int | None = None,
    tune: bool = False,
    timings: bool = False,
) -> BenchOutcome:
    """Run ``agents`` on ``suite`` into ``out`` and write the scores and the report.

    ``suite``: a built-in suite's name or a suite file (``FILE.toml``); ``scenarios``:
    the names of the scenarios to run (None: all). ``seeds``: None for each scenario's
    own seeds, K for seeds 0..K-1 everywhere. ``announce`` (e.g. ``print``) is told each
    scenario before it runs. ``command`` is the line the report names as its origin.
    A superseded suite (``quick-v1``) warns (:class:`SupersededSuiteWarning`) and says why.

    The reference agents' cells of the archived suites (``quick-v2``, ``standard-v2``,
    ``standard-v3``) are read from the package's archive
    (:mod:`~bco_gym.reports.references`), so only the given agents' cells are computed;
    ``recompute_references`` computes them here instead. An archive of another library
    version or code is not used: a
    :class:`~bco_gym.reports.references.ReferenceArchiveWarning` says so and the reference
    cells are recomputed.

    Before any cell runs, every scenario's env is built once and every agent on it
    (:func:`~bco_gym.reports.suites.check_scenario`): an env too large for the machine,
    env or loss keywords the env refuses, or keyword arguments an agent refuses raise a
    ValueError naming the suite, the scenario and the agent (``bco-gym bench`` exits 2).

    ``agent_kwargs`` (agent -> keyword arguments) and ``labels`` (agent -> label) apply
    to the given agents; ``reuse_stale`` keeps stored cells computed by other code
    (:func:`~bco_gym.sweeps.sweep.run_cells`). The directory is cumulative: report.md and
    scores.csv cover every agent computed into it for this suite (on the same seeds and
    horizons), unless ``agents_only``; each agent's rows say the version of bco_gym that
    computed them and when.

    ``tune``: hold each given agent to the references' protocol where a scenario has one
    (:mod:`~bco_gym.reports.bench_tuning`): its ``SCALE_PARAM`` tuned over the references'
    grid on their tuning seeds at their tuning horizon, then played on the evaluation
    seeds (rows ``agent (tuned, ...)``); an agent without a scale constant is refused.
    ``timings``: time every row of each scenario live, in turns, with the load average
    (:mod:`~bco_gym.reports.bench_timing`), beside the timings its cells recorded.

    Integrity (:mod:`~bco_gym.reports.integrity`, docs/benchmark.md "Threat model"):
    ``isolate`` plays each given agent in its own process, which receives only what its
    feedback entitles it to and sends back only its plays (:mod:`bco_gym.engine.isolation`);
    ``fresh_seeds`` N draws N evaluation seeds from the operating system's entropy when
    the run starts, plays every scenario's agents on them too (in memory: nothing names
    them on disk before every cell has run), and writes them, the given agents' scores
    on them beside their public scores and the test of agreement of the two into the
    report, ``fresh-seeds.json`` and ``fresh-scores.csv`` when the run ends. The report
    flags in its first lines an agent below the regret floor of a stationary scenario
    and one whose fresh and public scores disagree. (A process that starts an agent's
    process is non-dumpable while it runs; ``bco-gym bench --isolate`` makes the bench's
    own process so for the whole run, :func:`bco_gym.engine.protection.protected`.)
    """
    given = check_agents(agents)
    fresh = (draw_fresh_seeds(fresh_seeds), computed_now()) if fresh_seeds is not None else None
    isolated = tuple(given) if isolate else ()
    agent_kwargs, labels = dict(agent_kwargs or {}), dict(labels or {})
    if tune:
        from bco_gym.reports.bench_tuning import check_tunable

        check_tunable(given)
    steps = plan(suite, given, seeds, scenarios, agent_kwargs)
    definition, (name, every) = suite, resolve_suite(suite)  # a built-in's name or a file
    where = f"suite {name!r}" if name == suite else f"suite file {str(suite)!r}"
    for scenario, chosen, _ in steps:  # before any cell: every agent builds on every env
        check_scenario(scenario, where, chosen, agent_kwargs)
    if name in SUPERSEDED:
        warnings.warn(SUPERSEDED[name], SupersededSuiteWarning, stacklevel=2)
    out = Path(out)
    claim_directory(out, name)
    suite = name
    options = _Options(
        out, suite, backend, batch_size, progress, agent_kwargs, labels, reuse_stale,
        agents_only, tune, timings, isolated,
    )  # fmt: skip
    runs = []
    for index, (scenario, chosen, skipped) in enumerate(steps, start=1):
        if announce is not None:
            announce(f"scenario {index}/{len(steps)}: {scenario.name} ({', '.join(chosen)})")
        archive_notes: list[str] = []
        if not recompute_references and suite in ARCHIVED:
            _use_archive(suite, scenario, out, announce, archive_notes)
        found = _bench_scenario(options, scenario, chosen, skipped)
        runs += [replace(found[0], archive_notes=archive_notes), *found[1:]]
    if not agents_only:
        runs = with_earlier_scenarios(out, plan(definition, (), seeds), runs)
    names = {scenario.name for scenario in every}
    covered = Coverage(
        suite, [run.scenario.name for run in runs if run.results and run.scenario.name in names],
        len(every),
    )  # fmt: skip
    rows = [
        row for run in runs for row in score_rows(covered.label, run.scenario.name, run.results)
    ]
    scores = write_scores(out / "scores.csv", rows)
    command = command or f"bco-gym bench --agents {','.join(given)} --suite {suite}"
    shown = [labels.get(agent) or label_of(agent) for agent in given]
    verified = None
    if fresh is not None:
        fresh_options = {
            "backend": backend,
            "batch_size": batch_size,
            "progress": progress,
            "agent_kwargs": agent_kwargs,
            "labels": labels,
            "isolate": isolated,
        }
        scored = _scored_labels(shown, runs)
        verified = fresh_pass(
            steps, out, fresh, scored, rows, announce, fresh_options, covered.label
        )
        write_fresh(out, verified, command)
    report = write_bench_report(
        out / "report.md",
        suite,
        shown,
        runs,
        rows,
        command=command,
        coverage=covered,
        fresh=verified,
    )
    failures = [failure for run in runs for failure in run.failures]
    if verified is not None:
        failures += verified.failures
    recomputed = [f"{run.scenario.name}: {line}" for run in runs for line in run.recomputed]
    archive = [f"{run.scenario.name}: {line}" for run in runs for line in run.archive_notes]
    return BenchOutcome(report, scores, rows, failures, runs, recomputed, archive)


def _scored_labels(shown: Sequence[str], runs: Sequence[ScenarioRun]) -> list[str]:
    """Each given agent's label in scores.csv (:func:`~bco_gym.stats.paired.series_label`:
    ``agent (custom)`` for one given keyword arguments), its untuned row's."""
    found: dict[str, str] = {}
    for run in runs:
        for result in run.results:
            if result.agent in shown and result.constants != "tuned":
                found.setdefault(result.agent, series_label(result))
    return [found.get(agent, agent) for agent in shown]


@dataclass(frozen=True)
class _Options:
    """What one bench asks of every scenario (:func:`run_bench`'s arguments)."""

    out: Path
    suite: str
    backend: str
    batch_size: int | None
    progress: bool | str | None
    agent_kwargs: Mapping[str, Mapping[str, Any]]
    labels: Mapping[str, str]
    reuse_stale: bool
    agents_only: bool
    tune: bool
    timings: bool
    isolate: tuple[str, ...]

    @property
    def common(self) -> dict[str, Any]:
        """The sweeps' own options."""
        return {
            "backend": self.backend,
            "batch_size": self.batch_size,
            "progress": self.progress,
            "reuse_stale": self.reuse_stale,
        }


def _bench_scenario(
    options: _Options, scenario: Scenario, chosen: tuple[str, ...], skipped: dict[str, str]
) -> list[ScenarioRun]:
    """The scenario's run, and one per affordable horizon a given agent declares below the
    scenario's (:mod:`~bco_gym.reports.bench_horizons`): that agent plays there, beside the
    reference rows played at its horizon, and not at the scenario's."""
    from bco_gym.reports.bench_horizons import affordable_horizons

    given = [agent for agent in chosen if agent not in scenario.agents and agent != BASELINE]
    short = affordable_horizons(scenario, given, scenario_horizon(scenario))
    main = tuple(agent for agent in chosen if agent not in short)
    (results, failed), recomputed = noting_recomputed_cells(
        lambda: _run_scenario(
            scenario,
            main,
            options.out,
            agent_kwargs=options.agent_kwargs,
            labels=options.labels,
            agents_only=options.agents_only,
            tune=options.tune,
            isolate=options.isolate,
            **options.common,
        )
    )
    runs = [_scenario_run(options, scenario, main, skipped, results, failed, recomputed)]
    for horizon in sorted(set(short.values())):
        agents = [agent for agent, own in short.items() if own == horizon]
        runs.append(_short_run(options, scenario, horizon, agents))
    return runs


def _short_run(
    options: _Options, scenario: Scenario, horizon: int, agents: Sequence[str]
) -> ScenarioRun:
    """``agents`` at their affordable ``horizon`` in ``scenario``, beside its reference
    rows played at that horizon (:func:`~bco_gym.reports.bench_horizons.short_scenario`)."""
    from bco_gym.reports.bench_horizons import play_references_short, short_scenario

    shown = [options.labels.get(agent) or label_of(agent) for agent in agents]
    short = short_scenario(scenario, horizon, shown, of=scenario_horizon(scenario))
    directory = options.out / "runs" / short.name

    def body() -> tuple[list[RunResult], list[CellFailure]]:
        results = play_references_short(scenario, short, options.out, options.common)
        given = (options.agent_kwargs, options.labels, options.isolate)
        results += _sweep_agents(short, agents, directory, horizon, given, options.common)
        if options.tune:
            from bco_gym.reports.bench_tuning import tune_given

            results += tune_given(
                replace(short, tuning=scenario.tuning),
                agents,
                options.out,
                dict.fromkeys(agents, horizon),
                agent_kwargs=options.agent_kwargs,
                labels=options.labels,
                **options.common,
            )
        failed = sweep_failures(directory, short, None)
        if options.agents_only:
            return results, failed
        return stored_results(options.out, short, results), failed

    (results, failed), recomputed = noting_recomputed_cells(body)
    chosen = (*short.agents, BASELINE, *agents)
    return _scenario_run(options, short, chosen, {}, results, failed, recomputed)


def _scenario_run(
    options: _Options,
    scenario: Scenario,
    chosen: tuple[str, ...],
    skipped: dict[str, str],
    results: list[RunResult],
    failed: list[CellFailure],
    recomputed: list[str],
) -> ScenarioRun:
    """The :class:`ScenarioRun` of a scenario just run: where its reference rows came
    from, the given agents left untuned and why (``--tune``), its live timings."""
    archived = archived_rows(options.suite, scenario, results)
    untuned = {}
    if options.tune:
        from bco_gym.reports.bench_tuning import untuned_reasons

        mine = [agent for agent in chosen if agent not in scenario.agents and agent != BASELINE]
        shown = {agent: options.labels.get(agent) or label_of(agent) for agent in mine}
        untuned = untuned_reasons(scenario, shown, results, options.out)
    timed = None
    if options.timings and results:
        from bco_gym.reports.bench_timing import time_rows

        timed = time_rows(results, archived)
    return ScenarioRun(
        scenario,
        chosen,
        skipped,
        results,
        [f"{scenario.name}: {failure.describe()}" for failure in failed],
        failed,
        recomputed=recomputed,
        references=rows_source(results, archived, (*scenario.agents, BASELINE)),
        untuned=untuned,
        timings=timed,
    )


__all__ = [
    "DAMAGED_ARCHIVE",
    "FORMAT",
    "FRESH_SCORES",
    "FRESH_SEEDS",
    "MARKER",
    "OWNER_FILE",
    "BenchOutcome",
    "SupersededSuiteWarning",
    "archived_rows",
    "check_agents",
    "claim_directory",
    "plan",
    "run_bench",
    "scenario_horizon",
    "stored_results",
    "write_fresh",
    "write_scores",
]
