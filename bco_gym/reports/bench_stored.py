"""What earlier benches left in a bench directory: each scenario's finished cells of
agents not run now (shown beside the new ones), the scenarios not run now, its failed
cells, and the cells a sweep found damaged and computed again."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from bco_gym.engine.result import RunResult
from bco_gym.reports.bench_plan import scenario_horizon
from bco_gym.reports.bench_provenance import ScenarioRun
from bco_gym.reports.suites import Scenario
from bco_gym.sweeps.failures import CellFailure
from bco_gym.sweeps.store import SweepStore

T = TypeVar("T")


def sweep_failures(
    directory: Path, scenario: Scenario, agents: Sequence[str] | None
) -> list[CellFailure]:
    """The scenario's failed cells on its seeds, among ``agents`` (None: of any agent)."""
    from bco_gym.sweeps import load_failures

    return [
        failure
        for failure in load_failures(directory)
        if (agents is None or failure.agent in agents) and failure.seed in scenario.seeds
    ]


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
    found = [*plain, *earlier_results(out / "runs" / scenario.name, scenario, horizon, plain)]
    if scenario.tuning is not None:
        again = {result.agent for result in tuned}
        earlier = earlier_results(out / "runs" / f"{scenario.name}-tuned", scenario, horizon, tuned)
        found += [*tuned, *(result for result in earlier if result.agent not in again)]
    return found


def earlier_results(
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


def with_earlier_scenarios(
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
                found.append(stored_run(out, scenario))
                continue
            run = stored_run(out, short_scenario(scenario, shorts[name], []))
            given = [a for a in run.agents if a not in run.reference_agents]
            found.append(replace(run, scenario=short_scenario(scenario, shorts[name], given)))
    return found


def stored_run(out: Path, scenario: Scenario) -> ScenarioRun:
    """A scenario not run now, as an earlier bench left it in ``out``."""
    results = stored_results(out, scenario)
    failed = sweep_failures(out / "runs" / scenario.name, scenario, None)
    agents = tuple(dict.fromkeys(result.agent for result in results))
    failures = [f"{scenario.name}: {failure.describe()}" for failure in failed]
    return ScenarioRun(scenario, agents, {}, results, failures, failed, earlier=True)


def noting_recomputed_cells(body: Callable[[], T]) -> tuple[T, list[str]]:
    """``body()`` and the cells its sweep found damaged or tampered with and computed
    again (its :class:`~bco_gym.sweeps.finished.CorruptCellWarning` messages); every
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


__all__ = [
    "earlier_results",
    "noting_recomputed_cells",
    "stored_results",
    "stored_run",
    "sweep_failures",
    "with_earlier_scenarios",
]
