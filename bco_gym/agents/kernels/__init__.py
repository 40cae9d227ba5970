"""What the compiled kernels share: the switch, the built-in sets' kinds, the cache's care.

An algorithm's compiled kernel lives in its own folder, beside the agent whose NumPy update
it repeats in the same order of operations (e.g. :mod:`bco_gym.agents.fkm.kernel`), and the
agent class declares it (``KERNEL``, a :class:`.compiled_rounds.CompiledRounds`) for the compiled
lean loop
(:mod:`bco_gym.engine.compiled`), or calls it itself (saha-tewari's Newton step,
:mod:`bco_gym.agents.saha_tewari.kernel`; so-bgd's and fejer-bgd's separation steps,
:mod:`bco_gym.agents.gk22.kernel`). This package keeps what several of them share:

* :mod:`.oracles` -- NumPy's pairwise sums and the built-in sets' oracles (projection, LMO,
  membership), compiled; :mod:`.rounds` -- the round helpers the per-round kernels share
  (a block's saved state, a one-point play, a full-information round, a Frank-Wolfe step);
* :mod:`.sums` (exact sums), :mod:`.prefix` (checkpoint sums), :mod:`.intervals` (the
  interval-regret tracker), :mod:`.losses` (the linear families' draws), :mod:`.checks`
  (the block check's anchors): the auxiliary kernels of the loops.

The losses are the linear ones, f_t(x) = <theta_t, x> + sign * offset_t (``sign`` -1 for
the generated families, ``f = <theta, x - c>``, +1 for :func:`~bco_gym.losses.from_array`),
read from the loss sequences' own chunks; the exploration directions are the agents' own
(:class:`~bco_gym.agents.estimators.DirectionStream`): no random number is drawn in a
kernel. The oracles of the built-in sets are inside the kernels (``KIND_*``; a shrunk set
c + a(K - c) through its base set's oracle, as :class:`~bco_gym.sets.base.ShrunkSet`):
the rounds read and write rows in place, without numba's reference counting
(:mod:`.oracles`).

Floating point. Every product, quotient and sum is the NumPy code's, in its order, and a
row's inner product is NumPy's pairwise summation (:func:`.oracles.pairwise_sum`), so losses and
updates are bit for bit those of the NumPy loops. The Euclidean norm too: the ball's
oracles take it in NumPy as the square root of the pairwise sum of the squares
(:func:`bco_gym.sets.balls.euclidean_norm`, never a BLAS dot product, whose order is the
BLAS build's), which :func:`.oracles.row_norm` reproduces.

Feasibility: every play is tested against K (``atol``) before it is evaluated; a kernel
stops at the first round with a play it cannot accept and returns that round's index, so
that the caller lets the env's own check decide (raise, or resume with ``trusted``).

numba is an optional dependency (the ``fast`` extra): the kernel modules import it and are
imported only where a compiled loop is about to run; this module holds the constants, the
switch (``BCO_GYM_KERNELS``, ``kernel_mode``), and imports no numba, nor does
:mod:`.compiled_rounds` (the declaration).

numba's cache is shared by every process of a machine (a sweep's workers warm their
kernels at once), and numba reads, extends and rewrites a function's index without a
lock: two processes saving two signatures of one function could file one's machine code
under the other's key, and a later process would run code compiled for other argument
types (a float64 kernel reading an int64 array gives 3e-323 for 6, as
tests/agents/test_kernel_cache.py plays it; numba/numba#4807 and #10128 report races of
this kind). :func:`lock_cache` makes every kernel's saves take an exclusive lock on a
file of its cache folder, and its loads a shared one.

numba's cache keys a compiled kernel on its own source file alone, so a kernel that
inlines a helper of :mod:`.oracles` would be loaded stale after an edit of :mod:`.oracles`
only (or a checkout that changes only that file). ``drop_stale_cache``, run by
:mod:`.oracles` for this package and by each algorithm's kernel module for its folder
before anything is compiled, removes a folder's cached kernels whenever the digest of its
sources and of this package's changes.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from bco_gym.io import file_set_digest, write_text

#: The built-in sets the kernels know (their oracles are in :mod:`.oracles`).
KIND_BALL, KIND_L1, KIND_BOX, KIND_SIMPLEX = 0, 1, 2, 3

#: The environment variable that switches the kernels: "auto" (default), "on" or "off"
#: (:mod:`bco_gym.engine.compiled`; saha-tewari's solve, :mod:`.barrier`; so-bgd's and
#: fejer-bgd's separation steps, :mod:`.separation`).
SWITCH = "BCO_GYM_KERNELS"
MODES = ("auto", "on", "off")
#: Run-rounds (T * S) from which "auto" lets so-bgd, fejer-bgd and saha-tewari call their kernel
#: (:func:`agent_kernel_wanted`): below, the NumPy loop costs about what importing numba
#: and loading a kernel from its cache costs once per process (about 1 s), and short runs
#: (the test suite's) never compile.
AGENT_MIN_RUN_ROUNDS = 100_000

#: The file in a kernel folder's ``__pycache__`` holding the digest its cached kernels were
#: compiled from.
CACHE_STAMP = "kernels.sha256"
#: The file in a kernel cache folder whose lock orders numba's cache saves and loads across
#: processes: a save alone, loads together (:func:`lock_cache`).
CACHE_LOCK = "kernels.lock"
#: This package's folder: the helpers every kernel may inline.
SHARED_KERNELS = Path(__file__).parent


_PLANNED: list[int] = []


@contextlib.contextmanager
def planned_run_rounds(run_rounds: int) -> Iterator[None]:
    """Inside, every kernel switch decides as for a run of ``run_rounds`` run-rounds
    (T * S), whatever the run being played: a short untimed run then loads (or compiles)
    exactly the kernels the planned run will call (:func:`bco_gym.engine.many.warm_kernels`)."""
    _PLANNED.append(int(run_rounds))
    try:
        yield
    finally:
        _PLANNED.pop()


def decided_rounds(run_rounds: int) -> int:
    """The run-rounds a kernel switch decides on: ``run_rounds``, or the planned run's
    inside :func:`planned_run_rounds`."""
    return _PLANNED[-1] if _PLANNED else run_rounds


def agent_kernel_wanted(run_rounds: int) -> bool:
    """Whether an agent playing ``run_rounds`` run-rounds (T * S) calls its kernel:
    "on" always, "auto" from :data:`AGENT_MIN_RUN_ROUNDS`, "off" never; never without
    numba."""
    mode = kernel_mode()
    run_rounds = decided_rounds(run_rounds)
    if mode == "off" or (mode == "auto" and run_rounds < AGENT_MIN_RUN_ROUNDS):
        return False
    return numba_available()


def builtin_kind(convex_set: object) -> tuple[int, float, np.ndarray, np.ndarray] | None:
    """(kind, radius, low, high) of a built-in set the kernels know (the exact classes
    L2Ball, L1Ball, Simplex, Hypercube), or None; ``low``/``high`` are the box's bounds
    (writable copies, zeros for the others: one array type)."""
    from bco_gym.sets import Hypercube, L1Ball, L2Ball, Simplex

    shape = getattr(convex_set, "shape", ())
    if len(shape) != 1:
        return None
    empty = np.zeros(shape[0])
    kind = type(convex_set)
    if kind is L2Ball:
        return KIND_BALL, float(convex_set.radius), empty, empty
    if kind is L1Ball:
        return KIND_L1, float(convex_set.radius), empty, empty
    if kind is Simplex:
        return KIND_SIMPLEX, 1.0, empty, empty
    if kind is Hypercube:
        low = np.array(convex_set.low, dtype=float)
        high = np.array(convex_set.high, dtype=float)
        return KIND_BOX, 0.0, low, high
    return None


def sources_digest(directory: Path) -> str:
    """SHA-256 over the names and contents of the ``.py`` files of ``directory``, sorted."""
    files = sorted(directory.glob("*.py"))
    return file_set_digest(((path.name, path) for path in files), b"").hexdigest()


def drop_stale_cache(directory: Path | None = None, *inlined: Path) -> bool:
    """Remove numba's cached kernels (``__pycache__/*.nbi``, ``*.nbc``) of ``directory``
    (this package by default) when its sources, or those of the folders ``inlined`` whose
    helpers its kernels inline, changed since they were compiled.

    Returns True when cached kernels were dropped. A ``__pycache__`` that cannot be
    written (a read-only install) is left alone: numba then caches elsewhere, and an
    install rewrites every source file, which numba notices by itself.
    """
    directory = SHARED_KERNELS if directory is None else directory
    cache = directory / "__pycache__"
    digest = sources_digest(directory)
    if inlined:  # the folder's sources and those it inlines, each named by its folder's place
        folders = (directory, *inlined)
        files = [
            (f"{place}/{path.name}", path)
            for place, folder in enumerate(folders)
            for path in sorted(folder.glob("*.py"))
        ]
        digest = file_set_digest(files, b"").hexdigest()
    stamp = cache / CACHE_STAMP
    try:
        if stamp.read_text() == digest:
            return False
    except OSError:
        pass
    try:
        cache.mkdir(exist_ok=True)
        stale = [*cache.glob("*.nbi"), *cache.glob("*.nbc")]
        for path in stale:
            path.unlink(missing_ok=True)
        write_text(stamp, digest)
    except OSError:
        return False
    return bool(stale)


def lock_cache(dispatcher: Any) -> Any:
    """``dispatcher`` (a numba function compiled with ``cache=True``), its cache saves
    made under an exclusive lock of :data:`CACHE_LOCK` in its cache folder and its loads
    under a shared one (module docstring): a save reads the index, numbers the new data
    file, rewrites the index, then writes the data, all while no other process of the
    machine saves or loads in that folder. Where ``fcntl`` is absent (Windows) or the
    folder cannot be written, numba's own unlocked behaviour."""
    cache = getattr(dispatcher, "_cache", None)
    save = getattr(cache, "save_overload", None)
    load = getattr(cache, "load_overload", None)
    if save is None or load is None:  # an internal of numba moved: test_kernel_cache says so
        return dispatcher

    def save_overload(signature: Any, data: Any) -> None:
        with _cache_lock(cache.cache_path, exclusive=True):
            save(signature, data)

    def load_overload(signature: Any, target_context: Any) -> Any:
        with _cache_lock(cache.cache_path, exclusive=False):
            return load(signature, target_context)

    cache.save_overload, cache.load_overload = save_overload, load_overload
    return dispatcher


def compile_per_type(dispatcher: Any) -> Any:
    """``dispatcher`` (a numba function), compiled once per argument types when another
    kernel calls it rather than once per constant it is called with. numba types a
    constant argument of a compiled call (the row of ``numpy_sum(work, 0, n)``, a module
    constant) as a literal of its own and compiles the callee again for each constant:
    one to three CPU seconds each in a cold compile, for the same machine code. The
    call's argument types lose their literal part before numba compiles the callee, and
    the constant is passed as any int is. Where numba's dispatcher has no
    ``get_call_template`` (an internal of numba moved), numba's own behaviour:
    tests/agents/test_kernel_cache.py says so."""
    resolve = getattr(dispatcher, "get_call_template", None)
    if resolve is None:
        return dispatcher
    from numba.core.types import unliteral

    def get_call_template(args: Any, kws: Any) -> Any:
        args = tuple(unliteral(value) for value in args)
        return resolve(args, {name: unliteral(value) for name, value in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


@contextlib.contextmanager
def _cache_lock(folder: str, exclusive: bool) -> Iterator[None]:
    """Holds ``fcntl.flock`` on ``folder``/:data:`CACHE_LOCK` (exclusive or shared) inside;
    nothing held where the lock cannot be taken."""
    try:
        import fcntl
    except ImportError:  # Windows
        fcntl = None
    handle = None
    if fcntl is not None:
        try:
            os.makedirs(folder, exist_ok=True)
            handle = open(os.path.join(folder, CACHE_LOCK), "ab")
        except OSError:
            handle = None
    if handle is None:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield  # released as the file closes


def read_only(array: np.ndarray) -> np.ndarray:
    """``array``, or a read-only view of it. numba types a read-only array apart from a
    writable one and compiles a kernel once per type, so an array a kernel only reads is
    handed over read-only always: one compile where there were two, the same values."""
    if not array.flags.writeable:
        return array
    view = array.view()
    view.flags.writeable = False
    return view


def kernel_mode() -> str:
    """``BCO_GYM_KERNELS`` ("auto" when unset); ValueError naming a value not allowed."""
    mode = os.environ.get(SWITCH, "auto").strip().lower() or "auto"
    if mode not in MODES:
        raise ValueError(f"{SWITCH}={mode!r} is not allowed; allowed: {', '.join(MODES)}")
    return mode


def numba_available() -> bool:
    """Whether numba is installed (the ``fast`` extra)."""
    return importlib.util.find_spec("numba") is not None


#: Kernels found in numba's cache in this process (:func:`is_cached`).
_CACHED: set[str] = set()


def is_cached(dispatcher: Any) -> bool:
    """Whether numba's cache holds a compiled version of ``dispatcher`` (a kernel of
    this package) for its present source; False if it cannot tell."""
    name = f"{dispatcher.py_func.__module__}.{dispatcher.py_func.__qualname__}"
    if name in _CACHED or dispatcher.signatures:
        return True
    try:
        found = bool(dispatcher._cache._cache_file._load_index())  # numba's cache index
    except Exception:  # an internal of numba moved: say "not cached" (only a message)
        return False
    if found:
        _CACHED.add(name)
    return found
