"""Separation-oracle steps, compiled: Algorithm 6 of Garber & Kretzu (so-bgd) and fejer-bgd's.

:func:`separation_rows` runs, for every row of S points, the loop that so-bgd
(:func:`bco_gym.agents.gk22.oracles.separation_projection`) or fejer-bgd
(:meth:`bco_gym.agents.gk22.fejer_bgd.FejerBanditGD._fejer`) runs row by row in Python:
call the separation oracle of K at c + (y - c)/s, step along the normal (its part in V
for the simplex), until the oracle answers "inside". The oracles are the built-in sets'
(``KIND_*``: ball, l1 ball, box, simplex; ``ConvexSet.separation``), with their arithmetic
in their order: the ball's norm the square root of the pairwise sum of the squares, the
sums NumPy's pairwise ones started from +0 (:mod:`bco_gym.agents.kernels.oracles`), the
simplex's tangent part v - mean(v) with mean(v) = sum(v)/n, argmin/argmax the first
extreme entry. So a row's point and call counts are the Python loop's bit for bit.

A row the kernel does not finish is left to the Python loop, which then gives the same
answer or raises its error: a row with a non-finite entry, a normal whose part in V is
below the floor, or a call count that comes within one of the loop's safety limit (the
limit's square is Python's ``**``, the C library's ``pow``, which the kernel does not
claim to reproduce in the last bit). Its point and counters are then untouched.

``work`` is a (6, n) scratch array: row 0 the reductions'
(:func:`bco_gym.agents.kernels.oracles.row_norm`), 1 the iterate y, 2 the oracle's point,
3 the normal, 4 a difference.
"""

from __future__ import annotations

import functools
import math
import sys
from pathlib import Path

from bco_gym.agents.kernels import (
    KIND_BALL,
    KIND_BOX,
    KIND_SIMPLEX,
    SHARED_KERNELS,
    drop_stale_cache,
    is_cached,
)
from bco_gym.agents.kernels.oracles import inline, kernel, row_norm, row_sum

# Before this module's kernels are compiled or loaded: they inline the shared helpers
# (bco_gym.agents.kernels), whose edits numba's cache would not see.
drop_stale_cache(Path(__file__).parent, SHARED_KERNELS)

#: Scratch rows of ``work``.
ITERATE, POINT, NORMAL, DIFFERENCE = 1, 2, 3, 4
#: fejer-bgd's call limit ceil(x) + 1 is taken in the kernel for x below 2^53 only (an
#: integer there); beyond, the row is left to the Python loop.
BEYOND = 2.0**53
#: CPU seconds numba takes here to compile :func:`separation_rows` with an empty cache
#: (then about 1.3 s to import numba and load it): 10 before its helpers compiled once
#: for a plain int row rather than once per constant row, 0.47 times that since
#: (docs/performance.md, "Cold start").
COMPILE_SECONDS = 5


@kernel
def numpy_sum(rows, r, n):  # pragma: no cover - compiled
    """``np.add.reduce(rows[r, :n])``: the pairwise sum from NumPy's identity +0 (a call,
    not inlined: numba's inlining copies the sum's IR to every call site, which made the
    cold compile several times longer)."""
    return 0.0 + row_sum(rows, r, n)


@kernel
def norm_of(work, a):  # pragma: no cover - compiled
    """:func:`.oracles.row_norm` of work[a] (a call, as :func:`numpy_sum`)."""
    return row_norm(work, a, work)


@inline
def products_sum(work, a, b, n):  # pragma: no cover - compiled
    """``np.add.reduce(work[a] * work[b])`` (the products in row 0)."""
    for i in range(n):
        work[0, i] = work[a, i] * work[b, i]
    return numpy_sum(work, 0, n)


@inline
def tangent(work, a, n):  # pragma: no cover - compiled
    """work[a] <- work[a] - mean(work[a]), the simplex's ``tangent`` (``v - v.mean()``)."""
    mean = numpy_sum(work, a, n) / n
    for i in range(n):
        work[a, i] = work[a, i] - mean


@inline
def to_affine_hull(center, work, a, n):  # pragma: no cover - compiled
    """work[a] <- c + tangent(work[a] - c) (``infeasible.to_affine_hull`` on the simplex)."""
    for i in range(n):
        work[DIFFERENCE, i] = work[a, i] - center[i]
    tangent(work, DIFFERENCE, n)
    for i in range(n):
        work[a, i] = center[i] + work[DIFFERENCE, i]


@kernel
def separate(kind, radius, low, high, atol, work, n):  # pragma: no cover - compiled
    """``ConvexSet.separation(work[POINT], atol)`` of the built-in set ``kind``: True with
    the unit normal in work[NORMAL] when it separates, False for "inside"."""
    p = POINT
    if kind == KIND_BALL:
        norm = norm_of(work, p)
        if norm <= radius + atol:
            return False
        for i in range(n):
            work[NORMAL, i] = work[p, i] / norm
        return products_sum(work, NORMAL, p, n) > radius + atol  # ``separating``'s guard
    if kind == KIND_BOX:
        best, largest = 0, -math.inf
        for i in range(n):
            excess = max(low[i] - work[p, i], work[p, i] - high[i])
            if excess > largest:  # the first largest, as np.argmax
                best, largest = i, excess
        if largest <= atol:
            return False
        for i in range(n):
            work[NORMAL, i] = 0.0
        work[NORMAL, best] = 1.0 if work[p, best] > high[best] else -1.0
        return True
    if kind == KIND_SIMPLEX:
        best = 0
        for i in range(n):
            if work[p, i] < work[p, best]:  # the first smallest, as np.argmin
                best = i
        root = math.sqrt(n)
        below = -work[p, best]
        surplus = (numpy_sum(work, p, n) - 1.0) / root
        if max(below, abs(surplus)) <= atol:
            return False
        for i in range(n):
            work[NORMAL, i] = 0.0
        if below >= abs(surplus):
            work[NORMAL, best] = -1.0
            return True
        sign = 1.0 if surplus > 0 else -1.0
        for i in range(n):
            work[NORMAL, i] = sign / root
        return products_sum(work, NORMAL, p, n) > sign / root + atol
    # the l1 ball: the facet through the point's orthant
    count = 0
    for i in range(n):
        value = work[p, i]
        sign = 1.0 if value > 0 else (-1.0 if value < 0 else 0.0)
        work[NORMAL, i] = sign
        work[0, i] = abs(value)
        if sign != 0.0:
            count += 1
    scale = math.sqrt(float(count))  # signs.dot(signs): a count, exact in any order
    if numpy_sum(work, 0, n) <= radius + atol or scale == 0.0:
        return False
    for i in range(n):
        work[NORMAL, i] = work[NORMAL, i] / scale
    return products_sum(work, NORMAL, p, n) > radius / scale + atol


@kernel
def separation_rows(
    kind, radius, low, high, center, full, fejer, shrink, step, outer, slack, floor, atol,
    points, calls, steps, left, work,
):  # fmt: skip  # pragma: no cover - compiled
    """The separation steps of every row of ``points`` (S, n), in place: row r's oracle
    calls are added to calls[r] and the calls that returned a normal to steps[r]. A row
    left to the Python loop (module docstring) is untouched, its counters too, and its
    index goes to ``left``; returns how many there are (left[:k]).

    K is the built-in set (kind, radius, low, high) with centre ``center`` (``full``:
    aff(K) = R^n; else the simplex, whose normals and iterates are put on V and aff(K));
    the oracle is called at c + (y - c)/``shrink`` with tolerance ``atol``.

    ``fejer`` False: Algorithm 6 (``separation_projection``): y_1 = c + (y_0 - c) /
    max{1, ||y_0 - c||/``outer``}, steps of ``step``/||g|| g, the limit
    min(||y_0 - c||, R)^2/step^2 + 1 + ``slack``. ``fejer`` True: fejer-bgd's steps
    (``FejerBanditGD._fejer``): no ball, the same steps of length ``step`` (its delta),
    the limit ceil(sum((z - c)^2)/step^2) + 1 and the normal's size without rescaling.
    A normal's size at most ``floor`` is left to the Python loop (which raises).
    """
    rows = points.shape[0]
    count = 0
    for r in range(rows):
        made = one_row(
            kind, radius, low, high, center, full, fejer, shrink, step, outer, slack, floor,
            atol, points, r, work,
        )  # fmt: skip
        if made == 0:
            left[count] = r
            count += 1
        else:
            calls[r] += made
            steps[r] += made - 1
    return count


@inline
def one_row(
    kind, radius, low, high, center, full, fejer, shrink, step, outer, slack, floor, atol,
    points, r, work,
):  # fmt: skip  # pragma: no cover - compiled
    """:func:`separation_rows` on row r: its call count, or 0 with the row untouched."""
    n = points.shape[1]
    y = ITERATE
    for i in range(n):
        value = points[r, i]
        if not value - value == 0.0:  # NaN or infinite: the Python loop raises
            return 0
        work[y, i] = value
    if fejer:
        if not full:
            to_affine_hull(center, work, y, n)
        for i in range(n):
            difference = work[y, i] - center[i]
            work[0, i] = difference * difference
        quotient = numpy_sum(work, 0, n) / (step * step)
        if not quotient < BEYOND:  # overflow (the Python loop's ceil raises) or absurd
            return 0
        limit = math.ceil(quotient) + 1.0
    else:
        for i in range(n):
            work[DIFFERENCE, i] = work[y, i] - center[i]
        norm = norm_of(work, DIFFERENCE)
        scale = max(1.0, norm / outer)
        for i in range(n):
            work[y, i] = center[i] + work[DIFFERENCE, i] / scale
        reach = min(norm, outer)
        limit = reach * reach / (step * step) + 1.0 + slack
        if not full:
            to_affine_hull(center, work, y, n)
    count = 0
    while True:
        count += 1
        for i in range(n):
            work[POINT, i] = center[i] + (work[y, i] - center[i]) / shrink
        if not separate(kind, radius, low, high, atol, work, n):
            break
        if not full:
            tangent(work, NORMAL, n)
        if fejer:
            size = math.sqrt(products_sum(work, NORMAL, NORMAL, n))
        else:
            size = norm_of(work, NORMAL)
        if size <= floor or count + 1.0 >= limit:
            return 0
        factor = step / size
        for i in range(n):
            work[y, i] = work[y, i] - factor * work[NORMAL, i]
        if not full:
            to_affine_hull(center, work, y, n)
    for i in range(n):
        points[r, i] = work[y, i]
    return count


@functools.cache
def announce_compile() -> None:
    """Say once per process, on stderr, that the kernel is about to be compiled (when
    numba's cache does not hold it)."""
    if not is_cached(separation_rows):
        print(
            "compiling the separation kernel of so-bgd and fejer-bgd, once per machine: "
            f"~{COMPILE_SECONDS} s",
            file=sys.stderr,
            flush=True,
        )
