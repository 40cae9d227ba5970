"""Reductions and the built-in sets' oracles (projection, LMO, membership), compiled.

Each is the NumPy oracle's arithmetic in its order (bco_gym/sets), except the Euclidean
norm: a pairwise sum of squares here, the BLAS dot product there (package docstring).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from bco_gym.agents.kernels import KIND_BALL, KIND_BOX, KIND_SIMPLEX, drop_stale_cache

# Before any kernel of the package is compiled or loaded (package docstring).
drop_stale_cache()

#: NumPy's pairwise summation: blocks of this many terms are summed with 8 accumulators.
PAIRWISE_BLOCK = 128
# Squared norms outside this range may have overflowed or lost bits (as in sets/balls.py).
SAFE_SQUARES = (1e-290, 1e290)

#: The kernels: compiled once, then loaded from numba's cache.
jit = numba.njit(cache=True, nogil=True)
#: The small helpers, inlined into their callers: a call that slices rows of the callers'
#: arrays would otherwise pay two reference counts per view, more than the arithmetic.
inline = numba.njit(cache=True, nogil=True, inline="always")


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


@jit
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
def linear_value(theta, point, offset, sign, work):  # pragma: no cover - compiled
    """<theta, point> + sign * offset, the inner product as ``row_dot`` sums it."""
    for i in range(point.size):
        work[i] = theta[i] * point[i]
    return pairwise_sum(work, 0, point.size) + sign * offset


@inline
def euclidean_norm(x, work):  # pragma: no cover - compiled
    """||x||_2: the square root of the pairwise sum of squares, rescaled out of range."""
    for i in range(x.size):
        work[i] = x[i] * x[i]
    squares = pairwise_sum(work, 0, x.size)
    if SAFE_SQUARES[0] < squares < SAFE_SQUARES[1]:
        return math.sqrt(squares)
    largest = 0.0
    for i in range(x.size):
        largest = max(largest, abs(x[i]))
    if largest == 0.0:
        return 0.0
    for i in range(x.size):
        scaled = x[i] / largest
        work[i] = scaled * scaled
    return largest * math.sqrt(pairwise_sum(work, 0, x.size))


@jit
def decaying_steps(first, coefficient, exponent, out):  # pragma: no cover - compiled
    """sigma_t = min(1, coefficient t^(-exponent)) for t = first, first + 1, ... into ``out``
    (``bco_gym.agents.schedules.decaying_step``: numba's power is the C library's ``pow``,
    which Python's ``**`` calls; NumPy's vectorised power may differ in the last bit)."""
    for j in range(out.size):
        out[j] = min(1.0, coefficient * float(first + j) ** (-exponent))


# -- the sets' oracles -----------------------------------------------------------------------
@jit
def project_simplex(y, total, out, work):  # pragma: no cover - compiled
    """Pi onto {x >= 0, sum x = total}: ``project_onto_simplex``'s operations (sort, shift,
    cumulative sums, threshold). ``work`` (2, n) is scratch."""
    n = y.size
    ordered = np.sort(y)
    u, cumulative = work[0], work[1]
    for i in range(n):
        u[i] = ordered[n - 1 - i]
    shift = u[0] if abs(u[0]) > total else 0.0
    running = 0.0
    rho = 0
    for i in range(n):
        u[i] = u[i] - shift
        running = u[i] if i == 0 else running + u[i]
        cumulative[i] = running - total
        if u[i] * (i + 1) > cumulative[i]:
            rho = i
    theta = cumulative[rho] / (rho + 1)
    for i in range(n):
        value = (y[i] - shift) - theta
        out[i] = value if value >= 0.0 else 0.0


@jit
def project_base(kind, x, radius, low, high, out, work):  # pragma: no cover - compiled
    """Pi_K(x) into ``out`` for the built-in set ``kind``; ``work`` rows 0-2 are scratch
    (x must not be one of them)."""
    n = x.size
    if kind == KIND_BALL:
        norm = euclidean_norm(x, work[0])
        if norm <= radius:
            out[:] = x
        else:
            factor = radius / norm
            for i in range(n):
                out[i] = factor * x[i]
    elif kind == KIND_BOX:
        for i in range(n):
            out[i] = min(max(x[i], low[i]), high[i])
    elif kind == KIND_SIMPLEX:
        project_simplex(x, 1.0, out, work[:2])
    else:  # the l1 ball: sign(x) * Pi_{radius simplex}(|x|) outside
        magnitude = work[2]
        for i in range(n):
            magnitude[i] = abs(x[i])
        if pairwise_sum(magnitude, 0, n) <= radius:
            out[:] = x
        else:
            project_simplex(magnitude, radius, out, work[:2])
            for i in range(n):
                out[i] = np.sign(x[i]) * out[i]


@jit
def lmo_base(kind, g, radius, low, high, out, work):  # pragma: no cover - compiled
    """argmin_{v in K} <g, v> into ``out`` (the sets' closed forms, first index on ties)."""
    n = g.size
    if kind == KIND_BALL:
        norm = euclidean_norm(g, work[0])
        if norm == 0.0:
            out[:] = 0.0
        else:
            factor = -radius / norm
            for i in range(n):
                out[i] = factor * g[i]
    elif kind == KIND_BOX:
        for i in range(n):
            out[i] = low[i] if g[i] >= 0.0 else high[i]
    elif kind == KIND_SIMPLEX:
        out[:] = 0.0
        out[np.argmin(g)] = 1.0
    else:
        index = np.argmax(np.abs(g))
        out[:] = 0.0
        out[index] = -radius if g[index] > 0 else radius


@jit
def project(oracle, x, out, work):  # pragma: no cover - compiled
    """Pi_{K_a}(x) for K_a = c + a(K - c): c + a(Pi_K(c + (x - c)/a) - c) (a = 1: Pi_K).
    ``work`` rows 0-3 are scratch (x must not be one of them)."""
    kind, radius, low, high, scale, center, centered, shrunk = oracle
    if not shrunk:
        project_base(kind, x, radius, low, high, out, work)
        return
    n = x.size
    inner = work[3]
    if scale == 0.0:
        out[:] = center
    elif centered:
        for i in range(n):
            inner[i] = x[i] / scale
        project_base(kind, inner, radius, low, high, out, work)
        for i in range(n):
            out[i] = out[i] * scale
    else:
        for i in range(n):
            inner[i] = (x[i] - center[i]) / scale + center[i]
        project_base(kind, inner, radius, low, high, out, work)
        for i in range(n):
            out[i] = (out[i] - center[i]) * scale + center[i]


@jit
def lmo(oracle, g, out, work):  # pragma: no cover - compiled
    """argmin over K_a = c + a(K - c): c + a(lmo_K(g) - c) (a = 1: lmo_K)."""
    kind, radius, low, high, scale, center, _, shrunk = oracle
    lmo_base(kind, g, radius, low, high, out, work)
    if shrunk:
        for i in range(g.size):
            out[i] = center[i] + scale * (out[i] - center[i])


@inline
def inside(check, x, work):  # pragma: no cover - compiled
    """Whether x lies in K within ``atol`` (a play the kernel may accept without the env)."""
    kind, radius, low, high, atol = check
    n = x.size
    if kind == KIND_BALL:
        return euclidean_norm(x, work[0]) <= radius + atol
    if kind == KIND_BOX:
        for i in range(n):
            if max(low[i] - x[i], x[i] - high[i]) > atol:
                return False
        return True
    if kind == KIND_SIMPLEX:
        return np.min(x) >= -atol and abs(pairwise_sum(x, 0, n) - 1.0) <= atol
    for i in range(n):
        work[0, i] = abs(x[i])
    return pairwise_sum(work[0], 0, n) <= radius + atol
