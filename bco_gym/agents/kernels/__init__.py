"""Compiled per-round kernels: the updates of fkm, fkm2, bfw, ofw and ogd on linear losses.

Each kernel is a small pure function over arrays that plays a window of rounds of S runs
(rows) in lockstep, the same arithmetic as the agent's NumPy update in the same order:

* :func:`.rounds.fkm_rounds` -- FKM (:class:`~bco_gym.agents.fkm.FlaxmanAgent`), one-point or
  residual: y = x + delta u, g = (eta d/delta) f(y) u, x <- Pi_{K_delta}(x - g);
* :func:`.rounds.fkm2_rounds` -- two-point FKM (:class:`~bco_gym.agents.fkm2.FlaxmanTwoPoint`);
* :func:`.rounds.bfw_rounds` -- bandit Frank-Wolfe (:class:`~bco_gym.agents.bfw.BanditFrankWolfe`);
* :func:`.rounds.ofw_rounds` -- online Frank-Wolfe (:class:`~bco_gym.agents.ofw.OnlineFrankWolfe`);
* :func:`.rounds.ogd_rounds` -- projected online gradient descent
  (:class:`~bco_gym.agents.ogd.OnlineGradientDescent`).

Apart from these, :func:`.barrier.newton_step` is the Newton step of saha-tewari
(:class:`~bco_gym.agents.saha_tewari.SahaTewari`), which the agent itself calls in every
loop (:mod:`.barrier`).

The separation-oracle steps of so-bgd (Algorithm 6) and fejer-bgd are another kernel an
agent calls itself, every round and on every path (single, batched, the Gymnasium loop):
:func:`.separation.separation_rows`, all rows in one call
(:class:`bco_gym.agents.infeasible.SeparationSteps`).

The losses are the linear ones, f_t(x) = <theta_t, x> + sign * offset_t (``sign`` -1 for
the generated families, ``f = <theta, x - c>``, +1 for :func:`~bco_gym.losses.from_array`),
read from the loss sequences' own chunks; the exploration directions are the agents' own
(:class:`~bco_gym.agents.estimators.DirectionStream`): no random number is drawn here.
The oracles of the built-in sets are inside the kernels (``KIND_*``; a shrunk set
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

numba is an optional dependency (the ``fast`` extra): this package's modules
:mod:`.oracles`, :mod:`.rounds` and :mod:`.separation` import it and are imported only
where a compiled loop is about to run (:mod:`bco_gym.engine.compiled`,
:class:`~bco_gym.agents.infeasible.SeparationSteps`); this module holds the constants and
the switch (``BCO_GYM_KERNELS``, ``kernel_mode``).

numba's cache keys a compiled kernel on its own source file alone, so a kernel of
:mod:`.rounds` that inlines a helper of :mod:`.oracles` would be loaded stale after an
edit of :mod:`.oracles` only (or a checkout that changes only that file).
``drop_stale_cache``, run by :mod:`.oracles` before anything is compiled, removes the
package's cached kernels whenever the digest of its sources changes.
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

#: The file in the package's ``__pycache__`` holding the digest its cached kernels were
#: compiled from.
CACHE_STAMP = "kernels.sha256"


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


def drop_stale_cache(directory: Path | None = None) -> bool:
    """Remove numba's cached kernels (``__pycache__/*.nbi``, ``*.nbc``) of ``directory``
    (this package by default) when its sources changed since they were compiled.

    Returns True when cached kernels were dropped. A ``__pycache__`` that cannot be
    written (a read-only install) is left alone: numba then caches elsewhere, and an
    install rewrites every source file, which numba notices by itself.
    """
    directory = Path(__file__).parent if directory is None else directory
    cache = directory / "__pycache__"
    digest = sources_digest(directory)
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
