"""The abstract feasible set and its shrunk copy.

A :class:`ConvexSet` is a compact convex set K in R^shape given by its geometry
(centre c in the relative interior, inner radius r, outer radius R, the affine hull's
dimension d and the orthogonal projector onto its direction space V = aff(K) - c) and
by one required verb, the linear minimization oracle

    lmo(g) in argmin_{x in K} <g, x>.

Projection-free agents touch a set only through ``lmo``, ``contains``, ``tangent`` and
the geometry; a Euclidean projection is optional (``has_projection``).

:class:`ShrunkSet` is the one generic set derived from any K (``K.shrink(delta)``): for
0 <= delta <= r,

    K_delta = c + a(K - c),   a = 1 - delta/r,

so that x + delta*u lies in K for every x in K_delta and every unit u of V. Its oracles
are K's, rescaled about c. It lives here because ``shrink`` is part of every set's
contract.
"""

from __future__ import annotations

import abc
import math
import numbers
from collections.abc import Callable, Sequence

import numpy as np

from bco_gym.sets.checks import (
    DEFAULT_ATOL,
    _is_float_array,
    _real_array,
    all_finite,
    is_real_number,
)


def separating(
    normal: np.ndarray, offset: float, x: np.ndarray, atol: float
) -> tuple[np.ndarray, float] | None:
    """(normal, offset) if <normal, x> > offset + atol as evaluated in floats, else None
    (x is on the hyperplane up to rounding, so within ``atol`` of K there). The inner
    product is NumPy's pairwise sum of the products, not a BLAS dot product (whose order
    is the BLAS build's), so that the compiled separation steps reach the same verdict
    (:mod:`bco_gym.agents.gk22.kernel`)."""
    return (normal, offset) if float(np.add.reduce(normal * x)) > offset + atol else None


class ConvexSet(abc.ABC):
    """A compact convex set K with a linear minimization oracle.

    Subclasses set ``shape`` and implement ``center``, ``inner_radius``,
    ``outer_radius``, ``lmo`` and ``contains`` (or ``violation``); they override
    ``aff_dim`` and ``tangent`` when K is not full-dimensional, and ``project`` when a
    Euclidean projection is available. ``tangent_many``, ``violation_many``,
    ``lmo_many`` and ``project_many`` act on batches (a leading axis of rows: the
    runner's block fast path, batched agents); the defaults loop over the single
    methods, so a user-defined set works unchanged, and built-in sets vectorise them
    (for the two oracles by overriding ``_lmo_rows`` / ``_project_rows``, which receive
    the batch already validated), row i equal to the single answer bit for bit unless
    the set documents otherwise.

    Geometry contract (agents' step sizes depend on it):

    * ``center`` c lies in the relative interior of K;
    * ``inner_radius`` r: {c + v : v in V, ||v|| <= r} is contained in K;
    * ``outer_radius`` R >= max_{x in K} ||x - c||.

    Points are numpy arrays of shape ``shape`` (vectors or matrices); inner products
    are the Frobenius ones, ``np.vdot(a, b)``.
    """

    shape: tuple[int, ...]
    #: the optional extra of bco_gym that provides ``project`` when it is missing (the
    #: QP projections of the flow and Birkhoff polytopes need ``qp``), or None.
    projection_extra: str | None = None

    # -- geometry -------------------------------------------------------------------
    @property
    def dim(self) -> int:
        """Ambient dimension: the number of entries of a point."""
        return math.prod(int(size) for size in self.shape)  # np.prod costs ~3 us a call

    @property
    def aff_dim(self) -> int:
        """Dimension d of the affine hull aff(K) (``dim`` for full-dimensional sets)."""
        return self.dim

    @property
    @abc.abstractmethod
    def center(self) -> np.ndarray:
        """A point c in the relative interior of K (read-only array)."""

    @property
    @abc.abstractmethod
    def inner_radius(self) -> float:
        """r > 0 with c + r*B(V) contained in K (B(V): unit ball of V)."""

    @property
    @abc.abstractmethod
    def outer_radius(self) -> float:
        """R >= max over K of ||x - c||."""

    def tangent(self, v: np.ndarray) -> np.ndarray:
        """Orthogonal projection of ``v`` onto V = aff(K) - c (a new array).

        The default is the identity, right for full-dimensional sets only; sets with a
        smaller affine hull must override it.
        """
        if self.aff_dim != self.dim:
            raise NotImplementedError(
                f"{type(self).__name__} has aff_dim={self.aff_dim} < dim={self.dim} "
                "and must implement tangent()"
            )
        return np.array(self._check_array(v, "vector"), dtype=float, copy=True)

    def tangent_many(self, vectors: np.ndarray) -> np.ndarray:
        """:meth:`tangent` applied to each row of ``vectors`` (shape (k, *shape)).

        The default loops; sets override it with a vectorised form for the fast path.
        """
        return np.stack([self.tangent(v) for v in vectors]) if len(vectors) else vectors.copy()

    def violation_many(
        self, points: np.ndarray, atol: float = DEFAULT_ATOL
    ) -> tuple[int, str] | None:
        """The first point of a batch (shape (k, *shape)) outside K, as (index, reason).

        None when every point is in K within ``atol``. The verdict and the reason are
        those of :meth:`violation` on each point; the default calls it point by point,
        and sets override this with a vectorised screen that sends only the doubtful
        points (outside, or within a relative ``SCREEN_SLACK`` of a bound) to
        :meth:`violation`.
        """
        points = np.asarray(points)
        if points.shape[1:] != self.shape:
            return (0, f"shape {points.shape[1:]}, expected {self.shape}") if len(points) else None
        return self._first_violation(points, range(len(points)), atol)

    def _first_violation(
        self, points: np.ndarray, candidates: Sequence[int] | np.ndarray, atol: float
    ) -> tuple[int, str] | None:
        """(index, reason) of the first of ``points[candidates]`` outside K, or None."""
        for index in candidates:
            reason = self.violation(points[int(index)], atol)
            if reason is not None:
                return int(index), reason
        return None

    def _screened(
        self, points: np.ndarray, clear: np.ndarray, atol: float
    ) -> tuple[int, str] | None:
        """:meth:`violation_many` given a mask of points a vectorised screen cleared."""
        if clear.all():
            return None
        return self._first_violation(points, np.flatnonzero(~clear), atol)

    # -- oracles ----------------------------------------------------------------------
    @abc.abstractmethod
    def lmo(self, direction: np.ndarray) -> np.ndarray:
        """A minimiser over K of the linear function x -> <direction, x> (a new array)."""

    def lmo_many(self, directions: np.ndarray) -> np.ndarray:
        """:meth:`lmo` applied to each row of ``directions`` (shape (k, *shape)).

        Row i equals ``lmo(directions[i])``; an empty batch gives an empty (0, *shape)
        array, and a batch of the wrong shape or with a non-finite row raises the
        ValueError of the single oracle, naming the row. The rows are validated here,
        then :meth:`_lmo_rows` answers them: its default loops over :meth:`lmo` (so a
        user-defined set works unchanged), built-in sets vectorise it.
        """
        batch = self._check_batch(directions, "directions")
        if not len(batch):
            return np.empty((0, *self.shape))
        return self._lmo_rows(batch)

    def _lmo_rows(self, directions: np.ndarray) -> np.ndarray:
        """:meth:`lmo_many` on a validated, non-empty float batch (default: a row loop)."""
        return np.stack([np.asarray(self.lmo(row), dtype=float) for row in directions])

    def project_many(self, points: np.ndarray) -> np.ndarray:
        """:meth:`project` applied to each row of ``points`` (shape (k, *shape)).

        Row i equals ``project(points[i])``; validation and the empty batch as in
        :meth:`lmo_many`. :meth:`_project_rows` answers the validated rows: its default
        loops over :meth:`project`, built-in sets vectorise it.
        """
        if not self.has_projection:
            self.project(np.asarray(self.center))  # raises the set's NotImplementedError
        batch = self._check_batch(points, "points")
        if not len(batch):
            return np.empty((0, *self.shape))
        return self._project_rows(batch)

    def _project_rows(self, points: np.ndarray) -> np.ndarray:
        """:meth:`project_many` on a validated, non-empty float batch (default: a row loop)."""
        return np.stack([np.asarray(self.project(row), dtype=float) for row in points])

    @property
    def has_projection(self) -> bool:
        """Whether :meth:`project` is available for this set."""
        return type(self).project is not ConvexSet.project

    def project(self, x: np.ndarray) -> np.ndarray:
        """Euclidean projection onto K: argmin_{y in K} ||y - x||."""
        raise NotImplementedError(
            f"{type(self).__name__} has no Euclidean projection; projection-free agents "
            "('bbcg', 'bfw', 'ofw', 'random') do not need one, while 'fkm' and 'ogd' do."
        )

    @property
    def has_separation(self) -> bool:
        """Whether :meth:`separation` is available for this set."""
        return type(self).separation is not ConvexSet.separation

    def separation(self, x: np.ndarray, atol: float = 0.0) -> tuple[np.ndarray, float] | None:
        """A separating hyperplane: None when x is in K (every constraint within ``atol``),
        else ``(a, b)`` with ||a|| = 1, <a, z> <= b for every z in K and <a, x> > b + atol
        (the most violated of the set's constraints, scaled to a unit normal). The built-in
        oracles raise ValueError for an ``atol`` that is not a finite number >= 0 (NaN
        would let every point in).
        """
        raise NotImplementedError(
            f"{type(self).__name__} has no separation oracle; the ball, L1 ball, box and "
            "simplex have one"
        )

    def violation(self, x: np.ndarray, atol: float = DEFAULT_ATOL) -> str | None:
        """Why ``x`` is not in K (within ``atol``), or None when it is.

        Built-in sets explain the violated constraint with its value; the default
        only knows the verdict of :meth:`contains`.
        """
        x = np.asarray(x)
        if x.shape != self.shape:
            return f"shape {x.shape}, expected {self.shape}"
        if not np.all(np.isfinite(x)):
            return "non-finite entries (NaN or inf)"
        if type(self).contains is ConvexSet.contains:
            raise NotImplementedError(f"{type(self).__name__} must implement contains()")
        if not self.contains(x, atol=atol):
            return f"point not in {self!r} (tolerance {atol:g})"
        return None

    def contains(self, x: np.ndarray, atol: float = DEFAULT_ATOL) -> bool:
        """Whether ``x`` lies in K up to ``atol`` in each constraint."""
        x = np.asarray(x)
        if type(self).violation is ConvexSet.violation:
            raise NotImplementedError(
                f"{type(self).__name__} must implement contains() or violation()"
            )
        return self.violation(x, atol=atol) is None

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """A random point of K.

        Default (for sets known only through their oracles): c + s*(v - c) with v the
        LMO answer to a standard normal direction and s ~ U[0, 1]. Built-in sets
        override it with a distribution documented in their class.
        """
        vertex = self.lmo(rng.standard_normal(self.shape))
        return self.center + rng.uniform() * (vertex - self.center)

    def sample_many(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """``count`` independent draws of :meth:`sample`'s distribution, (count, *shape).

        All draws come from the one generator ``rng``. Default (user-defined sets): a
        loop over :meth:`sample`, so row i is the i-th call's point. Built-in sets with
        a closed-form ``sample`` vectorise it: the same distribution, documented in
        their ``sample_many``, but not the loop's stream of bits. ``count`` is an int
        >= 0 (0 gives an empty (0, *shape) array); ValueError otherwise.
        """
        count = self._check_count(count)
        if not count:
            return np.empty((0, *self.shape))
        return self._sample_rows(rng, count)

    def _sample_rows(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """:meth:`sample_many` for a validated ``count >= 1`` (default: a loop)."""
        return np.stack([np.asarray(self.sample(rng), dtype=float) for _ in range(count)])

    def _check_count(self, count: object) -> int:
        """``count`` as an int >= 0; ValueError naming the value otherwise."""
        if (
            isinstance(count, bool | np.bool_)
            or not isinstance(count, numbers.Integral)
            or count < 0
        ):
            raise ValueError(
                f"{type(self).__name__}.sample_many: count={count!r} must be an int >= 0"
            )
        return int(count)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The bounding box of K: entrywise minimum and maximum (2*dim LMO calls)."""
        low = np.empty(self.shape)
        high = np.empty(self.shape)
        unit = np.zeros(self.shape)
        for index in np.ndindex(self.shape):
            unit[index] = 1.0
            low[index] = self.lmo(unit)[index]
            high[index] = self.lmo(-unit)[index]
            unit[index] = 0.0
        return low, high

    def shrink(self, delta: float) -> ShrunkSet:
        """K_delta = c + (1 - delta/r)(K - c), for 0 <= delta <= r."""
        return ShrunkSet(self, delta)

    # -- validation helpers -----------------------------------------------------------
    def _check_array(self, value: np.ndarray, what: str) -> np.ndarray:
        """``value`` as a float array of this set's shape; ValueError otherwise.

        Real numbers only: strings, booleans, complex and object arrays are refused,
        never converted.
        """
        array = value if _is_float_array(value) else _real_array(value, type(self), what)
        if array.shape != self.shape:
            raise ValueError(
                f"{type(self).__name__}: {what} has shape {array.shape}, expected {self.shape}"
            )
        if not all_finite(array):
            raise ValueError(f"{type(self).__name__}: {what} has non-finite entries (NaN or inf)")
        return array

    def _check_batch(self, values: np.ndarray, what: str) -> np.ndarray:
        """``values`` as a float array of shape (k, *shape); ValueError otherwise.

        The error names the first row with a non-finite entry.
        """
        array = values if _is_float_array(values) else _real_array(values, type(self), what)
        if array.shape[1:] != self.shape or array.ndim != len(self.shape) + 1:
            raise ValueError(
                f"{type(self).__name__}: {what} has shape {array.shape}, expected "
                f"(k, {', '.join(map(str, self.shape))}) for a batch of k"
            )
        if not all_finite(array):
            finite_rows = np.isfinite(array).reshape(len(array), -1).all(axis=1)
            row = int(np.argmin(finite_rows))
            raise ValueError(
                f"{type(self).__name__}: {what} row {row} has non-finite entries (NaN or inf)"
            )
        return array


# -- the shrunk copy ---------------------------------------------------------------------
class ShrunkSet(ConvexSet):
    """K_delta = c + a(K - c) with a = 1 - delta/r, for a set K and 0 <= delta <= r.

    For x in K_delta and a unit u in V, x + delta*u lies in K. Its oracles come from
    K's: lmo_{K_delta}(g) = c + a(lmo_K(g) - c) and
    Pi_{K_delta}(x) = c + a(Pi_K(c + (x - c)/a) - c). With delta = r the set is {c}.
    The batched oracles apply the same elementwise operations to K's ``lmo_many`` /
    ``project_many``, so they agree with the single ones exactly as K's do.
    """

    def __init__(self, base: ConvexSet, delta: float):
        if not isinstance(base, ConvexSet):
            raise TypeError(f"ShrunkSet: base={base!r} must be a ConvexSet")
        r = base.inner_radius
        if not is_real_number(delta):
            raise ValueError(f"shrink: delta={delta!r} must be a real number in [0, r], r={r:g}")
        if not (np.isfinite(delta) and 0.0 <= delta <= r * (1.0 + 1e-12)):
            raise ValueError(f"shrink: delta={delta!r} must lie in [0, r] with r={r:g}")
        self.base = base
        self.delta = float(min(delta, r))
        self.scale = 1.0 - self.delta / r
        self.shape = base.shape
        self._centered_at_origin = not np.any(base.center)

    def __repr__(self) -> str:
        return f"ShrunkSet({self.base!r}, delta={self.delta:g})"

    @property
    def aff_dim(self) -> int:
        return self.base.aff_dim

    @property
    def center(self) -> np.ndarray:
        return self.base.center

    @property
    def inner_radius(self) -> float:
        return self.scale * self.base.inner_radius

    @property
    def outer_radius(self) -> float:
        return self.scale * self.base.outer_radius

    def tangent(self, v: np.ndarray) -> np.ndarray:
        return self.base.tangent(v)

    def tangent_many(self, vectors: np.ndarray) -> np.ndarray:
        return self.base.tangent_many(vectors)

    def lmo(self, direction: np.ndarray) -> np.ndarray:
        return self._toward_centre(self.base.lmo(direction))

    def _lmo_rows(self, directions: np.ndarray) -> np.ndarray:
        """Row-wise ``lmo``: c + a(lmo_K(g_i) - c) for each row, from K's ``lmo_many``."""
        return self._toward_centre(self.base.lmo_many(directions))

    def _toward_centre(self, points: np.ndarray) -> np.ndarray:
        """c + a(y - c) for a point of K or a batch of them (the same operations)."""
        c = self.base.center
        return c + self.scale * (points - c)

    @property
    def has_projection(self) -> bool:
        return self.base.has_projection

    def project(self, x: np.ndarray) -> np.ndarray:
        return self._project_through_base(self._check_array(x, "point"), self.base.project)

    def _project_rows(self, points: np.ndarray) -> np.ndarray:
        """Row-wise ``project``, from K's ``project_many`` (the operations of ``project``)."""
        return self._project_through_base(points, self.base.project_many)

    def _project_through_base(
        self, x: np.ndarray, base_projection: Callable[[np.ndarray], np.ndarray]
    ) -> np.ndarray:
        """c + a(Pi_K(c + (x - c)/a) - c) for a point or a batch (elementwise, so equal).

        On the per-round path of projected agents: one temporary per side, the
        operations of the formula in its order, and none of the translations when
        c = 0 (they are exact then, up to the sign of a zero).
        """
        c = self.base.center
        if self.scale == 0.0:
            return np.array(np.broadcast_to(c, x.shape), dtype=float, copy=True)
        if self._centered_at_origin:
            return np.multiply(base_projection(x / self.scale), self.scale)
        inner = np.subtract(x, c)
        inner /= self.scale
        inner += c
        result = np.subtract(base_projection(inner), c)
        result *= self.scale
        result += c
        return result

    def contains(self, x: np.ndarray, atol: float = DEFAULT_ATOL) -> bool:
        return self.violation(np.asarray(x), atol) is None

    def violation(self, x: np.ndarray, atol: float = DEFAULT_ATOL) -> str | None:
        x = np.asarray(x, dtype=float)
        c = self.base.center
        if x.shape != self.shape:
            return f"shape {x.shape}, expected {self.shape}"
        if self.scale == 0.0:
            distance = float(np.linalg.norm(x - c))
            return None if distance <= atol else f"distance {distance:g} from the centre of {{c}}"
        reason = self.base.violation(c + (x - c) / self.scale, atol / self.scale)
        return None if reason is None else f"(scaled back to the base set) {reason}"

    def violation_many(
        self, points: np.ndarray, atol: float = DEFAULT_ATOL
    ) -> tuple[int, str] | None:
        points = np.asarray(points, dtype=float)
        if self.scale == 0.0 or points.shape[1:] != self.shape:
            return super().violation_many(points, atol)
        c = self.base.center
        found = self.base.violation_many(c + (points - c) / self.scale, atol / self.scale)
        if found is None:
            return None
        index, reason = found
        return index, f"(scaled back to the base set) {reason}"

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        c = self.base.center
        return c + self.scale * (self.base.sample(rng) - c)

    def _sample_rows(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """The base set's ``sample_many`` mapped by x -> c + scale * (x - c), row by row."""
        c = self.base.center
        return c + self.scale * (self.base.sample_many(rng, count) - c)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        low, high = self.base.bounds()
        c = self.base.center
        return c + self.scale * (low - c), c + self.scale * (high - c)


def projection_hint(convex_set: ConvexSet) -> str:
    """How to obtain the missing projection onto ``convex_set``, or "" when none helps.

    A set whose projection comes with an optional extra (``projection_extra``; a shrunk
    set asks its ``base``) and lacks it now: "install the QP solver: pip install
    'bco_gym[qp]' (or clarabel)". Errors about a missing projection add it.
    """
    if convex_set.has_projection:
        return ""
    base = getattr(convex_set, "base", convex_set)
    extra = getattr(base, "projection_extra", None)
    if extra != "qp":
        return ""
    return "install the QP solver: pip install 'bco_gym[qp]' (or clarabel)"
