"""Online portfolio selection: f_t(x) = -log <r_t, x> on the simplex (Cover 1991).

x is a constantly rebalanced portfolio over n assets and r_t the vector of price
relatives (close/open prices) of round t; sum_t f_t(x) is minus the log-wealth.

Synthetic market (drawn at reset, then i.i.d. rounds given it): each asset i has a
drift mu_i uniform in [-``drift``, ``drift``]; log-returns are a market factor plus an
idiosyncratic part,

    log r_{t,i} = mu_i + ``volatility`` * (sqrt(rho) m_t + sqrt(1 - rho) e_{t,i}),

m_t, e_{t,i} standard normal, rho = ``correlation``; then r_t is clipped to
[``r_min``, ``r_max``] (0 < r_min < 1 < r_max), so losses and gradients stay bounded.

Constants (true bounds over the simplex): <r_t, x> lies in [r_min, r_max], so
|f_t(x)| <= M = max(|log r_min|, |log r_max|); grad f_t(x) = -r_t / <r_t, x> has norm at
most ||r_t|| / r_min <= G = sqrt(n) r_max / r_min.

Comparator: F(x) = -sum_t log <r_t, x> has no finite sufficient statistics, so it is
minimised by a projected Newton method, streaming the rounds once per iteration:
with g, H the gradient and Hessian of F at x (one pass),

    y = argmin_{y in simplex} <g, y - x> + (1/2)(y - x)^T H (y - x),   d = y - x,

then x <- x + d if that decreases F (checked by the next pass, which computes F, g, H
there anyway), else x <- x + d / (1 + lambda) with lambda = sqrt(d^T H d), the damped
step of Tran-Dinh, Kyrillidis & Cevher (JMLR 2015) for self-concordant F (a sum of
-log of linear functions is), which always decreases F. The subproblem is a quadratic
over the simplex (:func:`bco_gym.losses.solvers.minimize_quadratic`). Long prefixes are
warm-started on a geometric ladder of shorter ones. Every iterate is renormalised onto
the simplex (negative rounding residues set to 0, then divided by the sum), so F, its
gradient and the certificate are computed at a point of K: off the affine hull by even
5e-13, F would move by about T * 5e-13 along the gradient's large normal part and fall
below the true minimum. Certified by the Frank-Wolfe gap at the returned point,
computed from the exact gradient of the last pass (never clipped: see
:func:`bco_gym.losses.solvers.certified_gap`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

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
from bco_gym.losses.solvers import (
    Quadratic,
    certified_gap,
    frank_wolfe_gap,
    minimize_quadratic,
)
from bco_gym.sets import Simplex
from bco_gym.sets.base import ConvexSet

RELATIVE_GAP = 1e-9
LADDER_BASE = 1 << 14
LADDER_RATIO = 8
MAX_NEWTON_STEPS = 50


class PortfolioLoss(LossSequence):
    """f_t(x) = -log <r_t, x> with bounded price relatives (see the module docstring).

    Args:
        convex_set: a Simplex (the portfolios).
        drift: half-width of the assets' mean log-returns (default 0.002).
        volatility: scale of the per-round log-returns (default 0.05).
        correlation: share of the market factor, in [0, 1] (default 0.3).
        r_min, r_max: clipping range of the price relatives (default 0.5 and 2.0).
    """

    stationary = True

    name = "portfolio"

    def __init__(
        self,
        convex_set: ConvexSet,
        drift: float = 0.002,
        volatility: float = 0.05,
        correlation: float = 0.3,
        r_min: float = 0.5,
        r_max: float = 2.0,
    ):
        super().__init__(convex_set)
        self.drift = check_number(self.name, "drift", drift)
        self.volatility = check_number(self.name, "volatility", volatility)
        self.correlation = check_number(self.name, "correlation", correlation, high=1.0)
        self.r_min = check_number(self.name, "r_min", r_min, strict=True, high=1.0)
        self.r_max = check_number(self.name, "r_max", r_max, low=1.0)
        self.n = convex_set.dim

    @classmethod
    def supports(cls, convex_set: ConvexSet) -> bool:
        return isinstance(convex_set, Simplex)

    @classmethod
    def support_note(cls) -> str:
        return "it is defined on the simplex (Simplex) only"

    @property
    def lipschitz(self) -> float:
        return float(np.sqrt(self.n) * self.r_max / self.r_min)

    @property
    def bound(self) -> float:
        return max(abs(math.log(self.r_min)), abs(math.log(self.r_max)))

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "drift": self.drift,
            "volatility": self.volatility,
            "correlation": self.correlation,
            "r_min": self.r_min,
            "r_max": self.r_max,
        }

    def _draw_globals(self, rng: np.random.Generator) -> Params:
        return {"drifts": rng.uniform(-self.drift, self.drift, self.n)}

    def _draw_chunk(self, rng: np.random.Generator, first: int, size: int) -> Params:
        market = rng.standard_normal((size, 1))
        own = rng.standard_normal((size, self.n))
        shocks = np.sqrt(self.correlation) * market + np.sqrt(1.0 - self.correlation) * own
        relatives = portable.exp(self._globals["drifts"] + self.volatility * shocks)
        return {"relatives": np.clip(relatives, self.r_min, self.r_max)}

    def _evaluate(self, params: Params, part: slice, points: np.ndarray) -> np.ndarray:
        return -portable.log(row_dot(params["relatives"][part], points))

    def _gradient(self, params: Params, offset: int, x: np.ndarray) -> np.ndarray:
        relatives = params["relatives"][offset]
        return -relatives / portable.dot(relatives, x)

    # -- comparator ---------------------------------------------------------------------
    def newton_statistics(self, stop: int, x: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """(F(x), grad F(x), Hessian F(x)) over rounds [0, stop), one streamed pass."""
        value, gradient, hessian = 0.0, np.zeros(self.n), np.zeros((self.n, self.n))
        for _, _, params, part in self.chunks(0, stop):
            relatives = params["relatives"][part]
            wealth = portable.matvec(relatives, x)
            value -= float(portable.log(wealth).sum())
            scaled = relatives / wealth[:, np.newaxis]
            gradient -= scaled.sum(axis=0)
            hessian += portable.gram(scaled)
        return value, gradient, hessian

    def comparator(self, checkpoints: Sequence[int]) -> list[Comparator]:
        results = []
        x = on_simplex(np.full(self.n, 1.0 / self.n))
        for stop in check_checkpoints(checkpoints):
            ladder = [s for s in _ladder(stop) if s > (results[-1].horizon if results else 0)]
            for rung in ladder[:-1]:
                x = self._newton(rung, x, tolerance=1e-6 * rung * self.bound).point
            results.append(self._newton(stop, x, tolerance=RELATIVE_GAP * stop * self.bound))
            x = results[-1].point
        return results

    def _newton(self, stop: int, x: np.ndarray, tolerance: float) -> Comparator:
        """Projected Newton from x on rounds [0, stop) until the gap <= tolerance.

        Tries the full step x + d first; the next pass (which computes F there anyway)
        accepts it if F decreased, otherwise the damped step x + d/(1 + lambda) is
        taken, which decreases F by self-concordance.
        """
        value, gradient, hessian = self.newton_statistics(stop, x)
        for _ in range(MAX_NEWTON_STEPS):
            gap, _ = frank_wolfe_gap(self.set, gradient, x)
            if gap <= tolerance:
                break
            model = Quadratic(hessian, gradient, value, origin=x)
            step = minimize_quadratic(self.set, model, tolerance=0.1 * tolerance, start=x).point - x
            decrement = math.sqrt(max(0.0, portable.dot(step, portable.matvec(hessian, step))))
            if decrement == 0.0:
                break
            candidate = on_simplex(x + step)
            trial = self.newton_statistics(stop, candidate)
            if not trial[0] < value:
                candidate = on_simplex(x + step / (1.0 + decrement))
                trial = self.newton_statistics(stop, candidate)
            if not trial[0] < value:
                break
            x = candidate
            value, gradient, hessian = trial
        gap, _ = certified_gap(self.set, gradient, x)
        return Comparator(stop, x.copy(), value, gap)


def on_simplex(x: np.ndarray) -> np.ndarray:
    """x with rounding residues removed: negative entries set to 0, then divided by the sum."""
    clipped = np.maximum(x, 0.0)
    return clipped / clipped.sum()


def _ladder(stop: int) -> list[int]:
    """Prefix lengths LADDER_BASE * LADDER_RATIO^k below ``stop``, then ``stop``."""
    rungs, rung = [], LADDER_BASE
    while rung < stop:
        rungs.append(rung)
        rung *= LADDER_RATIO
    return [*rungs, stop]
