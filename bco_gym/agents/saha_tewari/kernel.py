"""The FTRL solve of saha-tewari, compiled: damped Newton on a self-concordant barrier.

:meth:`~bco_gym.agents.saha_tewari.agent.SahaTewari._solve` makes about 15 NumPy calls per
Newton step besides the SVD of the barrier's factor M (hess R = M^T M). Here the SVD
stays NumPy's (``np.linalg.svd``, called by the agent), and everything between two SVDs
is one compiled call, :func:`newton_step`: the decrement, the stopping rule, the damped
step, its halving at the boundary and the barrier's derivatives at the new point
(:mod:`bco_gym.agents.barriers`); :func:`start_solve` takes the derivatives at the start.

Why not numba's ``np.linalg.svd``: it calls SciPy's LAPACK, another OpenBLAS build than
NumPy's. The two agree on most matrices but not all: on the simplex's factor at the
centre for n = 60 (all singular values equal, the singular vectors decided by rounding)
they return different V. Only NumPy's own SVD gives NumPy's bits everywhere.

The arithmetic is the NumPy code's, in its order: every reduction there is NumPy's
pairwise sum (``np.add.reduce`` along a contiguous row of a 1-D or 2-D array, from the
identity +0), which :func:`row_dot` and :func:`roots_of` reproduce, and no BLAS product is
taken on either side.
"""

from __future__ import annotations

import functools
import math
import sys
from pathlib import Path

from bco_gym.agents.kernels import SHARED_KERNELS, drop_stale_cache, is_cached
from bco_gym.agents.kernels.oracles import jit, pairwise_sum

# Before this module's kernels are compiled or loaded: they inline the shared helpers
# (bco_gym.agents.kernels), whose edits numba's cache would not see.
drop_stale_cache(Path(__file__).parent, SHARED_KERNELS)

#: The barriers :func:`newton_step` knows (``Barrier`` classes of :mod:`bco_gym.agents.barriers`).
BARRIER_BALL, BARRIER_BOX, BARRIER_NONNEGATIVE = 0, 1, 2
#: What :func:`newton_step` returns (CONTINUE: call it again after the next SVD).
CONVERGED, STALLED, UNCONVERGED, CONTINUE = 0, 1, 2, -1
#: The rows of the work array (``WORK_ROWS`` x max(n, d)) the solve keeps its vectors in.
X, AMBIENT, SCRATCH, GRADIENT, TRIAL_GRADIENT, TRIAL, SCALED, WEIGHTS, DIRECTION = range(9)
WORK_ROWS = 9
#: CPU seconds numba takes here to compile :func:`start_solve` and :func:`newton_step` with
#: an empty cache (then about 1.3 s to import numba and load them): 10 before the factor's
#: copy became a loop and the helpers' constants plain ints, 0.64 times that since
#: (docs/performance.md, "Cold start").
COMPILE_SECONDS = 6


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
def start_solve(
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
    work,
    factors,
    state,
):  # pragma: no cover - compiled
    """The derivatives at w_t (``point``) before the first Newton step: grad R into
    ``work[GRADIENT]``, the factor M into ``factors[0]`` (which the caller hands to
    NumPy's SVD); ``state`` = (steps, previous decrement) = (0, inf)."""
    n, d = center.size, point.size
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
        work[X, :n],
        work[AMBIENT, :n],
        work[GRADIENT, :d],
        factors[0],
        work[SCRATCH],
    )
    state[0] = 0.0
    state[1] = math.inf


@jit
def newton_step(
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
    linear,
    tolerance,
    max_steps,
    full_step,
    sigma,
    rotation,
    roots,
    inverse_roots,
    work,
    factors,
    state,
):  # pragma: no cover - compiled
    """One pass of ``SahaTewari._solve``'s loop after NumPy's SVD of ``factors[0]``
    (``sigma``, ``rotation`` = V^T): the decrement, the stopping rule, the damped step
    with its halving at the boundary, the derivatives at the new point (``point``
    advanced in place, the factor into ``factors[0]``). Returns CONTINUE, or
    CONVERGED | STALLED | UNCONVERGED having written A_t and A_t^(-1) (the point's, from
    this SVD) into ``roots`` and ``inverse_roots``. ``state``: (steps, previous)."""
    n, d = center.size, point.size
    gradient, scaled, weights = work[GRADIENT, :d], work[SCALED, :d], work[WEIGHTS, :d]
    direction, trial, scratch = work[DIRECTION, :d], work[TRIAL, :d], work[SCRATCH]
    for i in range(d):
        gradient[i] = gradient[i] + linear[i]
    for i in range(d):
        scaled[i] = row_dot(rotation, i, gradient, scratch) / sigma[i]
    for i in range(d):
        scratch[i] = scaled[i] * scaled[i]
    decrement = math.sqrt(0.0 + pairwise_sum(scratch, 0, d))
    steps, previous = int(state[0]), state[1]
    status = CONTINUE
    if decrement <= tolerance:
        status = CONVERGED
    elif previous < full_step and decrement > previous / 2:
        status = STALLED
    elif steps == max_steps:
        status = UNCONVERGED
    if status != CONTINUE:
        roots_of(sigma, rotation, roots, inverse_roots, scratch)
        return status
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
            work[X, :n],
            work[AMBIENT, :n],
            work[TRIAL_GRADIENT, :d],
            factors[1],
            scratch,
        ):
            break
        for i in range(d):  # rounding at the boundary only: halve
            direction[i] = direction[i] / 2.0
    for i in range(d):
        point[i] = point[i] + direction[i]
        gradient[i] = work[TRIAL_GRADIENT, i]
    for i in range(factors.shape[1]):  # a loop: a slice assignment compiles numba's
        for j in range(factors.shape[2]):  # shape-mismatch message (seconds of compile)
            factors[0, i, j] = factors[1, i, j]
    state[0] = steps + 1
    state[1] = decrement
    return CONTINUE


@jit
def roots_of(sigma, rotation, roots, inverse_roots, products):  # pragma: no cover
    """A = V diag(1/sigma) V^T and A^(-1) = V diag(sigma) V^T, V = rotation^T:
    A[i, k] = +0 plus the pairwise sum over j of (V[i, j]/sigma_j) V[k, j] (the NumPy
    solve's 2-D reduction of these products)."""
    d = sigma.size
    for i in range(d):
        for k in range(d):
            for j in range(d):
                products[j] = (rotation[j, i] / sigma[j]) * rotation[j, k]
            roots[i, k] = 0.0 + pairwise_sum(products, 0, d)
            for j in range(d):
                products[j] = (rotation[j, i] * sigma[j]) * rotation[j, k]
            inverse_roots[i, k] = 0.0 + pairwise_sum(products, 0, d)


@functools.cache
def announce_compile() -> None:
    """Say once per process, on stderr, that the kernel is about to be compiled (when
    numba's cache does not hold it)."""
    if not is_cached(newton_step):
        print(
            f"compiling the kernel of saha-tewari, once per machine: ~{COMPILE_SECONDS} s",
            file=sys.stderr,
            flush=True,
        )
