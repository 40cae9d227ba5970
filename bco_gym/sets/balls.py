"""Norm balls centred at the origin.

    L2Ball:  B_2(rho) = {x in R^n : ||x||_2 <= rho}
    L1Ball:  B_1(rho) = {x in R^n : ||x||_1 <= rho}

Geometry: centre 0, full-dimensional (aff_dim = n). L2: r = R = rho. L1: r = rho/sqrt(n)
(distance from 0 to a facet), R = rho (a vertex rho*e_i).

Oracles. L2: LMO = -rho g/||g|| (O(n)); projection = radial scaling (O(n)).
L1: LMO = -rho sign(g_i) e_i at i = argmax |g_i| (O(n)); projection by the sort/threshold
method (Duchi et al. 2008), O(n log n).
"""

from __future__ import annotations

import numpy as np

from bco_gym.sets.base import DEFAULT_ATOL, ConvexSet, as_shape


class _CenteredBall(ConvexSet):
    """Shared geometry of the norm balls: centre 0, full-dimensional."""

    def __init__(self, n: int, radius: float):
        (n,) = as_shape(n)
        radius = float(radius)
        if not (np.isfinite(radius) and radius > 0):
            raise ValueError(f"{type(self).__name__}: radius={radius!r} must be finite and > 0")
        self.n = n
        self.radius = radius
        self.shape = (n,)
        self._center = np.zeros(n)
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
        return np.array(vectors, dtype=float, copy=True)

    def _norm_violation(self, x: np.ndarray, norm: float, name: str, atol: float) -> str | None:
        if x.shape != self.shape:
            return f"shape {x.shape}, expected {self.shape}"
        if not np.isfinite(norm):
            return "non-finite entries (NaN or inf)"
        if norm > self.radius + atol:
            return f"{name} norm {norm:.6g}, expected <= {self.radius:g} within {atol:g}"
        return None


class L2Ball(_CenteredBall):
    """Euclidean ball {||x||_2 <= radius} in R^n."""

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
        norm = np.linalg.norm(y)
        return y.copy() if norm <= self.radius else (self.radius / norm) * y

    def violation(self, x: np.ndarray, atol: float = DEFAULT_ATOL) -> str | None:
        x = np.asarray(x)
        return self._norm_violation(x, float(np.linalg.norm(x)), "Euclidean", atol)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """Uniform in the ball: a uniform direction times radius * U^(1/n)."""
        g = rng.standard_normal(self.n)
        return (self.radius * rng.uniform() ** (1.0 / self.n) / np.linalg.norm(g)) * g

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return np.full(self.n, -self.radius), np.full(self.n, self.radius)
