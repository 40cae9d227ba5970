"""Non-stationary linear adversaries: a drifting mean and a follow-the-leader trap.

Both are linear losses f_t(x) = <theta_t, x - c> (c the set's centre, theta_t in V, the
direction space of aff(K)), oblivious: every theta_t is fixed at reset from the seed and
the round index alone, never from the learner's plays. They need aff_dim >= 2 (two
orthonormal directions of V, drawn uniformly at reset by Gram-Schmidt on two Gaussian
vectors projected onto V).

``linear-drift``: the mean turns at a constant angular speed in a random 2-plane of V,

    theta_t = mean_norm * (cos(rate t) a + sin(rate t) b) + noise * w_t,

a, b orthonormal in V and w_t i.i.d. uniform in the unit ball of V. The best action
of the recent past keeps moving (a full turn takes 2 pi / rate rounds), so a learner
must track it; over many turns the mean averages out and the comparator is weak.

``linear-adversarial``: signs alternating around a small bias (Kalai & Vempala 2005's
example against follow the leader, in blocks),

    theta_t = bias * mu + s_t * swing * v + noise * w_t,
    s_t = 1/2 for t < block, then (-1)^k in the k-th block of ``block`` rounds (k >= 1),

mu, v orthonormal in V. The swings' running sum sum_{u <= t} s_u stays in
[-block/2, block/2] and flips sign at the end of every block. A learner that acts on
the recent past (e.g. updates once per block from the last block's losses, or any
recency scale of about ``block`` rounds) is pushed to the side of v the next block
punishes and pays about swing * (width of K along v) per round: linear regret. Its
loss along the bias is what the best fixed action collects: the comparator minimises
<T bias mu + O(block swing) v, x - c>, the bias direction once T bias >> block swing.
A follower of the whole past (follow the leader) is trapped only while
T bias < block swing / 2; after that the bias dominates its sum (with bias = 0, the
classic trap, it is trapped for ever).

Constants (true bounds over K). ||theta_t|| <= mean_norm + noise (drift) and
sqrt(bias^2 + swing^2) + noise (adversarial: mu and v orthogonal, |s_t| <= 1); the
gradient is theta_t, so G is that norm bound, and |f_t(x)| <= ||theta_t|| ||x - c||
<= G R with R the outer radius: M = G R. With noise = 0 both are attained (G on every
round of the drift and on every full block of the adversary, M where the LMO of
-theta_t lands at distance R from c, e.g. on a ball centred at c).

Comparator: exact (gap 0), one LMO on the summed vectors, as for ``linear``:
x* = lmo(sum_{t<T'} theta_t), value sum_t <theta_t, x* - c>.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from bco_gym import portable
from bco_gym.losses.base import LossSequence, Params, check_number
from bco_gym.losses.linear import LinearLoss, unit_direction_in_tangent
from bco_gym.sets.balls import euclidean_norm
from bco_gym.sets.base import ConvexSet


def orthonormal_pair_in_tangent(
    convex_set: ConvexSet, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Two orthonormal directions of V (flattened), uniform: Gram-Schmidt on Gaussians."""
    first = unit_direction_in_tangent(convex_set, rng)
    second = convex_set.tangent(rng.standard_normal(convex_set.shape)).ravel()
    second = second - portable.dot(second, first) * first
    return first, second / euclidean_norm(second)


class _PlaneLinearLoss(LinearLoss):
    """A linear family whose per-round mean lies in a random 2-plane of V."""

    stationary = False

    @classmethod
    def supports(cls, convex_set: ConvexSet) -> bool:
        return isinstance(convex_set, ConvexSet) and convex_set.aff_dim >= 2

    @classmethod
    def support_note(cls) -> str:
        return "it needs a set whose affine hull has dimension >= 2"

    def _draw_globals(self, rng: np.random.Generator) -> Params:
        first, second = orthonormal_pair_in_tangent(self.set, rng)
        return {"first": first, "second": second}


class LinearDriftLoss(_PlaneLinearLoss):
    """``linear`` whose mean rotates at ``rate`` radians per round (see the module docstring).

    Args:
        convex_set: the feasible set K (aff_dim >= 2).
        mean_norm: ||mean_t|| (default 0.5).
        noise: radius of the per-round noise (default 0.5); ||theta_t|| <= mean_norm + noise.
        rate: angular speed of the mean, radians per round, >= 0 (default 1e-3: a full
            turn every 6283 rounds; 0 gives the stationary ``linear`` model).
    """

    name = "linear-drift"

    def __init__(
        self,
        convex_set: ConvexSet,
        mean_norm: float = 0.5,
        noise: float = 0.5,
        rate: float = 1e-3,
    ):
        super().__init__(convex_set, mean_norm=mean_norm, noise=noise)
        self.rate = check_number(self.name, "rate", rate)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "rate": self.rate}

    def _means(self, first: int, size: int) -> np.ndarray:
        angles = self.rate * np.arange(first, first + size, dtype=float)[:, np.newaxis]
        plane = self._globals
        return self.mean_norm * (
            portable.cos(angles) * plane["first"] + portable.sin(angles) * plane["second"]
        )


class LinearAdversarialLoss(_PlaneLinearLoss):
    """Alternating swings around a small bias: the follow-the-leader trap (module docstring).

    Args:
        convex_set: the feasible set K (aff_dim >= 2).
        bias: ||bias * mu||, the persistent signal the comparator exploits (default 0.1).
        swing: amplitude of the alternating part along v (default 0.9).
        block: rounds per sign (an integer >= 1; the first block has half amplitude):
            the recency scale of the learners it traps. Default 1, the classic sequence
            1/2, -1, 1, -1, ...; a learner that reacts within a block follows each
            block's sign instead and is not trapped, so set it to the reaction time of
            the learner to trap.
        noise: radius of i.i.d. per-round noise in V (default 0.0).
    """

    name = "linear-adversarial"

    def __init__(
        self,
        convex_set: ConvexSet,
        bias: float = 0.1,
        swing: float = 0.9,
        block: int = 1,
        noise: float = 0.0,
    ):
        LossSequence.__init__(self, convex_set)
        self.bias = check_number(self.name, "bias", bias)
        self.swing = check_number(self.name, "swing", swing)
        self.noise = check_number(self.name, "noise", noise)
        if isinstance(block, bool) or not isinstance(block, numbers.Integral) or block < 1:
            raise ValueError(f"{self.name} loss: block={block!r} must be an integer >= 1")
        self.block = int(block)
        if self.bias + self.swing + self.noise <= 0:
            raise ValueError(f"{self.name} loss: bias + swing + noise must be > 0 (all are 0)")
        self._center_flat = np.asarray(convex_set.center, dtype=float).ravel()

    @property
    def lipschitz(self) -> float:
        return float(np.hypot(self.bias, self.swing)) + self.noise

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "bias": self.bias,
            "swing": self.swing,
            "block": self.block,
            "noise": self.noise,
        }

    def signs(self, first: int, size: int) -> np.ndarray:
        """s_t for rounds first..first+size-1: 1/2 in block 0, then (-1)^k in block k."""
        blocks = np.arange(first, first + size) // self.block
        return np.where(blocks == 0, 0.5, np.where(blocks % 2 == 1, -1.0, 1.0))

    def _means(self, first: int, size: int) -> np.ndarray:
        swings = self.swing * self.signs(first, size)[:, np.newaxis]
        return self.bias * self._globals["first"] + swings * self._globals["second"]


__all__ = ["LinearAdversarialLoss", "LinearDriftLoss", "orthonormal_pair_in_tangent"]
