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

import csv
import io
import math
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from bco_gym import io as files
from bco_gym.engine.result import RunResult, computed_now
from bco_gym.reports.bench_provenance import BASELINE, Coverage, ScenarioRun
from bco_gym.reports.bench_report import write_bench_report
from bco_gym.reports.integrity import FreshSeeds, agreements, draw_fresh_seeds
from bco_gym.reports.references import ARCHIVED
from bco_gym.reports.suites import (
    SUPERSEDED,
    Scenario,
    check_scenario,
    resolve_suite,
    select_scenarios,
)
from bco_gym.stats.paired import series_label
from bco_gym.stats.scores import (
    COLUMNS,
    ScoreRow,
    score_rows,
)
from bco_gym.sweeps.failures import CellFailure
from bco_gym.sweeps.store import SweepStore

T = TypeVar("T")
MARKER = "bench.json"
OWNER_FILE = ".bco-gym-owner.json"  # the CLI's mark of a command's directory (cli_checks)
FORMAT = 1
FRESH_SEEDS = "fresh-seeds.json"
FRESH_SCORES = "fresh-scores.csv"


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


# -- the plan -------------------------------------------------------------------------------------
def _feedback_of(agent: str) -> str:
    from bco_gym.agents.registry import resolve_agent

    return resolve_agent(agent).feedback


def check_agents(agents: Sequence[str]) -> list[str]:
    """The given agents, resolved once each (ValueError/TypeError naming a bad one)."""
    if not agents:
        raise ValueError("bench needs at least one agent")
    duplicates = sorted({a for a in agents if list(agents).count(a) > 1})
    if duplicates:
        raise ValueError(f"agents listed twice: {', '.join(duplicates)}")
    for agent in agents:
        _feedback_of(agent)
    return list(agents)


class SupersededSuiteWarning(UserWarning):
    """The suite run has a successor (:data:`~bco_gym.reports.suites.SUPERSEDED` says why)."""


def plan(
    suite: str,
    agents: Sequence[str],
    seeds: int | None = None,
    scenarios: Sequence[str] | None = None,
    agent_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[tuple[Scenario, tuple[str, ...], dict[str, str]]]:
    """(scenario with its seeds, agents to run, given agents left out -> why) per scenario.

    ``suite`` is a built-in suite's name or a suite file (``.toml``,
    :func:`~bco_gym.reports.suites.load_suite_file`); ``scenarios`` the names of the
    scenarios to run (None: all; a name not in the suite is refused, naming it). A given
    agent that is one of the scenario's agents under another spelling (the same
    identity) is run once, as the scenario's; ``agent_kwargs`` may not change a
    reference agent (give a variant ``NAME[key=value]`` instead).
    """
    from bco_gym.agents.registry import resolve_agent

    agent_kwargs = dict(agent_kwargs or {})
    name, found = resolve_suite(suite)
    chosen_scenarios = select_scenarios(name, found, scenarios)
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 2):
        raise ValueError(f"seeds must be an integer >= 2 (paired intervals), got {seeds!r}")
    steps = []
    for scenario in chosen_scenarios:
        if seeds is not None:
            scenario = replace(scenario, seeds=tuple(range(seeds)))
        feedback = scenario.env_kwargs.get("feedback", "bandit")
        skipped = {}
        chosen = list(dict.fromkeys([*scenario.agents, BASELINE]))
        known = {resolve_agent(agent).identity() for agent in chosen}
        for agent in agents:
            if agent in chosen and agent_kwargs.get(agent):
                raise ValueError(
                    f"--agent-kwargs for {agent!r}, one of the scenario {scenario.name!r}'s "
                    "reference agents, would change the reference; give a variant instead, "
                    f"e.g. '{agent}[key=value]'"
                )
            needs = _feedback_of(agent)
            if agent in chosen or resolve_agent(agent).identity(agent_kwargs.get(agent)) in known:
                continue
            if needs != "bandit" and needs != feedback:
                skipped[agent] = f"needs feedback={needs!r}, the scenario gives {feedback!r}"
                continue
            chosen.append(agent)
        steps.append((scenario, tuple(chosen), skipped))
    return steps


# -- the directory --------------------------------------------------------------------------------
def claim_directory(out: Path, suite: str) -> None:
    """Create ``out`` or check it is this suite's bench directory; then mark it."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is not a directory")
    try:
        document = files.read_marker(out, MARKER) if out.is_dir() else None
    except (OSError, ValueError) as error:
        raise ValueError(f"{error}; not a bench") from None
    if document is not None:
        if document.get("suite") != suite:
            found = document.get("suite")
            raise ValueError(
                f"{str(out)!r} holds a bench of suite {found!r}, not {suite!r}; pick another "
                "directory"
            )
        return
    entries = list(out.iterdir()) if out.is_dir() else []
    strangers = [entry.name for entry in entries if entry.name != OWNER_FILE]
    if strangers:
        raise ValueError(
            f"{str(out)!r} is not empty and is not a bench directory (no {MARKER}; found "
            f"{', '.join(sorted(strangers)[:5])}); pick a new or empty directory"
        )
    files.claim_directory(out, MARKER, {"format": FORMAT, "suite": suite})


# -- running --------------------------------------------------------------------------------------
def _sweep_failures(
    directory: Path, scenario: Scenario, agents: Sequence[str] | None
) -> list[CellFailure]:
    """The scenario's failed cells on its seeds, among ``agents`` (None: of any agent)."""
    from bco_gym.sweeps import load_failures

    return [
        failure
        for failure in load_failures(directory)
        if (agents is None or failure.agent in agents) and failure.seed in scenario.seeds
    ]


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
        *_sweep_failures(directory, scenario, agents if agents_only else None),
        *_sweep_failures(out / "runs" / f"{scenario.name}-tuned", scenario, given),
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
    :func:`_sweep_options` reads them."""
    from bco_gym.sweeps.sweep import sweep

    options = _sweep_options(scenario, agents, *given)
    return list(
        sweep(
            scenario.env_id,
            list(agents),
            [horizon],
            list(scenario.seeds),
            out=directory,
            failures="record",
            **options,
            **common,
        )
    )


def scenario_horizon(scenario: Scenario) -> int:
    """The horizon the bench scores ``scenario`` at: its own, or its env's (data sets)."""
    from bco_gym.reports.demo import own_horizon

    return scenario.horizon if scenario.horizon is not None else own_horizon(scenario)


def stored_results(
    out: Path, scenario: Scenario, current: Sequence[RunResult] = ()
) -> list[RunResult]:
    """``current`` and every earlier agent's finished cells of ``scenario`` in ``out``, on
    its seeds and horizon: its sweep (``runs/<name>``) and, for a scenario with tuned
    rows, the tuned sweep (``runs/<name>-tuned``), where a tuned row run now replaces the
    same agent's earlier ones."""
    horizon = scenario_horizon(scenario)
    tuned = [result for result in current if result.constants == "tuned"]
    plain = [result for result in current if result.constants != "tuned"]
    found = [*plain, *_earlier_results(out / "runs" / scenario.name, scenario, horizon, plain)]
    if scenario.tuning is not None:
        again = {result.agent for result in tuned}
        earlier = _earlier_results(
            out / "runs" / f"{scenario.name}-tuned", scenario, horizon, tuned
        )
        found += [*tuned, *(result for result in earlier if result.agent not in again)]
    return found


def _sweep_options(
    scenario: Scenario,
    agents: Sequence[str],
    agent_kwargs: Mapping[str, Mapping[str, Any]] | None,
    labels: Mapping[str, str] | None,
    isolate: Sequence[str],
) -> dict[str, Any]:
    """The keyword arguments of the scenario's grid (:func:`~bco_gym.sweeps.sweep.cells`):
    the env's, the scenario's and the given agents' keyword arguments, labels, isolation."""
    kwargs = {a: dict(kw) for a, kw in scenario.agent_kwargs.items() if a in agents}
    given = {a: dict(kw) for a, kw in (agent_kwargs or {}).items() if a in agents}
    return {
        "env_kwargs": dict(scenario.env_kwargs),
        "agent_kwargs": {**kwargs, **given} or None,
        "constants": dict.fromkeys(kwargs, "theory") or None,
        "labels": {a: label for a, label in (labels or {}).items() if a in agents},
        "isolate": [agent for agent in agents if agent in isolate],
    }


def _fresh_scenario(
    scenario: Scenario,
    agents: Sequence[str],
    out: Path,
    seeds: Sequence[int],
    *,
    backend: str,
    batch_size: int | None,
    progress: bool | str | None,
    agent_kwargs: Mapping[str, Mapping[str, Any]] | None,
    labels: Mapping[str, str] | None,
    isolate: Sequence[str],
) -> tuple[list[RunResult], list[CellFailure]]:
    """The scenario's agents (references included) on the fresh ``seeds``, computed in
    memory (:func:`~bco_gym.sweeps.sweep.run_in_memory`: no file names a fresh seed
    before every cell has run), at the horizon and with the constants of the public
    run (tuned constants read from ``out/tuning``)."""
    from bco_gym.sweeps.sweep import cells, run_in_memory

    fresh = replace(scenario, seeds=tuple(seeds))
    horizon = scenario_horizon(scenario)
    played = list(agents)
    grid = []
    if scenario.tuning is not None:  # the references by their protocol, as in public
        from bco_gym.reports.scale import scenario_cells

        played = [a for a in agents if a not in scenario.agents and a != BASELINE]
        references = [a for a in agents if a not in played]
        grid = scenario_cells(
            fresh.as_benched(references),
            out,
            [horizon],
            backend=backend,
            progress=progress,
            isolate=isolate,
        )
        grid = [cell for cell in grid if cell.horizon == horizon]
    if played:
        options = _sweep_options(scenario, played, agent_kwargs, labels, isolate)
        grid += cells(scenario.env_id, played, [horizon], list(seeds), **options)
    return run_in_memory(grid, backend=backend, progress=progress, batch_size=batch_size)


def _earlier_results(
    directory: Path, scenario: Scenario, horizon: int, current: Sequence[RunResult]
) -> list[RunResult]:
    """The finished cells of agents computed into ``directory`` before, not run now, on
    the scenario's seeds and ``horizon``; an agent whose label is taken by another now
    (a name registered again for other code) is shown as ``label (identity)``."""
    from bco_gym.agents.registry import identity_of_result
    from bco_gym.sweeps import load_sweep

    if not SweepStore(directory).manifest_path.is_file():
        return []
    ours = {identity_of_result(result) for result in current}
    taken = {result.agent for result in current}
    found = [
        result
        for result in load_sweep(directory)
        if result.seed in scenario.seeds
        and result.horizon == horizon
        and identity_of_result(result) not in ours
    ]
    labels: dict[str, set[str]] = {}
    for result in found:
        labels.setdefault(result.agent, set()).add(identity_of_result(result))
    shown = []
    for result in found:
        identity = identity_of_result(result)
        if result.agent in taken or len(labels[result.agent]) > 1:
            label = f"{result.agent} ({identity})"
            result = replace(result, agent=label, agent_spec={**result.agent_spec, "name": label})
        shown.append(result)
    return shown


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

    The reference agents' cells of ``quick-v2`` and ``standard-v2`` are read from the
    package's archive (:mod:`~bco_gym.reports.references`), so only the given agents'
    cells are computed; ``recompute_references`` computes them here instead. An archive
    of another library version or code is not used: a
    :class:`~bco_gym.reports.references.ReferenceArchiveWarning` says so and the
    reference cells are recomputed.

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
    own process so for the whole run, :func:`bco_gym.engine.isolation.protected`.)
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
        runs = _with_earlier_scenarios(out, plan(definition, (), seeds), runs)
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
    shown = [labels.get(agent) or _label_of(agent) for agent in given]
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
        verified = _fresh_pass(
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


def _fresh_pass(
    steps: Sequence[tuple[Scenario, tuple[str, ...], dict[str, str]]],
    out: Path,
    fresh: tuple[tuple[int, ...], str],
    shown: Sequence[str],
    public: Sequence[ScoreRow],
    announce: Callable[[str], None] | None,
    options: Mapping[str, Any],
    label: str,
) -> FreshSeeds:
    """Every scenario's agents on the fresh seeds (:func:`_fresh_scenario`), their scores
    and the agreement of each given agent's fresh scores with its public ones."""
    seeds, drawn_at = fresh
    rows: list[ScoreRow] = []
    failures: list[str] = []
    for index, (scenario, chosen, _) in enumerate(steps, start=1):
        if announce is not None:
            announce(f"fresh seeds, scenario {index}/{len(steps)}: {scenario.name}")
        results, failed = _fresh_scenario(scenario, chosen, out, seeds, **options)
        rows += score_rows(label, scenario.name, results)
        failures += [f"{scenario.name} (fresh seeds): {failure.describe()}" for failure in failed]
    return FreshSeeds(
        seeds=seeds,
        drawn_at=drawn_at,
        revealed_at=computed_now(),
        rows=rows,
        agreements=agreements(shown, public, rows),
        failures=failures,
    )


def write_fresh(out: Path, fresh: FreshSeeds, command: str) -> None:
    """``fresh-scores.csv`` (the rows of every agent on the fresh seeds, as scores.csv)
    and ``fresh-seeds.json`` (the seeds, as decimal strings: they exceed what a JSON
    number holds exactly in most readers; when they were drawn and revealed; each given
    agent's agreement test), both written atomically."""
    write_scores(out / FRESH_SCORES, fresh.rows)
    document = fresh.document(command)
    files.write_json(out / FRESH_SEEDS, document)


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
    (results, failed), recomputed = _noting_recomputed_cells(
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

    shown = [options.labels.get(agent) or _label_of(agent) for agent in agents]
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
        failed = _sweep_failures(directory, short, None)
        if options.agents_only:
            return results, failed
        return stored_results(options.out, short, results), failed

    (results, failed), recomputed = _noting_recomputed_cells(body)
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
        shown = {agent: options.labels.get(agent) or _label_of(agent) for agent in mine}
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
        references=_source(results, archived, (*scenario.agents, BASELINE)),
        untuned=untuned,
        timings=timed,
    )


def _with_earlier_scenarios(
    out: Path,
    every: Sequence[tuple[Scenario, tuple[str, ...], dict[str, str]]],
    runs: Sequence[ScenarioRun],
) -> list[ScenarioRun]:
    """``runs``, and in the suite's order a run read from ``out`` for every scenario of
    the suite (and every affordable horizon of it, ``<scenario>-T<h>``) not run now whose
    cells an earlier bench computed into ``out``."""
    from bco_gym.reports.bench_horizons import SHORT, short_scenario

    ran = {run.scenario.name: run for run in runs}
    found = []
    for scenario, _, _ in every:
        shorts = {}
        for directory in sorted((out / "runs").glob(f"{scenario.name}-T*")):
            match = SHORT.match(directory.name)
            if match and match["name"] == scenario.name and directory.is_dir():
                shorts[directory.name] = int(match["horizon"])
        for name in (scenario.name, *sorted(shorts, key=shorts.get)):  # type: ignore[arg-type]
            if name in ran:
                found.append(ran[name])
                continue
            if not SweepStore(out / "runs" / name).manifest_path.is_file():
                continue
            if name == scenario.name:
                found.append(_stored_run(out, scenario))
                continue
            run = _stored_run(out, short_scenario(scenario, shorts[name], []))
            given = [a for a in run.agents if a not in run.reference_agents]
            found.append(replace(run, scenario=short_scenario(scenario, shorts[name], given)))
    return found


def _stored_run(out: Path, scenario: Scenario) -> ScenarioRun:
    """A scenario not run now, as an earlier bench left it in ``out``."""
    results = stored_results(out, scenario)
    failed = _sweep_failures(out / "runs" / scenario.name, scenario, None)
    agents = tuple(dict.fromkeys(result.agent for result in results))
    failures = [f"{scenario.name}: {failure.describe()}" for failure in failed]
    return ScenarioRun(scenario, agents, {}, results, failures, failed, earlier=True)


def _noting_recomputed_cells(body: Callable[[], T]) -> tuple[T, list[str]]:
    """``body()`` and the cells its sweep found damaged or tampered with and computed
    again (its :class:`~bco_gym.sweeps.sweep.CorruptCellWarning` messages); every
    warning, those included, is raised again to the caller."""
    from bco_gym.sweeps.sweep import CorruptCellWarning

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        value = body()
    recomputed = []
    for caught in seen:
        if issubclass(caught.category, CorruptCellWarning):
            recomputed.append(" ".join(str(caught.message).split()))
        warnings.warn_explicit(caught.message, caught.category, caught.filename, caught.lineno)
    return value, recomputed


def archived_rows(suite: str, scenario: Scenario, results: Sequence[RunResult]) -> frozenset[str]:
    """The series labels of ``results`` whose every run is the shipped archive's own cell
    (the same agent, constants, seed and time of computation): rows read from the
    archive, not computed here (an archive of other code is materialised, then its cells
    are recomputed as stale: those rows are computed here)."""
    from bco_gym.reports.references import ArchiveCorruptError, ArchiveVersionError, load_scenario

    if suite not in ARCHIVED:
        return frozenset()
    try:
        found = load_scenario(suite, scenario.name, check_version=False) or {}
    except (ArchiveCorruptError, ArchiveVersionError):
        return frozenset()
    shipped = {
        (result.agent, result.constants, result.seed, result.computed_at)
        for _, cells in found.values()
        for _, result in cells
    }
    rows: dict[str, bool] = {}
    for result in results:
        key = (result.agent, result.constants, result.seed, result.computed_at)
        label = series_label(result)
        rows[label] = rows.get(label, True) and key in shipped
    return frozenset(label for label, every in rows.items() if every)


def _source(
    results: Sequence[RunResult], archived: frozenset[str], references: Sequence[str]
) -> str:
    """Where a scenario's reference rows come from: "archive", "computed here" or
    "archive in part" (some of its rows)."""
    rows = {series_label(result) for result in results if result.agent in references}
    if rows and rows <= archived:
        return "archive"
    return "archive in part" if rows & archived else "computed here"


def _label_of(agent: str) -> str:
    from bco_gym.agents.registry import resolve_agent

    return resolve_agent(agent).name


def write_scores(path: Path, rows: Sequence[ScoreRow]) -> Path:
    """``scores.csv`` (:data:`~bco_gym.stats.scores.COLUMNS`), sorted, 17 significant
    digits; written atomically, never through a symlink (:func:`bco_gym.io.atomic_write`)."""
    ordered = sorted(rows, key=lambda r: (r.scenario, r.agent, r.seed))
    text = io.StringIO(newline="")
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in ordered:
        writer.writerow(
            [
                row.suite,
                row.scenario,
                row.agent,
                row.feedback,
                row.seed,
                row.horizon,
                repr(row.regret),
                "" if math.isnan(row.score) else repr(row.score),
                "" if row.adaptive_regret is None else repr(row.adaptive_regret),
                "" if row.dynamic_regret is None else repr(row.dynamic_regret),
                row.version or "",
                row.computed_at or "",
            ]
        )
    files.write_text(path, text.getvalue())
    return path
