"""Norm balls centred at the origin.

    L2Ball:  B_2(rho) = {x in R^n : ||x||_2 <= rho}
    L1Ball:  B_1(rho) = {x in R^n : ||x||_1 <= rho}

Geometry: centre 0, full-dimensional (aff_dim = n, ``tangent`` = identity).
L2: r = R = rho. L1: r = rho/sqrt(n) (the distance from 0 to a facet
{<s, x> = rho}, s in {-1, 1}^n), R = rho (a vertex rho*e_i).

Oracles. L2: LMO = -rho g/||g|| (O(n)); projection = radial scaling (O(n)).
L1: LMO = -rho sign(g_i) e_i at i = argmax |g_i| (O(n)); projection by the sort/threshold
method (Duchi et al. 2008), O(n log n).
"""

from __future__ import annotations

import math

import numpy as np

from bco_gym.sets.base import DEFAULT_ATOL, SCREEN_SLACK, ConvexSet, check_radius, check_size
from bco_gym.sets.simplex import project_onto_simplex


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
        if x.dtype == np.float64 and self._norm(x, order) <= self.radius + atol:
            return None  # the common case (NaN/inf fail the test and are diagnosed below)
        if not np.all(np.isfinite(x)):
            return "non-finite entries (NaN or inf)"
        norm = float(np.linalg.norm(x, ord=order))
        if norm > self.radius + atol:
            return f"{name} norm {norm:.6g}, expected <= {self.radius:g} within {atol:g}"
        return None

    @staticmethod
    def _norm(x: np.ndarray, order: int) -> float:
        """``np.linalg.norm(x, ord=order)`` of a float64 vector, without its dispatch:
        sqrt(x.x) for order 2 and sum |x_i| for order 1, the very operations it runs."""
        if order == 2:
            return math.sqrt(x.dot(x))
        return float(np.add.reduce(np.abs(x)))

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

    def lmo(self, direction: np.ndarray) -> np.ndarray:
        g = self._check_array(direction, "direction")
        norm = np.linalg.norm(g)
        if norm == 0.0:
            return np.zeros(self.n)
        return (-self.radius / norm) * g

    def project(self, x: np.ndarray) -> np.ndarray:
        y = self._check_array(x, "point")
        norm = self._norm(y, 2)
        return y.copy() if norm <= self.radius else (self.radius / norm) * y

    def violation(self, x: np.ndarray, atol: float = DEFAULT_ATOL) -> str | None:
        return self._norm_violation(np.asarray(x), 2, "Euclidean", atol)

    def violation_many(
        self, points: np.ndarray, atol: float = DEFAULT_ATOL
    ) -> tuple[int, str] | None:
        return self._norms_violation_many(points, 2, atol)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """Uniform in the ball: a uniform direction times radius * U^(1/n)."""
        g = rng.standard_normal(self.n)
        return (self.radius * rng.uniform() ** (1.0 / self.n) / np.linalg.norm(g)) * g


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

    def lmo(self, direction: np.ndarray) -> np.ndarray:
        g = self._check_array(direction, "direction")
        index = int(np.argmax(np.abs(g)))
        vertex = np.zeros(self.n)
        vertex[index] = -self.radius if g[index] > 0 else self.radius
        return vertex

    def project(self, x: np.ndarray) -> np.ndarray:
        y = self._check_array(x, "point")
        magnitude = np.abs(y)
        if magnitude.sum() <= self.radius:
            return y.copy()
        return np.sign(y) * project_onto_simplex(magnitude, self.radius)

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
