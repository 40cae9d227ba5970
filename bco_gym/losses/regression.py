"""Online regression: squared residuals of a noisy linear model.

Data model (shared with ``absolute``, :mod:`bco_gym.losses.absolute`):

    r_t(x) = <a_t, x - c> - b_t,   b_t = <a_t, x_true - c> + e_t,

with c the set's centre; features a_t = F w_t, w_t i.i.d. uniform in the unit ball of V
(the direction space of aff(K)), F = ``feature_norm``; a planted point
x_true = c + D u, u a uniform unit direction of V drawn at reset and
D = ``distance`` * R (R the outer radius; with the default distance 1, x_true usually
lies outside K); and noise e_t uniform in [-``noise``, ``noise``], replaced with
probability ``outlier_rate`` by an outlier uniform in [-``outlier_scale``, ``outlier_scale``].

Residual bound over K: |r_t(x)| <= F ||x - c|| + F ||x_true - c|| + |e_t|
<= F (R + D) + e_max =: rho, with e_max = max(noise, outlier_scale) when outliers occur
and noise otherwise.

``regression``: f_t(x) = r_t(x)^2, grad f_t(x) = 2 r_t(x) a_t, so G = 2 F rho and
M = rho^2.

Comparator from sufficient statistics (u = x - c):

    sum_t f_t(x) = u^T A u - 2 <h, u> + s,   A = sum_t a_t a_t^T, h = sum_t b_t a_t,
    s = sum_t b_t^2,

a convex quadratic minimised over K by :func:`bco_gym.losses.solvers.minimize_quadratic`
(accelerated projected gradient where K has a projection, away-step Frank-Wolfe
otherwise), certified by the Frank-Wolfe gap. One streamed pass over the rounds; the
statistics take O(dim^2) memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bco_gym import portable
from bco_gym.losses.base import (
    Comparator,
    LossSequence,
    Params,
    check_checkpoints,
    check_number,
    row_dot,
)
from bco_gym.losses.linear import unit_ball_in_tangent, unit_direction_in_tangent
from bco_gym.losses.solvers import Quadratic, quadratic_comparators
from bco_gym.sets.base import ConvexSet

RELATIVE_GAP = 1e-9


class RegressionModel(LossSequence):
    """The noisy linear model above; subclasses choose the loss of the residual.

    Args:
        convex_set: the feasible set K.
        feature_norm: F, the radius of the feature distribution (default 1.0).
        distance: ||x_true - c|| in units of R (default 1.0).
        noise: half-width of the regular noise (default 0.1).
        outlier_rate: probability of an outlier in [0, 1].
        outlier_scale: half-width of the outliers' distribution (default 1.0).
    """

    stationary = True

    default_outlier_rate = 0.0

    def __init__(
        self,
        convex_set: ConvexSet,
        feature_norm: float = 1.0,
        distance: float = 1.0,
        noise: float = 0.1,
        outlier_rate: float | None = None,
        outlier_scale: float = 1.0,
    ):
        super().__init__(convex_set)
        if outlier_rate is None:
            outlier_rate = self.default_outlier_rate
        self.feature_norm = check_number(self.name, "feature_norm", feature_norm, strict=True)
        self.distance = check_number(self.name, "distance", distance)
        self.noise = check_number(self.name, "noise", noise)
        self.outlier_rate = check_number(self.name, "outlier_rate", outlier_rate, high=1.0)
        self.outlier_scale = check_number(self.name, "outlier_scale", outlier_scale)
        self._center_flat = np.asarray(convex_set.center, dtype=float).ravel()

    @property
    def residual_bound(self) -> float:
        """rho >= |r_t(x)| for every t and x in K."""
        largest_noise = self.noise
        if self.outlier_rate > 0:
            largest_noise = max(self.noise, self.outlier_scale)
        radius = self.set.outer_radius
        return self.feature_norm * radius * (1.0 + self.distance) + largest_noise

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "feature_norm": self.feature_norm,
            "distance": self.distance,
            "noise": self.noise,
            "outlier_rate": self.outlier_rate,
            "outlier_scale": self.outlier_scale,
        }

    def _floats_per_round(self) -> int:
        return self.set.dim + 1

    def _draw_globals(self, rng: np.random.Generator) -> Params:
        offset = self.distance * self.set.outer_radius * unit_direction_in_tangent(self.set, rng)
        return {"planted": offset}

    def _draw_chunk(self, rng: np.random.Generator, first: int, size: int) -> Params:
        features = self.feature_norm * unit_ball_in_tangent(self.set, rng, size)
        noise = self.noise * rng.uniform(-1.0, 1.0, size)
        outliers = rng.uniform(size=size) < self.outlier_rate
        noise[outliers] = self.outlier_scale * rng.uniform(-1.0, 1.0, int(outliers.sum()))
        targets = portable.matvec(features, self._globals["planted"]) + noise
        return {"features": features, "targets": targets}

    def residuals(self, params: Params, part: slice, points: np.ndarray) -> np.ndarray:
        """r_t(x_t) for the rounds in ``part`` at ``points`` (one point per round)."""
        shifted = points.reshape(len(points), -1) - self._center_flat
        return row_dot(params["features"][part], shifted) - params["targets"][part]


class RegressionLoss(RegressionModel):
    """f_t(x) = (<a_t, x - c> - b_t)^2, online least squares (see the module docstring)."""

    name = "regression"

    @property
    def lipschitz(self) -> float:
        return 2.0 * self.feature_norm * self.residual_bound

    @property
    def bound(self) -> float:
        return self.residual_bound**2

    def _evaluate(self, params: Params, part: slice, points: np.ndarray) -> np.ndarray:
        return self.residuals(params, part, points) ** 2

    def _gradient(self, params: Params, offset: int, x: np.ndarray) -> np.ndarray:
        residual = self.residuals(params, slice(offset, offset + 1), x[np.newaxis])[0]
        return (2.0 * residual * params["features"][offset]).reshape(self.set.shape)

    def statistics(self, checkpoints: Sequence[int]) -> list[tuple[np.ndarray, ...]]:
        """(A, h, s) = (sum a_t a_t^T, sum b_t a_t, sum b_t^2) for each prefix length."""

        def statistic(params: Params, part: slice) -> tuple[np.ndarray, ...]:
            features, targets = params["features"][part], params["targets"][part]
            return (
                portable.gram(features),
                portable.vecmat(targets, features),
                np.array(portable.dot(targets, targets)),
            )

        return self.prefix_sums(checkpoints, statistic)

    def comparator(self, checkpoints: Sequence[int]) -> list[Comparator]:
        stops = check_checkpoints(checkpoints)
        quadratics = [
            Quadratic(2.0 * gram, -2.0 * moment, float(energy), self._center_flat)
            for gram, moment, energy in self.statistics(stops)
        ]
        tolerances = [RELATIVE_GAP * stop * self.bound for stop in stops]
        return quadratic_comparators(self.set, stops, quadratics, tolerances)
