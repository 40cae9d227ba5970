"""The linear families' draws and values, compiled: theta_t = mu_t + s w_t in one call, and
f_t(y) = <theta_t, y - c> for a span of rounds.

:class:`~bco_gym.losses.linear.LinearLoss` draws a chunk's noise w_t uniform in the unit
ball of V as g_t ||g_t||^-1 U_t^(1/d) (g_t standard normal, U_t uniform;
:func:`~bco_gym.losses.linear.unit_ball_in_tangent`) and adds the means. In NumPy that is
a row reduction and four passes over the chunk, about 50 ns a round on n = 10 against
the draws' 97; :func:`linear_thetas` does the same operations in three light passes (the
squared norms read in place, the ratios, the rows with their offsets <theta_t, c>):

    theta_t[i] = mu_t[i] + s * (g_t[i] * (r_t / max(||g_t||, tiny))),  r_t = U_t^(1/d),

with ||g_t||^2 NumPy's pairwise sum of the row's squares (``row_dot``), so every float
is the NumPy code's. The power r_t is the C library's ``pow`` on both sides
(``portable.power`` in NumPy, numba's ``**`` here; never NumPy's vectorised ``power``,
which is Intel's SVML on an AVX-512 CPU), and the draws are NumPy's. Only for sets
whose direction space is all of R^n (V's projection the identity): the ball, the box,
the l1 ball. Installed by the compiled loops
(:meth:`~bco_gym.losses.linear.LinearLoss.use_kernel`); the
chunks are the same bits with or without it (tests/losses/test_compiled_draws.py).

:func:`linear_values` evaluates a span of rounds as ``LinearLoss._evaluate`` does (the
row products' pairwise sum, minus the offset), without NumPy's per-row reduction
overhead (about 23 ns a round on n = 10, against 3).
"""

from __future__ import annotations

import math

import numpy as np

from bco_gym.agents.kernels.oracles import PAIRWISE_BLOCK, inline, jit, pairwise_sum


@inline
def row_squares(rows, r, count):  # pragma: no cover - compiled
    """NumPy's pairwise sum of the squares rows[r, i]^2, i < count <= 128 (one block: 8
    accumulators, as ``oracles.block_sum``), read in place."""
    if count < 8:
        total = -0.0
        for i in range(count):
            total += rows[r, i] * rows[r, i]
        return total
    r0, r1 = rows[r, 0] * rows[r, 0], rows[r, 1] * rows[r, 1]
    r2, r3 = rows[r, 2] * rows[r, 2], rows[r, 3] * rows[r, 3]
    r4, r5 = rows[r, 4] * rows[r, 4], rows[r, 5] * rows[r, 5]
    r6, r7 = rows[r, 6] * rows[r, 6], rows[r, 7] * rows[r, 7]
    i = 8
    limit = count - count % 8
    while i < limit:
        r0 += rows[r, i] * rows[r, i]
        r1 += rows[r, i + 1] * rows[r, i + 1]
        r2 += rows[r, i + 2] * rows[r, i + 2]
        r3 += rows[r, i + 3] * rows[r, i + 3]
        r4 += rows[r, i + 4] * rows[r, i + 4]
        r5 += rows[r, i + 5] * rows[r, i + 5]
        r6 += rows[r, i + 6] * rows[r, i + 6]
        r7 += rows[r, i + 7] * rows[r, i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < count:
        total += rows[r, i] * rows[r, i]
        i += 1
    return total


@jit
def linear_thetas(
    normals, uniforms, exponent, noise, means, center, out, offsets, work
):  # pragma: no cover - compiled
    """``out`` (k, n) = means + noise * (normals * (radii / max(norms, tiny))) row by row,
    radii = uniforms ** exponent (the C library's ``pow``, as ``portable.power``), and
    ``offsets`` (k,) = <out_t, center> (``portable.matvec``'s pairwise sum of the row's
    products, from NumPy's identity +0); ``means`` (1, n) or (k, n), ``uniforms`` (k,),
    ``work`` (n,) scratch. Three passes: the squared norms, the ratios (powers, square
    roots and divisions), the rows with their offsets."""
    tiny = 2.2250738585072014e-308  # np.finfo(float).tiny
    rows, n = normals.shape
    shared = means.shape[0] == 1
    ratios = np.empty(rows)
    for r in range(rows):
        if n <= PAIRWISE_BLOCK:
            ratios[r] = row_squares(normals, r, n)
        else:
            for i in range(n):
                work[i] = normals[r, i] * normals[r, i]
            ratios[r] = pairwise_sum(work, 0, n)
    for r in range(rows):
        ratios[r] = uniforms[r] ** exponent / max(math.sqrt(ratios[r]), tiny)
    for r in range(rows):
        m = 0 if shared else r
        for i in range(n):
            out[r, i] = means[m, i] + noise * (normals[r, i] * ratios[r])
            work[i] = out[r, i] * center[i]
        offsets[r] = 0.0 + pairwise_sum(work, 0, n)


@jit
def linear_values(theta, points, offset, sign, out, work):  # pragma: no cover - compiled
    """``out`` (k,) = <theta_t, y_t> + sign * offset_t for the rows of ``theta`` and
    ``points`` (k, n): ``row_dot``'s pairwise sum of the products, then the offset, the
    floats of ``LinearLoss._evaluate`` (sign -1). ``work`` (n,) is scratch."""
    rows, n = theta.shape
    for r in range(rows):
        for i in range(n):
            work[i] = theta[r, i] * points[r, i]
        # NumPy's sum starts from the identity +0: an all -0 sum is +0 there
        out[r] = (0.0 + pairwise_sum(work, 0, n)) + sign * offset[r]
