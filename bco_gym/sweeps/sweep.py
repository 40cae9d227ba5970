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

import json
import os
import re
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from bco_gym.agents.registry import current_agent_name, identity_of_result
from bco_gym.engine.compiled import kernel_mode
from bco_gym.engine.options import RunOptions, cell_options
from bco_gym.engine.result import RunResult
from bco_gym.engine.runner import run
from bco_gym.engine.tally import check_horizon
from bco_gym.io import name_digest
from bco_gym.sweeps.backends import (
    BACKENDS,
    batches,
    check_agents_for_backend,
    run_on,
    split_costly,
    worker_count,
)
from bco_gym.sweeps.failures import (
    CellFailure,
    CellFailureWarning,
    clear_failure,
    save_failure,
)
from bco_gym.sweeps.results import CorruptResultError
from bco_gym.sweeps.store import SweepStore

IDENTITY_FIELDS = ("label", "identity")
#: The most seeds the CLI and suite files accept for one command or scenario.
MAX_SEEDS = 10_000
#: The largest seed (numpy's generators take any non-negative int; the CLI, int64's).
MAX_SEED = 2**63 - 1


@dataclass(frozen=True)
class Cell:
    """One run of a sweep: everything that determines its result.

    ``agent`` is the spelling a worker resolves (a name, an import path, a variant
    ``NAME[key=value,...]``); ``identity`` is the agent's identity with ``agent_kwargs``
    (:meth:`~bco_gym.agents.registry.AgentSpec.identity`) and ``label`` what its
    results are called. ``constants`` labels where the agent's constants come from
    ("theory", "tuned", "custom"); ``checkpoints`` None means the runner's default;
    ``fast`` is passed to :func:`~bco_gym.engine.runner.run`.

    The key of a cell with an identity depends on the identity, never on the spelling
    or the label: every spelling of an agent finds the same cells. Cells written before
    identities existed (no ``identity``) keep the key they had.
    """

    env_id: str
    agent: str
    horizon: int
    seed: int
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    agent_kwargs: dict[str, Any] = field(default_factory=dict)
    constants: str = "theory"
    checkpoints: tuple[int, ...] | None = None
    fast: bool | None = None
    label: str | None = None
    identity: str | None = None
    isolate: bool = False

    def to_dict(self) -> dict[str, Any]:
        document = asdict(self)
        document["checkpoints"] = None if self.checkpoints is None else list(self.checkpoints)
        for name in IDENTITY_FIELDS:  # absent, as in the cells written before them
            if document[name] is None:
                del document[name]
        if not self.isolate:  # absent, so that a cell played in-process keeps its key
            del document["isolate"]
        return document

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> Cell:
        values = dict(document)
        if values.get("checkpoints") is not None:
            values["checkpoints"] = tuple(values["checkpoints"])
        return cls(**values)

    @property
    def key(self) -> str:
        """A file-name-safe id: readable fields plus a digest of the whole cell (with an
        identity: of every field but the spelling, the label and the keyword arguments,
        which the identity holds)."""
        document = self.to_dict()
        document.pop("label", None)
        name = self.agent
        if self.identity is not None:
            for field_name in ("agent", "agent_kwargs"):
                del document[field_name]
            name = self.identity.split("[", 1)[0].rsplit(":", 1)[-1]
        digest = name_digest(document, 10)
        readable = f"{self.env_id}_{name}_T{self.horizon}_s{self.seed}"
        return f"{re.sub(r'[^A-Za-z0-9._-]+', '-', readable)}_{digest}"

    def spec(self) -> Any:
        """The agent's AgentSpec, carrying the cell's label."""
        from bco_gym.agents import resolve_agent

        spec = resolve_agent(self.agent)
        return spec if self.label is None else spec.with_label(self.label)

    def run(self, progress: bool | None = False) -> RunResult:
        """Compute the cell: :func:`~bco_gym.engine.runner.run` with its options."""
        return run(self.env_id, self.spec(), seed=self.seed, **self.options(progress).keywords())

    def options(self, progress: bool | None = False) -> RunOptions:
        """The options the cell is played with (:func:`~bco_gym.engine.options.cell_options`)."""
        return cell_options(self, progress)


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
        grid, documents = _as_stored(store, grid)
        keys = [cell.key for cell in grid]
        store.open({"cells": [documents[key] for key in keys]}, key=_cell_key)
        results = _load_finished(store, grid, documents, reuse_stale)
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
            store.save(cell.key, _labelled(result, stored_label), document)
            clear_failure(out, cell.key)
            results[cell.key] = _labelled(result, cell.label)
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
        results[cell.key] = _labelled(result, cell.label)
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


FAILURE_MODES = ("raise", "record")


class CorruptCellWarning(UserWarning):
    """A finished cell's files failed verification; the cell is computed again."""


class StaleCellWarning(UserWarning):
    """Finished cells were computed by other code than their agent's current code."""


def _cell_key(document: Mapping[str, Any]) -> str:
    """The key of a manifest's cell dict (for merging manifests by identity)."""
    try:
        return Cell.from_dict(document).key
    except (TypeError, ValueError):
        return json.dumps(document, sort_keys=True)


def _as_stored(
    store: SweepStore, grid: Sequence[Cell]
) -> tuple[list[Cell], dict[str, dict[str, Any]]]:
    """(the grid, key -> the cell dict its result is stored under). A cell the directory
    lists already is found by its key, whatever spelling and label wrote it; in a
    directory written before identities, by its older key (then that cell is run, under
    the label asked for now). The dict of a new cell is its own."""
    try:
        stored = store.read_manifest()["spec"]["cells"] if store.manifest_path.exists() else []
    except ValueError:
        stored = []
    by_key: dict[str, tuple[Cell, dict[str, Any]]] = {}
    for document in stored:
        try:
            cell = Cell.from_dict(document)
        except (TypeError, ValueError):
            continue
        by_key[cell.key] = (cell, document)
        if cell.identity is None:  # an older cell: also found by its agent's identity now
            upgraded = _with_identity(cell)
            if upgraded is not None:
                by_key.setdefault(upgraded.key, (cell, document))
    found, documents = [], {}
    for cell in grid:
        old = by_key.get(cell.key)
        if old is not None and old[0].identity is None and cell.identity is not None:
            old = (replace(old[0], label=cell.label), old[1])
        if old is None:
            found.append(cell)
            documents[cell.key] = cell.to_dict()
        else:
            found.append(replace(old[0], label=cell.label) if cell.identity else old[0])
            documents[found[-1].key] = old[1]
    return found, documents


def _with_identity(cell: Cell) -> Cell | None:
    """An older cell with the identity of its agent (None when it no longer resolves;
    a name given since to another agent, the old "so-bgd", is read as its current one)."""
    from bco_gym.agents import find_agent

    spec = find_agent(current_agent_name(cell.agent))
    return None if spec is None else replace(cell, identity=spec.identity(cell.agent_kwargs))


def _load_finished(
    store: SweepStore,
    grid: Sequence[Cell],
    documents: Mapping[str, dict[str, Any]],
    reuse_stale: bool = False,
) -> dict[str, RunResult]:
    results: dict[str, RunResult] = {}
    stale: dict[str, list[tuple[Cell, str, str]]] = {}
    unproven: dict[str, tuple[str, list[Cell]]] = {}
    digests: dict[str, tuple[str | None, str | None]] = {}
    for cell in grid:
        try:
            found = store.load(cell.key, documents[cell.key])
        except CorruptResultError as error:
            warnings.warn(f"recomputing cell {cell.key}: {error}", CorruptCellWarning, stacklevel=3)
            continue
        if found is None:
            continue
        if _another_agent(found, cell):  # e.g. saved under a name since given to another
            warnings.warn(
                f"recomputing cell {cell.key}: its stored result is of the agent now named "
                f"{found.agent!r} ({identity_of_result(found)}), not of {cell.agent!r}",
                CorruptCellWarning,
                stacklevel=3,
            )
            continue
        if cell.agent not in digests:
            digests[cell.agent] = _current_digest(cell.agent)
        before, (now, why) = found.agent_spec.get("digest"), digests[cell.agent]
        if now is None or before is None:  # nothing proves the code is the same
            why = why or f"its stored result records no code digest (agent {cell.agent!r})"
            unproven.setdefault(cell.label or cell.agent, (why, []))[1].append(cell)
            if not reuse_stale:
                continue
            note = f"StaleCellWarning: kept (reuse_stale) although unproven: {why}"
            found = replace(found, warnings=[*found.warnings, note])
        elif before != now:
            stale.setdefault(cell.label or cell.agent, []).append((cell, before, now))
            if not reuse_stale:
                continue
            note = (
                f"StaleCellWarning: kept (reuse_stale) although computed by code digest "
                f"{before}, not the agent's current {now}"
            )
            found = replace(found, warnings=[*found.warnings, note])
        results[cell.key] = _labelled(found, cell.label)
    what = "kept as asked (reuse_stale)" if reuse_stale else "recomputed"
    for agent, cells_found in stale.items():
        before, now = cells_found[0][1], cells_found[0][2]
        shown = _cells_shown([c for c, _, _ in cells_found])
        warnings.warn(
            f"agent {agent!r}: {len(cells_found)} stored cell(s) of {str(store.directory)!r} "
            f"were computed by other code (digest {before}, now {now}): {shown}; {what}",
            StaleCellWarning,
            stacklevel=3,
        )
    for agent, (why, cells_found) in unproven.items():
        warnings.warn(
            f"agent {agent!r}: {len(cells_found)} stored cell(s) of {str(store.directory)!r} "
            f"cannot be shown to come from its current code: no code digest can be taken "
            f"({why}): {_cells_shown(cells_found)}; {what}",
            StaleCellWarning,
            stacklevel=3,
        )
    return results


def _cells_shown(cells_found: Sequence[Cell]) -> str:
    shown = ", ".join(f"seed {c.seed} T={c.horizon}" for c in cells_found[:8])
    return shown + (f" and {len(cells_found) - 8} more" if len(cells_found) > 8 else "")


def _another_agent(found: RunResult, cell: Cell) -> bool:
    """Whether a stored result is of another agent than the cell's: by identity where
    both record one, else (cells and results written before identities) by name."""
    recorded = (found.agent_spec or {}).get("identity")
    path = (found.agent_spec or {}).get("import_path")
    if cell.identity is not None and recorded is not None:
        return recorded != cell.identity or path != cell.identity.split("[", 1)[0]
    return cell.identity is None and recorded is None and found.agent != cell.agent


def _current_digest(agent: str) -> tuple[str | None, str | None]:
    """(the agent's code digest, why none can be taken)."""
    from bco_gym.agents import find_agent

    spec = find_agent(agent)
    if spec is None:
        return None, f"{agent!r} no longer resolves here"
    return spec.digest, spec.no_digest_reason


def _labelled(result: RunResult, label: str | None) -> RunResult:
    """``result`` under ``label`` (a cell computed under another spelling)."""
    if label is None or result.agent == label:
        return result
    spec = {**result.agent_spec, "name": label} if result.agent_spec else result.agent_spec
    return replace(result, agent=label, agent_spec=spec)


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
