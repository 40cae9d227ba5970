"""``bco-gym bench --tune``: the references' tuning protocol, applied to a user's agent.

The reference agents of a scenario with a :class:`~bco_gym.reports.scenario.ScaleTuning`
play twice: with their theory constants and with constants tuned on seeds disjoint from
the evaluation seeds. :func:`tune_given` holds a given agent to the same protocol in that
scenario: its scale constant (``SCALE_PARAM``) is chosen by
:func:`~bco_gym.sweeps.tuning.tune` over the references' grid, on the references' tuning
seeds, at the references' tuning horizon (the shorter of it and the agent's affordable
horizon, :func:`~bco_gym.reports.bench_horizons.affordable_horizons`), by mean final
regret, with the agent's given keyword arguments held fixed; then the agent plays the
chosen value on the evaluation seeds (rows ``agent (tuned, c=...)``, scores.csv ``agent
(tuned)``), beside the references' tuned rows in ``runs/<scenario>-tuned``.

A faulty agent fails its own cells: a grid value with a failed tuning cell has no score,
and an agent with no value left has no tuned row (:func:`untuned_reasons` says why).
A scenario without a tuning protocol tunes nothing (its references play their theory
constants). :func:`tuned_constants_lines` writes the report's table of the constants
chosen per scenario, the references' beside the given agents'.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bco_gym.engine.result import RunResult
from bco_gym.reports.page import md_text
from bco_gym.reports.suites import Scenario

#: The sweep directories of a scenario's tuning of the given agents, under ``tuning/``.
GIVEN_TUNING = "{name}-given"


def check_tunable(agents: Sequence[str]) -> None:
    """ValueError naming every agent without a scale constant to tune (``SCALE_PARAM``
    None): ``--tune`` refuses them before any cell runs."""
    from bco_gym.sweeps.tuning import scale_param_of

    fixed = [agent for agent in agents if scale_param_of(agent) is None]
    if fixed:
        verb, them = ("declares", "it") if len(fixed) == 1 else ("declare", "them")
        raise ValueError(
            f"--tune: {', '.join(map(repr, fixed))} {verb} no scale constant (SCALE_PARAM "
            f"is None), so there is nothing to tune; bench {them} without --tune"
        )


def tune_given(
    scenario: Scenario,
    agents: Sequence[str],
    out: Path,
    horizons: Mapping[str, int],
    *,
    agent_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
    labels: Mapping[str, str] | None = None,
    backend: str = "serial",
    batch_size: int | None = None,
    progress: bool | str | None = None,
    reuse_stale: bool = False,
) -> list[RunResult]:
    """Tune each of ``agents`` (given agents, not the scenario's references) by the
    scenario's protocol and play the chosen constant on its evaluation seeds at
    ``horizons[agent]`` (module docstring): the tuned rows. An agent whose every grid
    value failed has none (:func:`untuned_reasons` says why); a scenario without a
    tuning protocol gives none."""
    plan = scenario.tuning
    if plan is None:
        return []
    common = {
        "backend": backend,
        "progress": progress,
        "batch_size": batch_size,
        "reuse_stale": reuse_stale,
    }
    by_horizon: dict[int, list[str]] = {}
    for agent in agents:
        by_horizon.setdefault(min(plan.horizon, horizons[agent]), []).append(agent)
    return [
        result
        for horizon, group in by_horizon.items()
        for result in _tune_group(
            scenario, group, out, horizon, horizons, agent_kwargs or {}, labels or {}, common
        )
    ]


def _tune_group(
    scenario: Scenario,
    agents: Sequence[str],
    out: Path,
    horizon: int,
    horizons: Mapping[str, int],
    agent_kwargs: Mapping[str, Mapping[str, Any]],
    labels: Mapping[str, str],
    common: dict[str, Any],
) -> list[RunResult]:
    """Tune ``agents`` at ``horizon`` on the plan's seeds, then play the chosen values."""
    from bco_gym.sweeps.sweep import cells, run_cells
    from bco_gym.sweeps.tuning import TuningFailedError, check_disjoint, tune

    plan = scenario.tuning
    assert plan is not None
    stem = GIVEN_TUNING.format(name=scenario.name)
    stem += "" if horizon == plan.horizon else f"-T{horizon}"
    fixed = {agent: dict(agent_kwargs[agent]) for agent in agents if agent_kwargs.get(agent)}
    try:
        tuning = tune(
            scenario.env_id,
            list(agents),
            horizon,
            list(plan.seeds),
            list(plan.grid),
            out=out / "tuning" / stem,
            env_kwargs=dict(scenario.env_kwargs),
            agent_kwargs=fixed or None,
            failures="record",
            **common,
        )
    except TuningFailedError as error:  # the others' constants were chosen
        tuning = error.tuning
    check_disjoint(tuning, scenario.seeds)
    overrides = tuning.overrides()
    grid = []
    for agent in agents:
        if agent not in overrides:
            continue
        grid += cells(
            scenario.env_id,
            agent,
            [horizons[agent]],
            list(scenario.seeds),
            env_kwargs=dict(scenario.env_kwargs),
            agent_kwargs={agent: dict(overrides[agent])},
            constants={agent: "tuned"},
            labels={agent: labels[agent]} if agent in labels else None,
        )
    if not grid:
        return []
    directory = out / "runs" / f"{scenario.name}-tuned"
    return list(run_cells(grid, out=directory, failures="record", **common))


#: Why a given agent has no tuned row in a scenario without a tuning protocol.
NO_PROTOCOL = "the scenario has no tuning protocol (its references play their theory constants)"


def untuned_reasons(
    scenario: Scenario, given: Mapping[str, str], results: Sequence[RunResult], out: Path
) -> dict[str, str]:
    """Label -> why: the given agents (agent -> label) with no tuned row in ``results``."""
    from bco_gym.sweeps import load_failures

    tuned = {result.agent for result in results if result.constants == "tuned"}
    missing = {agent: label for agent, label in given.items() if label not in tuned}
    if scenario.tuning is None:
        return dict.fromkeys(missing.values(), NO_PROTOCOL)
    reasons = {}
    for agent, label in missing.items():
        found = [
            failure
            for directory in (out / "tuning").glob(GIVEN_TUNING.format(name=scenario.name) + "*")
            if directory.is_dir()
            for failure in load_failures(directory)
            if failure.agent == agent
        ]
        reasons[label] = (
            f"its tuning failed ({len(found)} failed cell(s), e.g. {found[0].describe()})"
            if found
            else "its tuned cells failed (see Failed cells)"
        )
    return reasons


def tuned_constants_lines(
    runs: Sequence[Any], untuned: Mapping[str, Mapping[str, str]] | None = None
) -> list[str]:
    """The report's section on tuned constants: per scenario (rows), the constant each
    tuned row plays (columns: the references' and the given agents'), with the grid, seeds
    and horizon of the protocol; and the given agents left without a tuned row, why."""
    from bco_gym.reports.bench_provenance import seed_text
    from bco_gym.reports.summary import render_markdown

    table: dict[str, dict[str, str]] = {}
    agents: list[str] = []
    for run in runs:
        for result in run.results:
            if result.constants != "tuned" or result.scale_param is None:
                continue
            agents.append(result.agent)
            value = result.scale_value
            shown = f"{value:g}" if isinstance(value, float | int) else str(value)
            table.setdefault(run.scenario.name, {})[result.agent] = f"{result.scale_param}={shown}"
    notes = [
        f"- {md_text(f'{agent} on {name}: no tuned row, {why}')}"
        for name, found in (untuned or {}).items()
        for agent, why in found.items()
    ]
    if not table and not notes:
        return []
    columns = list(dict.fromkeys(agents))
    plans = {run.scenario.name: run.scenario.tuning for run in runs}
    body = []
    for name, chosen in table.items():
        plan = plans[name]
        protocol = (
            "-"
            if plan is None
            else f"{{{', '.join(f'{v:g}' for v in plan.grid)}}}; seeds "
            f"{seed_text(plan.seeds)}; T = {plan.horizon:,}"
        )
        body.append([name, protocol, *(chosen.get(agent, "-") for agent in columns)])
    lines = [
        "## Tuned constants",
        "",
        "Every tuned row's constant, chosen as the references' are (`bco-gym bench --tune` "
        "for a given agent): its scale constant over the grid, by mean final regret on the "
        "tuning seeds (disjoint from the evaluation seeds) at the tuning horizon (an agent "
        "whose rounds are costly at its own, shorter horizon, as FKM at scale); the tuned "
        "row then plays that value on the evaluation seeds.",
        "",
    ]
    if body:
        lines += [render_markdown(["scenario", "grid; seeds; horizon", *columns], body), ""]
    if notes:
        lines += [*notes, ""]
    return lines
