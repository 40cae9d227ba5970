"""The FTRL solve of saha-tewari, compiled: damped Newton on a self-concordant barrier.

:func:`newton_solve` is :meth:`~bco_gym.agents.saha_tewari.SahaTewari._solve` with the
barrier's derivatives (:mod:`bco_gym.agents.barriers`) inside: one call per solve where
the NumPy code makes about 15 NumPy calls per Newton step. The arithmetic is the NumPy
code's, in its order: every reduction there is NumPy's pairwise sum (``np.add.reduce``
along a contiguous row, from the identity +0), which :func:`row_dot` reproduces, and no
BLAS product is taken on either side.

The one exception is the SVD of the factor M (hess R = M^T M), LAPACK's ``dgesdd`` on
both sides: NumPy calls its own LAPACK, numba's ``np.linalg.svd`` SciPy's. The two give
the same bits when they are builds of the same LAPACK and BLAS kernels (the OpenBLAS of
NumPy's and SciPy's wheels); :func:`lapack_agrees` checks that on barrier factors before
the agent uses this module, and the agent keeps the NumPy solve when it fails.
"""

from __future__ import annotations

import functools
import math
import sys

import numpy as np

from bco_gym.agents.kernels import is_cached
from bco_gym.agents.kernels.oracles import jit, pairwise_sum

#: The barriers :func:`newton_solve` knows (``Barrier`` classes of :mod:`bco_gym.agents.barriers`).
BARRIER_BALL, BARRIER_BOX, BARRIER_NONNEGATIVE = 0, 1, 2
#: What :func:`newton_solve` returns beside the step count.
CONVERGED, STALLED, UNCONVERGED = 0, 1, 2
#: CPU seconds numba takes here to compile :func:`newton_solve` and :func:`compiled_svd`
#: with an empty cache (then about 1.3 s to import numba and load them).
COMPILE_SECONDS = 12


@jit
def row_dot(matrix, r, vector, scratch):  # pragma: no cover - compiled
    """``np.add.reduce(matrix * vector, axis=1)[r]``: +0 plus the pairwise sum of the
    products of row r (written to ``scratch``)."""
    n = vector.size
    for j in range(n):
        scratch[j] = matrix[r, j] * vector[j]
    return 0.0 + pairwise_sum(scratch, 0, n)


@jit
def to_point(center, basis, has_basis, coordinates, x, scratch):  # pragma: no cover
    """x = c + Q w (``Barrier.point``): c + w when K is full-dimensional."""
    if not has_basis:
        for i in range(x.size):
            x[i] = center[i] + coordinates[i]
        return
    for i in range(x.size):
        x[i] = center[i] + row_dot(basis, i, coordinates, scratch)


@jit
def derivatives(
    kind,
    center,
    radius_squared,
    low,
    high,
    basis,
    basis_t,
    has_basis,
    rows,
    coordinates,
    x,
    ambient,
    gradient,
    factor,
    scratch,
):  # pragma: no cover
    """``Barrier.derivatives`` at c + Q w: writes grad R (coordinates) to ``gradient`` and
    the factor M (Q^T hess R Q = M^T M) to ``factor``; returns False outside int K (where
    the NumPy barrier's value is inf), having written nothing that is read."""
    n = x.size
    to_point(center, basis, has_basis, coordinates, x, scratch)
    if kind == BARRIER_BALL:
        for i in range(n):
            ambient[i] = x[i] - center[i]  # z
            scratch[i] = ambient[i] * ambient[i]
        squared = 0.0 + pairwise_sum(scratch, 0, n)
        slack = radius_squared - squared
        if not slack > 0.0:
            return False
        across = math.sqrt(2.0 / slack)
        for i in range(n):
            for j in range(n):
                factor[i, j] = across if i == j else 0.0
        if squared > 0.0:
            along = math.sqrt(2.0 / slack + 4.0 * squared / (slack * slack))
            norm = math.sqrt(squared)
            for i in range(n):
                scratch[i] = ambient[i] / norm  # e = z/||z||
            weight = along - across
            for i in range(n):
                for j in range(n):
                    factor[i, j] = factor[i, j] + weight * (scratch[i] * scratch[j])
        scale = 2.0 / slack
        for i in range(n):
            gradient[i] = scale * ambient[i]
        return True
    if kind == BARRIER_BOX:
        for i in range(n):
            if not (x[i] - low[i] > 0.0 and high[i] - x[i] > 0.0):
                return False
        for i in range(n):
            for j in range(n):
                factor[i, j] = 0.0
                factor[n + i, j] = 0.0
        for i in range(n):
            below, above = x[i] - low[i], high[i] - x[i]
            gradient[i] = 1.0 / above - 1.0 / below
            factor[i, i] = 1.0 / below
            factor[n + i, i] = 1.0 / above
        return True
    # {x >= 0} on aff(K): the rows i of diag(1/x) with c_i > 0, in coordinates
    for k in range(rows.size):
        if not x[rows[k]] > 0.0:
            return False
    for i in range(n):
        ambient[i] = 0.0
    for k in range(rows.size):
        ambient[rows[k]] = -1.0 / x[rows[k]]
    d = gradient.size
    if not has_basis:
        for i in range(d):
            gradient[i] = ambient[i]
        for k in range(rows.size):
            for j in range(d):
                factor[k, j] = 0.0
            factor[k, rows[k]] = 1.0 / x[rows[k]]
        return True
    for i in range(d):
        gradient[i] = row_dot(basis_t, i, ambient, scratch)
    for k in range(rows.size):
        inverse = 1.0 / x[rows[k]]
        for j in range(d):
            factor[k, j] = inverse * basis[rows[k], j]
    return True


@jit
def newton_solve(
    kind,
    center,
    radius_squared,
    low,
    high,
    basis,
    basis_t,
    has_basis,
    rows,
    factor_rows,
    point,
    linear,
    tolerance,
    max_steps,
    full_step,
    roots,
    inverse_roots,
):  # pragma: no cover - compiled
    """x_{t+1} = argmin eta <sum g_s, x> + R(x) by damped Newton from ``point`` (w_t,
    overwritten by w_{t+1}), ``linear`` = eta sum g_s; A_t and A_t^(-1) at the new point
    into ``roots`` and ``inverse_roots``. ``SahaTewari._solve`` step for step (its
    docstring: the stopping rule, the damping below ``full_step``, the halving at the
    boundary). Returns (steps, CONVERGED | STALLED | UNCONVERGED)."""
    d = point.size
    n = center.size
    x = np.empty(n)
    ambient = np.empty(n)
    scratch = np.empty(max(n, d))
    gradient = np.empty(d)
    trial_gradient = np.empty(d)
    factor = np.empty((factor_rows, d))
    trial_factor = np.empty((factor_rows, d))
    trial = np.empty(d)
    scaled = np.empty(d)
    weights = np.empty(d)
    direction = np.empty(d)
    derivatives(
        kind,
        center,
        radius_squared,
        low,
        high,
        basis,
        basis_t,
        has_basis,
        rows,
        point,
        x,
        ambient,
        gradient,
        factor,
        scratch,
    )
    steps, previous, status = 0, math.inf, CONVERGED
    while True:
        _, sigma, rotation = np.linalg.svd(factor, full_matrices=False)
        for i in range(d):
            gradient[i] = gradient[i] + linear[i]
        for i in range(d):
            scaled[i] = row_dot(rotation, i, gradient, scratch) / sigma[i]
        for i in range(d):
            scratch[i] = scaled[i] * scaled[i]
        decrement = math.sqrt(0.0 + pairwise_sum(scratch, 0, d))
        if decrement <= tolerance:
            break
        if previous < full_step and decrement > previous / 2:
            status = STALLED
            break
        if steps == max_steps:
            status = UNCONVERGED
            break
        for j in range(d):
            weights[j] = scaled[j] / sigma[j]
        for i in range(d):  # -(V (scaled/sigma))_i, V = rotation^T
            for j in range(d):
                scratch[j] = rotation[j, i] * weights[j]
            direction[i] = -(0.0 + pairwise_sum(scratch, 0, d))
        if decrement >= full_step:
            for i in range(d):
                direction[i] = direction[i] / (1.0 + decrement)
        while True:
            for i in range(d):
                trial[i] = point[i] + direction[i]
            if derivatives(
                kind,
                center,
                radius_squared,
                low,
                high,
                basis,
                basis_t,
                has_basis,
                rows,
                trial,
                x,
                ambient,
                trial_gradient,
                trial_factor,
                scratch,
            ):
                break
            for i in range(d):  # rounding at the boundary only: halve
                direction[i] = direction[i] / 2.0
        for i in range(d):
            point[i] = point[i] + direction[i]
            gradient[i] = trial_gradient[i]
        factor[:, :] = trial_factor
        steps += 1
        previous = decrement
    products = np.empty(d)
    for i in range(d):  # A[i, k] = sum_j (V[i, j]/sigma_j) V[k, j], V[i, j] = rotation[j, i]
        for k in range(d):
            for j in range(d):
                products[j] = (rotation[j, i] / sigma[j]) * rotation[j, k]
            roots[i, k] = 0.0 + pairwise_sum(products, 0, d)
            for j in range(d):
                products[j] = (rotation[j, i] * sigma[j]) * rotation[j, k]
            inverse_roots[i, k] = 0.0 + pairwise_sum(products, 0, d)
    return steps, status


@jit
def compiled_svd(factor):  # pragma: no cover - compiled
    """numba's (SciPy's LAPACK) SVD, as :func:`newton_solve` takes it."""
    return np.linalg.svd(factor, full_matrices=False)


@functools.cache
def lapack_agrees() -> bool:
    """Whether the compiled SVD gives NumPy's bits on barrier-like factors (module
    docstring): a few symmetric, tall and badly scaled matrices of the sizes used."""
    rng = np.random.default_rng(20110)
    for rows, columns in ((10, 10), (20, 10), (10, 9), (16, 9), (5, 4), (3, 3)):
        for spread in (0.0, 8.0, 30.0):
            matrix = rng.standard_normal((rows, columns))
            matrix *= np.exp(spread * rng.uniform(-1.0, 1.0, (rows, 1)))
            if rows == columns:
                matrix = matrix + matrix.T
            expected = np.linalg.svd(matrix, full_matrices=False)
            found = compiled_svd(matrix)
            for mine, theirs in zip(found, expected, strict=True):
                if mine.tobytes() != np.ascontiguousarray(theirs).tobytes():
                    return False
    return True


@functools.cache
def announce_compile() -> None:
    """Say once per process, on stderr, that the kernel is about to be compiled (when
    numba's cache does not hold it)."""
    if not is_cached(newton_solve):
        print(
            f"compiling the kernel of saha-tewari, once per machine: ~{COMPILE_SECONDS} s",
            file=sys.stderr,
            flush=True,
        )
