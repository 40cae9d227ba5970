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

References: Flaxman, Kalai & McMahan, "Online convex optimization in the bandit setting:
gradient descent without a gradient", SODA 2005; Hazan, "Introduction to Online Convex
Optimization", 2016, Section 6.4.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bco_gym.sets.base import ConvexSet


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
    """sum_s (d / delta) f_s u_s over a block, as one product: (d/delta) * losses @ U."""
    count = len(directions)
    flat = directions.reshape(count, -1)
    total = (dimension / smoothing_radius) * (np.asarray(losses, dtype=float) @ flat)
    return total.reshape(directions.shape[1:])


class DirectionStream:
    """Directions uniform on the unit sphere of V for S rows, served one round at a time.

    Row i draws ``chunk_size`` directions at a time from its own generator ``rngs[i]``
    (:func:`tangent_gaussian_rows`, normalised as :func:`sphere_directions` does, so row
    i's directions are those of a single stream with that generator), stacked as one
    (chunk_size, S, *shape) array: a round costs
    no sampling work and no Python call per row. :meth:`next` returns a read-only
    (S, *shape) view, valid until the next chunk is drawn (use it within the round).
    """

    def __init__(
        self,
        convex_set: ConvexSet,
        rngs: Sequence[np.random.Generator],
        chunk_size: int = 256,
    ):
        self.set = convex_set
        self.rngs = list(rngs)
        self.chunk_size = int(chunk_size)
        self._chunk = np.empty((0, len(self.rngs), *convex_set.shape))
        self._position = 0

    def next(self) -> np.ndarray:
        """The next directions of every row, shape (S, *shape) (a read-only view)."""
        if self._position == len(self._chunk):
            directions, norms = tangent_gaussian_rows(self.set, self.rngs, self.chunk_size)
            directions /= norms.reshape(norms.shape + (1,) * len(self.set.shape))
            self._chunk = np.ascontiguousarray(directions.swapaxes(0, 1))
            self._chunk.flags.writeable = False
            self._position = 0
        directions = self._chunk[self._position]
        self._position += 1
        return directions


def _row_norms(rows: np.ndarray) -> np.ndarray:
    flat = rows.reshape(len(rows), -1)
    return np.sqrt(np.einsum("ij,ij->i", flat, flat))  # one pass, no squared copy
