"""Reductions and the built-in sets' oracles (projection, LMO, membership), compiled.

Each is the NumPy oracle's arithmetic in its order (bco_gym/sets), the Euclidean norm
included: the square root of the pairwise sum of the squares on both sides.

The rounds (:mod:`.rounds`) call :func:`inside`, :func:`linear_value`, :func:`project` and
:func:`lmo` for every row of every round. These take 2-D arrays and a row index (``x, r``
for the row x[r]) and write into rows: no array view is made (a view costs numba two
reference counts, more than a 10-vector's arithmetic). They take a set's parameters
unpacked, ``kind, radius, low, high`` and, for K_a = c + a(K - c), ``scale, center,
centered, shrunk`` (the kernels unpack the tuples of :mod:`bco_gym.engine.compiled` once
per call). The ball's oracles are inlined into the rounds; the other sets' are functions
of their own (:func:`project_base`, :func:`lmo_base`, :func:`inside_base`), compiled once
and called: inlining every set's oracles into every kernel tripled numba's cold compile
(its inlining copies the callee's IR at each call site). ``work`` is a (6, n) scratch
array whose rows each helper names.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from bco_gym.agents.kernels import (
    KIND_BALL,
    KIND_BOX,
    KIND_SIMPLEX,
    compile_per_type,
    drop_stale_cache,
    lock_cache,
)

# Before any kernel of the package is compiled or loaded (package docstring).
drop_stale_cache()

#: NumPy's pairwise summation: blocks of this many terms are summed with 8 accumulators.
PAIRWISE_BLOCK = 128
# Squared norms outside this range may have overflowed or lost bits (as in sets/balls.py).
SAFE_SQUARES = (1e-290, 1e290)
#: Up to this dimension the simplex projection sorts by insertion in a scratch row (no
#: allocation); above, with ``np.sort``. Both give the same sorted values.
INSERTION_SORT = 32


def cached(**options: object):  # type: ignore[no-untyped-def]
    """``numba.njit(cache=True, nogil=True, **options)``, numba's cache of each function
    read and written under a lock across processes (:func:`~bco_gym.agents.kernels.lock_cache`),
    compiled once per argument types when a kernel calls it
    (:func:`~bco_gym.agents.kernels.compile_per_type`)."""
    compile_ = numba.njit(cache=True, nogil=True, **options)

    def decorate(function):  # type: ignore[no-untyped-def]
        return compile_per_type(lock_cache(compile_(function)))

    return decorate


#: Compiled once, then loaded from numba's cache.
jit = cached()
#: Small helpers, inlined into their callers (numba's IR inlining).
inline = cached(inline="always")
#: The rounds and the oracles they call: compiled without numba's reference counting
#: (``_nrt=False``, the option numba's ``register_jitable`` documents for code that
#: allocates nothing). Inlined helpers' array arguments would otherwise cost an atomic
#: increment and decrement per call wherever numba fails to prune them (an argument
#: read in a branch): about 40 ns per run-round of fkm on the ball at n = 10. Nothing
#: compiled so allocates; what must (``np.sort`` above ``INSERTION_SORT``,
#: :func:`long_pairwise_sum`) is ``allocating``, a function called from a kernel
#: inheriting the kernel's ``_nrt`` unless it sets its own.
kernel = cached(_nrt=False)
allocating = cached(_nrt=True)


# -- reductions ------------------------------------------------------------------------------
@inline
def block_sum(values, first, count):  # pragma: no cover - compiled
    """NumPy's pairwise sum of at most ``PAIRWISE_BLOCK`` terms: 8 accumulators."""
    if count < 8:
        total = -0.0
        for i in range(first, first + count):
            total += values[i]
        return total
    r0, r1, r2, r3 = values[first], values[first + 1], values[first + 2], values[first + 3]
    r4, r5, r6, r7 = values[first + 4], values[first + 5], values[first + 6], values[first + 7]
    i = 8
    limit = count - count % 8
    while i < limit:
        r0 += values[first + i]
        r1 += values[first + i + 1]
        r2 += values[first + i + 2]
        r3 += values[first + i + 3]
        r4 += values[first + i + 4]
        r5 += values[first + i + 5]
        r6 += values[first + i + 6]
        r7 += values[first + i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < count:
        total += values[first + i]
        i += 1
    return total


@inline
def pairwise_sum(values, first, count):  # pragma: no cover - compiled
    """NumPy's pairwise sum of values[first : first + count] (its float64 reduction order):
    blocks of at most 128 terms (:func:`block_sum`), halves above (:func:`long_pairwise_sum`)."""
    if count <= PAIRWISE_BLOCK:
        return block_sum(values, first, count)
    return long_pairwise_sum(values, first, count)


@inline
def row_block_sum(rows, r, count):  # pragma: no cover - compiled
    """:func:`block_sum` of rows[r, :count], read in place (the same order)."""
    if count < 8:
        total = -0.0
        for i in range(count):
            total += rows[r, i]
        return total
    r0, r1, r2, r3 = rows[r, 0], rows[r, 1], rows[r, 2], rows[r, 3]
    r4, r5, r6, r7 = rows[r, 4], rows[r, 5], rows[r, 6], rows[r, 7]
    i = 8
    limit = count - count % 8
    while i < limit:
        r0 += rows[r, i]
        r1 += rows[r, i + 1]
        r2 += rows[r, i + 2]
        r3 += rows[r, i + 3]
        r4 += rows[r, i + 4]
        r5 += rows[r, i + 5]
        r6 += rows[r, i + 6]
        r7 += rows[r, i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < count:
        total += rows[r, i]
        i += 1
    return total


@inline
def row_sum(rows, r, count):  # pragma: no cover - compiled
    """:func:`pairwise_sum` of rows[r, :count]: in place up to 128 terms, through a view of
    the row above (where the view's cost is small beside the sum's)."""
    if count <= PAIRWISE_BLOCK:
        return row_block_sum(rows, r, count)
    return long_pairwise_sum(rows[r], 0, count)


@allocating
def long_pairwise_sum(values, first, count):  # pragma: no cover - compiled
    """:func:`pairwise_sum` of more than 128 terms: halves (a multiple of 8 on the left),
    summed pairwise. The halving recursion runs on an explicit stack (numba's cache does
    not keep recursive functions safely): each entry is a range and whether its left half
    is summed already."""
    starts = np.empty(64, dtype=np.int64)
    counts = np.empty(64, dtype=np.int64)
    lefts = np.empty(64)  # the finished left half's sum, once phase is 1
    phases = np.zeros(64, dtype=np.int64)
    top = 0
    starts[0], counts[0], phases[0] = first, count, 0
    result = 0.0
    returning = False
    while top >= 0:
        if returning:  # ``result`` is the sum of the range of entry top's current child
            if phases[top] == 0:
                lefts[top] = result
                phases[top] = 1
                half = counts[top] // 2
                half -= half % 8
                top += 1
                starts[top], counts[top], phases[top] = (
                    starts[top - 1] + half,
                    counts[top - 1] - half,
                    0,
                )
                returning = False
            else:
                result = lefts[top] + result
                top -= 1
            continue
        size = counts[top]
        if size <= PAIRWISE_BLOCK:
            result = block_sum(values, starts[top], size)
            top -= 1
            returning = True
            continue
        half = size // 2
        half -= half % 8
        top += 1
        starts[top], counts[top], phases[top] = starts[top - 1], half, 0
    return result


@inline
def linear_value(theta, s, j, x, r, offset, sign, work):  # pragma: no cover - compiled
    """f(x[r]) = <theta[s, j], x[r]> + sign * offset, the inner product as ``row_dot``
    sums it (the products in ``work`` row 0)."""
    n = x.shape[1]
    for i in range(n):
        work[0, i] = theta[s, j, i] * x[r, i]
    # NumPy's sum starts from its identity +0: a sum of -0 products is +0 there
    return (0.0 + row_sum(work, 0, n)) + sign * offset


@inline
def row_norm(x, r, work):  # pragma: no cover - compiled
    """||x[r]||_2: the square root of the pairwise sum of squares (in ``work`` row 0, which
    x[r] must not be), rescaled out of range."""
    n = x.shape[1]
    for i in range(n):
        work[0, i] = x[r, i] * x[r, i]
    squares = row_sum(work, 0, n)
    if SAFE_SQUARES[0] < squares < SAFE_SQUARES[1]:
        return math.sqrt(squares)
    return rescaled_norm(x, r, work)


@kernel
def rescaled_norm(x, r, work):  # pragma: no cover - compiled
    """:func:`row_norm` where the squares overflow or underflow: x[r] / max |x_i| squared,
    summed, the root scaled back (a call of its own: rare, and kept out of the rounds)."""
    n = x.shape[1]
    largest = 0.0
    for i in range(n):
        largest = max(largest, abs(x[r, i]))
    if largest == 0.0:
        return 0.0
    for i in range(n):
        scaled = x[r, i] / largest
        work[0, i] = scaled * scaled
    return largest * math.sqrt(row_sum(work, 0, n))


@jit
def decaying_steps(first, coefficient, exponent, out):  # pragma: no cover - compiled
    """sigma_t = min(1, coefficient t^(-exponent)) for t = first, first + 1, ... into ``out``
    (``bco_gym.agents.schedules.decaying_step``: numba's power is the C library's ``pow``,
    which Python's ``**`` calls; NumPy's vectorised power may differ in the last bit)."""
    for j in range(out.size):
        out[j] = min(1.0, coefficient * float(first + j) ** (-exponent))


# -- the sets' oracles -----------------------------------------------------------------------
@allocating
def sort_descending(y, r, work):  # pragma: no cover - compiled
    """:func:`descending` above ``INSERTION_SORT`` terms: ``np.sort``, reversed."""
    n = y.shape[1]
    ordered = np.sort(y[r])
    for i in range(n):
        work[0, i] = ordered[n - 1 - i]


@inline
def descending(y, r, work):  # pragma: no cover - compiled
    """y[r] sorted in decreasing order (NaN first) into ``work`` row 0: ``np.sort``'s
    values reversed. Up to ``INSERTION_SORT`` terms by insertion in place; equal values
    may trade places only as 0.0 and -0.0, which no later step tells apart."""
    n = y.shape[1]
    if n > INSERTION_SORT:
        sort_descending(y, r, work)
        return
    for i in range(n):
        value = y[r, i]
        k = i
        # value goes before work[0, k - 1]: larger, or NaN where that one is not
        while k > 0 and (
            value > work[0, k - 1] or (value != value and work[0, k - 1] == work[0, k - 1])
        ):
            work[0, k] = work[0, k - 1]
            k -= 1
        work[0, k] = value


@kernel
def project_simplex(y, r, total, out, o, work):  # pragma: no cover - compiled
    """Pi of y[r] onto {x >= 0, sum x = total} into out[o]: ``project_onto_simplex``'s
    operations (sort, shift, cumulative sums, threshold). ``work`` rows 0 and 1 are
    scratch (y[r] must not be one of them)."""
    n = y.shape[1]
    descending(y, r, work)
    shift = work[0, 0] if abs(work[0, 0]) > total else 0.0
    running = 0.0
    rho = 0
    for i in range(n):
        u = work[0, i] - shift
        running = u if i == 0 else running + u
        work[1, i] = running - total
        if u * (i + 1) > work[1, i]:
            rho = i
    theta = work[1, rho] / (rho + 1)
    for i in range(n):
        value = (y[r, i] - shift) - theta
        out[o, i] = value if value >= 0.0 else 0.0


@inline
def project_ball(radius, x, r, out, o, work):  # pragma: no cover - compiled
    """Pi of x[r] onto the ball of ``radius`` into out[o] (``work`` row 0 scratch)."""
    n = x.shape[1]
    norm = row_norm(x, r, work)
    if norm <= radius:
        for i in range(n):
            out[o, i] = x[r, i]
    else:
        factor = radius / norm
        for i in range(n):
            out[o, i] = factor * x[r, i]


@kernel
def project_base(kind, radius, low, high, x, r, out, o, work):  # pragma: no cover - compiled
    """Pi_K(x[r]) into out[o] for the built-in set ``kind``; ``work`` rows 0-2 are scratch
    (x[r] must not be one of them)."""
    n = x.shape[1]
    if kind == KIND_BALL:
        project_ball(radius, x, r, out, o, work)
    elif kind == KIND_BOX:
        for i in range(n):
            out[o, i] = min(max(x[r, i], low[i]), high[i])
    elif kind == KIND_SIMPLEX:
        project_simplex(x, r, 1.0, out, o, work)
    else:  # the l1 ball: sign(x) * Pi_{radius simplex}(|x|) outside
        for i in range(n):
            work[2, i] = abs(x[r, i])
        if row_sum(work, 2, n) <= radius:
            for i in range(n):
                out[o, i] = x[r, i]
        else:
            project_simplex(work, 2, radius, out, o, work)
            for i in range(n):
                out[o, i] = np.sign(x[r, i]) * out[o, i]


@inline
def lmo_ball(radius, g, r, out, o, work):  # pragma: no cover - compiled
    """argmin over the ball of <g[r], v>, -radius g/||g|| (0 for g = 0), into out[o]."""
    n = g.shape[1]
    norm = row_norm(g, r, work)
    if norm == 0.0:
        for i in range(n):
            out[o, i] = 0.0
    else:
        factor = -radius / norm
        for i in range(n):
            out[o, i] = factor * g[r, i]


@kernel
def lmo_base(kind, radius, low, high, g, r, out, o, work):  # pragma: no cover - compiled
    """argmin_{v in K} <g[r], v> into out[o] (the sets' closed forms, first index on ties,
    the first NaN as ``np.argmin``/``np.argmax`` find it); ``work`` row 0 is scratch."""
    n = g.shape[1]
    if kind == KIND_BALL:
        lmo_ball(radius, g, r, out, o, work)
    elif kind == KIND_BOX:
        for i in range(n):
            out[o, i] = low[i] if g[r, i] >= 0.0 else high[i]
    else:  # the simplex: argmin g; the l1 ball: argmax |g|
        best = 0
        for i in range(n):
            value = g[r, i]
            if value != value:
                best = i
                break
            if (kind == KIND_SIMPLEX and value < g[r, best]) or (
                kind != KIND_SIMPLEX and abs(value) > abs(g[r, best])
            ):
                best = i
        for i in range(n):
            out[o, i] = 0.0
        if kind == KIND_SIMPLEX:
            out[o, best] = 1.0
        else:
            out[o, best] = -radius if g[r, best] > 0 else radius


@kernel
def inside_base(kind, radius, low, high, atol, x, r, work):  # pragma: no cover - compiled
    """Whether x[r] lies in K within ``atol`` (a play the kernel may accept without the
    env); ``work`` row 0 is scratch."""
    n = x.shape[1]
    if kind == KIND_BALL:
        return row_norm(x, r, work) <= radius + atol
    if kind == KIND_BOX:
        for i in range(n):
            if max(low[i] - x[r, i], x[r, i] - high[i]) > atol:
                return False
        return True
    if kind == KIND_SIMPLEX:  # np.min(x) >= -atol, false on a NaN as here
        for i in range(n):
            if not x[r, i] >= -atol:
                return False
        return abs(row_sum(x, r, n) - 1.0) <= atol
    for i in range(n):
        work[0, i] = abs(x[r, i])
    return row_sum(work, 0, n) <= radius + atol


# -- the oracles of the rounds -----------------------------------------------------------------
@inline
def inside(kind, radius, low, high, atol, x, r, work):  # pragma: no cover - compiled
    """:func:`inside_base`, the ball's inlined."""
    if kind == KIND_BALL:
        return row_norm(x, r, work) <= radius + atol
    return inside_base(kind, radius, low, high, atol, x, r, work)


@inline
def project(
    kind, radius, low, high, scale, center, centered, shrunk, r, out, o, work
):  # fmt: skip  # pragma: no cover - compiled
    """Pi_{K_a}(work[r]) into out[o] for K_a = c + a(K - c): c + a(Pi_K(c + (x - c)/a) - c)
    (a = 1: Pi_K; a = 0: c), the ball's Pi_K inlined. ``work`` rows 0-3 are scratch
    (r is none of them): c + (x - c)/a goes to row 3 (x/a when c = 0)."""
    n = work.shape[1]
    if shrunk and scale == 0.0:
        for i in range(n):
            out[o, i] = center[i]
        return
    source = r
    if shrunk:
        source = 3
        if centered:
            for i in range(n):
                work[3, i] = work[r, i] / scale
        else:
            for i in range(n):
                work[3, i] = (work[r, i] - center[i]) / scale + center[i]
    if kind == KIND_BALL:
        project_ball(radius, work, source, out, o, work)
    else:
        project_base(kind, radius, low, high, work, source, out, o, work)
    if shrunk:
        if centered:
            for i in range(n):
                out[o, i] = out[o, i] * scale
        else:
            for i in range(n):
                out[o, i] = (out[o, i] - center[i]) * scale + center[i]


@inline
def lmo(
    kind, radius, low, high, scale, center, centered, shrunk, g, r, out, o, work
):  # fmt: skip  # pragma: no cover - compiled
    """argmin over K_a = c + a(K - c) of <g[r], v> into out[o]: c + a(lmo_K(g) - c)
    (a = 1: lmo_K), the ball's lmo_K inlined."""
    if kind == KIND_BALL:
        lmo_ball(radius, g, r, out, o, work)
    else:
        lmo_base(kind, radius, low, high, g, r, out, o, work)
    if shrunk:
        for i in range(g.shape[1]):
            out[o, i] = center[i] + scale * (out[o, i] - center[i])
