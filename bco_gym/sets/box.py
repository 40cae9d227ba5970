"""Axis-aligned boxes.

    Hypercube(low, high) = {x in R^n : low_i <= x_i <= high_i}

Geometry: centre c = (low + high)/2, full-dimensional (aff_dim = n, ``tangent`` =
identity); inner radius r = min_i (high_i - low_i)/2 (the nearest facet); outer radius
R = ||(high - low)/2||_2 (every vertex is that far from c).

Oracles: LMO = the vertex with x_i = low_i where g_i >= 0 and high_i where g_i < 0, O(n).
Projection = clipping each coordinate to [low_i, high_i], O(n). Both are entrywise, so
``lmo_many`` and ``project_many`` are the same expressions broadcast over the batch.
"""

from __future__ import annotations

import math

import numpy as np

from bco_gym import portable
from bco_gym.sets.base import ConvexSet
from bco_gym.sets.checks import DEFAULT_ATOL, check_size, check_tolerance


class Hypercube(ConvexSet):
    """The box [low_1, high_1] x ... x [low_n, high_n] in R^n.

    Args:
        low, high: the lower and upper corners, scalars or 1-d arrays (scalars are
            broadcast to length n); low_i < high_i for every i.
        n: the dimension; required when both corners are scalars, otherwise it must
            match their length if given.

    ``sample`` draws uniformly in the box.
    """

    def __init__(
        self, low: float | np.ndarray = -1.0, high: float | np.ndarray = 1.0, n: int | None = None
    ):
        low_array = _corner(low, "low")
        high_array = _corner(high, "high")
        for name, corner in (("low", low_array), ("high", high_array)):
            if corner.ndim > 1:
                raise ValueError(
                    f"Hypercube: {name} has shape {corner.shape}; expected a scalar or 1-d"
                )
            if not np.all(np.isfinite(corner)):
                raise ValueError(f"Hypercube: {name}={corner!r} has non-finite entries")
        sizes = {corner.size for corner in (low_array, high_array) if corner.ndim == 1}
        if n is not None:
            sizes.add(check_size(n, "n", "Hypercube"))
        if len(sizes) != 1:
            if not sizes:
                raise ValueError("Hypercube: low and high are both scalars; pass n=... too")
            raise ValueError(
                f"Hypercube: inconsistent sizes {sorted(sizes)} from low (shape "
                f"{low_array.shape}), high (shape {high_array.shape}) and n={n!r}"
            )
        (size,) = sizes
        self.n = check_size(size, "n", "Hypercube")
        self.low = np.broadcast_to(low_array, (self.n,)).copy()
        self.high = np.broadcast_to(high_array, (self.n,)).copy()
        bad = np.nonzero(self.low >= self.high)[0]
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"Hypercube: low[{i}]={self.low[i]:g} >= high[{i}]={self.high[i]:g}; "
                "need low < high in every coordinate"
            )
        for array in (self.low, self.high):
            array.flags.writeable = False
        self.shape = (self.n,)
        self._center = (self.low + self.high) / 2.0
        self._center.flags.writeable = False
        self._half_width = (self.high - self.low) / 2.0

    def __repr__(self) -> str:
        if np.all(self.low == self.low[0]) and np.all(self.high == self.high[0]):
            return f"Hypercube(low={self.low[0]:g}, high={self.high[0]:g}, n={self.n})"
        return f"Hypercube(low={self.low.tolist()}, high={self.high.tolist()})"

    @property
    def center(self) -> np.ndarray:
        return self._center

    @property
    def inner_radius(self) -> float:
        return float(self._half_width.min())

    @property
    def outer_radius(self) -> float:
        return math.sqrt(portable.dot(self._half_width, self._half_width))

    def tangent_many(self, vectors: np.ndarray) -> np.ndarray:
        return np.array(self._check_batch(vectors, "vectors"), dtype=float, copy=True)

    def lmo(self, direction: np.ndarray) -> np.ndarray:
        return self._lmo_rows(self._check_array(direction, "direction"))

    def _lmo_rows(self, directions: np.ndarray) -> np.ndarray:
        """Entrywise, so one expression serves a point (..., n) and a batch alike."""
        return np.where(directions >= 0.0, self.low, self.high)

    def project(self, x: np.ndarray) -> np.ndarray:
        return self._project_rows(self._check_array(x, "point"))

    def _project_rows(self, points: np.ndarray) -> np.ndarray:
        """Entrywise clipping, for a point or a batch alike."""
        return np.clip(points, self.low, self.high)

    def separation(self, x: np.ndarray, atol: float = 0.0) -> tuple[np.ndarray, float] | None:
        """None if every entry is within its bounds (within ``atol``); else the most
        violated bound: (e_i, high_i) when x_i > high_i, (-e_i, -low_i) when x_i < low_i."""
        point = self._check_array(x, "point")
        atol = check_tolerance(atol, self, "separation")
        excess = np.maximum(self.low - point, point - self.high)
        i = int(np.argmax(excess))
        if excess[i] <= atol:
            return None
        normal = np.zeros(self.n)
        if point[i] > self.high[i]:
            normal[i] = 1.0
            return normal, float(self.high[i])
        normal[i] = -1.0
        return normal, float(-self.low[i])

    def violation(self, x: np.ndarray, atol: float = DEFAULT_ATOL) -> str | None:
        x = np.asarray(x)
        if x.shape != self.shape:
            return f"shape {x.shape}, expected {self.shape}"
        excess = np.maximum(self.low - x, x - self.high)
        if np.maximum.reduce(excess) <= atol:
            return None  # the common case (NaN fails the test and is diagnosed below)
        if not np.all(np.isfinite(x)):
            return "non-finite entries (NaN or inf)"
        i = int(np.argmax(excess))
        if excess[i] > atol:
            return (
                f"entry {i} is {x[i]:.6g}, expected in [{self.low[i]:g}, {self.high[i]:g}] "
                f"within {atol:g}"
            )
        return None

    def violation_many(
        self, points: np.ndarray, atol: float = DEFAULT_ATOL
    ) -> tuple[int, str] | None:
        points = np.asarray(points)
        if points.ndim != 2 or points.shape[1:] != self.shape:
            return super().violation_many(points, atol)
        # The same entrywise excesses as violation(); a maximum is exact, so no slack.
        excess = np.maximum(self.low - points, points - self.high)
        if excess.max(initial=-np.inf) <= atol:
            return None  # every entry of every point is within its bounds
        return self._screened(points, excess.max(axis=1, initial=-np.inf) <= atol, atol)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """Uniform in the box."""
        return rng.uniform(self.low, self.high)

    def _sample_rows(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """Uniform in the box, as :meth:`sample`: independent U[low_i, high_i] entries."""
        return rng.uniform(self.low, self.high, size=(count, *self.shape))

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return self.low.copy(), self.high.copy()


def _corner(value: object, name: str) -> np.ndarray:
    """A corner as a float array, if it holds real numbers (no strings, bools, complex)."""
    array = np.asarray(value)
    if array.dtype.kind not in "iuf":
        raise ValueError(
            f"Hypercube: {name}={value!r} must be a real number or an array of real numbers "
            f"(got dtype {array.dtype})"
        )
    return array.astype(float)
