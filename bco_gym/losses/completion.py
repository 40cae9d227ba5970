"""Online matrix completion on the nuclear-norm ball: one noisy entry per round.

Target (drawn at reset): a rank-k matrix with equal singular values,

    Y = (``signal`` * rho / k) * U V^T,

U (rows x k) and V (cols x k) with orthonormal columns (QR of Gaussian matrices),
rho the ball's radius and k = ``rank``; so ||Y||_* = signal * rho <= rho (Y is in K)
and ||Y||_op = signal * rho / k. Round t observes the entry (i_t, j_t), uniform over
all positions, with noise uniform in [-h, h], h = ``noise`` times the RMS entry
||Y||_F / sqrt(rows cols):

    y_t = Y_{i_t j_t} + e_t,   f_t(X) = (X_{i_t j_t} - y_t)^2 / 2.

Constants (true bounds over K): |X_ij| = |e_i^T X e_j| <= ||X||_op <= ||X||_* <= rho and
|y_t| <= ||Y||_op + h, so the gradient (a single entry X_ij - y_t) has norm at most
G = rho + signal * rho / k + h, and M = G^2 / 2.

Comparator from sufficient statistics per entry: N_ij (times observed), S_ij (sum of
the observations) and Q (sum of their squares):

    sum_t f_t(X) = (1/2) sum_ij N_ij X_ij^2 - sum_ij S_ij X_ij + Q/2,

a quadratic with a diagonal Hessian, minimised over the ball by accelerated projected
gradient (SVD projection) or Frank-Wolfe, certified by the Frank-Wolfe gap
(:mod:`bco_gym.losses.solvers`). One streamed pass for all checkpoints.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from bco_gym.losses.base import Comparator, LossSequence, Params, check_checkpoints, check_number
from bco_gym.losses.solvers import Quadratic, quadratic_comparators
from bco_gym.sets import NuclearNormBall
from bco_gym.sets.base import ConvexSet

RELATIVE_GAP = 1e-9


class CompletionLoss(LossSequence):
    """Squared error on one observed entry of a low-rank matrix per round.

    Args:
        convex_set: a NuclearNormBall.
        rank: k, the target's rank (1 <= k <= min(rows, cols); default min(2, rows, cols)).
        signal: ||Y||_* / radius, in [0, 1] (default 0.8).
        noise: noise half-width in units of the target's RMS entry (default 0.5).
    """

    stationary = True

    name = "completion"

    def __init__(
        self,
        convex_set: ConvexSet,
        rank: int | None = None,
        signal: float = 0.8,
        noise: float = 0.5,
    ):
        super().__init__(convex_set)
        self.rows, self.cols = convex_set.shape
        smaller = min(self.rows, self.cols)
        if rank is None:
            rank = min(2, smaller)
        if (
            isinstance(rank, bool)
            or not isinstance(rank, numbers.Integral)
            or not (1 <= rank <= smaller)
        ):
            raise ValueError(
                f"{self.name} loss: rank={rank!r} must be an integer in [1, {smaller}]"
            )
        self.rank = int(rank)
        self.signal = check_number(self.name, "signal", signal, high=1.0)
        self.noise = check_number(self.name, "noise", noise)
        self.radius = float(convex_set.radius)  # type: ignore[attr-defined]

    @classmethod
    def supports(cls, convex_set: ConvexSet) -> bool:
        return isinstance(convex_set, NuclearNormBall)

    @classmethod
    def support_note(cls) -> str:
        return "it is defined on the nuclear-norm ball (NuclearNormBall) only"

    @property
    def singular_value(self) -> float:
        """The target's k equal singular values, signal * rho / k."""
        return self.signal * self.radius / self.rank

    @property
    def noise_width(self) -> float:
        """h = noise * ||Y||_F / sqrt(rows * cols)."""
        frobenius = self.singular_value * np.sqrt(self.rank)
        return self.noise * frobenius / np.sqrt(self.rows * self.cols)

    @property
    def lipschitz(self) -> float:
        return self.radius + self.singular_value + self.noise_width

    @property
    def bound(self) -> float:
        return self.lipschitz**2 / 2.0

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "rank": self.rank, "signal": self.signal, "noise": self.noise}

    def target(self) -> np.ndarray:
        """Y, the matrix being completed (after :meth:`reset`)."""
        if "target" not in self._globals:
            raise RuntimeError(f"{type(self).__name__}: call reset(rng) before reading the target")
        return self._globals["target"].copy()

    def _floats_per_round(self) -> int:
        return 3

    def _draw_globals(self, rng: np.random.Generator) -> Params:
        left, _ = np.linalg.qr(rng.standard_normal((self.rows, self.rank)))
        right, _ = np.linalg.qr(rng.standard_normal((self.cols, self.rank)))
        return {"target": self.singular_value * (left @ right.T)}

    def _draw_chunk(self, rng: np.random.Generator, first: int, size: int) -> Params:
        positions = rng.integers(0, self.rows * self.cols, size)
        noise = self.noise_width * rng.uniform(-1.0, 1.0, size)
        return {"position": positions, "value": self._globals["target"].ravel()[positions] + noise}

    def _evaluate(self, params: Params, part: slice, points: np.ndarray) -> np.ndarray:
        entries = points.reshape(len(points), -1)[np.arange(len(points)), params["position"][part]]
        return 0.5 * (entries - params["value"][part]) ** 2

    def _gradient(self, params: Params, offset: int, x: np.ndarray) -> np.ndarray:
        position = int(params["position"][offset])
        gradient = np.zeros(self.rows * self.cols)
        gradient[position] = x.ravel()[position] - params["value"][offset]
        return gradient.reshape(self.set.shape)

    def statistics(self, checkpoints: Sequence[int]) -> list[tuple[np.ndarray, ...]]:
        """(N, S, Q) per prefix length: counts, sums and the total sum of squares."""
        size = self.rows * self.cols

        def statistic(params: Params, part: slice) -> tuple[np.ndarray, ...]:
            positions, values = params["position"][part], params["value"][part]
            return (
                np.bincount(positions, minlength=size).astype(float),
                np.bincount(positions, weights=values, minlength=size),
                np.array(values @ values),
            )

        return self.prefix_sums(checkpoints, statistic)

    def comparator(self, checkpoints: Sequence[int]) -> list[Comparator]:
        stops = check_checkpoints(checkpoints)
        quadratics = [
            Quadratic(counts, -sums, 0.5 * float(squares))
            for counts, sums, squares in self.statistics(stops)
        ]
        tolerances = [RELATIVE_GAP * stop * self.bound for stop in stops]
        return quadratic_comparators(self.set, stops, quadratics, tolerances)
