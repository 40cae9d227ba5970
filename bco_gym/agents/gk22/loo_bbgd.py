"""LOO-BBGD: Algorithm 9 of Garber & Kretzu (COLT 2022), blocked bandit gradient descent
with infeasible projections computed by a linear optimization oracle."""

from __future__ import annotations

import math

import numpy as np

from bco_gym.agents.blocks import BlockBandit
from bco_gym.agents.gk22 import bounds as gk22_bounds
from bco_gym.agents.gk22.oracles import ProjectionBudgetError, close_infeasible_projection_rows
from bco_gym.agents.schedules import block_length, positive
from bco_gym.agents.theory import ProblemConstants, smoothing_radius_for
from bco_gym.problem import Problem


class LOOBlockBanditGD(BlockBandit):
    r"""Blocked Bandit Gradient Descent with a linear optimization oracle (LOO-BBGD).

    Algorithm 9 of Garber & Kretzu (2022), with its subroutines Algorithm 3 (a close
    infeasible projection) and Algorithm 2 (a separating hyperplane by Frank-Wolfe),
    :func:`~bco_gym.agents.gk22.oracles.close_infeasible_projection_rows`.

    Notation: horizon T, centre c (the paper's origin), inner/outer radii r/R,
    d = ``aff_dim`` (the paper's n: exploration lives in V = aff(K) - c), G the Lipschitz
    and M the value bound of the losses, K_{delta/r} = c + (1 - delta/r)(K - c) (the
    library's ``shrink(delta)``; its LMO is K's, rescaled about c: one call of K's LMO).

    Algorithm 9. Blocks of K rounds (the last may be shorter); x_0 = x_1 = c,
    y~_0 = y~_1 = c. In block m, with a fresh u_t uniform on the unit sphere of V:

        play z_t = x_{m-1} + delta u_t,   g_t = (d/delta) f_t(z_t) u_t,
        y_{mK+1} = y~_{m-1} - eta sum_{t in block m} g_t          (the pseudocode's Note),

    and for m >= 2, (x_m, y~_m) = Algorithm 3 on K_{delta/r} from the feasible point
    x_{m-2} and the initial vector y_{(m-1)K+1}, tolerance eps = delta^2/3, step
    gamma = 2 eps/||x_{m-2} - y_{(m-1)K+1}||^2 (Lemma 7), R the radius of its ball R B(c).
    x_m is first played in block m+1. The paper runs Algorithm 3 "in parallel" with block
    m; it only reads blocks 1..m-1, so here it runs when block m ends, before block m+1's
    first play: the same plays (a one-block lag, as the paper's). As in the paper it also
    runs in the last block, whose output is never played (its LOO calls are counted).
    The pseudocode's "z_t = x~_{m-1} + delta u_t" is read as x_{m-1}, the feasible point
    Algorithm 3 returned (the proof plays x_{m(t)-1}); block 1 plays x_0.

    Theorem 11 parameters (d in place of n): for c > 0 with c T^(-1/4) < r,

        eta = R/sqrt(dM) T^(-3/4),   K = 6 dM sqrt(T),   delta = c T^(-1/4),

    and the default c is the theorem's choice c = 20 R sqrt(dM) (for T >=
    (20 R sqrt(dM)/r)^4, where the bound reads R sqrt(dM)(80G + 20GR/r + ...) T^(3/4)).
    Readings: K is rounded to the nearest integer in [1, T]; below that horizon
    c T^(-1/4) exceeds r and delta is capped at r with a ``UserWarning`` (as BBCG's):
    K_{delta/r} is then the centre alone, the agent plays the centre plus exploration and
    its regret is linear. The proof's steps (Lemmas 16-20 at delta = r) still hold there,
    so :meth:`regret_bound` stays a bound; a smaller ``c`` (``SCALE_PARAM``) or a longer
    horizon leaves that regime. With these parameters the expected adaptive regret (every
    interval of rounds) is at most

        (4 + R/r) G c T^(3/4) + sqrt(dM) (4R + 1/sqrt(6) + 3RG^2 + RdM/(2c^2)) T^(3/4)
        + 24 R dM (sqrt(dM)/(c sqrt(6)) + G) T^(1/2).

    :meth:`regret_bound` is the proof's last display at the actual parameters
    (:func:`~bco_gym.agents.gk22.bounds.theorem_11_regret`; the closed form above when K
    divides T exactly); :meth:`lmo_call_bound` the proof's expected LOO count at the
    actual parameters (:func:`~bco_gym.agents.gk22.bounds.theorem_11_loo_calls`). The
    theorem's printed count has 6^6/3 in its G^4 term where its proof gives 6^6/2:
    the proof's is used, with two corrections that make it a proven bound: 20 for the
    proof's 19 (Lemma 7's count lacks a ceiling) and Lemma 20's fourth moment with the
    lower-order terms its proof drops (:func:`~bco_gym.agents.gk22.bounds.block_sum_fourth_moment`).

    Work: a run of Algorithm 3 whose LOO calls Lemmas 6 and 7 bound only by more than
    :data:`~bco_gym.agents.gk22.oracles.LOO_CALL_BUDGET` (a set tiny against the step it
    must absorb: a ball of radius 10^-6 at T = 10 reaches 10^17) is refused before its
    first call with a :class:`~bco_gym.agents.gk22.oracles.ProjectionBudgetError` naming
    the bound; every other run is stopped at twice its bound (an inexact oracle). Neither
    changes a play: the parameters and results are the theorem's.

    Block fast path: as BBCG's (a block's plays do not depend on its losses), with
    ``block_anchor()`` = (x_{m-1}, delta), x_{m-1} in K_{delta/r}.

    Batched (``batch_size`` S): each row runs Algorithm 9 with its own generator; the
    rows' Algorithm 3 runs together, each row's iterations its own, so row i is bit for
    bit the single agent with row i's seed.

    Args:
        problem: the problem (set, horizon, G, M).
        c: Theorem 11's free constant (``SCALE_PARAM``); default 20 R sqrt(dM).
        block_size: K (default round(6 dM sqrt(T)), within [1, T]).
        step_size: eta (default R/sqrt(dM) T^(-3/4)).
        smoothing_radius: delta in (0, r] (default c T^(-1/4), capped at r).
        tolerance: eps of Algorithms 2-3 (default delta^2/3).
        batch_size: None (one run) or S (S runs; see :mod:`~bco_gym.agents.batch`).

    Stats: ``rounds``, ``lmo_calls`` (total), ``lmo_calls_per_block`` (one entry per
    finished block: the calls of the Algorithm 3 run in that block, 0 for block 1),
    ``hyperplane_searches`` (runs of Algorithm 2), ``projections`` (always 0). Batched:
    ``lmo_calls_per_block`` is an int64 array (S, blocks).

    References: D. Garber and B. Kretzu, "New projection-free algorithms for online
    convex optimization with adaptive regret guarantees", COLT 2022 (PMLR 178),
    Algorithms 2, 3 and 9, Lemmas 6, 7 and 20, Theorem 11.
    """

    name = "loo-bbgd"
    REFERENCE = "garber2022new"
    SCALE_PARAM = "c"
    regret_exponent = 0.75

    def __init__(
        self,
        problem: Problem,
        *,
        c: float | None = None,
        block_size: int | None = None,
        step_size: float | None = None,
        smoothing_radius: float | None = None,
        tolerance: float | None = None,
        batch_size: int | None = None,
    ):
        super().__init__(problem, batch_size)
        owner = type(self).__name__
        T, d, _r, R, _G, M = ProblemConstants.of(problem).symbols()
        c = positive(owner, "c", c, 20 * R * math.sqrt(d * M))
        delta = smoothing_radius_for(owner, self.set, smoothing_radius, c, T, exponent=0.25)
        default_block = min(T, max(1, round(6 * d * M * math.sqrt(T))))
        self.params = {
            "c": c,
            "block_size": block_length(owner, block_size, default_block, T),
            "step_size": positive(owner, "step_size", step_size, R / math.sqrt(d * M) * T**-0.75),
            "smoothing_radius": delta,
            "tolerance": positive(owner, "tolerance", tolerance, delta**2 / 3),
        }
        self._use_shrunk_set(delta)

    # -- theory -------------------------------------------------------------------------
    def _gk22_constants(self) -> ProblemConstants:
        return ProblemConstants.of(self.problem)

    def _parameters(self) -> tuple[int, float, float, float]:
        p = self.params
        return p["block_size"], p["step_size"], p["smoothing_radius"], p["tolerance"]

    def regret_bound(self) -> float:
        """Theorem 11's bound on the expected regret of every interval, at the actual
        parameters (:func:`~bco_gym.agents.gk22.bounds.theorem_11_regret`)."""
        return gk22_bounds.theorem_11_regret(self._gk22_constants(), *self._parameters())

    def lmo_call_bound(self) -> float:
        """Theorem 11's bound on the expected total LOO calls at the actual parameters
        (:func:`~bco_gym.agents.gk22.bounds.theorem_11_loo_calls`)."""
        return gk22_bounds.theorem_11_loo_calls(self._gk22_constants(), *self._parameters())

    # -- Algorithm 9 ----------------------------------------------------------------------
    def _reset_rows(self) -> None:
        super()._reset_rows()
        center = self.set.center
        self._previous = self._rows_of(center)  # x_{m-2}
        self._base = self._rows_of(center)  # y~_{m-1}
        self._target: np.ndarray | None = None  # y_{(m-1)K+1}, Algorithm 3's next input
        self._counters["hyperplane_searches"] = 0

    def _finish_block(self) -> None:
        """End block m: y_{mK+1} = y~_{m-1} - eta g_hat_m; for m >= 2, (x_m, y~_m) from
        Algorithm 3 with x_{m-2} and y_{(m-1)K+1}."""
        p = self.params
        estimate = (self._dimension / p["smoothing_radius"]) * self._block_sum  # g_hat_m
        target = self._base - p["step_size"] * estimate
        calls = np.zeros(self.rows, dtype=np.int64)
        if self._block > 1:
            try:
                result = close_infeasible_projection_rows(
                    self._lmo,
                    self._previous,
                    self._target,
                    p["tolerance"],
                    self.set.center,
                    self.set.outer_radius,
                )
            except ProjectionBudgetError as error:
                raise ProjectionBudgetError(f"{self.name}, block {self._block}: {error}") from None
            self._previous, self._points = self._points, result.points
            self._base = result.targets
            calls = result.loo_calls
            counters = self._counters
            counters["lmo_calls"] = counters["lmo_calls"] + calls  # an array now
            counters["hyperplane_searches"] = counters["hyperplane_searches"] + result.iterations
        self._target = target
        self._calls_per_block.append(calls)
