"""The Birkhoff polytope of doubly stochastic matrices.

    B_n = {X in R^(n x n) : X_ij >= 0, X 1 = 1, X^T 1 = 1}

the convex hull of the n! permutation matrices (Birkhoff-von Neumann). Points are
arrays of shape (n, n); inner products are Frobenius ones.

Geometry. Centre c = J/n (J the all-ones matrix). The affine hull has dimension
(n - 1)^2 and direction space V = {V : V 1 = 0, V^T 1 = 0}; the orthogonal projector
onto V is double centring, V -> V - (row means) - (column means) + (grand mean).
Inner radius: the ball of V around c leaves K first through a facet X_ij = 0, at
distance c_ij / ||P E_ij||_F where P E_ij is the double centring of the unit matrix E_ij;
||P E_ij||_F^2 = (P E_ij)_ij = (1 - 1/n)^2, so r = (1/n) / ((n - 1)/n) = 1/(n - 1).
Outer radius: for X in K, ||X - J/n||_F^2 = ||X||_F^2 - 2<X, J>/n + 1 = ||X||_F^2 - 1,
and ||X||_F^2 <= sum_ij X_ij = n with equality exactly at permutation matrices, so
R = sqrt(n - 1), attained at every vertex.

Oracles. LMO = the permutation matrix of a minimum-cost assignment for the cost matrix
G: for n <= 5 by enumerating the n! permutations (all rows of a batch in one numpy
step, O(n! n) a row), for larger n by ``scipy.optimize.linear_sum_assignment`` (the
Jonker-Volgenant algorithm as modified by Crouse 2016), O(n^3), row by row. Projection
= a QP with n^2 variables solved by Clarabel (the optional ``qp`` extra; see
``bco_gym.sets._qp``), interior point, row by row in ``project_many``. The single
oracles run the batched code on a batch of one (or the same per-row function), so the
rows of a batch agree with them bit for bit.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from bco_gym.sets._qp import NonnegativeProjector, missing_solver_message, qp_available
from bco_gym.sets.base import ConvexSet
from bco_gym.sets.checks import DEFAULT_ATOL, SCREEN_SLACK, check_size, off_by

_SAFE_COST = 1e300
_TINY_COST = 1e-290
# Up to this n, the LMO enumerates the n! permutations in one vectorised step (120 at
# n = 5), cheaper than the assignment solver for one row and far cheaper for a batch.
_ENUMERATION_MAX_N = 5


class BirkhoffPolytope(ConvexSet):
    """Doubly stochastic n x n matrices, n >= 2.

    ``sample`` returns w_0 J/n + sum_{j=1..n} w_j P_j with P_j independent uniformly
    random permutation matrices and w ~ Dirichlet(1, ..., 1) (n + 1 weights).
    """

    projection_extra = "qp"  # the projection is a QP (Clarabel), the optional extra

    def __init__(self, n: int = 5):
        import scipy.sparse as sp  # scipy is imported where used: `import bco_gym` stays light

        self.n = check_size(n, "n", "BirkhoffPolytope", 2, " (B_1 is the single point [[1]])")
        self.shape = (self.n, self.n)
        self._center = np.full(self.shape, 1.0 / self.n)
        self._center.flags.writeable = False
        rows = sp.kron(sp.eye(self.n), np.ones((1, self.n)))  # row sums of the row-major flattening
        columns = sp.kron(np.ones((1, self.n)), sp.eye(self.n)).tocsr()[:-1]  # last one redundant
        self._projector = NonnegativeProjector(
            sp.vstack([rows, columns]), np.ones(2 * self.n - 1), "BirkhoffPolytope"
        )
        self._permutations = None
        if self.n <= _ENUMERATION_MAX_N:
            self._permutations = np.array(list(itertools.permutations(range(self.n))))
            positions = np.arange(self.n)
            self._flat_permutations = positions * self.n + self._permutations  # of G.ravel()
            self._permutation_matrices = np.zeros((len(self._permutations), *self.shape))
            for index, permutation in enumerate(self._permutations):
                self._permutation_matrices[index, positions, permutation] = 1.0

    def __repr__(self) -> str:
        return f"BirkhoffPolytope(n={self.n})"

    @property
    def aff_dim(self) -> int:
        return (self.n - 1) ** 2

    @property
    def center(self) -> np.ndarray:
        return self._center

    @property
    def inner_radius(self) -> float:
        return 1.0 / (self.n - 1)

    @property
    def outer_radius(self) -> float:
        return float(np.sqrt(self.n - 1))

    def tangent(self, v: np.ndarray) -> np.ndarray:
        v = self._check_array(v, "vector")
        return _double_centre(v)

    def tangent_many(self, vectors: np.ndarray) -> np.ndarray:
        return _double_centre(self._check_batch(vectors, "vectors"))

    def lmo(self, direction: np.ndarray) -> np.ndarray:
        g = self._check_array(direction, "direction")
        if self._permutations is None:
            return _assignment_vertex(g)
        # _best_permutations on one row, in its own lean form (a batch of one costs twice
        # as much): the same sums, first-minimum rule and rescaling, so the same answer.
        costs = np.take(g, self._flat_permutations).sum(axis=1)
        if not math.isfinite(costs.sum()):
            costs = np.take(g / np.max(np.abs(g)), self._flat_permutations).sum(axis=1)
        return self._permutation_matrices[costs.argmin()].copy()

    def _lmo_rows(self, directions: np.ndarray) -> np.ndarray:
        """All rows at once by enumeration (n <= 5), else one assignment problem per row;
        either way the single oracle's computation, so the rows are its answers."""
        if self._permutations is None:
            return np.stack([_assignment_vertex(g) for g in directions])
        return self._best_permutations(directions)

    def _best_permutations(self, directions: np.ndarray) -> np.ndarray:
        """For each row G, the permutation matrix of the least sum_i G[i, sigma(i)] over
        all n! permutations sigma (the first in lexicographic order on ties).

        Each cost is the sum of n entries taken left to right, row by row, so a row's
        answer does not depend on the others. A row where some sum overflowed (the sum
        of its costs, each row reduced alone, is not finite) is divided by its largest
        |G_ij| and solved again. Sums of subnormal entries are exact, so tiny rows need
        no rescaling.
        """
        flat = directions.reshape(len(directions), -1)
        costs = flat[:, self._flat_permutations].sum(axis=2)  # (k, n!)
        overflowed = ~np.isfinite(costs.sum(axis=1))
        if overflowed.any():
            rows = flat[overflowed]
            scaled = rows / np.abs(rows).max(axis=1)[:, np.newaxis]
            costs[overflowed] = scaled[:, self._flat_permutations].sum(axis=2)
        return self._permutation_matrices[costs.argmin(axis=1)]

    @property
    def has_projection(self) -> bool:
        return qp_available()

    def project(self, x: np.ndarray) -> np.ndarray:
        """Euclidean projection by the Clarabel QP solver (optional ``qp`` extra)."""
        y = self._check_array(x, "point")
        if not qp_available():
            raise NotImplementedError(missing_solver_message("BirkhoffPolytope"))
        return self._projector(y.ravel()).reshape(self.shape)

    def violation(self, x: np.ndarray, atol: float = DEFAULT_ATOL) -> str | None:
        x = np.asarray(x)
        if x.shape != self.shape:
            return f"shape {x.shape}, expected {self.shape}"
        if not np.all(np.isfinite(x)):
            return "non-finite entries (NaN or inf)"
        i, j = np.unravel_index(int(np.argmin(x)), self.shape)
        if x[i, j] < -atol:
            return f"entry ({i}, {j}) is {x[i, j]:.6g}, expected >= 0 within {atol:g}"
        for axis, name in ((1, "row"), (0, "column")):
            sums = x.sum(axis=axis)
            k = int(np.argmax(np.abs(sums - 1.0)))
            if abs(sums[k] - 1.0) > atol:
                total = float(sums[k])
                return f"{name} {k} sums to {off_by(total, 1.0)}, expected 1 within atol={atol:g}"
        return None

    def violation_many(
        self, points: np.ndarray, atol: float = DEFAULT_ATOL
    ) -> tuple[int, str] | None:
        points = np.asarray(points)
        if points.ndim != 3 or points.shape[1:] != self.shape:
            return super().violation_many(points, atol)
        # Entries of a point passing the sign and sum tests are <= 1 + small, so the
        # rounding of the sums is tiny next to SCREEN_SLACK.
        bound = atol - SCREEN_SLACK
        clear = (np.abs(points.sum(axis=2) - 1.0).max(axis=1, initial=0.0) <= bound) & (
            np.abs(points.sum(axis=1) - 1.0).max(axis=1, initial=0.0) <= bound
        )
        if not points.min(initial=np.inf) >= -atol:  # per-point minima only when needed
            clear &= points.min(axis=(1, 2), initial=np.inf) >= -atol
        return self._screened(points, clear, atol)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """Dirichlet weights on J/n and n uniformly random permutation matrices."""
        weights = rng.dirichlet(np.ones(self.n + 1))
        point = weights[0] * self._center
        rows = np.arange(self.n)
        for weight in weights[1:]:
            point[rows, rng.permutation(self.n)] += weight
        return point

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(self.shape), np.ones(self.shape)


def _assignment_vertex(g: np.ndarray) -> np.ndarray:
    """The permutation matrix of a minimum-cost assignment for the cost matrix ``g``.

    Costs beyond 1e300/n in magnitude (whose sums could overflow inside the solver) or
    below 1e-290 are first divided by the largest |g_ij|, which changes no assignment.
    """
    from scipy.optimize import linear_sum_assignment

    largest = np.max(np.abs(g))
    if _unsafe_cost_scale(largest, len(g)):
        g = g / largest
    rows, columns = linear_sum_assignment(g)
    vertex = np.zeros(g.shape)
    vertex[rows, columns] = 1.0
    return vertex


def _unsafe_cost_scale(largest: Any, n: int) -> Any:
    """Whether costs of largest magnitude ``largest`` (a number or an array) could
    overflow a sum of n of them (above 1e300/n) or be subnormal (below 1e-290)."""
    return (largest > _SAFE_COST / n) | ((largest < _TINY_COST) & (largest > 0.0))


def _double_centre(v: np.ndarray) -> np.ndarray:
    """V - row means - column means + grand mean, over the last two axes."""
    return (
        v
        - v.mean(axis=-1, keepdims=True)
        - v.mean(axis=-2, keepdims=True)
        + v.mean(axis=(-2, -1), keepdims=True)
    )
