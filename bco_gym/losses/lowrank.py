"""Linear losses with a low-rank mean on the nuclear-norm ball.

``linear-low-rank`` (NuclearNormBall):

    f_t(X) = <Theta_t, X - C>,   Theta_t = M + s * W_t,

C the ball's centre (0), M = (``mean_norm`` / sqrt(k)) U V^T a rank-k matrix drawn at
reset (U, V with k orthonormal columns, from the QR factorisations of Gaussian
matrices), so ||M||_F = mean_norm and its k singular values are mean_norm / sqrt(k);
W_t = a_t b_t^T with a_t, b_t i.i.d. uniform on the unit spheres of R^rows and R^cols
(a random rank-one matrix of unit Frobenius and nuclear norm: rows + cols draws a round,
not rows * cols), scaled by s = ``noise``. This is
``linear`` (:class:`~bco_gym.losses.linear.LinearLoss`) with a structured mean: the
ball's LMO answers -rho u_1 v_1^T, so a mean of low rank makes the best point a
rank-one matrix aligned with M, worth -rho ||M||_op = -rho mean_norm / sqrt(k) a round
against 0 at the centre (a Gaussian mean of the same Frobenius norm on 64x64 matrices
has ||M||_op about a quarter of it).

Why it is learnable from bandit feedback. f_t(C) = 0 every round, so the one-point
residual (f_t(y_t) - f_{t-1}(y_{t-1})) carries no noise independent of the direction
played: with y_t = C + delta u_t, the estimate (d/delta)(...) u_t has E||g_t||^2 =
2 d E||Theta_t||^2 up to the rounds' correlation, and the summed estimates point down
the mean gradient M after about T_dir = E||g_t||^2 / (d ||M||_F^2) = 2 (mean_norm^2 +
s^2) / mean_norm^2 rounds (E||Theta_t||_F^2 = mean_norm^2 + s^2), whatever the dimension
d (``bench_scale.py signal`` measures it).
Compare ``completion``, whose one observed entry of rows*cols leaves the mean gradient
at 1/(rows*cols) of a round's.

Constants and comparator as ``linear``: G = mean_norm + noise >= ||Theta_t||_F,
M = G R with R = rho; exact comparator, one LMO (one SVD) on the summed Theta_t.
Adaptive and dynamic regret are not computed (``LowRankLinearLoss.changing_reason``):
their exact comparators take the top singular value of every interval of the dyadic
cover, about 2T SVDs a run (0.15-0.5 ms each at 64x64, several times a round of play).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from bco_gym.losses.base import Params
from bco_gym.losses.linear import LinearLoss
from bco_gym.sets import NuclearNormBall
from bco_gym.sets.base import ConvexSet


class LowRankLinearLoss(LinearLoss):
    """f_t(X) = <Theta_t, X - C> with Theta_t = M + noise * a_t b_t^T, M of rank ``rank``.

    Args:
        convex_set: a NuclearNormBall.
        mean_norm: ||M||_F (default 0.5).
        noise: s, the Frobenius norm of the per-round noise s a_t b_t^T (default 0.5).
        rank: k, the rank of M, 1 <= k <= min(rows, cols) (default 1).
    """

    name = "linear-low-rank"

    def __init__(
        self, convex_set: ConvexSet, mean_norm: float = 0.5, noise: float = 0.5, rank: int = 1
    ):
        super().__init__(convex_set, mean_norm=mean_norm, noise=noise)
        smaller = min(convex_set.shape)
        if (
            isinstance(rank, bool)
            or not isinstance(rank, numbers.Integral)
            or not 1 <= rank <= smaller
        ):
            raise ValueError(
                f"{self.name} loss: rank={rank!r} must be an integer in [1, {smaller}]"
            )
        self.rank = int(rank)

    @classmethod
    def supports(cls, convex_set: ConvexSet) -> bool:
        return isinstance(convex_set, NuclearNormBall)

    @classmethod
    def support_note(cls) -> str:
        return "it is defined on the nuclear-norm ball (NuclearNormBall) only"

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "rank": self.rank}

    def _draw_globals(self, rng: np.random.Generator) -> Params:
        rows, cols = self.set.shape
        left, _ = np.linalg.qr(rng.standard_normal((rows, self.rank)))
        right, _ = np.linalg.qr(rng.standard_normal((cols, self.rank)))
        mean = (self.mean_norm / np.sqrt(self.rank)) * (left @ right.T)
        return {"mean": mean.ravel()}

    def _draw_chunk(self, rng: np.random.Generator, first: int, size: int) -> Params:
        rows, cols = self.set.shape
        left = rng.standard_normal((size, rows))
        right = rng.standard_normal((size, cols))
        left *= (self.noise / np.linalg.norm(left, axis=1))[:, np.newaxis]
        right /= np.linalg.norm(right, axis=1)[:, np.newaxis]
        theta = left[:, :, np.newaxis] * right[:, np.newaxis, :]
        theta = theta.reshape(size, rows * cols) + self._globals["mean"]
        return {"theta": theta, "offset": theta @ self._center_flat}

    def changing_reason(self) -> str | None:
        return (
            f"the {self.name!r} family's interval comparators need the top singular value "
            "of every interval of the dyadic cover (about 2T SVDs a run, several times the "
            "cost of playing a round at 64x64); adaptive and dynamic regret are not computed"
        )

    def mean_matrix(self) -> np.ndarray:
        """M, the mean of Theta_t (after :meth:`reset`)."""
        if "mean" not in self._globals:
            raise RuntimeError(f"{type(self).__name__}: call reset(rng) before reading the mean")
        return self._globals["mean"].reshape(self.set.shape).copy()
