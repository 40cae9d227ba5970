"""Where a sweep's cells are computed: batches of seeds, on a serial, process or Ray backend.

Cells that differ only by their seed are played together by
:func:`~bco_gym.engine.many.run_many` (:func:`batches` groups them), so a sweep of
many seeds pays Python's per-round overhead once per batch, not once per seed. A
batch's result i is ``same_outcome`` as its cell i run alone, so the results do not
depend on the batch size or on the backend:

* ``serial``: the batches one after the other in this process;
* ``process``: a ``concurrent.futures.ProcessPoolExecutor`` with ``os.cpu_count()``
  workers started by ``spawn`` (safe with threads; a script using it needs the usual
  ``if __name__ == "__main__":`` guard), a batch per task;
* ``ray``: plain Ray tasks, one CPU each, a batch per task; ``ray.init(address=...)``
  joins a cluster (whose workers must have bco_gym installed), otherwise a local
  instance with ``os.cpu_count()`` CPUs is started (its workers' ``PYTHONPATH`` is
  this process's ``sys.path``) and shut down afterwards; :func:`ray_session` keeps one
  connection open over a whole job (``bench``, ``demo``).

Every worker loads (or compiles) the kernels a batch calls before timing it, once per
process (:func:`~bco_gym.engine.many.warm_kernels`), so ``cpu_seconds`` and rounds per
second mean the same on every backend.

Workers receive cells, whose agent is a name or an import path (a string), never a
pickled agent: a worker resolves it itself (:func:`~bco_gym.agents.resolve_agent`), so
an agent registered with :func:`~bco_gym.agents.register` in the sweeping process only
runs on the serial backend; the process and Ray backends need an import path or an
entry point (:func:`check_agents_for_backend`). A Ray cluster's workers must be able
to import it too.

Workers only compute; the caller's ``finished(cell, result)`` writes each result as
its batch arrives. Workers exit when the sweeping process dies, even by SIGKILL
(:func:`watch_parent`).
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import queue
import socket
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

from bco_gym.engine.many import batch_size_for, run_seed_batch, warm_kernels
from bco_gym.engine.result import RunResult
from bco_gym.sweeps.failures import run_cell_or_failure

BACKENDS = ("serial", "process", "ray")
#: The largest batch a user may ask for (a batch holds its rows' buffers in memory).
MAX_REQUESTED_BATCH_SIZE = 1024

Finished = Callable[[Any, RunResult], None]
#: Seconds between a worker's reports of played rounds (progress bars).
PROGRESS_INTERVAL = 0.2
# In a process-pool worker: the queue its played rounds go to (set by start_worker).
_ROUNDS_QUEUE: list[Any] = []


def check_batch_size(batch_size: Any) -> int | None:
    """``batch_size`` as an int in [1, MAX_REQUESTED_BATCH_SIZE], or None (chosen for memory)."""
    if batch_size is None:
        return None
    valid = isinstance(batch_size, int) and not isinstance(batch_size, bool)
    if not valid or not 1 <= batch_size <= MAX_REQUESTED_BATCH_SIZE:
        raise ValueError(
            f"batch_size={batch_size!r} must be an integer in "
            f"[1, {MAX_REQUESTED_BATCH_SIZE}] or None (None: as many seeds as fit the memory "
            "budget of run_many's batch_size_for)"
        )
    return batch_size


def batches(pending: Sequence[Any], batch_size: int | None, workers: int = 1) -> list[list[Any]]:
    """The cells grouped into batches that differ only by seed, in order of appearance.

    Each group of cells equal but for the seed is cut into batches of ``batch_size``
    (None: ``batch_size_for(env_id, env_kwargs)``, a size that fits a memory budget).
    While there are fewer batches than ``workers``, the largest is halved, so every
    worker gets work.
    """
    batch_size = check_batch_size(batch_size)
    groups: dict[str, list[Any]] = {}
    for cell in pending:
        fields = {**cell.to_dict(), "seed": None}
        groups.setdefault(json.dumps(fields, sort_keys=True, default=repr), []).append(cell)
    sizes: dict[str, int] = {}
    result: list[list[Any]] = []
    for group in groups.values():
        size = batch_size or _auto_size(group[0], sizes)
        result.extend(group[start : start + size] for start in range(0, len(group), size))
    while len(result) < workers:
        largest = max(range(len(result)), key=lambda i: len(result[i]), default=None)
        if largest is None or len(result[largest]) < 2:
            break
        batch = result.pop(largest)
        half = (len(batch) + 1) // 2
        result[largest:largest] = [batch[:half], batch[half:]]
    return result


def split_costly(
    pending: Sequence[Sequence[Any]], cost: Callable[[Any], float], workers: int
) -> list[Sequence[Any]]:
    """The batches with every batch of several cells whose estimated cost (the sum of
    ``cost`` over its cells) exceeds a quarter of a worker's share of the whole halved,
    again and again: one costly batch handed out last would leave the other workers idle
    (a batch's size changes no result)."""
    total = sum(cost(cell) for batch in pending for cell in batch)
    limit = total / (4 * max(1, workers))
    result: list[Sequence[Any]] = []
    queue = list(pending)
    while queue:
        batch = queue.pop(0)
        if len(batch) > 1 and sum(cost(cell) for cell in batch) > limit:
            half = (len(batch) + 1) // 2
            queue[:0] = [batch[:half], batch[half:]]
        else:
            result.append(batch)
    return result


def largest_first(
    pending: Sequence[Sequence[Any]], cost: Callable[[Any], float] | None = None
) -> list[Sequence[Any]]:
    """The batches in decreasing order of their rounds (horizon times seeds; ties keep
    their order): a pool that hands them out in this order to whichever worker is free
    finishes its workers about together (the longest-processing-time rule), where the
    grid's order would leave the largest batch, the 10^7 horizon, to start last. With
    ``cost`` (a cell's estimated seconds), in decreasing order of their cost instead:
    rounds of different sets or agents may differ in cost by 10^4."""
    if cost is not None:
        return sorted(pending, key=lambda batch: -sum(cost(cell) for cell in batch))
    return sorted(pending, key=lambda batch: -sum(cell.horizon for cell in batch))


def _auto_size(cell: Any, sizes: dict[str, int]) -> int:
    key = json.dumps([cell.env_id, cell.env_kwargs], sort_keys=True, default=repr)
    if key not in sizes:
        sizes[key] = batch_size_for(cell.env_id, cell.env_kwargs)
    return sizes[key]


def run_batch(
    batch: Sequence[Any], record_failures: bool = False, advance: Any = None
) -> list[Any]:
    """Compute one batch (the function every backend's workers call).

    The kernels the batch will call are loaded (or compiled) first, untimed, once per
    process (:func:`~bco_gym.engine.many.warm_kernels`), so its ``cpu_seconds`` and
    latencies count the rounds alone on every backend. The runs' warnings are kept in
    ``RunResult.warnings`` rather than printed by each worker; ``bco-gym`` reports them
    once per sweep. With ``record_failures``, a batch that raises is played cell by cell
    and each failing cell gives a :class:`~bco_gym.sweeps.failures.CellFailure` in place
    of its result. ``advance(rounds)``, if given, is called as the batch's rounds are
    played (one per row and round); in a process-pool worker the rounds go to the
    sweeping process.
    """
    if advance is None and _ROUNDS_QUEUE:
        advance = _Throttled(_ROUNDS_QUEUE[0].put)
    progress = advance if advance is not None else False
    warm_kernels(batch)  # compile or load once per process, outside the timed runs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if not record_failures:
                return run_seed_batch(batch, progress=progress)
            try:
                return run_seed_batch(batch, progress=progress)
            except Exception:
                return [run_cell_or_failure(cell) for cell in batch]
        finally:
            if isinstance(advance, _Throttled):
                advance.flush()


class _Throttled:
    """Collects round counts and passes them on at most every ``PROGRESS_INTERVAL`` s."""

    def __init__(self, send: Callable[[int], Any]):
        self.send, self.pending, self.last = send, 0, time.monotonic()

    def __call__(self, rounds: int) -> None:
        self.pending += rounds
        if time.monotonic() - self.last >= PROGRESS_INTERVAL:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            self.send(self.pending)
        self.pending, self.last = 0, time.monotonic()


def run_on(
    backend: str,
    pending: Sequence[Sequence[Any]],
    finished: Finished,
    *,
    ray_address: str | None = None,
    record_failures: bool = False,
    advance: Callable[[int], None] | None = None,
    cost: Callable[[Any], float] | None = None,
) -> None:
    """Compute the batches ``pending`` on ``backend``, calling ``finished`` per cell (with
    its RunResult, or its CellFailure when ``record_failures``: see :func:`run_batch`).

    ``advance(rounds)`` is called as rounds are played inside the batches (serial and
    process backends; on Ray a batch counts when it finishes). ``cost``: a cell's
    estimated seconds, the order in which a pool hands batches out (:func:`largest_first`)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}; allowed: {', '.join(BACKENDS)}")
    function = _BACKEND_FUNCTIONS[backend]
    function(
        pending,
        finished,
        ray_address=ray_address,
        record=record_failures,
        advance=advance,
        cost=cost,
    )


def _deliver(batch: Sequence[Any], results: Sequence[RunResult], finished: Finished) -> None:
    for cell, result in zip(batch, results, strict=True):
        finished(cell, result)


def _run_serial(
    pending: Sequence[Sequence[Any]],
    finished: Finished,
    *,
    record: bool,
    advance: Any = None,
    **_: Any,
) -> None:
    for batch in pending:
        _deliver(batch, run_batch(batch, record, advance), finished)


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


def _run_process(
    pending: Sequence[Sequence[Any]],
    finished: Finished,
    *,
    record: bool,
    advance: Any = None,
    cost: Any = None,
    **_: Any,
) -> None:
    workers = max(1, min(os.cpu_count() or 1, len(pending)))
    context = multiprocessing.get_context("spawn")
    rounds = context.Queue() if advance is not None else None
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=start_worker,
        initargs=(os.getpid(), rounds),
    ) as pool:
        ordered = largest_first(pending, cost)
        futures = {pool.submit(run_batch, batch, record): batch for batch in ordered}
        try:
            while futures:
                done, _ = wait(futures, timeout=PROGRESS_INTERVAL, return_when=FIRST_COMPLETED)
                _drain(rounds, advance)
                for future in done:
                    _deliver(futures.pop(future), future.result(), finished)
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def start_worker(parent_pid: int, rounds: Any = None) -> None:
    """A pool worker's start: watch the parent; send played rounds to ``rounds``."""
    watch_parent(parent_pid)
    if rounds is not None:
        _ROUNDS_QUEUE[:] = [rounds]


def _drain(rounds: Any, advance: Any) -> None:
    """Hand the round counts the workers sent so far to ``advance``."""
    if rounds is None:
        return
    while True:
        try:
            advance(rounds.get_nowait())
        except queue.Empty:
            return


def run_batch_watched(
    batch: Sequence[Any], driver_pid: int | None, driver_host: str, record: bool = False
) -> list[Any]:
    """:func:`run_batch` in a Ray worker that exits when a local driver dies."""
    if driver_pid is not None and socket.gethostname() == driver_host:
        watch_parent(driver_pid, child=False)
    return run_batch(batch, record)


# The driver pid a Ray session's local instance watches (None: a cluster), while one is open.
_SESSION: list[int | None] = []


@contextlib.contextmanager
def ray_session(address: str | None = None) -> Iterator[None]:
    """One Ray connection for a whole job: join the cluster at ``address`` (``ray start``
    gives it), or start a local instance of ``os.cpu_count()`` CPUs; every sweep inside
    computes on it, and it is closed at the end. Without a session, each sweep on the
    Ray backend connects and disconnects on its own (a local instance takes seconds to
    start). Inside an already initialised Ray, nothing is started or stopped."""
    ray = import_ray()
    if ray.is_initialized():
        yield
        return
    _init_ray(ray, address)
    _SESSION.append(None if address else os.getpid())
    try:
        yield
    finally:
        _SESSION.pop()
        ray.shutdown()


def _init_ray(ray: Any, address: str | None) -> None:
    if address:
        ray.init(address=address, logging_level="WARNING")
    else:
        ray.init(
            num_cpus=os.cpu_count() or 1,
            include_dashboard=False,
            logging_level="WARNING",
            runtime_env=_local_runtime_env(),
        )


def _run_ray(
    pending: Sequence[Sequence[Any]],
    finished: Finished,
    *,
    ray_address: str | None,
    record: bool = False,
    cost: Any = None,
    **_: Any,
) -> None:
    ray = import_ray()
    started_here = not ray.is_initialized()
    if started_here:
        _init_ray(ray, ray_address)
        driver = None if ray_address else os.getpid()
    else:
        driver = _SESSION[-1] if _SESSION else None
    try:
        remote_run = ray.remote(num_cpus=1)(run_batch_watched)
        host = socket.gethostname()
        references = {
            remote_run.remote(list(b), driver, host, record): b
            for b in largest_first(pending, cost)
        }
        try:
            while references:
                ready, _ = ray.wait(list(references), num_returns=1)
                for reference in ready:
                    _deliver(references.pop(reference), ray.get(reference), finished)
        except BaseException:
            for reference in references:
                ray.cancel(reference)
            raise
    finally:
        if started_here:
            ray.shutdown()


def _local_runtime_env() -> dict[str, Any]:
    """A local Ray instance's workers import from this process's ``sys.path`` (as the
    process pool's spawned workers do), so an agent's import path resolves there too."""
    import sys

    paths = [entry for entry in sys.path if entry and os.path.isdir(entry)]
    return {"env_vars": {"PYTHONPATH": os.pathsep.join(paths)}}


def import_ray() -> Any:
    """``ray``, or ImportError naming the extra that installs it."""
    try:
        import ray
    except ImportError as error:
        raise ImportError(
            "the 'ray' backend needs Ray: pip install bco_gym[ray] (or pip install ray)"
        ) from error
    return ray


def check_agents_for_backend(agents: Sequence[Any], backend: str) -> list[str]:
    """The agents as strings workers can resolve: names and import paths as given, an
    Agent subclass or factory as its import path; ValueError for one a worker of
    ``backend`` cannot find (registered only in this process, or defined in a script's
    ``__main__`` or inside a function) and for anything that does not resolve."""
    from bco_gym.agents import resolve_agent

    names = []
    for agent in agents:
        spec = resolve_agent(agent)
        name = agent if isinstance(agent, str) else spec.import_path
        local = spec.import_path.startswith("__main__:") or "<locals>" in spec.import_path
        if not isinstance(agent, str) and local:
            raise ValueError(
                f"agent {spec.name!r} ({spec.import_path}) is defined in a script or a "
                "function, where no other process can import it; a sweep takes agents by "
                "name or import path: move it to a module and pass 'package.module:ClassName'"
            )
        if backend != "serial" and spec.source == "registered":
            raise ValueError(
                f"agent {agent!r} is registered only in this process (bco_gym.agents."
                f"register); the {backend!r} backend's workers cannot see it. Give its import "
                f"path {spec.import_path!r}, declare it in the entry-point group "
                "'bco_gym.agents' of an installed package, or use backend='serial'"
            )
        if backend != "serial" and spec.import_path.startswith("__main__:"):
            raise ValueError(
                f"agent {agent!r} lives in the script's __main__ ({spec.import_path}); the "
                f"{backend!r} backend's workers cannot import it: move it to a module"
            )
        names.append(name)
    return names


def worker_count(backend: str) -> int:
    """How many batches the backend computes at once (1 for serial)."""
    return 1 if backend == "serial" else max(1, os.cpu_count() or 1)


_BACKEND_FUNCTIONS: dict[str, Callable[..., None]] = {
    "serial": _run_serial,
    "process": _run_process,
    "ray": _run_ray,
}
