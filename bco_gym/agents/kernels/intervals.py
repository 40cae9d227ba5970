"""The interval-regret tracker's update, compiled: a span of rounds of one run.

:class:`~bco_gym.losses.intervals.IntervalRegret` keeps the dyadic cover as a binary
counter: per level k at most one open block (a finished left half waiting for its right
half), the running maximum of R(I) over the finished blocks of each length 2^k and where
it was attained, and the top level's block. :func:`interval_rounds` adds a span of rounds
to that state, one round at a time, in one call: each round is a level-0 block
[theta_t, b_t, f_t(y_t), f_t(y_t) - min_K f_t], and while it completes a right half, the
parent is the left half plus it (the same floats added) and its R(I) goes into its
level's running maximum at once.

The best values are NumPy's bit for bit: on the ball the closed form -r ||Theta|| of
:func:`~bco_gym.losses.intervals.ball_best_values` (the square root of the pairwise sum
of the squares, rescaled out of range: no BLAS call, so nothing here calls back into
NumPy), on the other sets the set's closed-form LMO (:mod:`bco_gym.agents.kernels.oracles`) and
``row_dot``'s
pairwise sum of the products, from NumPy's identity +0 (an all -0 sum is +0 there). On
the simplex and the l1 ball the LMO is a vertex: every product but the vertex's is a
zero (the thetas are finite; the sets' LMOs refuse others), so that sum is +0 plus the
vertex's product, taken without the pass (83 → 26 ns a round on the simplex, n = 10).
So a run's interval regrets are the same whichever update fed them
(tests/engine/test_compiled.py, signed zeros included). A level's maximum sees its blocks in time
order in both, so the first block attaining it is the one kept.
"""

from __future__ import annotations

import math

import numpy as np

from bco_gym.agents.kernels import KIND_BALL, KIND_BOX, KIND_SIMPLEX, read_only
from bco_gym.agents.kernels.oracles import (
    PAIRWISE_BLOCK,
    SAFE_SQUARES,
    inline,
    kernel,
    pairwise_sum,
)

# the columns after theta in a block's row (as in bco_gym/losses/intervals.py)
CONSTANT, PLAYED, GAP, EXTRA = 0, 1, 2, 3


@inline
def square_sum(values, count):  # pragma: no cover - compiled
    """NumPy's pairwise sum of values[i]^2, i < count <= 128 (one block: 8 accumulators,
    as ``oracles.block_sum``), the squares taken in registers."""
    if count < 8:
        total = -0.0
        for i in range(count):
            total += values[i] * values[i]
        return total
    r0, r1 = values[0] * values[0], values[1] * values[1]
    r2, r3 = values[2] * values[2], values[3] * values[3]
    r4, r5 = values[4] * values[4], values[5] * values[5]
    r6, r7 = values[6] * values[6], values[7] * values[7]
    i = 8
    limit = count - count % 8
    while i < limit:
        r0 += values[i] * values[i]
        r1 += values[i + 1] * values[i + 1]
        r2 += values[i + 2] * values[i + 2]
        r3 += values[i + 3] * values[i + 3]
        r4 += values[i + 4] * values[i + 4]
        r5 += values[i + 5] * values[i + 5]
        r6 += values[i + 6] * values[i + 6]
        r7 += values[i + 7] * values[i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < count:
        total += values[i] * values[i]
        i += 1
    return total


@inline
def ball_best(node, n, radius, work):  # pragma: no cover - compiled
    """-radius ||node[:n]||, as :func:`~bco_gym.losses.intervals.ball_best_values`: the
    square root of the pairwise sum of the squares, or of the row scaled by its largest
    entry where that sum is out of range."""
    if n <= PAIRWISE_BLOCK:
        squares = square_sum(node, n)
    else:
        for i in range(n):
            work[i] = node[i] * node[i]
        squares = pairwise_sum(work, 0, n)
    if SAFE_SQUARES[0] < squares < SAFE_SQUARES[1]:
        return -radius * math.sqrt(squares)
    largest = 0.0
    for i in range(n):
        largest = max(largest, abs(node[i]))
    if largest == 0.0:
        return -radius * 0.0
    for i in range(n):
        scaled = node[i] / largest
        work[i] = scaled * scaled
    return -radius * (largest * math.sqrt(pairwise_sum(work, 0, n)))


@inline
def best_value(kind, radius, low, high, node, n, work):  # pragma: no cover - compiled
    """min_K <g, x> of g = ``node[:n]`` as ``IntervalRegret._best`` computes it: the
    ball's closed form (:func:`ball_best`); otherwise the set's LMO x (``_lmo_rows``),
    then ``row_dot``'s pairwise sum of the products g_i x_i."""
    if kind == KIND_BALL:
        return ball_best(node, n, radius, work)
    if kind == KIND_BOX:
        for i in range(n):
            work[i] = node[i] * (low[i] if node[i] >= 0.0 else high[i])
    else:
        best = 0  # the simplex: argmin g; the l1 ball: argmax |g| (first on ties)
        if kind == KIND_SIMPLEX:
            lowest = node[0]
            for i in range(1, n):
                if node[i] < lowest:
                    best, lowest = i, node[i]
        else:
            largest = abs(node[0])
            for i in range(1, n):
                if abs(node[i]) > largest:
                    best, largest = i, abs(node[i])
        if kind == KIND_SIMPLEX:
            value = node[best] * 1.0
        else:
            value = node[best] * (-radius if node[best] > 0 else radius)
        finite = True  # then the other products g_i 0 are zeros
        for i in range(n):
            finite &= math.isfinite(node[i])
        if finite:  # zeros and the value, summed from +0 in any order: +0 + the value
            return 0.0 + value
        for i in range(n):
            work[i] = node[i] * 0.0
        work[best] = value
    # NumPy's row sum starts from its identity +0: an all -0 sum is +0 there
    return 0.0 + pairwise_sum(work, 0, n)


@inline
def keep_piece(
    level, index, node, wanted_flat, wanted_start, wanted_next, piece_rows
):  # pragma: no cover - compiled
    """Copy the block (level, index) just completed into ``piece_rows`` if a segment is
    made of it: the level's next wanted index (blocks complete in time order)."""
    row = wanted_start[level] + wanted_next[level]
    if row < wanted_start[level + 1] and wanted_flat[row] == index:
        for i in range(piece_rows.shape[1]):
            piece_rows[row, i] = node[i]
        wanted_next[level] += 1


@kernel
def interval_rounds(
    thetas, constants, played, first, kind, radius, low, high,
    open_rows, has_open, top_row, has_top, maxima, argmax,
    wanted_flat, wanted_start, wanted_next, piece_rows, node, work,
):  # fmt: skip  # pragma: no cover - compiled
    """Add rounds first, ..., first + m - 1 (the rows of ``thetas`` (m, dim), with
    ``constants`` and ``played`` (m,)) to the counter (module docstring).

    ``open_rows`` (levels, dim + 3) and ``has_open`` (levels,) are the open blocks,
    ``top_row``/``has_top`` (1-element) the top level's block, ``maxima``/``argmax``
    (levels,) the running maxima; ``wanted_flat``, ``wanted_start``, ``wanted_next`` and
    ``piece_rows`` the blocks the segments are made of, kept as they complete (see
    ``IntervalRegret.__init__``). ``node`` (dim + 3,) and ``work`` (dim,) are scratch."""
    levels = maxima.size
    dim = thetas.shape[1]
    pieces = wanted_flat.size > 0
    for j in range(thetas.shape[0]):
        index = first + j
        for i in range(dim):
            node[i] = thetas[j, i]
        node[dim + CONSTANT] = constants[j]
        node[dim + PLAYED] = played[j]
        level = 0
        while True:  # the round's block, then each parent it completes
            # one call site of the inlined best value (numba copies it into each)
            best = best_value(kind, radius, low, high, node, dim, work)
            regret = node[dim + PLAYED] - (best + node[dim + CONSTANT])
            if level == 0:  # a round's gap; a parent's is its halves' sum
                node[dim + GAP] = regret
            if regret > maxima[level]:
                maxima[level] = regret
                argmax[level] = index
            if pieces:
                keep_piece(level, index, node, wanted_flat, wanted_start, wanted_next, piece_rows)
            if level == levels - 1:  # the top level's block is never paired
                for i in range(dim + EXTRA):
                    top_row[i] = node[i]
                has_top[0] = True
                break
            if not has_open[level]:  # a left half: it waits for its right half
                for i in range(dim + EXTRA):
                    open_rows[level, i] = node[i]
                has_open[level] = True
                break
            for i in range(dim + EXTRA):  # the parent: left half plus right half
                node[i] = open_rows[level, i] + node[i]
            has_open[level] = False
            level += 1
            index //= 2


class IntervalSpans:
    """The compiled update bound to a set's oracle and its scratch arrays, the update
    :meth:`~bco_gym.losses.intervals.IntervalRegret.use_rounds` installs: called as
    ``(thetas, constants, played, first, open_rows, has_open, top_row, has_top, maxima,
    argmax, wanted_flat, wanted_start, wanted_next, piece_rows)``."""

    def __init__(self, kind: int, radius: float, low: np.ndarray, high: np.ndarray, dim: int):
        self.kind, self.radius, self.low, self.high, self.dim = kind, radius, low, high, dim
        self.node = np.empty(dim + EXTRA)
        self.work = np.empty(dim)

    def __call__(self, thetas, constants, played, first, *state):  # type: ignore[no-untyped-def]
        """Add the span (module docstring); ``state`` is the tracker's arrays. ``thetas``
        and ``constants`` go over read-only always (numba compiles once per array type,
        and the tracker gets them writable or not depending on the loop)."""
        thetas, constants = read_only(thetas), read_only(constants)
        interval_rounds(
            thetas, constants, played, first, self.kind, self.radius, self.low, self.high,
            *state, self.node, self.work,
        )  # fmt: skip
