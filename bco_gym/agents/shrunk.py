"""Batched Euclidean projection onto the shrunk set K_delta, from the base set's.

K_delta = c + a(K - c) with a = 1 - delta/r, so Pi_{K_delta}(x) = c + a(Pi_K(c + (x - c)/a) - c)
(DESIGN.md, shrunk set). :class:`~bco_gym.sets.base.ShrunkSet` gives ``lmo_many`` from
the base set's but, for now, ``project_many`` only as the default row loop over its
``project``; the projected agents (FKM) call a :class:`ShrunkProjection` instead, which applies
the formula to a whole batch with one call of the base set's ``project_many`` (the
vectorised oracle of the built-in sets). It is row-independent: elementwise arithmetic
around ``project_many``, whose row i is ``project(points[i])``.
"""

from __future__ import annotations

import numpy as np

from bco_gym.sets.base import ShrunkSet


class ShrunkProjection:
    """Pi_{K_delta} of each row of a batch (S, *shape), as a new array: ``proj(points)``."""

    def __init__(self, shrunk: ShrunkSet):
        self.base = shrunk.base
        self.scale = shrunk.scale
        self.center = np.array(shrunk.base.center, dtype=float)
        self._centered_at_origin = not np.any(self.center)

    def __call__(self, points: np.ndarray) -> np.ndarray:
        scale, center = self.scale, self.center
        if scale == 0.0:  # K_delta = {c}
            return np.repeat(center[np.newaxis], len(points), axis=0)
        if self._centered_at_origin:  # c = 0: the translations are exact, skip them
            return np.multiply(self.base.project_many(points / scale), scale)
        inner = np.subtract(points, center)
        inner /= scale
        inner += center
        result = np.subtract(self.base.project_many(inner), center)
        result *= scale
        result += center
        return result
