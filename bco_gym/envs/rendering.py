"""A small numpy raster of a set whose affine hull has dimension 1 or 2.

The plane of K is given orthonormal coordinates: the columns of B span V = aff(K) - c
and a point x maps to B^T (x - c). K's boundary is traced through its oracle alone: the
support point in the direction u is lmo(-u), so the support points for directions at
increasing angles are the vertices of a convex polygon inscribed in K (exact for
polytopes, a fine approximation of curved sets), listed counter-clockwise. A segment
(aff_dim 1) is drawn as a thin band. No plotting library is needed.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from bco_gym.sets.base import ConvexSet

BACKGROUND = (255, 255, 255)
SET_FILL = (222, 226, 232)
PLAY_COLOR = (31, 119, 180)
COMPARATOR_COLOR = (214, 39, 40)


def can_render(convex_set: ConvexSet) -> bool:
    """Whether :class:`PlaneView` can draw this set (aff_dim 1 or 2)."""
    return convex_set.aff_dim in (1, 2)


class PlaneView:
    """Draws K, the comparator and recent plays into an RGB array of ``size`` x ``size``."""

    def __init__(self, convex_set: ConvexSet, size: int = 256, directions: int = 128):
        if not can_render(convex_set):
            raise ValueError(
                f"rendering needs a set whose affine hull has dimension 1 or 2; {convex_set!r} "
                f"has aff_dim={convex_set.aff_dim}"
            )
        self.set = convex_set
        self.size = size
        self._center = np.asarray(convex_set.center, dtype=float).ravel()
        self._basis = self._plane_basis()
        polygon = self._boundary(directions)
        low, high = polygon.min(axis=0), polygon.max(axis=0)
        span = float(max(high - low)) * 1.16
        self._origin = (low + high) / 2 - span / 2
        self._scale = (size - 1) / span
        self._background = self._fill(polygon)

    def _plane_basis(self) -> np.ndarray:
        """Orthonormal columns spanning V (from the SVD of the tangent projector)."""
        identity = np.eye(self.set.dim)
        projector = np.stack(
            [self.set.tangent(e.reshape(self.set.shape)).ravel() for e in identity]
        )
        left, _, _ = np.linalg.svd(projector)
        return left[:, : self.set.aff_dim]

    def coordinates(self, points: np.ndarray) -> np.ndarray:
        """Plane coordinates (k, 2) of points (k, *shape); the second is 0 on a segment."""
        flat = np.asarray(points, dtype=float).reshape(len(points), -1) - self._center
        coords = flat @ self._basis
        return coords if coords.shape[1] == 2 else np.column_stack([coords, np.zeros(len(coords))])

    def _boundary(self, directions: int) -> np.ndarray:
        """Support points of K at ``directions`` angles, as a counter-clockwise polygon."""
        if self.set.aff_dim == 1:
            ends = [
                self.set.lmo(sign * self._basis[:, 0].reshape(self.set.shape)) for sign in (1, -1)
            ]
            (start, _), (stop, _) = self.coordinates(np.stack(ends))
            half = 0.04 * (stop - start)
            return np.array([[start, -half], [stop, -half], [stop, half], [start, half]])
        angles = np.linspace(0.0, 2.0 * np.pi, directions, endpoint=False)
        units = np.column_stack([np.cos(angles), np.sin(angles)]) @ self._basis.T
        support = [self.set.lmo(-u.reshape(self.set.shape)) for u in units]
        return self.coordinates(np.stack(support))

    def _pixels(self, coords: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row, column) pixel indices of plane coordinates (y grows upwards)."""
        scaled = np.rint((coords - self._origin) * self._scale).astype(int)
        return self.size - 1 - scaled[:, 1], scaled[:, 0]

    def _fill(self, polygon: np.ndarray) -> np.ndarray:
        """Background raster with the convex polygon filled (inside = left of every edge)."""
        ticks = self._origin[:, None] + np.arange(self.size) / self._scale
        x, y = np.meshgrid(ticks[0], ticks[1][::-1])
        edges = np.roll(polygon, -1, axis=0) - polygon
        tolerance = 1e-12 * float(np.abs(polygon).max() + 1.0)
        inside = np.ones_like(x, dtype=bool)
        for (px, py), (ex, ey) in zip(polygon, edges, strict=True):
            inside &= ex * (y - py) - ey * (x - px) >= -tolerance
        frame = np.empty((self.size, self.size, 3), dtype=np.uint8)
        frame[...] = BACKGROUND
        frame[inside] = SET_FILL
        return frame

    def _dot(self, frame: np.ndarray, point: np.ndarray, radius: int, color: Iterable[int]) -> None:
        (row,), (col,) = self._pixels(self.coordinates(point[np.newaxis]))
        rows = slice(max(row - radius, 0), max(row + radius + 1, 0))
        cols = slice(max(col - radius, 0), max(col + radius + 1, 0))
        frame[rows, cols] = tuple(color)

    def frame(self, comparator: np.ndarray | None, plays: Iterable[np.ndarray]) -> np.ndarray:
        """An RGB uint8 image: K in grey, plays in blue (older ones lighter), x* in red."""
        frame = self._background.copy()
        plays = list(plays)
        for index, point in enumerate(plays):
            fade = (len(plays) - 1 - index) / len(plays)
            color = [int(c + fade * (255 - c) * 0.8) for c in PLAY_COLOR]
            self._dot(frame, point, 2, color)
        if comparator is not None:
            self._dot(frame, comparator, 4, COMPARATOR_COLOR)
        return frame
