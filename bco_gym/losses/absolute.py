"""Robust online regression: absolute residuals, f_t(x) = |<a_t, x - c> - b_t|.

Data model: the noisy linear model of :mod:`bco_gym.losses.regression`, here with
outliers by default (``outlier_rate`` 0.1): b_t = <a_t, x_true - c> + e_t.

Constants (true bounds over K): a subgradient is sign(r_t(x)) a_t, so G = F
(``feature_norm``), and |f_t(x)| = |r_t(x)| <= rho = F (R + D) + e_max: M = rho.

Defined on polytopes with a linear description (:mod:`bco_gym.losses.polytopes`: the
simplex, the L1 ball, the box, the flow and Birkhoff polytopes, and user sets with a
``linear_description()``), because the comparator solves linear programs over K.

Comparator. F(x) = sum_{t<T'} |r_t(x)| is piecewise linear and min_K F is an LP with a
term per round; prefixes of at most ``EXACT_ROUNDS`` rounds are solved that way (through
the LP's dual, :func:`bco_gym.losses.polytopes.minimize_absolute_sum`). Longer prefixes
keep memory flat with a trust-region active-set scheme on the residual signs:

1. From a guess x^, stream the rounds once and keep the ``NEAR_ROUNDS`` rounds with the
   smallest q_t = |r_t(x^)| / ||a_t||_1; let Delta be the smallest q_t of the others.
   In the box B = {||x - x^||_inf <= Delta} those others keep their sign s_t, so there
       F(x) = R(x) := <G, x - c> - B_0 + sum_{kept} |r_t(x)|,
   G = sum_{others} s_t a_t, B_0 = sum_{others} s_t b_t (accumulated in the pass).
2. x^ <- argmin of R over K intersected with B: one LP with NEAR_ROUNDS terms. This is a
   descent step on F itself; once the box is not binding it is the exact minimiser.
3. Certified lower bound by weak duality: for any lambda in [-1, 1]^T',
   sum_t lambda_t r_t(x) <= F(x), hence
       min_K F >= min_{x in K} <sum_t lambda_t a_t, x - c> - sum_t lambda_t b_t,
   one LMO call, with lambda_t = s_t off the kept rounds and the LP's multipliers on them.
   This bound does not depend on the LP's tolerances.
4. Stop when R(x^) minus the best lower bound is within the tolerance; the value is
   F(x^) recomputed exactly in a last pass, and the gap F(x^) - lower bound.

Long prefixes are warm-started on a ladder of shorter ones (EXACT_ROUNDS * 8^k) and on
the previous checkpoint, so few steps are needed per prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bco_gym import portable
from bco_gym.losses.base import Comparator, Params, check_checkpoints
from bco_gym.losses.polytopes import LinearDescription, linear_description, minimize_absolute_sum
from bco_gym.losses.regression import RegressionModel
from bco_gym.losses.solvers import try_project
from bco_gym.sets.base import ConvexSet

EXACT_ROUNDS = 8192
NEAR_ROUNDS = 8192
LADDER_RATIO = 8
MAX_STEPS = 50
RELATIVE_GAP = 1e-7
LADDER_GAP = 1e-4


@dataclass
class _Split:
    """The rounds of a prefix split at a guess x^: kept rounds, the others signed."""

    features: np.ndarray  # kept rounds' a_t, (m, dim)
    targets: np.ndarray  # kept rounds' b_t, (m,)
    signed_features: np.ndarray  # G = sum_others s_t a_t
    signed_targets: float  # B_0 = sum_others s_t b_t
    radius: float  # Delta (inf when every round is kept)


class AbsoluteLoss(RegressionModel):
    """f_t(x) = |<a_t, x - c> - b_t| (see the module docstring)."""

    name = "absolute"
    default_outlier_rate = 0.1

    def __init__(
        self,
        convex_set: ConvexSet,
        feature_norm: float = 1.0,
        distance: float = 1.0,
        noise: float = 0.1,
        outlier_rate: float | None = None,
        outlier_scale: float = 1.0,
    ):
        super().__init__(convex_set, feature_norm, distance, noise, outlier_rate, outlier_scale)
        description = linear_description(convex_set)
        assert description is not None  # supports() checked it
        self._description: LinearDescription = description

    @classmethod
    def supports(cls, convex_set: ConvexSet) -> bool:
        return isinstance(convex_set, ConvexSet) and linear_description(convex_set) is not None

    @classmethod
    def support_note(cls) -> str:
        return (
            "it needs a polytope with a linear description (Simplex, L1Ball, Hypercube, "
            "FlowPolytope, BirkhoffPolytope, or a set with linear_description())"
        )

    @property
    def lipschitz(self) -> float:
        return self.feature_norm

    @property
    def bound(self) -> float:
        return self.residual_bound

    def _evaluate(self, params: Params, part: slice, points: np.ndarray) -> np.ndarray:
        return np.abs(self.residuals(params, part, points))

    def _gradient(self, params: Params, offset: int, x: np.ndarray) -> np.ndarray:
        residual = self.residuals(params, slice(offset, offset + 1), x[np.newaxis])[0]
        return (np.sign(residual) * params["features"][offset]).reshape(self.set.shape)

    # -- comparator -------------------------------------------------------------------------
    def comparator(self, checkpoints: Sequence[int]) -> list[Comparator]:
        results: list[Comparator] = []
        guess: np.ndarray | None = None
        solved = 0
        for stop in check_checkpoints(checkpoints):
            for rung in _ladder(solved, stop):
                guess = self._solve(rung, guess, LADDER_GAP * rung * self.bound).point.ravel()
            result = self._solve(stop, guess, RELATIVE_GAP * stop * self.bound)
            results.append(result)
            guess, solved = result.point.ravel(), stop
        return results

    def _solve(self, stop: int, guess: np.ndarray | None, tolerance: float) -> Comparator:
        """min over K of F on rounds [0, stop): exact LP when short, else steps 1-4."""
        if guess is None or stop <= EXACT_ROUNDS:
            guess = self._center_flat
        lower = -np.inf
        for _ in range(MAX_STEPS):
            split = self._split(stop, guess)
            box = split.radius
            guess, multipliers = minimize_absolute_sum(
                self._description,
                split.signed_features,
                split.features,
                split.targets + portable.matvec(split.features, self._center_flat),
                low=None if np.isinf(box) else guess - box,
                high=None if np.isinf(box) else guess + box,
            )
            guess = self._feasible(guess)
            lower = max(lower, self._dual_bound(split, multipliers))
            if self._reduced_value(split, guess) - lower <= tolerance:
                break
        value = float(self.cumulative_loss(guess.reshape(self.set.shape), [stop])[0])
        return Comparator(
            stop, guess.reshape(self.set.shape).copy(), value, max(0.0, value - lower)
        )

    def _split(self, stop: int, guess: np.ndarray) -> _Split:
        """One pass over [0, stop) at ``guess`` (step 1 of the module docstring)."""
        shift = guess - self._center_flat
        kept_features = np.empty((0, self.set.dim))
        kept_targets = np.empty(0)
        kept_reach = np.empty(0)
        signed_features = np.zeros(self.set.dim)
        signed_targets, radius = 0.0, np.inf
        for _, _, params, part in self.chunks(0, stop):
            features = np.concatenate([kept_features, params["features"][part]])
            targets = np.concatenate([kept_targets, params["targets"][part]])
            fresh = params["features"][part]
            reach = np.abs(portable.matvec(fresh, shift) - params["targets"][part]) / np.maximum(
                np.abs(fresh).sum(axis=1), np.finfo(float).tiny
            )
            reach = np.concatenate([kept_reach, reach])
            if len(reach) <= NEAR_ROUNDS:
                kept_features, kept_targets, kept_reach = features, targets, reach
                continue
            order = np.argpartition(reach, NEAR_ROUNDS - 1)
            keep, drop = order[:NEAR_ROUNDS], order[NEAR_ROUNDS:]
            radius = min(radius, float(reach[drop].min()))
            signs = np.sign(portable.matvec(features[drop], shift) - targets[drop])
            signed_features += portable.vecmat(signs, features[drop])
            signed_targets += portable.dot(signs, targets[drop])
            kept_features, kept_targets, kept_reach = features[keep], targets[keep], reach[keep]
        return _Split(kept_features, kept_targets, signed_features, signed_targets, radius)

    def _reduced_value(self, split: _Split, x: np.ndarray) -> float:
        """R(x) = <G, x - c> - B_0 + sum_kept |r_t(x)| (= F(x) inside the box)."""
        shift = x - self._center_flat
        kept = np.abs(portable.matvec(split.features, shift) - split.targets).sum()
        return float(portable.dot(split.signed_features, shift) - split.signed_targets + kept)

    def _dual_bound(self, split: _Split, multipliers: np.ndarray) -> float:
        """min_K sum_t lambda_t r_t(x) <= min_K F, one LMO (step 3)."""
        direction = split.signed_features + portable.vecmat(multipliers, split.features)
        vertex = np.asarray(self.set.lmo(direction.reshape(self.set.shape)), dtype=float).ravel()
        offset = split.signed_targets + portable.dot(multipliers, split.targets)
        return portable.dot(direction, vertex - self._center_flat) - offset

    def _feasible(self, x: np.ndarray) -> np.ndarray:
        """The LP's x, moved into K by projection if HiGHS left it outside by rounding."""
        point = x.reshape(self.set.shape)
        if self.set.contains(point, atol=1e-12):
            return x.copy()
        projected = try_project(self.set, point)
        return x.copy() if projected is None else projected.ravel()


def _ladder(solved: int, stop: int) -> list[int]:
    """Warm-start prefix lengths EXACT_ROUNDS * LADDER_RATIO^k strictly between solved and stop."""
    rungs, rung = [], EXACT_ROUNDS
    while rung < stop:
        if rung > solved:
            rungs.append(rung)
        rung *= LADDER_RATIO
    return rungs
