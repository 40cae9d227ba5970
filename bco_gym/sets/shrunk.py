"""The shrunk copy K_delta of a feasible set, on which smoothed agents play.

For a set K with centre c and inner radius r, and 0 <= delta <= r,

    K_delta = c + a(K - c),   a = 1 - delta/r,

so that x + delta*u lies in K for every x in K_delta and every unit u of V. Its oracles
are K's, rescaled about c.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from bco_gym.sets.base import DEFAULT_ATOL, ConvexSet, is_real_number


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

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        low, high = self.base.bounds()
        c = self.base.center
        return c + self.scale * (low - c), c + self.scale * (high - c)
