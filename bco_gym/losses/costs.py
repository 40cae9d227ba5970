"""Nonnegative linear costs on combinatorial polytopes: paths and assignments.

``edge-costs`` (FlowPolytope: online shortest paths) and ``assignment``
(BirkhoffPolytope: online assignment):

    f_t(x) = <w_t, x>,   w_t = mu + s u_t,

with mean costs mu_e uniform in [``mean_low``, ``mean_high``] per coordinate (edge, or
cell of the cost matrix) drawn at reset (so one path / permutation is clearly best),
u_t uniform in [-1, 1]^dim and s = ``noise`` <= mean_low, so every cost lies in
[0, w_max], w_max = mean_high + noise.

``congestion`` (FlowPolytope): the same costs plus a convex congestion penalty,

    f_t(x) = <w_t, x> + (beta/2) ||x||^2,

which rewards spreading the flow over several paths.

Constants (true bounds over K). Let L = max_{x in K} <1, x> (one LMO call: the most
edges on an s-t path, or n for n x n permutations); points of both polytopes satisfy
0 <= x_e <= 1, so ||x||^2 <= sum_e x_e <= L. Linear: ||grad|| = ||w_t|| <= w_max sqrt(dim)
= G, and 0 <= f_t <= w_max L = M. Congestion: ||w_t + beta x|| <= w_max sqrt(dim) +
beta sqrt(L) = G, and 0 <= f_t <= w_max L + beta L / 2 = M.

Comparators. Linear: exact (gap 0), one LMO on the summed costs W = sum_t w_t.
Congestion: sum_t f_t(x) = <W, x> + (T' beta / 2) ||x||^2, whose minimiser over K is the
projection of -W / (T' beta) (used as a start when K's projection is available), polished
by away-step Frank-Wolfe and certified by the Frank-Wolfe gap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

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
from bco_gym.losses.linear import linear_comparators
from bco_gym.losses.solvers import Quadratic, quadratic_comparators, try_project
from bco_gym.sets import BirkhoffPolytope, FlowPolytope
from bco_gym.sets.base import ConvexSet

RELATIVE_GAP = 1e-9


class NonnegativeCostLoss(LossSequence):
    """<w_t, x> with w_t = mu + noise * U[-1, 1]^dim in [0, w_max] (see the module docstring).

    Args:
        convex_set: K.
        mean_low, mean_high: range of the mean costs mu (defaults 0.25 and 0.75).
        noise: half-width s of the per-round perturbation, 0 <= s <= mean_low (default 0.25).
    """

    stationary = True

    set_class: ClassVar[type[ConvexSet]]

    def __init__(
        self,
        convex_set: ConvexSet,
        mean_low: float = 0.25,
        mean_high: float = 0.75,
        noise: float = 0.25,
    ):
        super().__init__(convex_set)
        self.mean_low = check_number(self.name, "mean_low", mean_low)
        self.mean_high = check_number(self.name, "mean_high", mean_high, low=self.mean_low)
        self.noise = check_number(self.name, "noise", noise, high=self.mean_low)
        if self.mean_high + self.noise <= 0:
            raise ValueError(f"{self.name} loss: mean_high + noise must be > 0 (costs all 0)")
        ones = np.ones(convex_set.shape)
        self.longest = portable.dot(ones, convex_set.lmo(-ones))

    @classmethod
    def supports(cls, convex_set: ConvexSet) -> bool:
        return isinstance(convex_set, cls.set_class)

    @classmethod
    def support_note(cls) -> str:
        return f"it is defined on {cls.set_class.__name__} only"

    @property
    def largest_cost(self) -> float:
        """w_max = mean_high + noise."""
        return self.mean_high + self.noise

    @property
    def lipschitz(self) -> float:
        return self.largest_cost * float(np.sqrt(self.set.dim))

    @property
    def bound(self) -> float:
        return self.largest_cost * self.longest

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "mean_low": self.mean_low,
            "mean_high": self.mean_high,
            "noise": self.noise,
        }

    def _draw_globals(self, rng: np.random.Generator) -> Params:
        return {"mean": rng.uniform(self.mean_low, self.mean_high, self.set.dim)}

    def _draw_chunk(self, rng: np.random.Generator, first: int, size: int) -> Params:
        perturbation = self.noise * rng.uniform(-1.0, 1.0, (size, self.set.dim))
        return {"costs": self._globals["mean"] + perturbation}

    def _evaluate(self, params: Params, part: slice, points: np.ndarray) -> np.ndarray:
        return row_dot(params["costs"][part], points.reshape(len(points), -1))

    def _gradient(self, params: Params, offset: int, x: np.ndarray) -> np.ndarray:
        return params["costs"][offset].reshape(self.set.shape).copy()

    def summed_costs(self, checkpoints: Sequence[int]) -> list[np.ndarray]:
        """W = sum_{t < T'} w_t for each prefix length T'."""
        sums = self.prefix_sums(checkpoints, lambda params, part: (params["costs"][part].sum(0),))
        return [total for (total,) in sums]

    def comparator(self, checkpoints: Sequence[int]) -> list[Comparator]:
        stops = check_checkpoints(checkpoints)
        # <W, x> = <W, x - c> + <W, c>: reuse the exact linear comparator and add <W, c>.
        totals = self.summed_costs(stops)
        center = np.asarray(self.set.center, dtype=float).ravel()
        return [
            Comparator(found.horizon, found.point, found.value + portable.dot(total, center), 0.0)
            for found, total in zip(
                linear_comparators(self.set, stops, totals), totals, strict=True
            )
        ]


class EdgeCostLoss(NonnegativeCostLoss):
    """Online shortest paths: f_t(x) = <w_t, x>, nonnegative edge costs on a FlowPolytope."""

    name = "edge-costs"
    set_class = FlowPolytope


class AssignmentLoss(NonnegativeCostLoss):
    """Online assignment: f_t(X) = <C_t, X>, nonnegative costs on a BirkhoffPolytope."""

    name = "assignment"
    set_class = BirkhoffPolytope


class CongestionLoss(NonnegativeCostLoss):
    """f_t(x) = <w_t, x> + (beta/2) ||x||^2 on a FlowPolytope (see the module docstring).

    Args:
        convex_set: a FlowPolytope.
        mean_low, mean_high, noise: the edge costs, as for ``edge-costs``.
        beta: the congestion weight, > 0 (default 0.5).
    """

    name = "congestion"
    set_class = FlowPolytope

    def __init__(
        self,
        convex_set: ConvexSet,
        mean_low: float = 0.25,
        mean_high: float = 0.75,
        noise: float = 0.25,
        beta: float = 0.5,
    ):
        super().__init__(convex_set, mean_low, mean_high, noise)
        self.beta = check_number(self.name, "beta", beta, strict=True)

    @property
    def lipschitz(self) -> float:
        return super().lipschitz + self.beta * float(np.sqrt(self.longest))

    @property
    def bound(self) -> float:
        return super().bound + 0.5 * self.beta * self.longest

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "beta": self.beta}

    def _evaluate(self, params: Params, part: slice, points: np.ndarray) -> np.ndarray:
        flat = points.reshape(len(points), -1)
        penalty = 0.5 * self.beta * row_dot(flat, flat)
        return super()._evaluate(params, part, points) + penalty

    def _gradient(self, params: Params, offset: int, x: np.ndarray) -> np.ndarray:
        return super()._gradient(params, offset, x) + self.beta * x

    def comparator(self, checkpoints: Sequence[int]) -> list[Comparator]:
        stops = check_checkpoints(checkpoints)
        results = []
        for stop, total in zip(stops, self.summed_costs(stops), strict=True):
            curvature = stop * self.beta
            quadratic = Quadratic(np.full(self.set.dim, curvature), total)
            start = try_project(self.set, (-total / curvature).reshape(self.set.shape))
            if start is None and results:
                start = results[-1].point
            tolerance = RELATIVE_GAP * stop * self.bound
            results += quadratic_comparators(
                self.set, [stop], [quadratic], [tolerance], start=start, method="frank-wolfe"
            )
        return results
