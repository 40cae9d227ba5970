"""``bco-gym bench --fresh-seeds N``: every scenario's agents played again on seeds drawn
when the run starts (in memory: no file names a fresh seed before every cell has run),
their scores, each given agent's agreement with its public scores, and the files that
reveal them (``fresh-scores.csv``, ``fresh-seeds.json``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bco_gym import io as files
from bco_gym.engine.result import RunResult, computed_now
from bco_gym.reports.bench_plan import row_groups, scenario_horizon, sweep_options
from bco_gym.reports.bench_provenance import BASELINE
from bco_gym.reports.bench_scores import write_scores
from bco_gym.reports.integrity import FreshSeeds, agreements
from bco_gym.reports.suites import Scenario
from bco_gym.stats.scores import ScoreRow, score_rows
from bco_gym.sweeps.failures import CellFailure

FRESH_SEEDS = "fresh-seeds.json"
FRESH_SCORES = "fresh-scores.csv"


def fresh_scenario(
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
        for env_kwargs, members in row_groups(scenario, played):
            options = sweep_options(scenario, members, agent_kwargs, labels, isolate)
            options["env_kwargs"] = env_kwargs
            grid += cells(scenario.env_id, members, [horizon], list(seeds), **options)
    return run_in_memory(grid, backend=backend, progress=progress, batch_size=batch_size)


def fresh_pass(
    steps: Sequence[tuple[Scenario, tuple[str, ...], dict[str, str]]],
    out: Path,
    fresh: tuple[tuple[int, ...], str],
    shown: Sequence[str],
    public: Sequence[ScoreRow],
    announce: Callable[[str], None] | None,
    options: Mapping[str, Any],
    label: str,
) -> FreshSeeds:
    """Every scenario's agents on the fresh seeds (:func:`fresh_scenario`), their scores
    and the agreement of each given agent's fresh scores with its public ones."""
    seeds, drawn_at = fresh
    rows: list[ScoreRow] = []
    failures: list[str] = []
    for index, (scenario, chosen, _) in enumerate(steps, start=1):
        if announce is not None:
            announce(f"fresh seeds, scenario {index}/{len(steps)}: {scenario.name}")
        results, failed = fresh_scenario(scenario, chosen, out, seeds, **options)
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


__all__ = ["FRESH_SCORES", "FRESH_SEEDS", "fresh_pass", "fresh_scenario", "write_fresh"]
