"""The interval-regret tracker's update, compiled: a span of rounds of one run.

:class:`~bco_gym.losses.intervals.IntervalRegret` keeps the dyadic cover as a binary
counter: per level k at most one open block (a finished left half waiting for its right
half), the running maximum of R(I) over the finished blocks of each length 2^k and where
it was attained, and the top level's block. :class:`IntervalSpans` adds a span of rounds
to that state, as the NumPy update adds it, in three steps:

1. the squared norms of the rounds' theta_t, one ``np.vecdot`` (the ball only);
2. :func:`interval_tree` adds the rounds one at a time: each round is a level-0 block
   [theta_t, b_t, f_t(y_t), f_t(y_t) - min_K f_t] (its best value from its squared
   norm), and while it completes a right half, the parent is the left half plus it (the
   same floats added); the parents are written out, in the order they complete;
3. the parents' squared norms, one ``np.vecdot``, and :func:`interval_parents` takes each
   parent's best value min_K <Theta, x> + B and the levels' running maxima.

The best values are NumPy's bit for bit: the LMO is the set's closed form (:mod:`.oracles`),
the ball's norm the BLAS dot product that ``euclidean_norms`` takes (``np.vecdot``, the
same call on the same contiguous rows), and the inner product ``row_dot``'s pairwise sum.
So a run's interval regrets are the same whichever update fed them
(tests/losses/test_intervals.py). A level's maximum sees its blocks in time order in
both, so the first block attaining it is the one kept. The BLAS dots are taken in NumPy,
a few calls per span: numba's ``np.dot`` costs about 50 ns a call on a 10-vector, more
than the rest of a block's work.
"""

from __future__ import annotations

import math

import numpy as np

from bco_gym.agents.kernels import KIND_BALL, KIND_BOX, KIND_SIMPLEX
from bco_gym.agents.kernels.oracles import SAFE_SQUARES, inline, jit, pairwise_sum

# the columns after theta in a block's row (as in bco_gym/losses/intervals.py)
CONSTANT, PLAYED, GAP, EXTRA = 0, 1, 2, 3


@inline
def blas_norm(rows, r, squares):  # pragma: no cover - compiled
    """``euclidean_norm`` of sets/balls.py of the row ``rows[r]`` from its g.g (the BLAS
    dot): its sqrt, or the norm rescaled out of range (numba's ``np.dot`` calls the same
    BLAS routine)."""
    if SAFE_SQUARES[0] < squares < SAFE_SQUARES[1]:
        return math.sqrt(squares)
    largest = 0.0
    for i in range(rows.shape[1]):
        largest = max(largest, abs(rows[r, i]))
    if largest == 0.0:
        return 0.0
    scaled = rows[r] / largest
    return largest * math.sqrt(np.dot(scaled, scaled))


@inline
def best_value(kind, radius, low, high, rows, r, squares, products):  # pragma: no cover - compiled
    """min_K <g, x> = <g, lmo_K(g)> of the row g = ``rows[r]`` as ``IntervalRegret._best``
    computes it: the set's LMO x (``_lmo_rows``; the ball's from ``squares`` = g.g), then
    ``row_dot``'s pairwise sum of the products g_i x_i. The row is read in place: a view
    of it would cost two reference counts, more than the arithmetic."""
    n = rows.shape[1]
    if kind == KIND_BALL:
        norm = blas_norm(rows, r, squares)
        if norm != 0.0:
            factor = -radius / norm
            for i in range(n):
                products[i] = rows[r, i] * (factor * rows[r, i])
        else:
            for i in range(n):
                products[i] = rows[r, i] * 0.0
    elif kind == KIND_BOX:
        for i in range(n):
            products[i] = rows[r, i] * (low[i] if rows[r, i] >= 0.0 else high[i])
    else:
        best = 0  # the simplex: argmin g; the l1 ball: argmax |g| (first on ties)
        for i in range(1, n):
            if (kind == KIND_SIMPLEX and rows[r, i] < rows[r, best]) or (
                kind != KIND_SIMPLEX and abs(rows[r, i]) > abs(rows[r, best])
            ):
                best = i
        for i in range(n):
            products[i] = rows[r, i] * 0.0
        if kind == KIND_SIMPLEX:
            products[best] = rows[r, best] * 1.0
        else:
            products[best] = rows[r, best] * (-radius if rows[r, best] > 0 else radius)
    return pairwise_sum(products, 0, n)


@jit
def interval_tree(
    thetas, constants, played, squares, first, kind, radius, low, high,
    open_rows, has_open, top_row, has_top, maxima, argmax,
    parents, extras, places, node, products,
):  # fmt: skip  # pragma: no cover - compiled
    """Step 2 (module docstring): add rounds first, ..., first + m - 1 to the counter.

    ``squares`` (m,) are the rounds' theta_t . theta_t (read for the ball only).
    ``open_rows`` (levels, dim + 3) and ``has_open`` (levels,) are the open blocks,
    ``top_row``/``has_top`` (1-element) the top level's block, ``maxima``/``argmax``
    (levels,) the running maxima (level 0's updated here). The parents completed go to
    ``parents`` (their Theta), ``extras`` (their sums of b_t, f_t(y_t) and gaps) and
    ``places`` ((level, index)), in order (room for m + levels); returns their count.
    ``node`` (dim + 3,) and ``products`` (dim,) are scratch."""
    levels = maxima.size
    dim = thetas.shape[1]
    made = 0
    for j in range(thetas.shape[0]):
        index = first + j
        for i in range(dim):
            node[i] = thetas[j, i]
        node[dim + CONSTANT] = constants[j]
        node[dim + PLAYED] = played[j]
        square = squares[j] if kind == KIND_BALL else 0.0
        best = best_value(kind, radius, low, high, thetas, j, square, products)
        node[dim + GAP] = played[j] - (best + constants[j])
        if node[dim + GAP] > maxima[0]:
            maxima[0] = node[dim + GAP]
            argmax[0] = index
        level = 0
        while True:
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
            for i in range(dim):
                parents[made, i] = node[i]
            for i in range(EXTRA):
                extras[made, i] = node[dim + i]
            places[made, 0] = level
            places[made, 1] = index
            made += 1
    return made


@jit
def interval_parents(
    parents, extras, places, squares, count, kind, radius, low, high, maxima, argmax,
    products,
):  # fmt: skip  # pragma: no cover - compiled
    """Step 3 (module docstring): the first ``count`` parents' R(I) into the levels'
    running maxima (``squares`` their Theta . Theta, read for the ball only)."""
    for m in range(count):
        square = squares[m] if kind == KIND_BALL else 0.0
        best = best_value(kind, radius, low, high, parents, m, square, products)
        regret = extras[m, PLAYED] - (best + extras[m, CONSTANT])
        level = places[m, 0]
        if regret > maxima[level]:
            maxima[level] = regret
            argmax[level] = places[m, 1]


class IntervalSpans:
    """The compiled update bound to a set's oracle and its scratch arrays, the update
    :meth:`~bco_gym.losses.intervals.IntervalRegret.use_rounds` installs: called as
    ``(thetas, constants, played, first, open_rows, has_open, top_row, has_top, maxima,
    argmax)``."""

    def __init__(self, kind: int, radius: float, low: np.ndarray, high: np.ndarray, dim: int):
        self.kind, self.radius, self.low, self.high, self.dim = kind, radius, low, high, dim
        self.node = np.empty(dim + EXTRA)
        self.products = np.empty(dim)
        self.empty = np.zeros(0)
        self._grow(0)

    def _grow(self, room: int) -> None:
        self.parents = np.empty((room, self.dim))
        self.extras = np.empty((room, EXTRA))
        self.places = np.empty((room, 2), dtype=np.int64)

    def __call__(self, thetas, constants, played, first, *state):  # type: ignore[no-untyped-def]
        """Add the span (module docstring); ``state`` is the tracker's arrays."""
        maxima, argmax = state[4], state[5]
        room = len(played) + maxima.size
        if len(self.parents) < room:
            self._grow(room)
        ball = self.kind == KIND_BALL
        if ball:
            with np.errstate(over="ignore", under="ignore"):  # rescaled in blas_norm
                squares = np.vecdot(thetas, thetas)
        else:
            squares = self.empty
        made = interval_tree(
            thetas, constants, played, squares, first, self.kind, self.radius, self.low,
            self.high, *state, self.parents,
            self.extras, self.places, self.node, self.products,
        )  # fmt: skip
        if made:
            parents = self.parents[:made]
            if ball:
                with np.errstate(over="ignore", under="ignore"):
                    squares = np.vecdot(parents, parents)
            interval_parents(
                parents, self.extras, self.places, squares, made, self.kind, self.radius,
                self.low, self.high, maxima, argmax, self.products,
            )  # fmt: skip
