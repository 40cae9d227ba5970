"""PBGD's dynamic-regret bound at the actual parameters (this library's derivation).

Notation as in :class:`~bco_gym.agents.pbgd.PBGD`: horizon T, d = ``aff_dim``, inner and
outer radii r and R (so diam K <= D = 2R), G and C the gradient and value bounds of the
losses, smoothing radius delta, K_delta = c + (1 - delta/r)(K - c), experts i = 1..N with
step sizes eta_i and prior weights w_i, meta rate epsilon, and L a bound on one
estimate's norm (dC/delta from one point, dG from two). For a comparator path u_1..u_T in
K of length P = sum_{t >= 2} ||u_t - u_(t-1)||, :func:`dynamic_regret` is

    E[sum_t f_t(y_t)] - sum_t f_t(u_t)
        <= min_i [ ln(1/w_i)/epsilon + epsilon T (L D)^2 / 8              (Hedge, meta)
                   + (R^2 + 2 D P)/(2 eta_i) + eta_i T L^2 / 2 ]          (OGD, expert i)
           + (2 + R/r) G delta T                                          (smoothing)

Derivation (every step standard; the constants are this library's, see the agent's
docstring for what could not be checked against the paper):

* Smoothing. f^_t(x) = E_{v in B(V)} f_t(x + delta v) is convex, f_t <= f^_t <= f_t +
  G delta on K_delta (Jensen; Lipschitz), and E[g_t | past] = grad f^_t(x_t) for both
  estimators. The played point is within delta of x_t (one point; the mean of the two
  points for two), costing G delta; the comparator moves to v_t = c + (1 - delta/r)(u_t
  - c) in K_delta, ||v_t - u_t|| <= delta R/r, costing G delta R/r, and f^_t(v_t) <=
  f_t(v_t) + G delta: (2 + R/r) G delta per round.
* Linearisation. f^_t(x_t) - f^_t(v_t) <= <grad f^_t(x_t), x_t - v_t>, whose expectation
  is that of <g_t, x_t - v_t> (the path is fixed in advance: the losses are oblivious),
  and <g_t, x_t - v_t> = <g_t, x_t - x_(t,i)> + <g_t, x_(t,i) - v_t> for every expert i.
* Meta. sum_t <p_t, l_t> - l_(t,i) <= ln(1/w_i)/epsilon + (epsilon/8) sum_t (range of
  l_t)^2 for exponential weights with a fixed rate (Cesa-Bianchi & Lugosi 2006,
  Theorem 2.2's proof with Hoeffding's lemma), with l_(t,j) = <g_t, x_(t,j)> whose range
  is at most ||g_t|| diam K_delta <= L D.
* Expert. Projected gradient descent from x_(1,i) = c: <g_t, x_t - v_t> <=
  (||x_t - v_t||^2 - ||x_(t+1) - v_t||^2)/(2 eta) + eta ||g_t||^2/2, and the sum of the
  first terms telescopes to at most ||x_1 - v_1||^2 + sum_t (||x_t - v_t||^2 -
  ||x_t - v_(t-1)||^2) <= R^2 + 2 D P (Zinkevich 2003, Theorem 2's argument; the path of
  v has length (1 - delta/r) P <= P).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class PBGDConstants:
    """The numbers the bound depends on (the problem's and the agent's parameters)."""

    horizon: int
    inner_radius: float
    outer_radius: float
    lipschitz: float
    smoothing_radius: float
    estimate_norm: float
    meta_rate: float
    step_sizes: tuple[float, ...]
    prior: tuple[float, ...]


def step_size_grid(smallest: float, largest: float) -> tuple[float, ...]:
    """eta_min 2^k for k = 0, 1, ..., up to the first value above ``largest``: a
    geometric grid whose step sizes bracket every eta in [smallest, largest] within a
    factor 2 (each doubling is exact in floating point)."""
    grid = [smallest]
    while grid[-1] <= largest:
        grid.append(grid[-1] * 2.0)
    return tuple(grid)


def prior_weights(count: int) -> tuple[float, ...]:
    """w_i = (N + 1) / (N i (i + 1)), i = 1..N: they sum to 1 and favour small step
    sizes, ln(1/w_i) <= 2 ln(i + 1) (Zhang, Lu & Zhou 2018's prior)."""
    return tuple((count + 1) / (count * i * (i + 1)) for i in range(1, count + 1))


def expert_bound(k: PBGDConstants, index: int, path_length: float) -> float:
    """Expert ``index``'s part: meta regret against it plus its own dynamic regret."""
    D, R, T = 2.0 * k.outer_radius, k.outer_radius, k.horizon
    eta, L, eps = k.step_sizes[index], k.estimate_norm, k.meta_rate
    meta = math.log(1.0 / k.prior[index]) / eps + eps * T * (L * D) ** 2 / 8
    expert = (R**2 + 2 * D * path_length) / (2 * eta) + eta * T * L**2 / 2
    return meta + expert


def dynamic_regret(k: PBGDConstants, path_length: float) -> float:
    """The module docstring's bound for comparator paths of length at most ``path_length``."""
    best = min(expert_bound(k, i, path_length) for i in range(len(k.step_sizes)))
    smoothing = (2 + k.outer_radius / k.inner_radius) * k.lipschitz * k.smoothing_radius
    return best + smoothing * k.horizon


def best_expert(k: PBGDConstants, path_length: float) -> int:
    """The index i at which :func:`dynamic_regret`'s minimum is attained."""
    scores: Sequence[float] = [expert_bound(k, i, path_length) for i in range(len(k.step_sizes))]
    return min(range(len(scores)), key=scores.__getitem__)
