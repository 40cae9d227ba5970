"""Sweeps: the grid of (env, agent, horizon, seed) cells, run on a backend, resumable.

A cell is one :func:`~bco_gym.experiment.runner.run`; its result depends only on the
cell (the seeds are part of it), so every backend gives bit-identical results:

* ``serial``: one after the other in this process;
* ``process``: a ``concurrent.futures.ProcessPoolExecutor`` with ``os.cpu_count()``
  workers started by ``spawn`` (safe with threads; a script using it needs the usual
  ``if __name__ == "__main__":`` guard);
* ``ray``: plain Ray tasks, one CPU each; ``ray.init(address=ray_address)`` joins a
  cluster (whose workers must have bco_gym installed), otherwise a local instance
  with ``os.cpu_count()`` CPUs is started and shut down afterwards (extra ``ray``).

Workers only compute; this process writes each result (see
:mod:`~bco_gym.experiment.results`) the moment it arrives, so a killed sweep loses at
most the cells in flight, and re-running the same sweep skips the finished cells (a
finished cell is re-verified when read; one that fails is computed again, with a
warning). One process writes a directory at a time (its lock, see
:mod:`~bco_gym.experiment.store`); a sweep may grow by seeds or agents. Workers exit
when the sweeping process dies, even by SIGKILL (:func:`watch_parent`).
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import re
import socket
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from bco_gym.experiment.results import CorruptResultError
from bco_gym.experiment.runner import RunResult, check_horizon, run
from bco_gym.experiment.store import SweepStore

BACKENDS = ("serial", "process", "ray")


@dataclass(frozen=True)
class Cell:
    """One run of a sweep: everything that determines its result.

    ``constants`` labels where the agent's constants come from ("theory", "tuned",
    "custom"); ``checkpoints`` None means the runner's default; ``fast`` is passed to
    :func:`~bco_gym.experiment.runner.run`.
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

    def to_dict(self) -> dict[str, Any]:
        document = asdict(self)
        document["checkpoints"] = None if self.checkpoints is None else list(self.checkpoints)
        return document

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> Cell:
        values = dict(document)
        if values.get("checkpoints") is not None:
            values["checkpoints"] = tuple(values["checkpoints"])
        return cls(**values)

    @property
    def key(self) -> str:
        """A file-name-safe id: readable fields plus a digest of the whole cell."""
        canonical = json.dumps(self.to_dict(), sort_keys=True)
        digest = hashlib.sha256(canonical.encode()).hexdigest()[:10]
        readable = f"{self.env_id}_{self.agent}_T{self.horizon}_s{self.seed}"
        return f"{re.sub(r'[^A-Za-z0-9._-]+', '-', readable)}_{digest}"

    def run(self, progress: bool | None = False) -> RunResult:
        return run(
            self.env_id,
            self.agent,
            horizon=self.horizon,
            seed=self.seed,
            checkpoints=self.checkpoints,
            env_kwargs=self.env_kwargs,
            agent_kwargs=self.agent_kwargs,
            constants=self.constants,
            progress=progress,
            fast=self.fast,
        )


def run_cell(cell: Cell) -> RunResult:
    """Compute one cell (the function every backend's workers call).

    The run's warnings are kept in ``RunResult.warnings`` rather than printed by each
    worker; ``bco-gym`` reports them once per sweep.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cell.run(progress=False)


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
    """
    envs, agents = _as_list(envs), _as_list(agents)
    horizons = [check_horizon(h) for h in _as_list(horizons)]
    seed_list = _seed_list(seeds)
    agent_kwargs = dict(agent_kwargs or {})
    constants = dict(constants or {})
    for name, mapping in (("agent_kwargs", agent_kwargs), ("constants", constants)):
        unknown = sorted(set(mapping) - set(agents))
        if unknown:
            raise ValueError(f"{name} names agents {unknown} that are not in the sweep {agents}")
    frozen_checkpoints = None if checkpoints is None else tuple(int(c) for c in checkpoints)
    grid = []
    for env_id in envs:
        for agent in agents:
            overrides = dict(agent_kwargs.get(agent, {}))
            label = constants.get(agent, "custom" if overrides else "theory")
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
                        )
                    )
    return grid


def _as_list(values: Any) -> list[Any]:
    if isinstance(values, str | int | np.integer):
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
) -> list[RunResult]:
    """Run the grid of :func:`cells` into the directory ``out``; return its results.

    Finished cells found in ``out`` are loaded, not recomputed. ``out`` holding a
    different sweep raises :class:`~bco_gym.experiment.results.SweepMismatchError`.
    ``progress`` shows a tqdm bar over cells (None: only on a terminal; "lines": a
    line per finished cell on stderr).
    """
    grid = cells(
        envs,
        agents,
        horizons,
        seeds,
        env_kwargs=env_kwargs,
        agent_kwargs=agent_kwargs,
        constants=constants,
        checkpoints=checkpoints,
        fast=fast,
    )
    return run_cells(grid, out=out, backend=backend, progress=progress, ray_address=ray_address)


def run_cells(
    grid: Sequence[Cell],
    *,
    out: str | os.PathLike,
    backend: str = "serial",
    progress: bool | str | None = None,
    ray_address: str | None = None,
) -> list[RunResult]:
    """Run any list of cells into ``out`` (the engine behind :func:`sweep` and tuning).

    Holds ``out``'s lock throughout (:class:`~bco_gym.experiment.store.SweepLockedError`
    if another process holds it). A cell whose files are there but fail verification
    is recomputed, with a :class:`CorruptCellWarning` naming it. ``progress``: True a
    tqdm bar, "lines" one line per finished cell on stderr, False nothing, None a bar
    on a terminal and nothing otherwise.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}; allowed: {', '.join(BACKENDS)}")
    keys = [cell.key for cell in grid]
    if len(set(keys)) != len(keys):
        raise ValueError("the sweep lists the same cell twice")
    store = SweepStore(out)
    with store.lock():
        store.open({"cells": [cell.to_dict() for cell in grid]})
        results = _load_finished(store, grid)
        pending = [cell for cell in grid if cell.key not in results]
        report = _progress_reporter(len(grid), len(results), progress)

        def finished(cell: Cell, result: RunResult) -> None:
            store.save(cell.key, result, cell.to_dict())
            results[cell.key] = result
            report(cell, result)

        try:
            if pending:
                _BACKEND_FUNCTIONS[backend](pending, finished, ray_address=ray_address)
        finally:
            report(None, None)
    return [results[key] for key in keys]


class CorruptCellWarning(UserWarning):
    """A finished cell's files failed verification; the cell is computed again."""


def _load_finished(store: SweepStore, grid: Sequence[Cell]) -> dict[str, RunResult]:
    results = {}
    for cell in grid:
        try:
            found = store.load(cell.key, cell.to_dict())
        except CorruptResultError as error:
            warnings.warn(f"recomputing cell {cell.key}: {error}", CorruptCellWarning, stacklevel=3)
            continue
        if found is not None:
            results[cell.key] = found
    return results


def _progress_reporter(
    total: int, done: int, progress: bool | str | None
) -> Callable[[Cell | None, RunResult | None], None]:
    """A callback per finished cell (and once with None at the end) showing progress."""
    if progress not in (True, False, None, "lines"):
        raise ValueError(f"progress={progress!r}; allowed: True, False, None, 'lines'")
    if progress is None:
        progress = sys.stderr.isatty()
    if progress == "lines":
        count = [done]

        def line(cell: Cell | None, result: RunResult | None) -> None:
            if cell is None or result is None:
                return
            count[0] += 1
            print(
                f"cell {count[0]}/{total}: {cell.agent} T={cell.horizon} seed={cell.seed} "
                f"regret {result.final_regret:.4g} ({result.wall_seconds:.2g} s)",
                file=sys.stderr,
                flush=True,
            )

        return line
    if not progress:
        return lambda cell, result: None
    from tqdm.auto import tqdm

    bar = tqdm(total=total, initial=done, unit="cell", desc="cells")

    def update(cell: Cell | None, result: RunResult | None) -> None:
        if cell is None:
            bar.close()
        else:
            bar.update(1)

    return update


Finished = Callable[[Cell, RunResult], None]


def _run_serial(pending: Iterable[Cell], finished: Finished, **_: Any) -> None:
    for cell in pending:
        finished(cell, run_cell(cell))


# -- workers that do not outlive their parent -----------------------------------------------
WATCH_INTERVAL = 0.25  # seconds between a worker's checks that its parent is alive
_watching: list[int] = []


def watch_parent(parent_pid: int, child: bool = True) -> None:
    """Exit this (worker) process as soon as ``parent_pid`` is gone (SIGKILL included).

    A daemon thread polls every ``WATCH_INTERVAL`` s. A pool worker (``child``) checks
    that it is still ``parent_pid``'s child (an orphan is re-parented, so
    ``os.getppid()`` changes); a Ray worker, whose parent is Ray's raylet, checks that
    the driver's pid still exists on this host. Started once per process.
    """
    if _watching:
        return
    _watching.append(parent_pid)

    def alive() -> bool:
        if child:
            return os.getppid() == parent_pid
        try:
            os.kill(parent_pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def watch() -> None:
        while alive():
            time.sleep(WATCH_INTERVAL)
        os._exit(70)

    threading.Thread(target=watch, name="bco_gym-parent-watch", daemon=True).start()


def _run_process(pending: Sequence[Cell], finished: Finished, **_: Any) -> None:
    workers = max(1, min(os.cpu_count() or 1, len(pending)))
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=watch_parent,
        initargs=(os.getpid(),),
    ) as pool:
        futures = {pool.submit(run_cell, cell): cell for cell in pending}
        try:
            while futures:
                done, _ = wait(futures, return_when=FIRST_COMPLETED)
                for future in done:
                    cell = futures.pop(future)
                    finished(cell, future.result())
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def run_cell_watched(cell: Cell, driver_pid: int | None, driver_host: str) -> RunResult:
    """:func:`run_cell` in a Ray worker that exits when a local driver dies."""
    if driver_pid is not None and socket.gethostname() == driver_host:
        watch_parent(driver_pid, child=False)
    return run_cell(cell)


def _run_ray(pending: Sequence[Cell], finished: Finished, *, ray_address: str | None) -> None:
    ray = import_ray()
    started_here = not ray.is_initialized()
    if started_here:
        if ray_address:
            ray.init(address=ray_address, logging_level="WARNING")
        else:
            ray.init(
                num_cpus=os.cpu_count() or 1,
                include_dashboard=False,
                logging_level="WARNING",
            )
    driver = os.getpid() if started_here and not ray_address else None
    try:
        remote_run = ray.remote(num_cpus=1)(run_cell_watched)
        host = socket.gethostname()
        references = {remote_run.remote(cell, driver, host): cell for cell in pending}
        try:
            while references:
                ready, _ = ray.wait(list(references), num_returns=1)
                for reference in ready:
                    finished(references.pop(reference), ray.get(reference))
        except BaseException:
            for reference in references:
                ray.cancel(reference)
            raise
    finally:
        if started_here:
            ray.shutdown()


def import_ray() -> Any:
    """``ray``, or ImportError naming the extra that installs it."""
    try:
        import ray
    except ImportError as error:
        raise ImportError(
            "the 'ray' backend needs Ray: pip install bco_gym[ray] (or pip install ray)"
        ) from error
    return ray


_BACKEND_FUNCTIONS: dict[str, Callable[..., None]] = {
    "serial": _run_serial,
    "process": _run_process,
    "ray": _run_ray,
}
