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
import numbers
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


def _is_float_array(value: object) -> bool:
    """Whether ``value`` is already a C-contiguous float64 ndarray (the checks' fast path).

    Other arrays are copied to that layout, so an oracle's reductions (BLAS dot
    products, pairwise sums) run the same kernel whatever the caller's memory layout.
    """
    return type(value) is np.ndarray and value.dtype == np.float64 and value.flags.c_contiguous


def _real_array(value: object, owner: type, what: str) -> np.ndarray:
    """``value`` as a float array if its entries are real numbers (int or float)."""
    array = np.asarray(value)
    if array.dtype.kind not in "fiu":
        raise ValueError(
            f"{owner.__name__}: {what} has dtype {array.dtype} ({_short(value)}); expected "
            "real numbers (a float or int array)"
        )
    return np.ascontiguousarray(array, dtype=float)


def _short(value: object) -> str:
    """``repr(value)`` on one line, cut to 60 characters."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def as_shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    """Normalise a size argument to a shape tuple of positive ints."""
    dims = (shape,) if np.isscalar(shape) else tuple(shape)
    if not dims or any(int(k) != k or k < 1 for k in dims):
        raise ValueError(f"shape {shape!r} must be positive integers")
    return tuple(int(k) for k in dims)


def is_real_number(value: object) -> bool:
    """Whether ``value`` is a real number: an int or float (Python or numpy), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def check_size(value: object, name: str, owner: str, minimum: int = 1, why: str = "") -> int:
    """``value`` as an int >= ``minimum``; a ValueError naming ``owner`` and ``name`` otherwise.

    Only integers (Python or numpy) are accepted: a float, even 3.0, a string or a bool
    is refused rather than converted.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise ValueError(
            f"{owner}: {name}={value!r} must be an integer >= {minimum}{why}, "
            f"not a {type(value).__name__}"
        )
    if value < minimum:
        raise ValueError(f"{owner}: {name}={value!r} must be an integer >= {minimum}{why}")
    return int(value)


def check_radius(value: object, owner: str) -> float:
    """``value`` as a finite float > 0; a ValueError naming ``owner`` otherwise.

    Only real numbers (int or float, Python or numpy) are accepted; a string such as
    "1" or a bool is refused rather than converted.
    """
    if not is_real_number(value):
        raise ValueError(
            f"{owner}: radius={value!r} must be a finite number > 0, not a {type(value).__name__}"
        )
    radius = float(value)  # type: ignore[arg-type]
    if not (np.isfinite(radius) and radius > 0):
        raise ValueError(f"{owner}: radius={value!r} must be a finite number > 0")
    return radius


# ShrunkSet has its own module; it is re-exported here, where it was first defined (the
# package's __init__ imports this module first, so the cycle resolves).
from bco_gym.sets.shrunk import ShrunkSet  # noqa: E402
