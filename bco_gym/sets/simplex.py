"""The probability simplex.

    Delta_n = {x in R^n : x_i >= 0, sum_i x_i = 1}

Geometry: centre c = (1/n) 1; aff_dim d = n - 1; V = {v : sum_i v_i = 0}, so
``tangent(v) = v - mean(v)``; inner radius r = 1/sqrt(n(n-1)) (distance from c to a
facet); outer radius R = sqrt((n-1)/n) (distance from c to a vertex).

Oracles: LMO = the vertex e_i with i = argmin_i g_i (the first on ties), O(n).
Projection by sorting (Held, Wolfe & Crowder 1974; Duchi et al. 2008), O(n log n).
``lmo_many`` and ``project_many`` run the same operations on all rows at once (row i
equals the single oracle's answer bit for bit).
"""

from __future__ import annotations

import math

import numpy as np

from bco_gym.sets.base import ConvexSet, separating
from bco_gym.sets.checks import (
    DEFAULT_ATOL,
    SCREEN_SLACK,
    all_finite,
    check_size,
    check_tolerance,
    off_by,
)


def project_onto_simplex(y: np.ndarray, total: float = 1.0) -> np.ndarray:
    """Euclidean projection of a vector ``y`` onto {x >= 0, sum x = total} (total > 0).

    With u = y sorted decreasingly and rho the last index k (1-based) with
    u_k > (u_1 + ... + u_k - total)/k, the projection is max(y - theta, 0) with
    theta = (u_1 + ... + u_rho - total)/rho. O(n log n).

    The projection is unchanged by adding a multiple of the all-ones vector, so when
    the largest entry exceeds ``total`` in magnitude, y is first shifted by it (then
    u_1 = 0 and k = 1 always qualifies): without the shift, huge entries would cancel
    ``total`` away. :func:`project_rows_onto_simplex` runs the same operations on each
    row of a batch (subtracting 0 where a row needs no shift, which changes no bit).

    References: Held, Wolfe & Crowder (1974); Duchi, Shalev-Shwartz, Singer & Chandra,
    "Efficient projections onto the l1-ball for learning in high dimensions", ICML 2008.
    """
    u = np.sort(y)[::-1]
    if abs(u[0]) > total:
        y = y - u[0]
        u = u - u[0]  # = sort(y - u_1), as rounding is monotone
    cumulative = np.cumsum(u) - total
    rho = np.nonzero(u * np.arange(1, y.size + 1) > cumulative)[0][-1]
    return np.maximum(y - cumulative[rho] / (rho + 1), 0.0)


def project_rows_onto_simplex(rows: np.ndarray, total: float = 1.0) -> np.ndarray:
    """:func:`project_onto_simplex` of each row of ``rows`` (shape (k, n)), by the same
    floating-point operations row by row, so row i equals the single call's answer."""
    u = np.sort(rows, axis=1)[:, ::-1]
    shift = np.where(np.abs(u[:, 0]) > total, u[:, 0], 0.0)[:, np.newaxis]
    u = u - shift
    cumulative = np.cumsum(u, axis=1) - total
    qualifies = u * np.arange(1, rows.shape[1] + 1) > cumulative
    rho = rows.shape[1] - 1 - np.argmax(qualifies[:, ::-1], axis=1)  # the last k that does
    theta = cumulative[np.arange(len(rows)), rho] / (rho + 1)
    return np.maximum((rows - shift) - theta[:, np.newaxis], 0.0)


class Simplex(ConvexSet):
    """Probability simplex {x >= 0, sum x = 1} in R^n, n >= 2.

    ``sample`` draws uniformly on the simplex (Dirichlet(1, ..., 1)).
    """

    def __init__(self, n: int = 10):
        n = check_size(n, "n", "Simplex", minimum=2, why=" (the 1-simplex is a single point)")
        self.n = n
        self.shape = (n,)
        self._center = np.full(n, 1.0 / n)
        self._center.flags.writeable = False

    def __repr__(self) -> str:
        return f"Simplex(n={self.n})"

    @property
    def aff_dim(self) -> int:
        return self.n - 1

    @property
    def center(self) -> np.ndarray:
        return self._center

    @property
    def inner_radius(self) -> float:
        return 1.0 / np.sqrt(self.n * (self.n - 1))

    @property
    def outer_radius(self) -> float:
        return np.sqrt((self.n - 1) / self.n)

    def tangent(self, v: np.ndarray) -> np.ndarray:
        v = self._check_array(v, "vector")
        return v - v.mean()

    def tangent_many(self, vectors: np.ndarray) -> np.ndarray:
        array = np.asarray(vectors, dtype=float)
        if array.ndim == 2 and array.shape[1:] == self.shape:
            # Row means by einsum: numpy's mean is slow over many short rows.
            means = np.einsum("ij->i", array)[:, np.newaxis] / self.n
            if all_finite(means):  # finite row sums: every entry is finite (no 2nd pass)
                return array - means
        vectors = self._check_batch(array, "vectors")  # raises with the reason
        return vectors - vectors.mean(axis=-1, keepdims=True)

    def lmo(self, direction: np.ndarray) -> np.ndarray:
        g = self._check_array(direction, "direction")
        vertex = np.zeros(self.n)
        vertex[np.argmin(g)] = 1.0  # the first minimiser, as in _lmo_rows
        return vertex

    def _lmo_rows(self, directions: np.ndarray) -> np.ndarray:
        """e_i for i = argmin of each row (the first such i on ties, as ``lmo``)."""
        vertices = np.zeros(directions.shape)
        vertices[np.arange(len(directions)), np.argmin(directions, axis=1)] = 1.0
        return vertices

    def project(self, x: np.ndarray) -> np.ndarray:
        return project_onto_simplex(self._check_array(x, "point"))

    def _project_rows(self, points: np.ndarray) -> np.ndarray:
        return project_rows_onto_simplex(points)

    def separation(self, x: np.ndarray, atol: float = 0.0) -> tuple[np.ndarray, float] | None:
        """None if x >= -atol and |sum x - 1| <= atol*sqrt(n); else the most violated
        constraint as a unit normal: (-e_i, 0) for x_i < 0, (+-1/sqrt(n), +-1/sqrt(n)) for
        sum x > 1 or < 1 (violations compared as distances to the constraint's plane)."""
        point = self._check_array(x, "point")
        atol = check_tolerance(atol, self, "separation")
        root = math.sqrt(self.n)
        i = int(np.argmin(point))
        below = -float(point[i])  # distance to {x_i = 0} when negative
        surplus = (float(point.sum()) - 1.0) / root  # signed distance to {sum x = 1}
        if max(below, abs(surplus)) <= atol:
            return None
        normal = np.zeros(self.n)
        if below >= abs(surplus):
            normal[i] = -1.0
            return normal, 0.0
        sign = 1.0 if surplus > 0 else -1.0
        normal[:] = sign / root
        return separating(normal, sign / root, point, atol)

    def violation(self, x: np.ndarray, atol: float = DEFAULT_ATOL) -> str | None:
        x = np.asarray(x)
        if x.shape != self.shape:
            return f"shape {x.shape}, expected {self.shape}"
        total = float(np.add.reduce(x))  # NaN or inf when an entry is (or on overflow)
        if np.minimum.reduce(x) >= -atol and abs(total - 1.0) <= atol:
            return None  # the common case, in two reductions; the diagnosis follows
        if not np.all(np.isfinite(x)):
            return "non-finite entries (NaN or inf)"
        smallest = float(x.min())
        if smallest < -atol:
            return f"entry {int(np.argmin(x))} is {smallest:.3g}, expected >= 0 within {atol:g}"
        total = float(x.sum())
        if abs(total - 1.0) > atol:
            return f"sum of entries {off_by(total, 1.0)}, expected 1 within atol={atol:g}"
        return None

    def violation_many(
        self, points: np.ndarray, atol: float = DEFAULT_ATOL
    ) -> tuple[int, str] | None:
        points = np.asarray(points)
        if points.ndim != 2 or points.shape[1:] != self.shape:
            return super().violation_many(points, atol)
        # Rows passing the entry test have sum |x_i| close to 1: the slack is relative to 1.
        clear = np.abs(np.einsum("ij->i", points) - 1.0) <= atol - SCREEN_SLACK
        if not points.min(initial=np.inf) >= -atol:  # row minima only when needed
            clear &= points.min(axis=1, initial=np.inf) >= -atol
        return self._screened(points, clear, atol)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """Uniform on the simplex (Dirichlet(1, ..., 1))."""
        return rng.dirichlet(np.ones(self.n))

    def _sample_rows(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """Uniform on the simplex: each row is n i.i.d. standard exponentials divided
        by their sum, which is Dirichlet(1, ..., 1) (each entry's marginal is
        Beta(1, n - 1))."""
        exponentials = rng.standard_exponential((count, self.n))
        return exponentials / exponentials.sum(axis=1, keepdims=True)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(self.n), np.ones(self.n)
