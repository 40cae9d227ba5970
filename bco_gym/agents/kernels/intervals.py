"""The interval-regret tracker's update, compiled: a span of rounds of one run.

:class:`~bco_gym.losses.intervals.IntervalRegret` keeps the dyadic cover as a binary
counter: per level k at most one open block (a finished left half waiting for its right
half), the running maximum of R(I) over the finished blocks of each length 2^k and where
it was attained, and the top level's block. :func:`interval_rounds` adds rounds one at a
time to that state, as the NumPy update adds them a span at a time: each round is a
level-0 block [theta_t, b_t, f_t(y_t), f_t(y_t) - min_K f_t]; while it completes a right
half, the parent is the left half plus it (the same floats added) and its best value
min_K <Theta, x> + B comes from the set's LMO. The best values are NumPy's bit for bit:
the LMO is the set's closed form (:mod:`.oracles`), the ball's norm the BLAS dot product
that ``euclidean_norms`` takes (``np.dot`` here calls the same BLAS routine), and the
inner product ``row_dot``'s pairwise sum. So a run's interval regrets are the same
whichever update fed them (tests/losses/test_intervals.py).
"""

from __future__ import annotations

import math

import numpy as np

from bco_gym.agents.kernels import KIND_BALL, KIND_BOX, KIND_SIMPLEX
from bco_gym.agents.kernels.oracles import SAFE_SQUARES, inline, jit, pairwise_sum

# the columns after theta in a block's row (as in bco_gym/losses/intervals.py)
CONSTANT, PLAYED, GAP, EXTRA = 0, 1, 2, 3


@inline
def blas_norm(g):  # pragma: no cover - compiled
    """``euclidean_norm`` of sets/balls.py: sqrt of the BLAS dot, rescaled out of range."""
    squares = np.dot(g, g)
    if SAFE_SQUARES[0] < squares < SAFE_SQUARES[1]:
        return math.sqrt(squares)
    largest = 0.0
    for i in range(g.size):
        largest = max(largest, abs(g[i]))
    if largest == 0.0:
        return 0.0
    scaled = g / largest
    return largest * math.sqrt(np.dot(scaled, scaled))


@inline
def best_value(kind, radius, low, high, g, point, products):  # pragma: no cover - compiled
    """min_K <g, x> = <g, lmo_K(g)> as ``IntervalRegret._best`` computes it: the set's LMO
    (``_lmo_rows``), then ``row_dot``'s pairwise sum of the products."""
    n = g.size
    if kind == KIND_BALL:
        norm = blas_norm(g)
        factor = -radius / norm if norm != 0.0 else 0.0
        for i in range(n):
            point[i] = factor * g[i] if norm != 0.0 else 0.0
    elif kind == KIND_BOX:
        for i in range(n):
            point[i] = low[i] if g[i] >= 0.0 else high[i]
    else:
        best = 0  # the simplex: argmin g; the l1 ball: argmax |g| (first on ties)
        for i in range(1, n):
            if (kind == KIND_SIMPLEX and g[i] < g[best]) or (
                kind != KIND_SIMPLEX and abs(g[i]) > abs(g[best])
            ):
                best = i
        for i in range(n):
            point[i] = 0.0
        if kind == KIND_SIMPLEX:
            point[best] = 1.0
        else:
            point[best] = -radius if g[best] > 0 else radius
    for i in range(n):
        products[i] = g[i] * point[i]
    return pairwise_sum(products, 0, n)


@jit
def interval_rounds(
    thetas, constants, played, first, kind, radius, low, high,
    open_rows, has_open, top_row, has_top, maxima, argmax, node, g, point, products,
):  # fmt: skip  # pragma: no cover - compiled
    """Add rounds first, ..., first + m - 1 to the counter's state (module docstring).

    ``open_rows`` (levels, dim + 3) and ``has_open`` (levels,) are the open blocks,
    ``top_row``/``has_top`` (1-element) the top level's block, ``maxima``/``argmax``
    (levels,) the running maxima; ``node`` (dim + 3,), ``g``, ``point`` and ``products``
    (dim,) are scratch."""
    levels = maxima.size
    dim = thetas.shape[1]
    for j in range(thetas.shape[0]):
        index = first + j
        for i in range(dim):
            node[i] = thetas[j, i]
            g[i] = thetas[j, i]
        node[dim + CONSTANT] = constants[j]
        node[dim + PLAYED] = played[j]
        best = best_value(kind, radius, low, high, g, point, products) + constants[j]
        node[dim + GAP] = played[j] - best
        regret = node[dim + GAP]
        level = 0
        while True:
            if regret > maxima[level]:
                maxima[level] = regret
                argmax[level] = index
            if level == levels - 1:  # the top level's block is never paired
                top_row[:] = node
                has_top[0] = True
                break
            if not has_open[level]:  # a left half: it waits for its right half
                open_rows[level, :] = node
                has_open[level] = True
                break
            for i in range(dim + EXTRA):  # the parent: left half plus right half
                node[i] = open_rows[level, i] + node[i]
            for i in range(dim):
                g[i] = node[i]
            has_open[level] = False
            level += 1
            index //= 2
            best = best_value(kind, radius, low, high, g, point, products)
            regret = node[dim + PLAYED] - (best + node[dim + CONSTANT])
