"""Linear losses: a stochastic adversary with a clear best action, and a switching one.

``linear``:

    f_t(x) = <theta_t, x - c>,   theta_t = mu + s * w_t,

with c the set's centre, mu a fixed vector of V (the direction space of aff(K)) with
||mu|| = ``mean_norm`` and a uniformly random direction drawn at reset, and w_t i.i.d.
uniform in the unit ball of V, scaled by ``noise`` = s.

``linear-switching``: the same with a mean that changes every ``period`` rounds,

    theta_t = mu_{floor(t / period)} + s * w_t,

mu_p of norm ``mean_norm`` in an independent uniform direction of V for each period p,
drawn from its own generator ``default_rng([seed, 2, p])`` (so it does not depend on how
rounds are read). Non-stationary but oblivious: the whole sequence is fixed at reset.

Constants (true bounds over K). theta_t lies in V and ||theta_t|| <= mean_norm + noise,
so the gradient norm is at most G = mean_norm + noise, and for x in K,
|f_t(x)| <= ||theta_t|| ||x - c|| <= G R with R the outer radius: M = G R.

Comparator: exact (gap 0), one LMO on the summed vectors,
x* = lmo(sum_{t<T'} theta_t), value sum_t <theta_t, x* - c>.
"""

from __future__ import annotations

import numbers
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
from bco_gym.sets.base import ConvexSet


def unit_ball_in_tangent(convex_set: ConvexSet, rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` i.i.d. points uniform in the unit ball of V, flattened to (size, dim)."""
    g = convex_set.tangent_many(rng.standard_normal((size, *convex_set.shape)))
    g = g.reshape(size, -1)
    norms = np.sqrt(row_dot(g, g))[:, np.newaxis]
    radii = rng.uniform(size=(size, 1)) ** (1.0 / convex_set.aff_dim)
    return g * (radii / np.maximum(norms, np.finfo(float).tiny))


def unit_direction_in_tangent(convex_set: ConvexSet, rng: np.random.Generator) -> np.ndarray:
    """A direction uniform on the unit sphere of V, flattened to (dim,)."""
    direction = convex_set.tangent(rng.standard_normal(convex_set.shape)).ravel()
    return direction / np.linalg.norm(direction)


class LinearLoss(LossSequence):
    """f_t(x) = <theta_t, x - c> with theta_t = mu + noise * (uniform in the unit ball of V).

    Args:
        convex_set: the feasible set K.
        mean_norm: ||mu||, the strength of the best action (default 0.5).
        noise: radius of the per-round noise (default 0.5); ||theta_t|| <= mean_norm + noise.
    """

    name = "linear"

    def __init__(self, convex_set: ConvexSet, mean_norm: float = 0.5, noise: float = 0.5):
        super().__init__(convex_set)
        self.mean_norm = check_number(self.name, "mean_norm", mean_norm)
        self.noise = check_number(self.name, "noise", noise)
        if self.mean_norm + self.noise <= 0:
            raise ValueError(f"{self.name} loss: mean_norm + noise must be > 0 (both are 0)")
        self._center_flat = np.asarray(convex_set.center, dtype=float).ravel()

    @property
    def lipschitz(self) -> float:
        return self.mean_norm + self.noise

    @property
    def bound(self) -> float:
        return self.lipschitz * self.set.outer_radius

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "mean_norm": self.mean_norm, "noise": self.noise}

    def _draw_globals(self, rng: np.random.Generator) -> Params:
        return {"mean": self.mean_norm * unit_direction_in_tangent(self.set, rng)}

    def _means(self, first: int, size: int) -> np.ndarray:
        """mu for rounds first..first+size-1 (broadcastable to (size, dim))."""
        return self._globals["mean"]

    def _draw_chunk(self, rng: np.random.Generator, first: int, size: int) -> Params:
        noise = self.noise * unit_ball_in_tangent(self.set, rng, size)
        theta = self._means(first, size) + noise
        return {"theta": theta, "offset": theta @ self._center_flat}

    def _evaluate(self, params: Params, part: slice, points: np.ndarray) -> np.ndarray:
        theta = params["theta"][part]
        flat = points.reshape(len(points), -1)
        return row_dot(theta, flat) - params["offset"][part]

    def _gradient(self, params: Params, offset: int, x: np.ndarray) -> np.ndarray:
        return params["theta"][offset].reshape(self.set.shape).copy()

    def summed_vectors(self, checkpoints: Sequence[int]) -> list[np.ndarray]:
        """sum_{t < T'} theta_t for each prefix length T' (streamed chunk by chunk)."""
        sums = self.prefix_sums(checkpoints, lambda params, part: (params["theta"][part].sum(0),))
        return [total for (total,) in sums]

    def comparator(self, checkpoints: Sequence[int]) -> list[Comparator]:
        return linear_comparators(self.set, checkpoints, self.summed_vectors(checkpoints))


def linear_comparators(
    convex_set: ConvexSet, checkpoints: Sequence[int], totals: Sequence[np.ndarray]
) -> list[Comparator]:
    """Exact comparators of sum_t <theta_t, x - c> from the summed vectors (one LMO each)."""
    center = np.asarray(convex_set.center, dtype=float).ravel()
    results = []
    for stop, total in zip(check_checkpoints(checkpoints), totals, strict=True):
        point = np.asarray(convex_set.lmo(total.reshape(convex_set.shape)), dtype=float)
        value = float(total @ (point.ravel() - center))
        results.append(Comparator(horizon=stop, point=point, value=value, gap=0.0))
    return results


class LinearSwitchingLoss(LinearLoss):
    """``linear`` whose mean takes a fresh random direction every ``period`` rounds.

    Args:
        convex_set: the feasible set K.
        mean_norm: ||mu_p|| for every period p (default 0.5).
        noise: radius of the per-round noise (default 0.5).
        period: rounds between switches (an integer >= 1, default 1000). Each period's
            mean costs one small generator, so very short periods are slower to draw.
    """

    name = "linear-switching"

    def __init__(
        self,
        convex_set: ConvexSet,
        mean_norm: float = 0.5,
        noise: float = 0.5,
        period: int = 1000,
    ):
        super().__init__(convex_set, mean_norm=mean_norm, noise=noise)
        if isinstance(period, bool) or not isinstance(period, numbers.Integral) or period < 1:
            raise ValueError(f"{self.name} loss: period={period!r} must be an integer >= 1")
        self.period = int(period)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "period": self.period}

    def _draw_globals(self, rng: np.random.Generator) -> Params:
        return {}

    def period_mean(self, index: int) -> np.ndarray:
        """mu_p for period p = ``index`` (flattened), from default_rng([seed, 2, p])."""
        rng = np.random.default_rng([self.seed, 2, index])
        return self.mean_norm * unit_direction_in_tangent(self.set, rng)

    def _means(self, first: int, size: int) -> np.ndarray:
        periods = np.arange(first, first + size) // self.period
        lowest = int(periods[0])
        means = np.stack([self.period_mean(p) for p in range(lowest, int(periods[-1]) + 1)])
        return means[periods - lowest]
