"""Linear losses: the stochastic adversary with a clear best action.

    f_t(x) = <theta_t, x - c>,   theta_t = mu + s * w_t,

with c the set's centre, mu a fixed vector of V (the direction space of aff(K)) with
||mu|| = ``mean_norm`` drawn uniformly at reset, and w_t i.i.d. uniform in the unit ball
of V, scaled by ``noise`` = s. Since theta_t lies in V, ||theta_t|| <= mean_norm + noise
and over K, |f_t(x)| <= ||theta_t|| R. Constants: G = mean_norm + noise, M = G R.

Comparator: exact, one LMO on the summed vectors (gap 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bco_gym.losses.base import Comparator, LossSequence, Params, check_checkpoints
from bco_gym.sets.base import ConvexSet


def unit_ball_in_tangent(convex_set: ConvexSet, rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` i.i.d. points uniform in the unit ball of V, flattened to (size, dim)."""
    g = convex_set.tangent_many(rng.standard_normal((size, *convex_set.shape)))
    g = g.reshape(size, -1)
    norms = np.linalg.norm(g, axis=1, keepdims=True)
    radii = rng.uniform(size=(size, 1)) ** (1.0 / convex_set.aff_dim)
    return g * (radii / np.maximum(norms, np.finfo(float).tiny))


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
        for label, value in (("mean_norm", mean_norm), ("noise", noise)):
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"linear loss: {label}={value!r} must be finite and >= 0")
        if mean_norm + noise <= 0:
            raise ValueError("linear loss: mean_norm + noise must be > 0")
        self.mean_norm = float(mean_norm)
        self.noise = float(noise)
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
        direction = self.set.tangent(rng.standard_normal(self.set.shape)).ravel()
        return {"mean": direction * (self.mean_norm / np.linalg.norm(direction))}

    def _draw_chunk(self, rng: np.random.Generator, size: int) -> Params:
        theta = self._globals["mean"] + self.noise * unit_ball_in_tangent(self.set, rng, size)
        return {"theta": theta, "offset": theta @ self._center_flat}

    def _evaluate(self, params: Params, part: slice, points: np.ndarray) -> np.ndarray:
        theta = params["theta"][part]
        flat = points.reshape(len(points), -1)
        return np.einsum("ij,ij->i", theta, flat) - params["offset"][part]

    def _gradient(self, params: Params, offset: int, x: np.ndarray) -> np.ndarray:
        return params["theta"][offset].reshape(self.set.shape).copy()

    def summed_vectors(self, checkpoints: Sequence[int]) -> list[np.ndarray]:
        """sum_{t < T'} theta_t for each prefix length T' (streamed chunk by chunk)."""
        stops = check_checkpoints(checkpoints)
        total = np.zeros(self.set.dim)
        sums, done = [], 0
        for stop in stops:
            for _, _, params, part in self.chunks(done, stop):
                total += params["theta"][part].sum(axis=0)
            sums.append(total.copy())
            done = stop
        return sums

    def comparator(self, checkpoints: Sequence[int]) -> list[Comparator]:
        results = []
        for stop, total in zip(
            check_checkpoints(checkpoints), self.summed_vectors(checkpoints), strict=True
        ):
            direction = total.reshape(self.set.shape)
            point = self.set.lmo(direction)
            value = float(total @ (point.ravel() - self._center_flat))
            results.append(Comparator(horizon=stop, point=point, value=value, gap=0.0))
        return results
