"""Sweeps: the grid of (env, agent, horizon, seed) cells, computed in batches, resumable.

A cell is one :func:`~bco_gym.engine.runner.run`; its result depends only on the
cell (the seeds are part of it). Cells that differ only by seed are computed together
as one batch of :func:`~bco_gym.engine.many.run_many` (``batch_size`` seeds at a
time; None chooses a size that fits a memory budget), on a serial, process-pool or Ray
backend (:mod:`~bco_gym.sweeps.backends`); every batch size and backend gives
bit-identical outcomes.

This process writes each result (see :mod:`~bco_gym.sweeps.results`) the moment
its batch arrives, so a killed sweep loses at most the batches in flight, and re-running
the same sweep skips the finished cells (a finished cell is re-verified when read; one
that fails is computed again, with a warning). One process writes a directory at a time
(its lock, see :mod:`~bco_gym.sweeps.store`); a sweep may grow by seeds or agents.
Workers exit when the sweeping process dies, even by SIGKILL.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from bco_gym.engine.compiled import kernel_mode
from bco_gym.engine.result import RunResult
from bco_gym.engine.tally import check_horizon
from bco_gym.sweeps.backends import (
    BACKENDS,
    batches,
    check_agents_for_backend,
    run_on,
    split_costly,
    worker_count,
)
from bco_gym.sweeps.cell import IDENTITY_FIELDS, MAX_SEED, MAX_SEEDS, Cell
from bco_gym.sweeps.failures import (
    CellFailure,
    CellFailureWarning,
    clear_failure,
    save_failure,
)
from bco_gym.sweeps.finished import (
    FAILURE_MODES,
    CorruptCellWarning,
    StaleCellWarning,
    as_stored,
    cell_key,
    labelled,
    load_finished,
)
from bco_gym.sweeps.store import SweepStore


# -- the grid -------------------------------------------------------------------------------------
def cells(
    envs: Sequence[str] | str,
    agents: Sequence[str] | str,
    horizons: Sequence[int] | int,
    seeds: Sequence[int] | int,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    agent_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
    constants: Mapping[str, str] | None = None,
    checkpoints: Sequence[int] | None = None,
    fast: bool | None = None,
    labels: Mapping[str, str] | None = None,
    isolate: Sequence[str] | bool = (),
) -> list[Cell]:
    """The grid envs x agents x horizons x seeds, in that nesting order.

    Args:
        envs, agents, horizons: one value or a sequence of them.
        seeds: a sequence of seeds, or a count K meaning seeds 0..K-1.
        env_kwargs: ``gym.make`` keyword arguments shared by every env.
        agent_kwargs: overrides per agent name, e.g. ``{"bbcg": {"c": 0.5}}``.
        constants: label per agent name; default "theory" for an agent without
            overrides and "custom" for one with.
        checkpoints, fast: passed to every run.
        labels: what an agent's results are called, per agent name (default: its
            spec's label, :attr:`~bco_gym.agents.registry.AgentSpec.name`).
        isolate: the agents whose runs play in their own process (True: every agent;
            :mod:`~bco_gym.engine.isolation`); their cells are keyed apart from the same
            agent's cells played in-process.

    Every agent given must resolve here (its cells carry its identity); ValueError when
    two agents are one identity, or two identities would share one label.
    """
    envs, agents = _as_list(envs), _as_list(agents)
    isolated = set(agents) if isolate is True else set(isolate or ())
    if isolated - set(agents):
        raise ValueError(f"isolate names agents {sorted(isolated - set(agents))} not in {agents}")
    horizons = [check_horizon(h) for h in _as_list(horizons)]
    seed_list = _seed_list(seeds)
    agent_kwargs = dict(agent_kwargs or {})
    constants = dict(constants or {})
    labels = dict(labels or {})
    for name, mapping in (
        ("agent_kwargs", agent_kwargs),
        ("constants", constants),
        ("labels", labels),
    ):
        unknown = sorted(set(mapping) - set(agents))
        if unknown:
            raise ValueError(f"{name} names agents {unknown} that are not in the sweep {agents}")
    identities = agent_identities(agents, agent_kwargs, labels)
    frozen_checkpoints = None if checkpoints is None else tuple(int(c) for c in checkpoints)
    grid = []
    for env_id in envs:
        for agent in agents:
            overrides = dict(agent_kwargs.get(agent, {}))
            identity, shown, bound = identities[agent]
            label = constants.get(agent, "custom" if overrides or bound else "theory")
            for horizon in horizons:
                for seed in seed_list:
                    grid.append(
                        Cell(
                            env_id=env_id,
                            agent=agent,
                            horizon=horizon,
                            seed=seed,
                            env_kwargs=dict(env_kwargs or {}),
                            agent_kwargs=overrides,
                            constants=label,
                            checkpoints=frozen_checkpoints,
                            fast=fast,
                            label=shown,
                            identity=identity,
                            isolate=agent in isolated,
                        )
                    )
    return grid


def agent_identities(
    agents: Sequence[Any],
    agent_kwargs: Mapping[Any, Mapping[str, Any]],
    labels: Mapping[Any, str],
) -> dict[Any, tuple[str, str, bool]]:
    """agent -> (identity, label, whether a variant binds keywords). ValueError when
    two agents given are one identity (two spellings of one agent), or two identities
    share a label (pass labels)."""
    from bco_gym.agents import resolve_agent

    found: dict[Any, tuple[str, str, bool]] = {}
    for agent in agents:
        spec = resolve_agent(agent)
        label = labels.get(agent, spec.name)
        found[agent] = (spec.identity(agent_kwargs.get(agent, {})), label, bool(spec.kwargs))
    by_identity: dict[str, list[Any]] = {}
    by_label: dict[str, set[str]] = {}
    for agent, (identity, label, _) in found.items():
        by_identity.setdefault(identity, []).append(agent)
        by_label.setdefault(label, set()).add(identity)
    for identity, spellings in by_identity.items():
        if len(spellings) > 1:
            raise ValueError(
                f"agents {', '.join(map(repr, spellings))} are one agent ({identity}); give it once"
            )
    for label, shared in by_label.items():
        if len(shared) > 1:
            raise ValueError(
                f"agents {', '.join(sorted(shared))} would all be labelled {label!r}; give "
                "each its own label (--label NAME=LABEL, or labels={...})"
            )
    return found


def _as_list(values: Any) -> list[Any]:
    if isinstance(values, str | int | np.integer | type) or callable(values):
        return [values]
    values = list(values)
    if not values:
        raise ValueError("a sweep needs at least one value on every axis; got an empty list")
    return values


def _seed_list(seeds: Sequence[int] | int) -> list[int]:
    if isinstance(seeds, int | np.integer) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ValueError(f"seeds={seeds} must be a positive count (or a list of seeds)")
        return list(range(int(seeds)))
    values = list(seeds)
    if not values:
        raise ValueError("seeds is empty; give a positive count or a list of seeds")
    for seed in values:
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise ValueError(f"seed {seed!r} must be a non-negative integer")
    values = [int(seed) for seed in values]
    if len(set(values)) != len(values):
        raise ValueError(f"seeds {values} contain duplicates")
    return values


# -- running a sweep ------------------------------------------------------------------------------
def sweep(
    envs: Sequence[str] | str,
    agents: Sequence[str] | str,
    horizons: Sequence[int] | int,
    seeds: Sequence[int] | int,
    *,
    out: str | os.PathLike,
    backend: str = "serial",
    env_kwargs: Mapping[str, Any] | None = None,
    agent_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
    constants: Mapping[str, str] | None = None,
    checkpoints: Sequence[int] | None = None,
    fast: bool | None = None,
    progress: bool | str | None = None,
    ray_address: str | None = None,
    batch_size: int | None = None,
    failures: str = "raise",
    labels: Mapping[str, str] | None = None,
    reuse_stale: bool = False,
    isolate: Sequence[str] | bool = (),
) -> list[RunResult]:
    """Run the grid of :func:`cells` into the directory ``out``; return its results.

    ``agents`` are names or import paths ``"package.module:ClassName"`` (an Agent
    subclass or factory given as an object is taken by its import path): workers
    receive the string, never a pickled agent, and a name registered only in this
    process runs on the serial backend alone (ValueError naming the way out).

    Finished cells found in ``out`` are loaded, not recomputed. ``out`` holding a
    different sweep raises :class:`~bco_gym.sweeps.results.SweepMismatchError`.
    ``progress`` shows a tqdm bar over rounds (None: only on a terminal; "lines": a
    line per finished cell on stderr). ``failures``: "raise" (default) lets a cell's
    error propagate; "record" lets the other cells finish, writes each failure to
    ``out/failures/`` (:func:`~bco_gym.sweeps.failures.load_failures`), warns with a
    :class:`~bco_gym.sweeps.failures.CellFailureWarning` and returns the results of
    the cells that finished. ``labels``, ``isolate`` and ``reuse_stale``: as for
    :func:`cells` and :func:`run_cells`.
    """
    grid = cells(
        envs,
        check_agents_for_backend(_as_list(agents), backend),
        horizons,
        seeds,
        env_kwargs=env_kwargs,
        agent_kwargs=agent_kwargs,
        constants=constants,
        checkpoints=checkpoints,
        fast=fast,
        labels=labels,
        isolate=isolate,
    )
    return run_cells(
        grid,
        out=out,
        backend=backend,
        progress=progress,
        ray_address=ray_address,
        batch_size=batch_size,
        failures=failures,
        reuse_stale=reuse_stale,
    )


def run_cells(
    grid: Sequence[Cell],
    *,
    out: str | os.PathLike,
    backend: str = "serial",
    progress: bool | str | None = None,
    ray_address: str | None = None,
    batch_size: int | None = None,
    failures: str = "raise",
    cost: Callable[[Cell], float] | None = None,
    reuse_stale: bool = False,
) -> list[RunResult]:
    """Run any list of cells into ``out`` (the engine behind :func:`sweep` and tuning).

    ``failures``: "raise" or "record", as for :func:`sweep`; with "record" the list
    holds the results of the cells that finished, in grid order.

    Holds ``out``'s lock throughout (:class:`~bco_gym.sweeps.store.SweepLockedError`
    if another process holds it). A cell whose files are there but fail verification
    is recomputed, with a :class:`CorruptCellWarning` naming it. ``progress``: True a
    tqdm bar, "lines" one line per finished cell on stderr, False nothing, None a bar
    on a terminal and nothing otherwise. ``batch_size``: seeds computed together
    (:func:`~bco_gym.sweeps.backends.batches`; None: chosen for memory). ``cost``: a
    cell's estimated seconds, for a bar whose ETA weighs cells by cost (it then moves
    as cells finish) instead of counting rounds (rounds of different sets or agents
    may differ in cost by 10^4).

    A ``BCO_GYM_KERNELS`` value not allowed raises ValueError before any cell runs (as
    :func:`~bco_gym.engine.runner.run` does), not once per cell.

    Cells are found by their agent's identity, whatever spelling computed them; a
    result found is returned under the label asked for now. A finished cell computed by
    other code than the agent's current one (its code digest differs: the module or a
    helper of its package was edited, the name re-registered) is *stale*: it is
    recomputed, with a :class:`StaleCellWarning` naming the agent and the cells, unless
    ``reuse_stale``, which keeps it and records so in its ``warnings``. So is a cell
    whose agent has no digest now or had none then (defined in ``python -c`` or a
    notebook, made with ``type()``:
    :attr:`~bco_gym.agents.registry.AgentSpec.no_digest_reason`): nothing proves its
    code unchanged, and the warning says why.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}; allowed: {', '.join(BACKENDS)}")
    if failures not in FAILURE_MODES:
        raise ValueError(f"failures={failures!r}; allowed: {', '.join(FAILURE_MODES)}")
    kernel_mode()  # a BCO_GYM_KERNELS value not allowed is the caller's error, not each cell's
    check_agents_for_backend(sorted({cell.agent for cell in grid}), backend)
    keys = [cell.key for cell in grid]
    if len(set(keys)) != len(keys):
        raise ValueError("the sweep lists the same cell twice")
    store = SweepStore(out)
    with store.lock():
        grid, documents = as_stored(store, grid)
        keys = [cell.key for cell in grid]
        store.open({"cells": [documents[key] for key in keys]}, key=cell_key)
        results = load_finished(store, grid, documents, reuse_stale)
        pending = [cell for cell in grid if cell.key not in results]
        report = _Progress(grid, set(results), progress, cost)
        failed: list[CellFailure] = []

        def finished(cell: Cell, result: RunResult | CellFailure) -> None:
            if isinstance(result, CellFailure):
                save_failure(out, result)
                failed.append(result)
                report.finished(cell, None)
                return
            document = documents[cell.key]
            stored_label = document.get("label", document["agent"])
            store.save(cell.key, labelled(result, stored_label), document)
            clear_failure(out, cell.key)
            results[cell.key] = labelled(result, cell.label)
            report.finished(cell, result)

        try:
            if pending:
                grouped = batches(pending, batch_size, worker_count(backend))
                if cost is not None:
                    grouped = split_costly(grouped, cost, worker_count(backend))
                record = failures == "record"
                run_on(
                    backend,
                    grouped,
                    finished,
                    ray_address=ray_address,
                    record_failures=record,
                    advance=report.advance,
                    cost=cost,
                )
        finally:
            report.close()
    if failed:
        shown = "; ".join(failure.describe() for failure in failed[:3])
        more = f" (and {len(failed) - 3} more)" if len(failed) > 3 else ""
        warnings.warn(
            f"{len(failed)} of {len(grid)} cells failed, recorded in {out}/failures: {shown}{more}",
            CellFailureWarning,
            stacklevel=2,
        )
    return [results[key] for key in keys if key in results]


def run_in_memory(
    grid: Sequence[Cell],
    *,
    backend: str = "serial",
    progress: bool | str | None = None,
    ray_address: str | None = None,
    batch_size: int | None = None,
) -> tuple[list[RunResult], list[CellFailure]]:
    """Compute cells without a directory: (the results of the cells that finished, in
    grid order; the failures of the others), nothing written anywhere.

    For cells whose very seeds must not reach the disk before every one of them has run
    (the fresh seeds of ``bco-gym bench --fresh-seeds``: an agent could read a finished
    cell's file, learn the seed and rebuild its losses). Not resumable, by design.
    Batches, backends and progress as for :func:`run_cells`; failures are recorded
    (``failures="record"``), never raised.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}; allowed: {', '.join(BACKENDS)}")
    kernel_mode()
    check_agents_for_backend(sorted({cell.agent for cell in grid}), backend)
    keys = [cell.key for cell in grid]
    if len(set(keys)) != len(keys):
        raise ValueError("the grid lists the same cell twice")
    results: dict[str, RunResult] = {}
    failed: list[CellFailure] = []
    report = _Progress(grid, set(), progress)

    def finished(cell: Cell, result: RunResult | CellFailure) -> None:
        if isinstance(result, CellFailure):
            failed.append(result)
            report.finished(cell, None)
            return
        results[cell.key] = labelled(result, cell.label)
        report.finished(cell, result)

    try:
        if grid:
            grouped = batches(list(grid), batch_size, worker_count(backend))
            run_on(
                backend,
                grouped,
                finished,
                ray_address=ray_address,
                record_failures=True,
                advance=report.advance,
            )
    finally:
        report.close()
    return [results[key] for key in keys if key in results], failed


class _Progress:
    """A sweep's progress: a tqdm bar over rounds (every cell's T, counted as they are
    played, inside a batch too), a line per finished cell, or nothing.

    ``advance(rounds)`` is called by the backends as rounds are played; ``finished``
    when a cell's result (or failure) arrives, crediting what was not counted yet.
    """

    def __init__(
        self,
        grid: Sequence[Cell],
        done: set[str],
        progress: bool | str | None,
        cost: Callable[[Cell], float] | None = None,
    ):
        if progress not in (True, False, None, "lines"):
            raise ValueError(f"progress={progress!r}; allowed: True, False, None, 'lines'")
        if progress is None:
            progress = sys.stderr.isatty()
        self.mode = progress
        self.total = len(grid)
        self.count = len(done)
        self.uncredited = 0
        self.bar = None
        self.cost = cost
        if progress is True:
            from tqdm.auto import tqdm

            if cost is not None:  # estimated seconds, credited as cells finish
                total = sum(cost(cell) for cell in grid)
                initial = sum(cost(cell) for cell in grid if cell.key in done)
                self.bar = tqdm(
                    total=total,
                    initial=initial,
                    desc=f"{self.total} runs",
                    bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed} elapsed, "
                    "ETA {remaining}",
                )
                return
            rounds = sum(cell.horizon for cell in grid)
            initial = sum(cell.horizon for cell in grid if cell.key in done)
            self.bar = tqdm(
                total=rounds, initial=initial, unit="round", unit_scale=True, desc="rounds"
            )

    @property
    def advance(self) -> Callable[[int], None] | None:
        return self._advance if self.bar is not None and self.cost is None else None

    def _advance(self, rounds: int) -> None:
        self.uncredited += rounds
        self.bar.update(rounds)

    def finished(self, cell: Cell, result: RunResult | None) -> None:
        self.count += 1
        if self.bar is not None and self.cost is not None:
            self.bar.update(self.cost(cell))
        elif self.bar is not None:
            counted = min(self.uncredited, cell.horizon)
            self.uncredited -= counted
            self.bar.update(cell.horizon - counted)
        elif self.mode == "lines":
            outcome = (
                "failed (see failures/)"
                if result is None
                else f"regret {result.final_regret:.4g} ({result.wall_seconds:.2g} s)"
            )
            print(
                f"cell {self.count}/{self.total}: {cell.agent} T={cell.horizon} "
                f"seed={cell.seed} {outcome}",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


__all__ = [
    "BACKENDS",
    "FAILURE_MODES",
    "IDENTITY_FIELDS",
    "MAX_SEED",
    "MAX_SEEDS",
    "Cell",
    "CorruptCellWarning",
    "StaleCellWarning",
    "cells",
    "run_cells",
    "run_in_memory",
    "sweep",
]
