"""SO-BGD: Algorithm 10 of Garber & Kretzu (COLT 2022), bandit online gradient descent
with infeasible projections computed by a separation oracle."""

from __future__ import annotations

import math

import numpy as np

from bco_gym.agents.batch import BatchAgent
from bco_gym.agents.estimators import DirectionStream
from bco_gym.agents.gk22 import bounds as gk22_bounds
from bco_gym.agents.gk22.oracles import (
    SeparationSteps,
    require_separation,
    separation_projection,
)
from bco_gym.agents.schedules import positive
from bco_gym.agents.theory import ProblemConstants, capped_power
from bco_gym.problem import Problem


class SeparationOracleBanditGD(BatchAgent):
    r"""Bandit online gradient descent via a separation oracle (SO-BGD).

    Algorithm 10 of Garber & Kretzu (2022) with its subroutine Algorithm 6 (an
    infeasible projection through the separation oracle of K,
    :func:`~bco_gym.agents.gk22.oracles.separation_projection`). No projection, no LMO.

    Notation: horizon T, centre c (the paper's origin), inner/outer radii r/R,
    d = ``aff_dim`` (the paper's n; V = aff(K) - c), G and M the gradient and value
    bounds, and for squeezes a in [0, 1] and b in [0, r),
    K_{a, b/r} = c + (1 - a)(1 - b/r)(K - c). The squeeze delta is a fraction, the
    smoothing radius delta' a length.

    Algorithm 10. y~_1 = c (in K_{delta,delta'}); in round t, with u_t uniform on the
    unit sphere of V:

        play z_t = y~_t + delta' u_t,   g_t = (d/delta') f_t(z_t) u_t,
        y_{t+1} = y~_t - eta g_t,
        y~_{t+1} = Algorithm 6 (K, r, y_{t+1}, (delta, delta')),

    where Algorithm 6 projects y_{t+1} onto R B(c), then while the oracle of K separates
    p = c + (y - c)/(1 - delta'/r) with a normal g, steps y <- y - delta (r - delta')
    g/||g|| (Lemma 13's gamma_i); it returns y~ with p in K, so y~ is in K_{delta'/r} and
    z_t in K (Assumption 1 within aff(K)). y~_{t+1} is an infeasible projection of
    y_{t+1} onto K_{delta,delta'/r} (Lemmas 12-13). For a set that is not
    full-dimensional, Algorithm 6 steps along the normal's part in V and keeps its
    iterates on aff(K) (see there: the same points in exact arithmetic).

    Theorem 15 parameters (d in place of n): for c, c' > 0 with 2c'T^(-1/4) < r and
    c T^(-1/4) < 1,

        eta = r/(4 sqrt(dM)) T^(-3/4),   delta = c T^(-1/4),   delta' = c' T^(-1/4),

    and the defaults are the theorem's choice c = 8/r, c' = sqrt(dM) (for
    T^(1/4) > max{2 sqrt(dM)/r, 8/r}). Below that horizon the formulas break the
    theorem's conditions: delta is capped at 1 and delta' at r/2, with a
    ``UserWarning``. Both proofs still hold at the caps (delta = 1 makes
    K_{delta,delta'/r} the centre alone: the comparator is moved to c, the regret is
    linear; delta' = r/2 is what the call count assumes anyway); a longer horizon, or
    smaller c and c', leave that regime. Then for every interval of rounds

        E[regret] <= G (3 delta' + R (delta'/r + delta + delta delta'/r)) T + 2R^2/eta
                     + (dM)^2 eta T / (2 delta'^2)

    (the proof's last display; :func:`~bco_gym.agents.gk22.bounds.theorem_15_regret`),
    and the separation-oracle calls are at most
    T (1 + 8 R dM eta/(r^2 delta delta') + 4 (dM)^2 eta^2/(r^2 delta^2 delta'^2))
    (:func:`~bco_gym.agents.gk22.bounds.theorem_15_separation_calls`; deterministic).

    Reading taken: the proof writes R/eta for the telescoped ||y~_s - x||^2/(2 eta) with
    ||y~_s - x|| <= 2R, which is 2R^2/eta; the printed theorem carries R/eta into
    4 sqrt(nM)/(r G_f) inside G_f R(...). :meth:`regret_bound` uses 2R^2/eta, a valid bound
    (the printed one is not, when R > 1/2); the closed form is then
    G R (3c'/R + c'/r + c + 8 R sqrt(dM)/(rG) + (dM)^(3/2) r/(8 G R c'^2)) T^(3/4)
    + G R c c'/r T^(1/2).

    Args:
        problem: the problem; its set must have a separation oracle (``has_separation``:
            the balls, the box and the simplex).
        c: Theorem 15's c (default 8/r); sets delta = c T^(-1/4).
        c_prime: Theorem 15's c' (default sqrt(dM); ``SCALE_PARAM``, as it sets the
            exploration radius whose bias and variance the bound trades).
        step_size: eta (default r/(4 sqrt(dM)) T^(-3/4)).
        squeeze: delta in (0, 1] (default c T^(-1/4), capped at 1).
        smoothing_radius: delta' in (0, r/2] (default c' T^(-1/4), capped at r/2).
        batch_size: None (one run) or S (S runs; each row steps on its own, so row i is
            the single agent with row i's seed bit for bit).

    Stats: ``separation_calls`` (every oracle call, the final "inside" answers
    included), ``separation_steps`` (the calls that returned a normal);
    ``projections`` and ``lmo_calls`` stay 0.

    Speed: on the ball, l1 ball, box and simplex, Algorithm 6 runs for all rows in one
    compiled call (:class:`~bco_gym.agents.gk22.oracles.SeparationSteps`, numba, the
    ``fast`` extra; ``BCO_GYM_KERNELS``, from T * S = 10^5 run-rounds in "auto"), the
    same points and counts bit for bit as the Python loop.

    References: D. Garber and B. Kretzu, "New projection-free algorithms for online
    convex optimization with adaptive regret guarantees", COLT 2022 (PMLR 178),
    Algorithms 6 and 10, Lemmas 12-13, Observations 2-3, Theorem 15.
    """

    name = "so-bgd"
    REFERENCE = "garber2022new"
    requires_projection = False
    SCALE_PARAM = "c_prime"
    regret_exponent = 0.75

    def __init__(
        self,
        problem: Problem,
        *,
        c: float | None = None,
        c_prime: float | None = None,
        step_size: float | None = None,
        squeeze: float | None = None,
        smoothing_radius: float | None = None,
        batch_size: int | None = None,
    ):
        super().__init__(problem, batch_size)
        owner = type(self).__name__
        require_separation(owner, self.set)
        T, d, r, _R, _G, M = ProblemConstants.of(problem).symbols()
        c = positive(owner, "c", c, 8 / r)
        c_prime = positive(owner, "c_prime", c_prime, math.sqrt(d * M))
        self.params = {
            "c": c,
            "c_prime": c_prime,
            "step_size": positive(
                owner, "step_size", step_size, r / (4 * math.sqrt(d * M)) * T**-0.75
            ),
            "squeeze": capped_power(
                owner,
                "squeeze",
                squeeze,
                scale=c,
                symbol="c",
                horizon=T,
                exponent=0.25,
                cap=1.0,
                cap_symbol="1",
                reason=" (Theorem 15's condition)",
                consequence=(
                    " (Theorem 15's condition), so the comparator set K_{delta,delta'/r} is the "
                    "centre alone"
                ),
            ),
            "smoothing_radius": capped_power(
                owner,
                "smoothing_radius",
                smoothing_radius,
                scale=c_prime,
                symbol="c'",
                horizon=T,
                exponent=0.25,
                cap=r / 2,
                cap_symbol="r/2",
                reason=" (Theorem 15's condition)",
                consequence=" (Theorem 15's condition)",
            ),
        }
        self._dimension = d

    def _gk22_constants(self) -> ProblemConstants:
        return ProblemConstants.of(self.problem)

    def _parameters(self) -> tuple[float, float, float]:
        p = self.params
        return p["step_size"], p["squeeze"], p["smoothing_radius"]

    def regret_bound(self) -> float:
        """Theorem 15's bound on the expected regret of every interval at the actual
        parameters (:func:`~bco_gym.agents.gk22.bounds.theorem_15_regret`)."""
        return gk22_bounds.theorem_15_regret(self._gk22_constants(), *self._parameters())

    def separation_call_bound(self) -> float:
        """Theorem 15's bound on the total separation-oracle calls at the actual
        parameters (:func:`~bco_gym.agents.gk22.bounds.theorem_15_separation_calls`)."""
        return gk22_bounds.theorem_15_separation_calls(self._gk22_constants(), *self._parameters())

    # -- row hooks ----------------------------------------------------------------------
    def _reset_rows(self) -> None:
        self._points = self._rows_of(self.set.center)  # y~_t of every row
        self._directions = DirectionStream(self.set, self.rngs)
        self._current = self._points
        self._counters["separation_calls"] = np.zeros(self.rows, dtype=np.int64)
        self._counters["separation_steps"] = np.zeros(self.rows, dtype=np.int64)
        p, r = self.params, self.set.inner_radius
        self._steps = SeparationSteps.for_set(
            self.set,
            1.0 - p["smoothing_radius"] / r,
            p["squeeze"] * (r - p["smoothing_radius"]),
            fejer=False,
            run_rounds=self.horizon * self.rows,
        )

    def _act_rows(self) -> np.ndarray:
        self._current = self._directions.next()
        plays = self._current * self.params["smoothing_radius"]  # z_t = y~_t + delta' u_t
        plays += self._points
        return plays

    def _update_rows(self, losses: float | np.ndarray, gradients: np.ndarray | None) -> None:
        p = self.params
        coefficients = losses * (p["step_size"] * self._dimension / p["smoothing_radius"])
        targets = self._points - self._current * self._per_row(coefficients)  # y_{t+1}
        calls, steps = self._counters["separation_calls"], self._counters["separation_steps"]
        rows: range | np.ndarray = range(self.rows)
        if self._steps is not None:  # compiled, the same bits; rows it leaves run below
            rows = self._steps(targets, calls, steps)
        for row in rows:
            found = separation_projection(
                self.set, targets[row], p["squeeze"], p["smoothing_radius"]
            )
            targets[row] = found.point
            calls[row] += found.calls
            steps[row] += found.calls - 1
        self._points = targets
