"""The abstract feasible set and its shrunk copy.

A :class:`ConvexSet` is a compact convex set K in R^shape given by its geometry
(centre c in the relative interior, inner radius r, outer radius R, the affine hull's
dimension d and the orthogonal projector onto its direction space V = aff(K) - c) and
by one required verb, the linear minimization oracle

    lmo(g) in argmin_{x in K} <g, x>.

Projection-free agents touch a set only through ``lmo``, ``contains``, ``tangent`` and
the geometry; a Euclidean projection is optional (``has_projection``).
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence

import numpy as np

DEFAULT_ATOL = 1e-9
# Relative slack of the vectorised membership screens: a point within this fraction of
# a constraint's bound is re-checked one at a time, so rounding differences between a
# batched reduction and the single-point one cannot change a verdict.
SCREEN_SLACK = 1e-10
_SMALL_ARRAY = 1024


def all_finite(array: np.ndarray) -> bool:
    """Whether every entry of a float array is finite, in one pass without a temporary.

    A sum of the entries (of their squares, for small arrays) is finite exactly when
    every entry is, unless finite terms overflow: only then is the entrywise test run.
    Small arrays use the BLAS dot product, the cheapest call; large ones numpy's own
    sum, as OpenBLAS may thread a long dot product, which is slow on a busy machine.
    """
    flat = array if array.ndim == 1 else array.reshape(-1)
    total = flat.dot(flat) if flat.size <= _SMALL_ARRAY else np.add.reduce(flat)
    if math.isfinite(total):
        return True
    return bool(np.isfinite(flat).all())


class ConvexSet(abc.ABC):
    """A compact convex set K with a linear minimization oracle.

    Subclasses set ``shape`` and implement ``center``, ``inner_radius``,
    ``outer_radius``, ``lmo`` and ``contains`` (or ``violation``); they override
    ``aff_dim`` and ``tangent`` when K is not full-dimensional, and ``project`` when a
    Euclidean projection is available. ``tangent_many`` and ``violation_many`` act on
    batches (the runner's block fast path); the defaults loop, built-in sets vectorise.

    Geometry contract (agents' step sizes depend on it):

    * ``center`` c lies in the relative interior of K;
    * ``inner_radius`` r: {c + v : v in V, ||v|| <= r} is contained in K;
    * ``outer_radius`` R >= max_{x in K} ||x - c||.

    Points are numpy arrays of shape ``shape`` (vectors or matrices); inner products
    are the Frobenius ones, ``np.vdot(a, b)``.
    """

    shape: tuple[int, ...]

    # -- geometry -------------------------------------------------------------------
    @property
    def dim(self) -> int:
        """Ambient dimension: the number of entries of a point."""
        return int(np.prod(self.shape))

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

        Row i equals ``lmo(directions[i])``. The default loops (so a user-defined set
        works unchanged); built-in sets override it with a vectorised form.
        """
        batch = self._check_batch(directions, "directions")
        if not len(batch):
            return np.empty((0, *self.shape))
        return np.stack([np.asarray(self.lmo(row), dtype=float) for row in batch])

    def project_many(self, points: np.ndarray) -> np.ndarray:
        """:meth:`project` applied to each row of ``points`` (shape (k, *shape)).

        Row i equals ``project(points[i])``. The default loops; built-in sets with a
        projection override it with a vectorised form.
        """
        if not self.has_projection:
            self.project(np.asarray(self.center))  # raises the set's NotImplementedError
        batch = self._check_batch(points, "points")
        if not len(batch):
            return np.empty((0, *self.shape))
        return np.stack([np.asarray(self.project(row), dtype=float) for row in batch])

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
        """``value`` as a float array of this set's shape; ValueError otherwise."""
        array = np.asarray(value, dtype=float)
        if array.shape != self.shape:
            raise ValueError(
                f"{type(self).__name__}: {what} has shape {array.shape}, expected {self.shape}"
            )
        if not all_finite(array):
            raise ValueError(f"{type(self).__name__}: {what} has non-finite entries (NaN or inf)")
        return array

    def _check_batch(self, values: np.ndarray, what: str) -> np.ndarray:
        """``values`` as a float array of shape (k, *shape); ValueError otherwise."""
        array = np.asarray(values, dtype=float)
        if array.shape[1:] != self.shape or array.ndim != len(self.shape) + 1:
            raise ValueError(
                f"{type(self).__name__}: {what} has shape {array.shape}, expected "
                f"(k, {', '.join(map(str, self.shape))}) for a batch of k"
            )
        if not all_finite(array):
            raise ValueError(f"{type(self).__name__}: {what} has non-finite entries (NaN or inf)")
        return array


class ShrunkSet(ConvexSet):
    """K_delta = c + a(K - c) with a = 1 - delta/r, for a set K and 0 <= delta <= r.

    For x in K_delta and a unit u in V, x + delta*u lies in K. Its oracles come from
    K's: lmo_{K_delta}(g) = c + a(lmo_K(g) - c) and
    Pi_{K_delta}(x) = c + a(Pi_K(c + (x - c)/a) - c). With delta = r the set is {c}.
    """

    def __init__(self, base: ConvexSet, delta: float):
        r = base.inner_radius
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
        c = self.base.center
        return c + self.scale * (self.base.lmo(direction) - c)

    def lmo_many(self, directions: np.ndarray) -> np.ndarray:
        """Row-wise ``lmo``: c + a(lmo_K(g_i) - c) for each row, from K's ``lmo_many``."""
        c = self.base.center
        return c + self.scale * (self.base.lmo_many(directions) - c)

    @property
    def has_projection(self) -> bool:
        return self.base.has_projection

    def project(self, x: np.ndarray) -> np.ndarray:
        c = self.base.center
        x = self._check_array(x, "point")
        if self.scale == 0.0:
            return np.array(c, dtype=float, copy=True)
        # c + a(Pi_K(c + (x - c)/a) - c) on the per-round path of projected agents: one
        # temporary per side, the operations of the formula in its order, and none of
        # the translations when c = 0 (they are exact then, up to the sign of a zero).
        if self._centered_at_origin:
            return np.multiply(self.base.project(x / self.scale), self.scale)
        inner = np.subtract(x, c)
        inner /= self.scale
        inner += c
        result = np.subtract(self.base.project(inner), c)
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

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        low, high = self.base.bounds()
        c = self.base.center
        return c + self.scale * (low - c), c + self.scale * (high - c)


def as_shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    """Normalise a size argument to a shape tuple of positive ints."""
    dims = (shape,) if np.isscalar(shape) else tuple(shape)
    if not dims or any(int(k) != k or k < 1 for k in dims):
        raise ValueError(f"shape {shape!r} must be positive integers")
    return tuple(int(k) for k in dims)


def check_size(value: object, name: str, owner: str, minimum: int = 1, why: str = "") -> int:
    """``value`` as an int >= ``minimum``; a ValueError naming ``owner`` and ``name`` otherwise."""
    message = f"{owner}: {name}={value!r} must be an integer >= {minimum}{why}"
    if isinstance(value, bool | np.bool_):
        raise ValueError(message)
    if isinstance(value, float | np.floating) and float(value).is_integer():
        value = int(value)
    if not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(message)
    return int(value)


def check_radius(value: object, owner: str) -> float:
    """``value`` as a finite float > 0; a ValueError naming ``owner`` otherwise."""
    try:
        radius = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{owner}: radius={value!r} must be a finite number > 0") from None
    if not (np.isfinite(radius) and radius > 0):
        raise ValueError(f"{owner}: radius={value!r} must be a finite number > 0")
    return radius
