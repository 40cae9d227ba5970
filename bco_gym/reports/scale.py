"""Scenarios at scale: theory constants beside tuned ones, at several horizons.

A scenario of a suite with a :class:`~bco_gym.reports.scenario.ScaleTuning` is played in
three steps, each a resumable sweep under ``out``:

1. every agent with its theory constants at every horizon (``runs/<name>``); an agent
   of ``Scenario.agent_horizons`` (FKM at scale: a projection most rounds) plays its
   own, shorter horizons on the same seeds;
2. :func:`~bco_gym.sweeps.tuning.tune` on the tuning seeds, one tuning per tuning
   horizon (``tuning/<name>`` and ``tuning/<name>.json`` for the plan's horizon,
   ``tuning/<name>-T<h>`` and its JSON for an agent tuned at its own horizon h), each
   refused by :func:`~bco_gym.sweeps.tuning.check_disjoint` if its seeds overlap the
   evaluation seeds;
3. the tuned agents (constants label "tuned") at their horizons on the evaluation seeds
   (``runs/<name>-tuned``).

:func:`tuning_markdown` writes what the report says of the tuning: grid, seeds,
horizon, the fixed arguments, every grid value's mean regret and the chosen constant.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bco_gym.engine.result import RunResult
from bco_gym.reports.page import figure_lines, md_text
from bco_gym.reports.suites import ScaleTuning, Scenario
from bco_gym.reports.summary import render_markdown
from bco_gym.sweeps.sweep import Cell, cells, run_cells
from bco_gym.sweeps.tuning import AgentKeyed, Tuning, check_disjoint, save_tuned, tune


def play_scenario(
    spec: Scenario,
    out: str | os.PathLike,
    horizons: Sequence[int],
    *,
    backend: str = "serial",
    progress: bool | str | None = None,
    failures: str = "raise",
    isolate: Sequence[str] = (),
    reuse_stale: bool = False,
) -> tuple[list[RunResult], list[Tuning]]:
    """The scenario's results (theory, then tuned if ``spec.tuning``) and its tunings.

    Every agent plays ``horizons`` except those of ``spec.agent_horizons``, which play
    their own (same seeds). Agents tuned at different horizons
    (:attr:`~bco_gym.reports.scenario.ScaleTuning.agent_horizons`) give one
    :class:`~bco_gym.sweeps.tuning.Tuning` per horizon: ``tuning/<name>.json`` for the
    plan's own horizon, ``tuning/<name>-T<horizon>.json`` for the others.
    ``failures`` ("raise" or "record", as for :func:`~bco_gym.sweeps.sweep.run_cells`)
    applies to the theory sweep, where user agents run (``bco-gym bench``), and so does
    ``isolate`` (the agents that play in their own process, :mod:`bco_gym.engine.isolation`);
    ``reuse_stale`` to every sweep (:func:`~bco_gym.sweeps.sweep.run_cells`).
    """
    out = Path(out)
    common: dict[str, Any] = {"backend": backend, "progress": progress, "reuse_stale": reuse_stale}
    grid = _cells(spec, spec.agents, horizons, isolate=isolate)
    results = run_cells(grid, out=out / "runs" / spec.name, failures=failures, **common)
    if spec.tuning is None:
        return results, []
    tunings, tuned_grid = tuned_cells(spec, out, horizons, common)
    if not tuned_grid:
        return results, tunings
    tuned = run_cells(tuned_grid, out=out / "runs" / f"{spec.name}-tuned", **common)
    return [*results, *tuned], tunings


def tuned_cells(
    spec: Scenario, out: Path, horizons: Sequence[int], common: dict[str, Any]
) -> tuple[list[Tuning], list[Cell]]:
    """The scenario's tunings (computed into ``out/tuning``, or resumed from it) and the
    cells of its tuned agents at ``horizons`` with the constants chosen."""
    assert spec.tuning is not None
    env_kwargs = dict(spec.env_kwargs)
    tunings = [
        _tune(spec, agents, horizon, out, env_kwargs, common)
        for horizon, agents in _tuning_groups(spec.tuning).items()
    ]
    overrides = AgentKeyed((a, kw) for tuning in tunings for a, kw in tuning.overrides().items())
    agents = [agent for agent in spec.tuning.agents if agent in overrides]
    if not agents:
        return tunings, []
    constants = dict.fromkeys(agents, "tuned")
    return tunings, _cells(spec, agents, horizons, overrides, constants)


def scenario_cells(
    spec: Scenario,
    out: str | os.PathLike,
    horizons: Sequence[int],
    *,
    backend: str = "serial",
    progress: bool | str | None = None,
    isolate: Sequence[str] = (),
) -> list[Cell]:
    """Every cell :func:`play_scenario` plays (theory, then tuned), not played: the
    tunings are resumed from ``out/tuning`` (or computed there)."""
    grid = _cells(spec, spec.agents, horizons, isolate=isolate)
    if spec.tuning is None:
        return grid
    common = {"backend": backend, "progress": progress}
    return [*grid, *tuned_cells(spec, Path(out), horizons, common)[1]]


def _cells(
    spec: Scenario,
    agents: Sequence[str],
    horizons: Sequence[int],
    agent_kwargs: dict[str, dict[str, Any]] | None = None,
    constants: dict[str, str] | None = None,
    isolate: Sequence[str] = (),
) -> list[Cell]:
    """Each agent's cells at its horizons (``spec.agent_horizons`` or ``horizons``), with
    the scenario's own ``spec.agent_kwargs`` under ``agent_kwargs`` (the tuned ones); the
    agents of ``isolate`` in their own process. Every agent plays the scenario's env
    keywords, with its row's own feedback where it has one (``spec.env_kwargs_of``)."""
    grid = []
    for agent in agents:
        own = spec.horizons_of(agent) if agent in spec.agent_horizons else horizons
        kwargs = {**spec.agent_kwargs.get(agent, {}), **(agent_kwargs or {}).get(agent, {})}
        label = (constants or {}).get(agent, "theory")
        grid += cells(
            spec.env_id, agent, list(own), list(spec.seeds),
            env_kwargs=spec.env_kwargs_of(agent),
            agent_kwargs={agent: kwargs} if kwargs else None, constants={agent: label},
            isolate=[agent] if agent in isolate else (),
        )  # fmt: skip
    return grid


def _tuning_groups(plan: ScaleTuning) -> dict[int, list[str]]:
    """The tuned agents grouped by their tuning horizon, the plan's own first."""
    groups: dict[int, list[str]] = {plan.horizon: []}
    for agent in plan.agents:
        groups.setdefault(plan.horizon_of(agent), []).append(agent)
    return {horizon: agents for horizon, agents in groups.items() if agents}


def _tune(
    spec: Scenario,
    agents: Sequence[str],
    horizon: int,
    out: Path,
    env_kwargs: dict[str, Any],
    common: dict[str, Any],
) -> Tuning:
    """Tune ``agents`` at ``horizon`` on the plan's seeds; check and save the outcome."""
    plan = spec.tuning
    assert plan is not None
    stem = spec.name if horizon == plan.horizon else f"{spec.name}-T{horizon}"
    tuning = tune(
        spec.env_id,
        list(agents),
        horizon,
        list(plan.seeds),
        list(plan.grid),
        out=out / "tuning" / stem,
        env_kwargs=env_kwargs,
        agent_kwargs={
            a: {**spec.agent_kwargs.get(a, {}), **plan.fixed.get(a, {})}
            for a in agents
            if a in plan.fixed or a in spec.agent_kwargs
        },
        **common,
    )
    check_disjoint(tuning, spec.seeds)
    save_tuned(out / "tuning" / f"{stem}.json", tuning)
    return tuning


def tuning_markdown(tuning: Tuning, evaluation_seeds: Sequence[int]) -> list[str]:
    """The report's account of a tuning: seeds, horizon, fixed arguments, grid scores."""
    if not tuning.constants:
        return []
    grid = next(iter(tuning.constants.values())).grid
    header = ["agent", "constant", "theory value", *(f"{v:g}" for v in grid), "tuned"]
    body = []
    for agent, chosen in tuning.constants.items():
        theory = "-" if chosen.theory_value is None else f"{chosen.theory_value:.4g}"
        scores = [f"{score:.5g}" for score in chosen.scores]
        body.append([agent, chosen.param, theory, *scores, f"{chosen.value:g}"])
    fixed = "; ".join(
        f"{agent}: " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                 for k, v in kwargs.items())
        for agent, kwargs in tuning.fixed.items()
    )  # fmt: skip
    return [
        "### Tuned constants",
        "",
        f"Tuned by `bco-gym tune` (grid search, mean final regret) at T = "
        f"{tuning.horizon:,} on seeds {list(tuning.tune_seeds)}, disjoint from the "
        f"evaluation seeds {list(evaluation_seeds)}; held fixed: {md_text(fixed or 'nothing')}. "
        "Each grid column is the mean final regret over the tuning seeds; the rows "
        "labelled *tuned* above use the chosen value at every horizon.",
        "",
        render_markdown(header, body),
        "",
    ]


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def _per_round(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def reference_label(labels: Sequence[str], agent: str) -> str | None:
    """The tuned series of ``agent`` if there is one, else its theory series, else None."""
    tuned = [label for label in labels if label.startswith(f"{agent} (tuned")]
    if tuned:
        return tuned[0]
    return agent if agent in labels else None


def frontier_markdown(
    directory: str | os.PathLike,
    results: Sequence[RunResult],
    stem: str,
    *,
    reference: str = "fkm",
) -> list[str]:
    """The frontier section: figure, points, the budget table and equal-regret speed-ups.

    Seconds are CPU seconds of agent plus environment
    (:func:`~bco_gym.stats.frontier.run_seconds`). The reference is ``reference``'s
    tuned series (its theory series without tuning); the budget is the most seconds a
    seed of the reference spent at its largest horizon (so it reaches that horizon on
    every seed, and cheaper series reach larger ones), or without a reference the
    greatest, over series, of the mean seconds at the smallest horizon; the equal-regret
    level is the lowest R_T / T that every tuned series reaches (every non-random series
    without tuning).
    """
    from bco_gym.plotting import save
    from bco_gym.plotting.frontier import frontier_figure
    from bco_gym.stats.frontier import (
        budget_rows,
        common_level,
        equal_regret_rows,
        frontier_points,
        reference_budget,
    )

    curves = frontier_points(results)
    if all(len(points) < 2 for points in curves.values()):
        return []
    base = reference_label(list(curves), reference)
    budget = None if base is None else reference_budget(results, base)
    if budget is None:
        budget = max(points[0].seconds for points in curves.values())
    figure = save(frontier_figure(results, budget=budget), Path(directory) / f"{stem}-frontier.png")
    reading = (
        "Read it left to right at a fixed height: the series that reaches a given R_T / T "
        "with fewer CPU seconds per run is the cheaper way to that regret, and the dotted "
        "line marks the CPU budget of the reference."
    )
    lines = ["### Compute frontier", ""]
    lines += figure_lines(figure.name, "R_T / T against CPU seconds", reading)
    header = ["series", "T", "seeds", "CPU s/run", "final regret", "R_T / T"]
    body = [
        [p.label, f"{p.horizon:,}", str(p.seeds), _seconds(p.seconds), f"{p.regret:.5g}",
         _per_round(p.per_round)]
        for points in curves.values() for p in points
    ]  # fmt: skip
    lines += [
        "Seconds are process CPU seconds of agent plus environment per run (the "
        "comparator excluded; a batch's time shared among its seeds).",
        "",
        render_markdown(header, body),
        "",
    ]
    if base is None:
        return lines
    rows = budget_rows(results, budget, base)
    header = ["series", "T reached per seed", "R_T / T", f"minus {base} [95% CI]", "wins"]
    shown = md_text(base)
    body = []
    for row in rows:
        if row.difference is None:
            paired = "(reference)" if row.label == base else "-"
        else:
            paired = f"{row.difference:.4g} [{row.difference_low:.4g}, {row.difference_high:.4g}]"
        wins = "-" if row.wins is None else f"{row.wins}/{row.pairs}"
        reached = ", ".join(f"{h:,}" for h in row.horizons) or "none"
        body.append([row.label, reached, _per_round(row.per_round), paired, wins])
    lines += [
        f"Within a budget of {budget:.3g} CPU s per run ({shown}'s most seconds on a seed "
        "at its largest horizon), each series' largest horizon on each seed and its "
        f"R_T / T, paired by seed with {shown}:",
        "",
        render_markdown(header, body),
        "",
    ]
    learners = [label for label in curves if "(tuned" in label] or [
        label for label in curves if not label.startswith("random")
    ]
    level = common_level(curves, learners)
    if level is None:
        return lines
    header = ["series", "seconds to reach it", f"speed-up over {base}"]
    body = [
        [row.label, _seconds(row.seconds),
         "-" if row.speedup is None else f"{row.speedup:.3g}x"]
        for row in equal_regret_rows(curves, base, level)
    ]  # fmt: skip
    lines += [
        f"Equal regret: seconds per run to reach R_T / T = {level:.4g} (the lowest level "
        f"every one of {', '.join(map(md_text, learners))} reaches; log-linear interpolation "
        f"between horizons), and {shown}'s seconds over the series' own. Where R_T / T does not "
        "fall with T (nothing learned), the level is reached at the first horizon and the "
        "speed-up is the ratio of the costs per run:",
        "",
        render_markdown(header, body),
        "",
    ]
    return lines


def scale_parts(
    tunings: Sequence[Tuning], evaluation_seeds: Sequence[int]
) -> tuple[Callable[[Path, list[RunResult], str], list[str]], ...]:
    """The report parts of a scenario at scale: its tunings, then its compute frontier."""

    def tuned(directory: Path, results: list[RunResult], stem: str) -> list[str]:
        return [line for t in tunings for line in tuning_markdown(t, evaluation_seeds)]

    return (tuned, frontier_markdown)
