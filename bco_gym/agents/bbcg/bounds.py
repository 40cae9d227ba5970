"""The bounds of BBCG at its actual parameters: expected regret and expected LMO calls.

Notation as in :class:`~bco_gym.agents.bbcg.agent.BlockBanditCG`: horizon T, block size K_b,
d = ``aff_dim``, inner/outer radii r/R, G and M the gradient and value bounds of the
losses, smoothing radius delta, step size eta, tolerance eps; R_delta = (1 - delta/r) R
is the outer radius of the shrunk set K_delta, whose diameter is at most 2 R_delta.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class BBCGConstants:
    """The numbers the bounds depend on (the problem's and the agent's parameters)."""

    horizon: int
    block_size: int
    dimension: int
    inner_radius: float
    outer_radius: float
    lipschitz: float
    bound: float
    smoothing_radius: float
    step_size: float
    tolerance: float
    #: A bound on the norm of one round's estimate g_t (None: the one-point dM/delta).
    estimate_norm: float | None = None

    @property
    def spread(self) -> float:
        """The bound on ||g_t||: ``estimate_norm``, or dM/delta when None."""
        if self.estimate_norm is not None:
            return self.estimate_norm
        return self.dimension * self.bound / self.smoothing_radius


def lemma_3_regret(k: BBCGConstants) -> float:
    """The paper's Lemma 3 at the actual parameters (every routine stops with
    F_m(x_m) - min F_m <= gap <= eps); dM/delta stands for ``k.spread``, the bound on
    one estimate's norm (2dM/delta for the residual estimator, dG for two points):

        (3 delta G + delta R G/r + G sqrt(eps) + eta G sqrt(K_b) dM/delta
         + eta (dM/delta)^2 + 2 eta K_b G^2) T + 4R^2/eta.
    """
    delta, eta, G = k.smoothing_radius, k.step_size, k.lipschitz
    spread = k.spread
    per_round = (
        3 * delta * G
        + delta * k.outer_radius * G / k.inner_radius
        + G * math.sqrt(k.tolerance)
        + eta * G * math.sqrt(k.block_size) * spread
        + eta * spread**2
        + 2 * eta * k.block_size * G**2
    )
    return per_round * k.horizon + 4 * k.outer_radius**2 / eta


def theorem_1_regret(k: BBCGConstants, c: float) -> float:
    """Theorem 1's closed form (3cG + cRG/r + 6GR + 4cG^2R/(dM) + 4RdM/c) T^(3/4)."""
    G, M, R, d = k.lipschitz, k.bound, k.outer_radius, k.dimension
    constant = 3 * c * G + c * R * G / k.inner_radius + 6 * G * R + 4 * c * G**2 * R / (d * M)
    return (constant + 4 * R * d * M / c) * k.horizon**0.75


def routine_calls_per_excess(k: BBCGConstants) -> float:
    """A = max(16 R_delta^2/eps^2, 2/eps): a routine started at excess h makes at most
    1 + A h LMO calls.

    Proof. F(x) = <b, x> + ||x - x_1||^2 is quadratic with Hessian 2I, so along a
    Frank-Wolfe direction v - z, F(z + s(v - z)) = F(z) - s gap + s^2 ||v - z||^2 exactly,
    and the exact line search lowers F by gap^2/(4||v - z||^2) when gap <= 2||v - z||^2,
    else by gap - ||v - z||^2 >= gap/2. With ||v - z|| <= diam K_delta <= 2 R_delta, every
    step taken (those with gap > eps) lowers h = F - min F by at least
    min(eps^2/(16 R_delta^2), eps/2) = 1/A, and h >= 0: at most A h steps, plus the one
    certifying call of the do-while.
    """
    eps = k.tolerance
    shrunk_radius = (1 - k.smoothing_radius / k.inner_radius) * k.outer_radius
    return max(16 * shrunk_radius**2 / eps**2, 2 / eps)


def expected_start_excess(k: BBCGConstants) -> float:
    """H >= E[h_m], h_m = F_m(x_{m-1}) - min F_m, the excess a block's routine starts at.

    Proof. F_m = F_{m-1} + eta<g_hat_{m-1}, .>; x*_m, x*_{m-1} their minimisers over
    K_delta. Then h_m <= (F_{m-1}(x_{m-1}) - min F_{m-1}) + eta<g_hat_{m-1}, x_{m-1} - x*_m>,
    where the first term is at most the last routine's gap <= eps (x_1 = c minimises F_1
    exactly), and ||x_{m-1} - x*_m|| <= min(2 R_delta, sqrt(eps) + eta||g_hat_{m-1}||/2):
    ||x_{m-1} - x*_{m-1}||^2 <= gap <= eps by 2-strong convexity, and the optimality
    conditions of the two minimisers give ||x*_m - x*_{m-1}|| <= eta||g_hat_{m-1}||/2.
    Given the past, a block's u_t are fresh: E||g_hat||^2 <= K_b s^2 + K_b^2 G^2
    (variance of K_b estimates of norm <= s = ``k.spread``, dM/delta for one point,
    plus the squared mean, a sum of K_b gradients of norm <= G of the smoothed losses),
    E||g_hat|| <= sqrt(K_b) s + K_b G.
    So E[h_m] <= eps + eta min(2 R_delta E||g||, sqrt(eps) E||g|| + (eta/2) E||g||^2).
    """
    eps, eta, K = k.tolerance, k.step_size, k.block_size
    spread = k.spread
    shrunk_radius = (1 - k.smoothing_radius / k.inner_radius) * k.outer_radius
    first = math.sqrt(K) * spread + K * k.lipschitz
    second = K * spread**2 + K**2 * k.lipschitz**2
    return eps + eta * min(2 * shrunk_radius * first, math.sqrt(eps) * first + eta / 2 * second)


def expected_lmo_calls(k: BBCGConstants) -> float:
    """(ceil(T/K_b) - 1)(1 + A H): the routine runs at the end of blocks 2..ceil(T/K_b),
    each making at most 1 + A h_m calls (:func:`routine_calls_per_excess`) with
    E[h_m] <= H (:func:`expected_start_excess`)."""
    routines = math.ceil(k.horizon / k.block_size) - 1
    return float(routines * (1 + routine_calls_per_excess(k) * expected_start_excess(k)))
