"""Exploration directions and the one-point gradient estimator.

Let V = aff(K) - c be the direction space of the feasible set, of dimension d
(``aff_dim``). A uniform direction on the unit sphere S(V) is

    u = P_V g / ||P_V g||,   g ~ N(0, I)   (``tangent`` is P_V),

since P_V g is a standard Gaussian of V, whose law is rotation invariant in V.
Sampling in the ambient space instead leaves aff(K) (the classic simplex bug).

The one-point estimator (Flaxman, Kalai & McMahan 2005, Lemma 1; Hazan 2016, Lemma 6.5)
plays y = x + delta*u and forms

    g = (d / delta) f(y) u,

an unbiased estimate of the gradient, within V, of the smoothed loss
f_delta(x) = E_{v ~ B(V)} f(x + delta*v): E[g] = grad f_delta(x). With |f| <= M on K,
||g|| <= d*M/delta. Summing the estimates of a block played around one point x is one
matrix product, (d / delta) * losses @ U.

Two other estimators of the same smoothed gradient:

* two-point (Agarwal, Dekel & Xiao 2010; Shamir 2017; feedback="two-point"): play
  x + delta*u and x - delta*u, form g = (d / (2 delta)) (f(x + delta u) - f(x - delta u)) u.
  As u and -u have the same law, E[f(x - delta u) u] = -E[f(x + delta u) u], so
  E[g] = grad f_delta(x); for G-Lipschitz f, |f(x + delta u) - f(x - delta u)| <= 2 delta G
  and ||g|| <= d*G, whatever delta (:func:`two_point_values`).
* residual (Zhang, Zhou, Ji & Zavlanos 2022): one point per round,
  g_t = (d / delta) (f_t(y_t) - f_{t-1}(y_{t-1})) u_t with f_0(y_0) := 0 for the first
  round. u_t is independent of the previous round, so E[f_{t-1}(y_{t-1}) u_t | past] = 0
  and E[g_t | past] = grad f_delta,t(x_t): unbiased; ||g_t|| <= 2dM/delta
  (:class:`Residuals`). The theorems' variance terms hold with dM/delta replaced by
  2dM/delta (the cross terms of a block's sum still vanish: g_t - E[g_t | past] is a
  martingale difference).

References: Flaxman, Kalai & McMahan, "Online convex optimization in the bandit setting:
gradient descent without a gradient", SODA 2005; Hazan, "Introduction to Online Convex
Optimization", 2016, Section 6.4; Agarwal, Dekel & Xiao, "Optimal algorithms for online
convex optimization with multi-point bandit feedback", COLT 2010; Shamir, "An optimal
algorithm for bandit and zero-order convex optimization with two-point feedback", JMLR
2017; Zhang, Zhou, Ji & Zavlanos, "A new one-point residual-feedback oracle for black-box
learning and control", Automatica 2022.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bco_gym import portable
from bco_gym.sets.base import ConvexSet

#: The one-point estimators an agent with an ``estimator`` option accepts.
ESTIMATORS = ("one-point", "residual")
#: Floats of directions a :class:`DirectionStream` holds at most (all rows): 256 rounds
#: at a time unless rows x dimension is large, then fewer (at least one round). The
#: directions are the same whatever the chunk (each row's generator is read in order).
DIRECTION_BUDGET_FLOATS = 1 << 22


def check_estimator(owner: str, value: object) -> str:
    """``value`` if it is one of :data:`ESTIMATORS`; a ValueError naming it otherwise."""
    if not (isinstance(value, str) and value in ESTIMATORS):
        allowed = ", ".join(repr(name) for name in ESTIMATORS)
        raise ValueError(f"{owner}: estimator={value!r} is not allowed; allowed: {allowed}")
    return value


def estimate_norm_bound(estimator: str, dimension: int, bound: float, radius: float) -> float:
    """A bound on one estimate's norm: dM/delta (one-point), 2dM/delta (residual)."""
    factor = 2.0 if estimator == "residual" else 1.0
    return factor * dimension * bound / radius


def two_point_values(pair_losses: np.ndarray) -> np.ndarray:
    """(f(x + delta u) - f(x - delta u)) / 2 for losses (..., 2): the value that
    (d/delta) * value * u turns into the two-point estimate."""
    return (pair_losses[..., 0] - pair_losses[..., 1]) / 2


class Residuals:
    """f_t(y_t) - f_{t-1}(y_{t-1}) for S rows in play order, with f_0(y_0) := 0.

    :meth:`of` takes the losses of the next k rounds of every row, (S, k), and returns
    their residuals (a new array), remembering each row's last loss.
    """

    def __init__(self, rows: int):
        self.previous = np.zeros(rows)

    def of(self, losses: np.ndarray) -> np.ndarray:
        """The residuals of the next k rounds of every row, (S, k), from their losses."""
        residuals = np.empty_like(losses)
        residuals[:, 0] = losses[:, 0] - self.previous
        np.subtract(losses[:, 1:], losses[:, :-1], out=residuals[:, 1:])
        self.previous = losses[:, -1].copy()
        return residuals


def sphere_directions(convex_set: ConvexSet, rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` i.i.d. directions uniform on the unit sphere of V, shape (count, *shape).

    Draws one standard normal batch, maps it onto V with ``tangent_many`` and normalises
    each row (a row with zero tangent component, an event of probability zero, is
    redrawn): u = P_V g / ||P_V g||, from :func:`tangent_gaussians`.
    """
    directions, norms = tangent_gaussians(convex_set, rng, count)
    directions /= norms.reshape((count,) + (1,) * len(convex_set.shape))
    return directions


def tangent_gaussians(
    convex_set: ConvexSet, rng: np.random.Generator, count: int
) -> tuple[np.ndarray, np.ndarray]:
    """(P_V g_s, ||P_V g_s||) for ``count`` standard normals g_s: directions not yet normalised.

    u_s = P_V g_s / ||P_V g_s|| is uniform on the unit sphere of V. Callers that only
    scale the directions (a play x + delta*u, an estimate sum f_s u_s) fold 1/||P_V g_s||
    into that scalar and skip a pass over the batch. Rows with zero norm (probability
    zero) are redrawn, so every norm is > 0. The batch of one of
    :func:`tangent_gaussian_rows`.
    """
    vectors, norms = tangent_gaussian_rows(convex_set, [rng], count)
    return vectors[0], norms[0]


def tangent_gaussian_rows(
    convex_set: ConvexSet, rngs: Sequence[np.random.Generator], count: int
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`tangent_gaussians` with each row's generator, stacked: (S, count, *shape), (S, count).

    Row i draws its ``count`` normals from ``rngs[i]`` straight into its part of the
    stack; a set that is not full-dimensional maps each row's ``count`` vectors with
    ``tangent_many`` (one call per row, on exactly the batch a single run maps), and
    the norms of all S * count vectors are taken at once (a reduction along each
    vector's own entries). A zero norm (probability zero) is redrawn from its row's
    generator, as a single run would.
    """
    shape = convex_set.shape
    rows = len(rngs)
    vectors = np.empty((rows, count, *shape))
    full_dimensional = convex_set.aff_dim == convex_set.dim
    for row, rng in enumerate(rngs):
        rng.standard_normal(out=vectors[row])
        if not full_dimensional:
            vectors[row] = convex_set.tangent_many(vectors[row])
    norms = _row_norms(vectors.reshape(rows * count, *shape)).reshape(rows, count)
    if not norms.all():  # one pass over all norms; the rows only when one is zero
        for row in np.flatnonzero(~np.all(norms, axis=1)):
            _redraw_zero_norms(convex_set, rngs[row], vectors[row], norms[row], full_dimensional)
    return vectors, norms


def _redraw_zero_norms(
    convex_set: ConvexSet,
    rng: np.random.Generator,
    vectors: np.ndarray,
    norms: np.ndarray,
    full_dimensional: bool,
) -> None:
    """Redraw, in place, the vectors of one row whose norm is 0 until none is."""
    while not np.all(norms):
        bad = np.flatnonzero(norms == 0.0)
        fresh = rng.standard_normal((len(bad), *convex_set.shape))
        vectors[bad] = fresh if full_dimensional else convex_set.tangent_many(fresh)
        norms[:] = _row_norms(vectors)


def one_point_estimate(
    loss: float, direction: np.ndarray, smoothing_radius: float, dimension: int
) -> np.ndarray:
    """g = (d / delta) * f(x + delta*u) * u for one round (a new array)."""
    return (dimension * loss / smoothing_radius) * direction


def block_estimate(
    losses: np.ndarray, directions: np.ndarray, smoothing_radius: float, dimension: int
) -> np.ndarray:
    """sum_s (d / delta) f_s u_s over a block: (d/delta) * losses @ U, the rounds' terms
    added one after another (:func:`~bco_gym.portable.vecmat`, not a BLAS product)."""
    count = len(directions)
    flat = directions.reshape(count, -1)
    total = (dimension / smoothing_radius) * portable.vecmat(np.asarray(losses, dtype=float), flat)
    return total.reshape(directions.shape[1:])


class DirectionStream:
    """Directions uniform on the unit sphere of V for S rows, served one round at a time.

    Row i draws ``chunk_size`` directions at a time from its own generator ``rngs[i]``
    (:func:`tangent_gaussian_rows`, normalised as :func:`sphere_directions` does, so row
    i's directions are those of a single stream with that generator), stacked as one
    (chunk_size, S, *shape) array: a round costs
    no sampling work and no Python call per row. :meth:`next` returns a read-only
    (S, *shape) view, valid until the next chunk is drawn (use it within the round).

    The compiled rounds read a chunk row first, as it is drawn ((S, chunk_size, *shape),
    no transposed copy): after :meth:`serve_rows`, :meth:`take_rows` hands them the chunk
    itself, and :meth:`next` and :meth:`take` still serve the same directions (copies).
    """

    def __init__(
        self,
        convex_set: ConvexSet,
        rngs: Sequence[np.random.Generator],
        chunk_size: int = 256,
    ):
        self.set = convex_set
        self.rngs = list(rngs)
        per_round = max(1, len(self.rngs) * int(convex_set.dim))
        self.chunk_size = max(1, min(int(chunk_size), DIRECTION_BUDGET_FLOATS // per_round))
        self.row_first = False  # chunks kept as drawn, (S, rounds, *shape) (serve_rows)
        self._chunk = np.empty((0, len(self.rngs), *convex_set.shape))
        self._rounds = 0  # the rounds of the current chunk
        self._position = 0

    @property
    def drawn(self) -> bool:
        """Whether any chunk has been drawn yet."""
        return self._rounds > 0

    def serve_rows(self) -> None:
        """Keep chunks row first from now on, for :meth:`take_rows` (the rounds not yet
        taken of the current chunk included)."""
        if not self.row_first:
            self.row_first = True
            self._chunk = np.ascontiguousarray(self._chunk.swapaxes(0, 1))
            self._chunk.flags.writeable = False

    def next(self) -> np.ndarray:
        """The next directions of every row, shape (S, *shape) (a read-only view)."""
        if self.row_first:
            return self.take(1)[0]
        if self._position == self._rounds:
            self._draw()
        directions = self._chunk[self._position]
        self._position += 1
        return directions

    def take(self, count: int) -> np.ndarray:
        """The directions of the next k rounds, 1 <= k <= ``count``, shape (k, S, *shape):
        what k calls of :meth:`next` return, stacked (a read-only view; k stops at the end
        of the current chunk, so the generators are read exactly as :meth:`next` reads them)."""
        if self.row_first:
            chunk, start, rounds = self.take_rows(count)
            directions = np.ascontiguousarray(chunk[:, start : start + rounds].swapaxes(0, 1))
            directions.flags.writeable = False
            return directions
        if self._position == self._rounds:
            self._draw()
        stop = min(self._rounds, self._position + max(1, int(count)))
        directions = self._chunk[self._position : stop]
        self._position = stop
        return directions

    def take_rows(self, count: int) -> tuple[np.ndarray, int, int]:
        """The next k rounds, 1 <= k <= ``count``, row first (after :meth:`serve_rows`):
        ``(chunk, start, k)`` with chunk[:, start + j] the directions :meth:`take`'s row j
        would be. ``chunk`` is the whole read-only (S, rounds, *shape) chunk (C order),
        valid until the next chunk is drawn."""
        if not self.row_first:
            raise RuntimeError("take_rows needs a row-first stream: call serve_rows() first")
        if self._position == self._rounds:
            self._draw()
        start = self._position
        self._position = min(self._rounds, start + max(1, int(count)))
        return self._chunk, start, self._position - start

    def _draw(self) -> None:
        directions, norms = tangent_gaussian_rows(self.set, self.rngs, self.chunk_size)
        directions /= norms.reshape(norms.shape + (1,) * len(self.set.shape))
        if not self.row_first:
            directions = np.ascontiguousarray(directions.swapaxes(0, 1))
        self._chunk = directions
        self._chunk.flags.writeable = False
        self._rounds, self._position = self.chunk_size, 0


def _row_norms(rows: np.ndarray) -> np.ndarray:
    flat = rows.reshape(len(rows), -1)
    return np.sqrt(np.einsum("ij,ij->i", flat, flat))  # one pass, no squared copy
