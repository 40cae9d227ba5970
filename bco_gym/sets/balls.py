"""Norm balls centred at the origin.

    L2Ball:  B_2(rho) = {x in R^n : ||x||_2 <= rho}
    L1Ball:  B_1(rho) = {x in R^n : ||x||_1 <= rho}

Geometry: centre 0, full-dimensional (aff_dim = n, ``tangent`` = identity).
L2: r = R = rho. L1: r = rho/sqrt(n) (the distance from 0 to a facet
{<s, x> = rho}, s in {-1, 1}^n), R = rho (a vertex rho*e_i).

Oracles. L2: LMO = -rho g/||g|| (O(n)); projection = radial scaling (O(n)).
L1: LMO = -rho sign(g_i) e_i at i = argmax |g_i| (O(n)); projection by the sort/threshold
method (Duchi et al. 2008), O(n log n).

Batches. ``lmo_many`` and ``project_many`` run the single oracles' floating-point
operations on all rows at once, so row i equals the single answer bit for bit: the
Euclidean norm of a row is the square root of NumPy's pairwise sum of its squares, the
row reduced on its own, exactly what the single oracle computes (and what the compiled
kernels compute, so a ball plays the same bits on every path; a BLAS dot product's order
is the BLAS build's); an l1 norm is numpy's sum of the row, reduced on its own. Norms
whose square would overflow or underflow (entries beyond about 1e145 or below 1e-145)
are computed on the row scaled by its largest entry, in both paths.
"""

from __future__ import annotations

import math

import numpy as np

from bco_gym import portable
from bco_gym.sets.base import ConvexSet, separating
from bco_gym.sets.checks import (
    DEFAULT_ATOL,
    SCREEN_SLACK,
    check_radius,
    check_size,
    check_tolerance,
)
from bco_gym.sets.simplex import project_onto_simplex, project_rows_onto_simplex

# Squared norms outside this range may have overflowed or lost bits to underflow.
_SAFE_SQUARES = (1e-290, 1e290)


def euclidean_norm(x: np.ndarray) -> float:
    """||x||_2 of a float64 vector: the square root of NumPy's pairwise sum of the squares
    (``np.add.reduce(x * x)``, the order the compiled kernels reproduce, so a ball's oracles
    give the same bits on both paths), taken on x rescaled where the sum is out of range."""
    screen = x.dot(x)  # the BLAS dot: no overflow warning, and within 2n eps of the sum below
    if _SAFE_SQUARES[0] < screen < _SAFE_SQUARES[1]:
        squares = float(np.add.reduce(x * x))
        if _SAFE_SQUARES[0] < squares < _SAFE_SQUARES[1]:
            return math.sqrt(squares)
        return _rescaled_norm(x)
    with np.errstate(over="ignore", under="ignore"):  # rare: decided on the pairwise sum
        squares = float(np.add.reduce(x * x))
    if _SAFE_SQUARES[0] < squares < _SAFE_SQUARES[1]:
        return math.sqrt(squares)
    return _rescaled_norm(x)


def euclidean_norms(rows: np.ndarray) -> np.ndarray:
    """:func:`euclidean_norm` of each row of ``rows`` (shape (k, n)), bit for bit: each row's
    own pairwise sum of squares (a reduction along the contiguous last axis)."""
    with np.errstate(over="ignore", under="ignore"):  # such rows are rescaled below
        squares = np.add.reduce(rows * rows, axis=1)
    norms = np.sqrt(squares)
    if not (_SAFE_SQUARES[0] < squares.min() and squares.max() < _SAFE_SQUARES[1]):
        unsafe = ~((squares > _SAFE_SQUARES[0]) & (squares < _SAFE_SQUARES[1]))
        norms[unsafe] = [_rescaled_norm(row) for row in rows[unsafe]]
    return norms


def norm_at_most(x: np.ndarray, limit: float) -> bool:
    """``euclidean_norm(x) <= limit``, the same verdict, decided by the BLAS dot alone where
    it is clear: the two sums of squares differ by at most 2n eps relatively, so a dot
    below limit^2 by more than that margin is a norm within the limit (the common case of
    a membership test or a projection, at the cost of one dot product)."""
    screen = x.dot(x)
    margin = 1e-15 * (x.size + 8)
    if _SAFE_SQUARES[0] < screen < _SAFE_SQUARES[1] and screen <= limit * limit * (1.0 - margin):
        return True
    return euclidean_norm(x) <= limit


def _rescaled_norm(x: np.ndarray) -> float:
    """||x||_2 = m ||x/m||_2 with m = max |x_i| (0 for x = 0): no overflow or underflow."""
    largest = float(np.max(np.abs(x)))
    if largest == 0.0:
        return 0.0
    with np.errstate(under="ignore", invalid="ignore"):  # an infinite entry: nan, as before
        scaled = x / largest
        return largest * math.sqrt(float(np.add.reduce(scaled * scaled)))


class _CenteredBall(ConvexSet):
    """Shared geometry of the norm balls: centre 0, full-dimensional."""

    def __init__(self, n: int, radius: float):
        self.n = check_size(n, "n", type(self).__name__)
        self.radius = check_radius(radius, type(self).__name__)
        self.shape = (self.n,)
        self._center = np.zeros(self.n)
        self._center.flags.writeable = False

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n={self.n}, radius={self.radius:g})"

    @property
    def center(self) -> np.ndarray:
        return self._center

    @property
    def outer_radius(self) -> float:
        return self.radius

    def tangent_many(self, vectors: np.ndarray) -> np.ndarray:
        return np.array(self._check_batch(vectors, "vectors"), dtype=float, copy=True)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return np.full(self.n, -self.radius), np.full(self.n, self.radius)

    def _norm_violation(self, x: np.ndarray, order: int, name: str, atol: float) -> str | None:
        if x.shape != self.shape:
            return f"shape {x.shape}, expected {self.shape}"
        if x.dtype == np.float64 and self._within(x, order, self.radius + atol):
            return None  # the common case (NaN/inf fail the test and are diagnosed below)
        if not np.all(np.isfinite(x)):
            return "non-finite entries (NaN or inf)"
        norm = float(np.linalg.norm(x, ord=order))
        if norm > self.radius + atol:
            return f"{name} norm {norm:.6g}, expected <= {self.radius:g} within {atol:g}"
        return None

    @staticmethod
    def _within(x: np.ndarray, order: int, limit: float) -> bool:
        """||x|| <= limit for a float64 vector: :func:`norm_at_most` for order 2 (the norm
        of the oracles and the compiled check), sum |x_i| <= limit for order 1."""
        if order == 2:
            return norm_at_most(x, limit)
        return float(np.add.reduce(np.abs(x))) <= limit

    def _norms_violation_many(
        self, points: np.ndarray, order: int, atol: float
    ) -> tuple[int, str] | None:
        points = np.asarray(points)
        if points.ndim != 2 or points.shape[1:] != self.shape:
            return super().violation_many(points, atol)
        if order == 2:
            norms = np.sqrt(np.einsum("ij,ij->i", points, points))
        else:
            norms = np.abs(points).sum(axis=1)
        clear = norms <= (self.radius + atol) * (1.0 - SCREEN_SLACK)
        return self._screened(points, clear, atol)


class L2Ball(_CenteredBall):
    """Euclidean ball {||x||_2 <= radius} in R^n.

    LMO: -radius g/||g||; for g = 0 every point is a minimiser and the centre 0 is
    returned. ``sample`` draws uniformly in the ball.
    """

    def __init__(self, n: int = 10, radius: float = 1.0):
        super().__init__(n, radius)

    @property
    def inner_radius(self) -> float:
        return self.radius

    def separation(self, x: np.ndarray, atol: float = 0.0) -> tuple[np.ndarray, float] | None:
        """None if ||x|| <= radius + atol, else (x/||x||, radius): <x/||x||, z> <= ||z||."""
        point = self._check_array(x, "point")
        atol = check_tolerance(atol, self, "separation")
        norm = euclidean_norm(point)
        if norm <= self.radius + atol:
            return None
        return separating(point / norm, self.radius, point, atol)

    def lmo(self, direction: np.ndarray) -> np.ndarray:
        g = self._check_array(direction, "direction")
        norm = euclidean_norm(g)
        if norm == 0.0:
            return np.zeros(self.n)
        return (-self.radius / norm) * g

    def _lmo_rows(self, directions: np.ndarray) -> np.ndarray:
        norms = euclidean_norms(directions)
        if norms.all():  # no zero direction: the common case, in two more numpy calls
            return (-self.radius / norms)[:, np.newaxis] * directions
        zero = norms == 0.0
        vertices = (-self.radius / np.where(zero, 1.0, norms))[:, np.newaxis] * directions
        vertices[zero] = 0.0
        return vertices

    def project(self, x: np.ndarray) -> np.ndarray:
        y = self._check_array(x, "point")
        if norm_at_most(y, self.radius):
            return y.copy()
        return (self.radius / euclidean_norm(y)) * y

    def _project_rows(self, points: np.ndarray) -> np.ndarray:
        norms = euclidean_norms(points)
        outside = norms > self.radius
        projections = points.copy()
        if outside.any():
            factors = self.radius / norms[outside]
            projections[outside] = factors[:, np.newaxis] * points[outside]
        return projections

    def violation(self, x: np.ndarray, atol: float = DEFAULT_ATOL) -> str | None:
        return self._norm_violation(np.asarray(x), 2, "Euclidean", atol)

    def violation_many(
        self, points: np.ndarray, atol: float = DEFAULT_ATOL
    ) -> tuple[int, str] | None:
        return self._norms_violation_many(points, 2, atol)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """Uniform in the ball: a uniform direction times radius * U^(1/n)."""
        g = rng.standard_normal(self.n)
        return (self.radius * rng.uniform() ** (1.0 / self.n) / euclidean_norm(g)) * g

    def _sample_rows(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """Uniform in the ball, as :meth:`sample`: row i is radius * U_i^(1/n) *
        g_i/||g_i|| with g_i standard Gaussian (a uniform direction) and U_i ~ U[0, 1],
        so the norm r has P(r <= s) = (s/radius)^n."""
        gaussians = rng.standard_normal((count, self.n))
        radii = self.radius * portable.power(rng.uniform(size=count), 1.0 / self.n)
        return (radii / euclidean_norms(gaussians))[:, np.newaxis] * gaussians


class L1Ball(_CenteredBall):
    """Cross-polytope {||x||_1 <= radius} in R^n: the convex hull of +-radius*e_i.

    LMO: the vertex -radius*sign(g_i)*e_i with i = argmax_i |g_i| (the first such i;
    +radius*e_i when g = 0). Projection: x itself when ||x||_1 <= radius, otherwise
    sign(x) * Pi_{radius*Delta}(|x|), the projection of |x| onto the scaled simplex
    {w >= 0, sum w = radius} (Duchi et al. 2008, Algorithm for the l1-ball).
    ``sample`` draws uniformly in the ball.
    """

    def __init__(self, n: int = 10, radius: float = 1.0):
        super().__init__(n, radius)

    @property
    def inner_radius(self) -> float:
        return self.radius / np.sqrt(self.n)

    def separation(self, x: np.ndarray, atol: float = 0.0) -> tuple[np.ndarray, float] | None:
        """None if ||x||_1 <= radius + atol, else the facet through x's orthant:
        a = s/||s|| with s = sign(x) (<s, z> <= ||z||_1 <= radius on K), b = radius/||s||.
        """
        point = self._check_array(x, "point")
        atol = check_tolerance(atol, self, "separation")
        signs = np.sign(point)
        scale = math.sqrt(float(signs.dot(signs)))
        if float(np.abs(point).sum()) <= self.radius + atol or scale == 0.0:
            return None
        return separating(signs / scale, self.radius / scale, point, atol)

    def lmo(self, direction: np.ndarray) -> np.ndarray:
        g = self._check_array(direction, "direction")
        index = int(np.argmax(np.abs(g)))  # the first largest, as in _lmo_rows
        vertex = np.zeros(self.n)
        vertex[index] = -self.radius if g[index] > 0 else self.radius
        return vertex

    def _lmo_rows(self, directions: np.ndarray) -> np.ndarray:
        rows = np.arange(len(directions))
        index = np.argmax(np.abs(directions), axis=1)
        vertices = np.zeros(directions.shape)
        vertices[rows, index] = np.where(directions[rows, index] > 0, -self.radius, self.radius)
        return vertices

    def project(self, x: np.ndarray) -> np.ndarray:
        y = self._check_array(x, "point")
        magnitude = np.abs(y)
        if magnitude.sum() <= self.radius:
            return y.copy()
        return np.sign(y) * project_onto_simplex(magnitude, self.radius)

    def _project_rows(self, points: np.ndarray) -> np.ndarray:
        magnitude = np.abs(points)
        outside = magnitude.sum(axis=1) > self.radius  # each row summed on its own
        projections = points.copy()
        if outside.any():
            on_simplex = project_rows_onto_simplex(magnitude[outside], self.radius)
            projections[outside] = np.sign(points[outside]) * on_simplex
        return projections

    def violation(self, x: np.ndarray, atol: float = DEFAULT_ATOL) -> str | None:
        return self._norm_violation(np.asarray(x), 1, "l1", atol)

    def violation_many(
        self, points: np.ndarray, atol: float = DEFAULT_ATOL
    ) -> tuple[int, str] | None:
        return self._norms_violation_many(points, 1, atol)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """Uniform in the ball: random signs times the first n entries of a
        Dirichlet(1, ..., 1) vector of n + 1 entries (uniform on {w >= 0, sum w <= 1}),
        scaled by the radius."""
        weights = rng.dirichlet(np.ones(self.n + 1))[: self.n]
        signs = rng.choice(np.array([-1.0, 1.0]), size=self.n)
        return self.radius * signs * weights

    def _sample_rows(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """Uniform in the ball, as :meth:`sample`: row i is radius times independent
        fair signs times the first n entries of a Dirichlet(1, ..., 1) vector of n + 1
        entries (n + 1 standard exponentials over their sum), so ||x||_1 / radius is
        Beta(n, 1) and |x_j| / radius is Beta(1, n)."""
        exponentials = rng.standard_exponential((count, self.n + 1))
        weights = exponentials[:, : self.n] / exponentials.sum(axis=1, keepdims=True)
        signs = np.where(rng.integers(0, 2, size=(count, self.n)) == 1, 1.0, -1.0)
        return self.radius * signs * weights
