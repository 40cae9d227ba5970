"""Theorem 7's parameters for the Regularized Bandit Newton method, and why it has no
bound to evaluate.

Suggala, Ravikumar & Netrapalli (COLT 2021), Theorem 7: for some universal constants
c_1, c_2, c_3 > 0, with L = log T and L_d = log(dT),

    lambda = 1/4,  alpha = c_1 (nu + d) d L_d^2,  beta = d L_d,  gamma = c_2 / (d L),
    eta_1 = c_3 / (d^7 (B + eps) alpha^4 sqrt(T) L),

and then with probability at least 1 - delta the regret up to the first restart is
O~(d^11 (d + nu)^5 sqrt(T)) if there is none, and at most 0 otherwise. The O~ hides the
universal constant of a sub-Gaussian martingale bound (Lemma 15, "c > 0"), the sizes of
epsilon-nets (Lemmas 20, 23, 25: "O~((Td)^(c d^2))") and logarithmic factors, so the
theorem has no bound with explicit constants: :meth:`BanditNewton.regret_bound` returns
None rather than a number the paper does not prove.

The constants. The theorem leaves them unstated; the proofs pin two of them:

* c_2 = ln(10)/12: Lemmas 18 and 22 need (1 + gamma)^(12 d log T) <= 10 (so that
  eta_t <= 10 eta_1 after at most 12 d log T focus-region updates); with gamma =
  c_2/(d L), (1 + gamma)^(12 d L) <= exp(12 c_2) = 10.
* c_1 = 1600: Lemma 22's last display must reach -beta/eta_1, i.e.
  alpha gamma/40 >= 4 + beta + 4 nu L + 100 lambda^(-3) alpha d^4 (B + eps)^2 eta_1^2 T
  (the Bregman term Phi >= alpha/4 of that proof over eta_tau' <= 10 eta_1; the printed
  alpha gamma/20 uses the alpha/2 of Lemma 18). With L <= L_d, nu, d >= 1 and dT >= 2
  this holds once c_1 c_2 >= 40 (4 + 5/(2 log 2)) = 304.3, and c_1 = 1600 gives
  c_1 c_2 = 307.0 (:func:`lemma_22_margin` checks it).
* c_3 = 1 (``SCALE_PARAM``): eta_1 must make the concentration bounds of Lemmas 23 and
  25 small, whose constants are not explicit; the theorem's own choice is unknown.

At these constants eta_1 is tiny at every practical T (about 1e-40 at d = 10, T =
20,000), so x_t stays at x_1 to double precision and the method explores the Dikin
ellipsoid of x_1: the sqrt(T) rate is asymptotic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Theorem 7's lambda.
EXPLORATION = 0.25
#: c_2 = ln(10)/12: (1 + c_2/(d log T))^(12 d log T) <= 10 (Lemmas 18, 22).
C2 = math.log(10.0) / 12.0
#: c_1: the smallest round value with c_1 c_2 >= 40 (4 + 5/(2 log 2)) (Lemma 22).
C1 = 1600.0
#: c_3: the concentration constants of Lemmas 23 and 25 are not explicit.
C3 = 1.0


def log_horizon(horizon: int) -> float:
    """L = log T, read as log max(T, 2) (positive for every T >= 1)."""
    return math.log(max(horizon, 2))


@dataclass(frozen=True)
class Parameters:
    """Algorithm 1's inputs for one run of T rounds (an epoch: a restart starts another)."""

    horizon: int
    exploration: float  # lambda
    focus_radius: float  # alpha
    restart_threshold: float  # beta
    rate_increment: float  # gamma
    step_size: float  # eta_1
    shrink: float  # xi = T^(-4)
    samples: int  # N, the volume test's uniform samples

    @property
    def convexifier(self) -> float:
        """kappa = 1/(d^2 alpha^2 eta_1) of Remark 24 (times d^2 by the caller)."""
        return 1.0 / (self.focus_radius**2 * self.step_size)


def theorem_7(
    horizon: int,
    dimension: int,
    nu: float,
    bound: float,
    misspecification: float = 0.0,
    c1: float = C1,
    c2: float = C2,
    c3: float = C3,
    focus_radius: float | None = None,
) -> dict[str, float]:
    """(alpha, beta, gamma, eta_1) of Theorem 7 for T = ``horizon`` (module docstring);
    eta_1 at ``focus_radius`` when one is given instead of Theorem 7's alpha."""
    d, T = dimension, horizon
    L, Ld = log_horizon(T), log_horizon(d * T)
    alpha = c1 * (nu + d) * d * Ld**2 if focus_radius is None else focus_radius
    return {
        "focus_radius": alpha,
        "restart_threshold": d * Ld,
        "rate_increment": c2 / (d * L),
        "step_size": c3 / (d**7 * (bound + misspecification) * alpha**4 * math.sqrt(T) * L),
    }


def volume_samples(horizon: int) -> int:
    """N = ceil(32 log T): by Hoeffding's inequality the fraction of N uniform samples of
    F_t inside the ellipsoid is <= 1/2 with probability <= exp(-N/8) <= T^(-4) when the
    true ratio is >= 3/4, and > 1/2 likewise when it is <= 1/4 (Section 7)."""
    return math.ceil(32 * log_horizon(horizon))


def lemma_22_margin(
    horizon: int,
    dimension: int,
    nu: float,
    bound: float,
    c1: float = C1,
    c2: float = C2,
    c3: float = C3,
) -> float:
    """alpha gamma/40 - (4 + beta + 4 nu L + 100 lambda^(-3) alpha d^4 B^2 eta_1^2 T), the
    inequality of Lemma 22's last display that forces a restart (>= 0 needed)."""
    p = theorem_7(horizon, dimension, nu, bound, 0.0, c1, c2, c3)
    alpha, eta, d, T = p["focus_radius"], p["step_size"], dimension, horizon
    drift = 100 * EXPLORATION**-3 * alpha * d**4 * bound**2 * eta**2 * T
    need = 4 + p["restart_threshold"] + 4 * nu * log_horizon(T) + drift
    return alpha * p["rate_increment"] / 40 - need
