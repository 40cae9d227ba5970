"""Quadratic losses: squared distance to a moving target, and online least squares.

``quadratic``:

    f_t(x) = ||x - z_t||^2 / 2,   z_t = c + D u + s w_t,

with c the set's centre, u a uniform unit direction of V (the direction space of
aff(K)) drawn at reset, D = ``distance`` * R and s = ``noise`` * R (R the outer radius),
and w_t i.i.d. uniform in the unit ball of V. With the default distance 1 the mean
target c + D u usually lies outside K (on the ball, on its boundary), so the best
point is on the boundary.

Constants (true bounds over K): grad f_t(x) = x - z_t and
||x - z_t|| <= ||x - c|| + ||z_t - c|| <= R + D + s, so G = R + D + s and, f_t being
nonnegative, M = G^2 / 2.

Comparator from sufficient statistics (T' rounds, y_t = z_t - c, u = x - c):

    sum_t f_t(x) = (T'/2) ||u||^2 - <S1, u> + S2/2 = (T'/2) ||x - zbar||^2 + const,

S1 = sum_t y_t, S2 = sum_t ||y_t||^2, zbar = c + S1/T'. The minimiser is the projection
of zbar onto K, used directly when K has one (then certified by the Frank-Wolfe gap,
about 0); otherwise Frank-Wolfe with away steps (see :mod:`bco_gym.losses.solvers`).
One streamed pass over the rounds for all checkpoints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bco_gym.losses.base import (
    Comparator,
    LossSequence,
    Params,
    check_checkpoints,
    check_number,
    row_dot,
)
from bco_gym.losses.linear import unit_ball_in_tangent, unit_direction_in_tangent
from bco_gym.losses.solvers import Quadratic, quadratic_comparators, try_project
from bco_gym.sets.base import ConvexSet

RELATIVE_GAP = 1e-9


class QuadraticLoss(LossSequence):
    """f_t(x) = ||x - z_t||^2 / 2 with targets z_t scattered around a fixed point.

    Args:
        convex_set: the feasible set K.
        distance: ||mean target - c|| in units of the outer radius R (default 1.0).
        noise: radius of the target cloud in units of R (default 0.5).
    """

    stationary = True

    name = "quadratic"

    def __init__(self, convex_set: ConvexSet, distance: float = 1.0, noise: float = 0.5):
        super().__init__(convex_set)
        self.distance = check_number(self.name, "distance", distance)
        self.noise = check_number(self.name, "noise", noise)
        self._center_flat = np.asarray(convex_set.center, dtype=float).ravel()

    @property
    def lipschitz(self) -> float:
        return self.set.outer_radius * (1.0 + self.distance + self.noise)

    @property
    def bound(self) -> float:
        return self.lipschitz**2 / 2.0

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "distance": self.distance, "noise": self.noise}

    def _draw_globals(self, rng: np.random.Generator) -> Params:
        radius = self.set.outer_radius
        return {"mean": self.distance * radius * unit_direction_in_tangent(self.set, rng)}

    def _draw_chunk(self, rng: np.random.Generator, first: int, size: int) -> Params:
        spread = self.noise * self.set.outer_radius
        return {
            "target": self._globals["mean"] + spread * unit_ball_in_tangent(self.set, rng, size)
        }

    def _evaluate(self, params: Params, part: slice, points: np.ndarray) -> np.ndarray:
        difference = points.reshape(len(points), -1) - self._center_flat - params["target"][part]
        return 0.5 * row_dot(difference, difference)

    def _gradient(self, params: Params, offset: int, x: np.ndarray) -> np.ndarray:
        target = self._center_flat + params["target"][offset]
        return x - target.reshape(self.set.shape)

    def comparator(self, checkpoints: Sequence[int]) -> list[Comparator]:
        stops = check_checkpoints(checkpoints)
        sums = self.prefix_sums(
            stops,
            lambda params, part: (
                params["target"][part].sum(axis=0),
                np.einsum("ij,ij->", params["target"][part], params["target"][part]),
            ),
        )
        quadratics = [
            Quadratic(
                np.full(self.set.dim, float(stop)), -first, 0.5 * float(second), self._center_flat
            )
            for stop, (first, second) in zip(stops, sums, strict=True)
        ]
        results = []
        for stop, quadratic, (first, _) in zip(stops, quadratics, sums, strict=True):
            mean_target = (self._center_flat + first / stop).reshape(self.set.shape)
            start = try_project(self.set, mean_target)
            tolerance = RELATIVE_GAP * stop * self.bound
            results += quadratic_comparators(
                self.set, [stop], [quadratic], [tolerance], start=start
            )
        return results
