"""A small numpy raster of any convex set: a plane view of K above a loss curve.

The plane is spanned by two orthonormal directions u_1, u_2 of V = aff(K) - c (for a
set of affine dimension 1 or 2, all of V, so the picture is K itself; above that, the
directions along which the losses vary most, see :func:`plane_basis`). A point x maps
to (<x - c, u_1>, <x - c, u_2>). The view shows the shadow of K on that plane, traced
through the oracle alone: the support point of K in the direction u is lmo(-u), and
its coordinates are the support point of the shadow, so the support points for
directions at many angles span a convex polygon inscribed in the shadow (exact for
polytopes, a fine approximation of curved sets): their convex hull (scipy's Qhull),
counter-clockwise. Not their order by angle: vertices whose shadows coincide (Simplex(5)'s
e_3 and e_4 on a plane where they project alike) land a rounding apart, so the path
through them by angle can step back by 1e-16, an edge the fill would read as a
half-plane that cuts the polygon away. A segment (aff_dim 1) is drawn as a thin band.

Below the plane a strip plots the losses of the recent plays (oldest on the left,
scaled to their own range). No plotting library is needed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from bco_gym.sets.base import ConvexSet

BACKGROUND = (255, 255, 255)
SET_FILL = (222, 226, 232)
PLAY_COLOR = (31, 119, 180)
COMPARATOR_COLOR = (214, 39, 40)
LOSS_COLOR = (44, 160, 44)
STRIP_HEIGHT = 64
#: Rounds whose loss gradients choose the plane of a set of affine dimension > 2.
BASIS_ROUNDS = 256


def tangent_basis(convex_set: ConvexSet) -> np.ndarray:
    """Orthonormal columns (dim, aff_dim) spanning V (from the SVD of the tangent projector)."""
    identity = np.eye(convex_set.dim)
    projector = np.stack(
        [convex_set.tangent(e.reshape(convex_set.shape)).ravel() for e in identity]
    )
    left, _, _ = np.linalg.svd(projector)
    return left[:, : convex_set.aff_dim]


def plane_basis(convex_set: ConvexSet, gradients: np.ndarray | None = None) -> np.ndarray:
    """Orthonormal columns (dim, min(aff_dim, 2)) of the plane to draw.

    V itself when aff_dim <= 2. Otherwise the top two principal directions of the
    ``gradients`` (k, *shape) projected onto V (the directions along which the losses
    change most), completed by directions of V when they span less than a plane.
    """
    tangent = tangent_basis(convex_set)
    if convex_set.aff_dim <= 2:
        return tangent
    leading = np.empty((convex_set.dim, 0))
    if gradients is not None and len(gradients):
        flat = np.asarray(gradients, dtype=float).reshape(len(gradients), -1)
        within = (flat @ tangent) @ tangent.T
        _, singular, right = np.linalg.svd(within, full_matrices=False)
        keep = singular > 1e-9 * max(float(singular[0]), 1e-300)
        leading = right[keep][:2].T
    candidates = np.column_stack([leading, tangent])
    orthonormal, triangle = np.linalg.qr(candidates)
    independent = np.abs(np.diag(triangle)) > 1e-9
    return orthonormal[:, independent][:, :2]


class PlaneView:
    """Draws K's shadow, the comparator, recent plays and their losses into an RGB array.

    Args:
        convex_set: the set K.
        basis: orthonormal columns (dim, 1 or 2) within V; default :func:`plane_basis`
            without gradients (V itself for aff_dim <= 2).
        size: the plane's width and height in pixels; the loss strip adds
            ``STRIP_HEIGHT`` rows below, so a frame is (size + 64, size, 3) uint8.
        directions: support directions traced for the outline.
    """

    def __init__(
        self,
        convex_set: ConvexSet,
        basis: np.ndarray | None = None,
        size: int = 256,
        directions: int = 128,
    ):
        self.set = convex_set
        self.size = size
        self._center = np.asarray(convex_set.center, dtype=float).ravel()
        self._basis = plane_basis(convex_set) if basis is None else np.asarray(basis, dtype=float)
        polygon = self._boundary(directions)
        low, high = polygon.min(axis=0), polygon.max(axis=0)
        span = max(float(max(high - low)), 1e-12) * 1.16
        self._origin = (low + high) / 2 - span / 2
        self._scale = (size - 1) / span
        self._background = self._fill(polygon)

    def coordinates(self, points: np.ndarray) -> np.ndarray:
        """Plane coordinates (k, 2) of points (k, *shape); the second is 0 on a segment."""
        flat = np.asarray(points, dtype=float).reshape(len(points), -1) - self._center
        coords = flat @ self._basis
        return coords if coords.shape[1] == 2 else np.column_stack([coords, np.zeros(len(coords))])

    def _boundary(self, directions: int) -> np.ndarray:
        """Support points of the shadow at ``directions`` angles, counter-clockwise."""
        if self._basis.shape[1] == 1:
            ends = [
                self.set.lmo(sign * self._basis[:, 0].reshape(self.set.shape)) for sign in (1, -1)
            ]
            (start, _), (stop, _) = self.coordinates(np.stack(ends))
            half = 0.04 * (stop - start)
            return np.array([[start, -half], [stop, -half], [stop, half], [start, half]])
        angles = np.linspace(0.0, 2.0 * np.pi, directions, endpoint=False)
        units = np.column_stack([np.cos(angles), np.sin(angles)]) @ self._basis.T
        support = [self.set.lmo(-u.reshape(self.set.shape)) for u in units]
        from scipy.spatial import ConvexHull, QhullError  # where used: `import bco_gym` stays light

        points = self.coordinates(np.stack(support))
        try:
            return points[ConvexHull(points).vertices]  # counter-clockwise in 2-D
        except QhullError:  # a degenerate shadow (a set flat on this plane): the support path
            return points

    def _pixels(self, coords: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row, column) pixel indices of plane coordinates (y grows upwards)."""
        scaled = np.rint((coords - self._origin) * self._scale).astype(int)
        return self.size - 1 - scaled[:, 1], scaled[:, 0]

    def _fill(self, polygon: np.ndarray) -> np.ndarray:
        """Background raster with the convex polygon filled.

        A pixel (x, y) is inside when it lies left of every edge (e_x, e_y) from vertex
        p, within a distance ``tolerance`` of its line:
        e_x (y - p_y) - e_y (x - p_x) >= -tolerance |e|. On each pixel row that is an
        interval of x, bounded below by the edges with e_y < 0 and above by those with
        e_y > 0. The tolerance is a distance, so scaled by |e|: an offset not scaled so,
        divided by the e_y of an edge a rounding long (1e-16), moved the bound by 1e4
        and emptied the picture.
        """
        ticks = self._origin[:, None] + np.arange(self.size) / self._scale
        x, y = ticks[0], ticks[1][::-1, np.newaxis]
        edges = np.roll(polygon, -1, axis=0) - polygon
        tolerance = 1e-12 * float(np.abs(polygon).max() + 1.0)
        (px, py), (ex, ey) = polygon.T, edges.T
        slack = tolerance * np.hypot(ex, ey)
        offset = ex * (y - py) + ey * px  # (rows, edges): the constraint is ey x <= offset
        with np.errstate(divide="ignore", invalid="ignore"):
            bound = (offset + np.where(ey > 0, slack, -slack)) / ey
        lower = np.max(np.where(ey < 0, bound, -np.inf), axis=1, keepdims=True)
        upper = np.min(np.where(ey > 0, bound, np.inf), axis=1, keepdims=True)
        level = np.all((ey != 0) | (ex * (y - py) >= -slack), axis=1, keepdims=True)
        inside = (x >= lower) & (x <= upper) & level
        frame = np.empty((self.size + STRIP_HEIGHT, self.size, 3), dtype=np.uint8)
        frame[...] = BACKGROUND
        frame[: self.size][inside] = SET_FILL
        frame[self.size] = SET_FILL  # the line between the plane and the loss strip
        return frame

    @staticmethod
    def _square(frame: np.ndarray, row: int, col: int, radius: int, color: Iterable[int]) -> None:
        rows = slice(max(row - radius, 0), max(row + radius + 1, 0))
        cols = slice(max(col - radius, 0), max(col + radius + 1, 0))
        frame[rows, cols] = tuple(color)

    def _dot(self, frame: np.ndarray, point: np.ndarray, radius: int, color: Iterable[int]) -> None:
        (row,), (col,) = self._pixels(self.coordinates(point[np.newaxis]))
        self._square(frame[: self.size], int(row), int(col), radius, color)

    def _loss_curve(self, frame: np.ndarray, losses: Sequence[float]) -> None:
        """The recent losses, oldest left, scaled to their range, in the bottom strip."""
        if not len(losses):
            return
        values = np.asarray(losses, dtype=float)
        low, high = float(values.min()), float(values.max())
        heights = (values - low) / (high - low) if high > low else np.full(len(values), 0.5)
        columns = np.rint(np.linspace(0, self.size - 1, max(len(values), 2))[: len(values)])
        rows = self.size + STRIP_HEIGHT - 4 - np.rint(heights * (STRIP_HEIGHT - 8))
        for row, col in zip(rows.astype(int), columns.astype(int), strict=True):
            self._square(frame, row, col, 1, LOSS_COLOR)

    def frame(
        self,
        comparator: np.ndarray | None,
        plays: Iterable[np.ndarray],
        losses: Sequence[float] = (),
    ) -> np.ndarray:
        """An RGB uint8 image: K in grey, plays in blue (older ones lighter), x* in red,
        and below, the losses of the plays in green."""
        frame = self._background.copy()
        plays = list(plays)
        for index, point in enumerate(plays):
            fade = (len(plays) - 1 - index) / len(plays)
            color = [int(c + fade * (255 - c) * 0.8) for c in PLAY_COLOR]
            self._dot(frame, point, 2, color)
        if comparator is not None:
            self._dot(frame, comparator, 4, COMPARATOR_COLOR)
        self._loss_curve(frame, losses)
        return frame
