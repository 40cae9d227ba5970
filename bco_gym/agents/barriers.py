"""Self-concordant barriers of the sets that have a cheap one, in coordinates of aff(K).

A nu-self-concordant barrier R of K (Nemirovski & Todd 2008, Definition 2.1) is what
interior-point methods and the barrier-regularised bandit methods (Abernethy, Hazan &
Rakhlin 2008; Saha & Tewari 2011) need: R -> infinity at the boundary,
|D^3 R(x)[h, h, h]| <= 2 ||h||_x^3 and |<grad R(x), h>| <= sqrt(nu) ||h||_x, with the
local norm ||h||_x = sqrt(h^T hess R(x) h). Its Dikin ellipsoid {y : ||y - x||_x <= 1}
lies in K for every interior x.

Coordinates. Many sets are not full-dimensional (simplex, Birkhoff, flow polytope), so
everything here is written in coordinates w of V = aff(K) - c: x = c + Q w, Q an
orthonormal basis of V (n x d, from the set's ``tangent``; the identity when K is
full-dimensional, where nothing is multiplied). The barrier and its gradient are those
of w -> R(c + Q w), Q^T grad R; its Hessian Q^T hess R Q (d x d, positive definite on a
bounded K) is given as a factor M with Q^T hess R Q = M^T M, never formed: near the
boundary the Hessian's entries span many orders of magnitude, and its eigenvalues from
an SVD of M (the squares of M's singular values) are never negative and keep twice the
dynamic range of an eigendecomposition of the formed matrix. Every sum here (norms,
products with Q) is NumPy's pairwise reduction ``np.add.reduce`` along a contiguous row,
never a BLAS product, whose order is the BLAS build's: the compiled solve of saha-tewari
(:mod:`bco_gym.agents.saha_tewari.kernel`) reproduces them bit for bit.

Barriers (m the number of coordinates that are not pinned at zero on K):

* Euclidean ball {||x - c|| <= rho}: R(x) = -log(rho^2 - ||x - c||^2), nu = 1;
* box {low <= x <= high}: R(x) = -sum_i log(x_i - low_i) - sum_i log(high_i - x_i),
  nu = 2n;
* {x >= 0} intersected with aff(K) -- the simplex, the Birkhoff polytope, the s-t flow
  polytope -- R(x) = -sum_{i : c_i > 0} log x_i, nu = m. A coordinate that is 0 at the
  centre c (a relative-interior point) is 0 on all of K (an edge on no s-t path), has no
  barrier term and no component in V.

Every other built-in set is refused with a :class:`~bco_gym.errors.UnsupportedSetError`
listing these: the l1 ball's facets number 2^n, and the nuclear-norm ball has no barrier
whose derivatives are cheap.

References: A. Nemirovski and M. Todd, "Interior-point methods for optimization", Acta
Numerica 17, 2008; Y. Nesterov, "Introductory Lectures on Convex Optimization", 2004,
Section 4.1-4.2.
"""

from __future__ import annotations

import math

import numpy as np

from bco_gym.errors import UnsupportedSetError
from bco_gym.sets.balls import L2Ball
from bco_gym.sets.base import ConvexSet
from bco_gym.sets.birkhoff import BirkhoffPolytope
from bco_gym.sets.box import Hypercube
from bco_gym.sets.flow import FlowPolytope
from bco_gym.sets.simplex import Simplex

#: The sets :func:`barrier_for` supports, by class name (what an error message lists).
SUPPORTED_SETS = ("L2Ball", "Hypercube", "Simplex", "BirkhoffPolytope", "FlowPolytope")


class Barrier:
    """A nu-self-concordant barrier of K in coordinates w of aff(K) (module docstring).

    Attributes:
        parameter: nu.
        dimension: d = aff_dim.
        center: c, the origin of the coordinates (x = c + Q w).
    """

    parameter: float

    def __init__(self, convex_set: ConvexSet):
        self.set = convex_set
        self.center = np.asarray(convex_set.center, dtype=float).reshape(-1)
        self.dimension = int(convex_set.aff_dim)
        self.basis = _tangent_basis(convex_set)  # Q (n, d), or None when V = R^n
        # Q^T, contiguous: the rows of Q^T g are pairwise sums along contiguous rows
        self.basis_t = None if self.basis is None else np.ascontiguousarray(self.basis.T)

    def point(self, coordinates: np.ndarray) -> np.ndarray:
        """x = c + Q w, flat (n,)."""
        if self.basis is None:
            return self.center + coordinates
        return self.center + np.add.reduce(self.basis * coordinates, axis=1)

    def derivatives(self, coordinates: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """(R, grad R, M) at c + Q w in the coordinates w, hess R = M^T M; R = inf (and
        the other two meaningless) outside int K."""
        value, gradient, factor = self._ambient(self.point(coordinates))
        if self.basis is None or not math.isfinite(value):
            return value, gradient, factor
        return value, np.add.reduce(self.basis_t * gradient, axis=1), self._reduce(factor)

    def _reduce(self, factor: np.ndarray) -> np.ndarray:
        """The factor in coordinates, M Q, from the ambient factor M."""
        return factor @ self.basis

    def _ambient(self, x: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """(R, grad R, M) at x in ambient coordinates, hess R = M^T M."""
        raise NotImplementedError


class BallBarrier(Barrier):
    """-log(rho^2 - ||x - c||^2) on the Euclidean ball of radius rho: nu = 1.

    grad = 2 z / s, hess = 2 I / s + 4 z z^T / s^2 with z = x - c, s = rho^2 - ||z||^2:
    eigenvalue 2/s + 4||z||^2/s^2 along z, 2/s across. The factor is the symmetric root
    M = sqrt(2/s) I + (sqrt(2/s + 4||z||^2/s^2) - sqrt(2/s)) e e^T, e = z/||z||.
    """

    parameter = 1.0

    def __init__(self, convex_set: L2Ball):
        super().__init__(convex_set)
        self.radius = float(convex_set.radius)
        self.radius_squared = self.radius * self.radius

    def _ambient(self, x: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        z = x - self.center
        squared = float(np.add.reduce(z * z))
        slack = self.radius_squared - squared
        if not slack > 0.0:
            return math.inf, z, np.eye(len(z))
        across = math.sqrt(2.0 / slack)
        factor = np.eye(len(z)) * across
        if squared > 0.0:
            along = math.sqrt(2.0 / slack + 4.0 * squared / (slack * slack))
            unit = z / math.sqrt(squared)
            factor += (along - across) * np.outer(unit, unit)
        return -math.log(slack), (2.0 / slack) * z, factor


class BoxBarrier(Barrier):
    """-sum log(x - low) - sum log(high - x) on the box [low, high]: nu = 2n.
    Factor M = [diag(1/(x - low)); diag(1/(high - x))] (2n x n)."""

    def __init__(self, convex_set: Hypercube):
        super().__init__(convex_set)
        self.low = np.asarray(convex_set.low, dtype=float).reshape(-1)
        self.high = np.asarray(convex_set.high, dtype=float).reshape(-1)
        self.parameter = 2.0 * len(self.low)

    def _ambient(self, x: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        below, above = x - self.low, self.high - x
        if not (below.min() > 0.0 and above.min() > 0.0):
            return math.inf, x, np.eye(len(x))
        value = -float(np.sum(np.log(below))) - float(np.sum(np.log(above)))
        gradient = 1.0 / above - 1.0 / below
        return value, gradient, np.vstack([np.diag(1.0 / below), np.diag(1.0 / above)])


class NonnegativeBarrier(Barrier):
    """-sum_{i : c_i > 0} log x_i on {x >= 0} intersected with aff(K): nu = m, the number
    of coordinates positive at the centre (the others are 0 on all of K).
    Factor M = the rows i of diag(1/x) with c_i > 0 (m x n)."""

    def __init__(self, convex_set: ConvexSet):
        super().__init__(convex_set)
        self.free = self.center > 0.0
        self.parameter = float(np.count_nonzero(self.free))
        self._rows = np.flatnonzero(self.free)

    def _ambient(self, x: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        entries = x[self.free]
        if not entries.min() > 0.0:
            return math.inf, x, np.eye(len(x))
        gradient = np.zeros_like(x)
        gradient[self.free] = -1.0 / entries
        factor = np.zeros((len(entries), len(x)))
        factor[np.arange(len(entries)), self._rows] = 1.0 / entries
        return -float(np.sum(np.log(entries))), gradient, factor

    def _reduce(self, factor: np.ndarray) -> np.ndarray:
        """M Q with M the rows i (c_i > 0) of diag(1/x): row k is (1/x_i) Q[i], i = rows[k]
        (each entry one product, as the compiled solve takes it)."""
        return factor[np.arange(len(self._rows)), self._rows][:, None] * self.basis[self._rows]


def barrier_for(convex_set: ConvexSet, owner: str) -> Barrier:
    """The set's barrier (module docstring); UnsupportedSetError for any other set."""
    kind = type(convex_set)
    if kind is L2Ball:
        return BallBarrier(convex_set)
    if kind is Hypercube:
        return BoxBarrier(convex_set)
    if kind in (Simplex, BirkhoffPolytope, FlowPolytope):
        return NonnegativeBarrier(convex_set)
    raise UnsupportedSetError(
        f"{owner} needs a self-concordant barrier of K with cheap derivatives; "
        f"{convex_set!r} ({kind.__name__}) has none here. Supported sets: "
        f"{', '.join(SUPPORTED_SETS)}"
    )


def _tangent_basis(convex_set: ConvexSet) -> np.ndarray | None:
    """An orthonormal basis Q (n, d) of V = aff(K) - c, or None when d = n."""
    size = int(np.prod(convex_set.shape))
    if convex_set.aff_dim == size:
        return None
    identity = np.eye(size).reshape(size, *convex_set.shape)
    projector = np.asarray(convex_set.tangent_many(identity), dtype=float).reshape(size, size)
    values, vectors = np.linalg.eigh((projector + projector.T) / 2)
    return np.ascontiguousarray(vectors[:, np.argsort(values)[::-1][: convex_set.aff_dim]])
