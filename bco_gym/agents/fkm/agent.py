"""Flaxman, Kalai & McMahan (2005): bandit gradient descent with a one-point estimate."""

from __future__ import annotations

import math

import numpy as np

from bco_gym.agents.batch import BatchAgent, RowOracle
from bco_gym.agents.estimators import (
    DirectionStream,
    Residuals,
    check_estimator,
    estimate_norm_bound,
)
from bco_gym.agents.kernels.compiled_rounds import CompiledRounds
from bco_gym.agents.schedules import positive
from bco_gym.agents.theory import ProblemConstants, smoothing_radius_for
from bco_gym.problem import Problem


class FlaxmanAgent(BatchAgent):
    r"""Bandit online gradient descent on the shrunk set (FKM).

    Update (x_1 = c, the centre; u_t uniform on the unit sphere of V):

        y_t = x_t + delta u_t                      (played; in K since x_t in K_delta)
        g_t = (d/delta) f_t(y_t) u_t               (one-point estimate)
        x_{t+1} = Pi_{K_delta}(x_t - eta g_t)      (one Euclidean projection per round)

    Parameters from the standard analysis (Flaxman et al. 2005; Hazan 2016, Thm 6.6),
    with d = ``aff_dim``, R, r the outer/inner radii, G and M the gradient/value bounds.
    Projected gradient descent on the linear surrogates <g_t, x> over K_delta gives, for
    x in K_delta, sum E<g_t, x_t - x> <= ||x_1 - x||^2/(2 eta) + (eta/2) sum E||g_t||^2,
    with ||x_1 - x|| <= R and ||g_t|| <= dM/delta. Smoothing costs at most delta G per
    round three times (playing y_t instead of x_t, f_t vs its smoothing f_hat at x_t and
    at the comparator) and shrinking the comparator into K_delta costs delta R G / r:

        E[R_T] <= R^2/(2 eta) + eta T d^2 M^2/(2 delta^2) + (3 + R/r) delta G T.

    Minimising over eta gives eta = R delta/(dM sqrt(T)) and RdM sqrt(T)/delta; then
    over delta, delta = c T^(-1/4) with c = sqrt(RdM / ((3 + R/r) G)), and

        E[R_T] <= (RdM/c + (3 + R/r) G c) T^(3/4) = 2 sqrt(RdM(3 + R/r)G) T^(3/4).

    So delta = c T^(-1/4) and eta = c R/(dM) T^(-3/4) with the one knob c
    (``SCALE_PARAM``). delta is capped at r with a ``UserWarning`` (K_delta is then the
    centre alone; see :class:`~bco_gym.agents.bbcg.agent.BlockBanditCG`).

    Residual feedback (``estimator="residual"``; Zhang, Zhou, Ji & Zavlanos 2022): g_t =
    (d/delta)(f_t(y_t) - f_{t-1}(y_{t-1})) u_t, f_0(y_0) := 0 for the first round, also
    unbiased for the smoothed gradient, with ||g_t|| <= 2dM/delta. The derivation holds
    with dM/delta replaced by 2dM/delta: :meth:`regret_bound` uses that norm at the
    actual eta and delta (the default parameters stay the one-point ones).

    Args:
        problem: the problem; its set must have a Euclidean projection.
        c: the scale constant (default sqrt(RdM/((3 + R/r)G))).
        step_size: eta (default c R/(dM) T^(-3/4)).
        smoothing_radius: delta in (0, r] (default c T^(-1/4), capped at r).
        estimator: "one-point" (default, the paper's) or "residual".
        batch_size: None (one run) or S (S runs, rows of every array; see
            :mod:`~bco_gym.agents.batch`).

    References: A. Flaxman, A. T. Kalai and H. B. McMahan, "Online convex optimization in
    the bandit setting: gradient descent without a gradient", SODA 2005; E. Hazan,
    "Introduction to Online Convex Optimization", 2016, Section 6.4.
    """

    name = "fkm"
    REFERENCE = "flaxman2005online"
    requires_projection = True
    SCALE_PARAM = "c"
    regret_exponent = 0.75
    #: Its compiled rounds (:mod:`bco_gym.agents.fkm.kernel`), played by the compiled lean loop.
    KERNEL = CompiledRounds(
        name="fkm",
        module="bco_gym.agents.fkm.kernel",
        rounds="fkm_rounds",
        window="fkm_window",
        feedback=("bandit", "full"),
        plays="one-point",
        shrunk=True,
        counter="projections",
        compile_seconds=14,
    )

    def __init__(
        self,
        problem: Problem,
        *,
        c: float | None = None,
        step_size: float | None = None,
        smoothing_radius: float | None = None,
        estimator: str = "one-point",
        batch_size: int | None = None,
    ):
        super().__init__(problem, batch_size)
        owner = type(self).__name__
        T, d, r, R, G, M = ProblemConstants.of(problem).symbols()
        c = positive(owner, "c", c, math.sqrt(R * d * M / ((3 + R / r) * G)))
        self.params = {
            "c": c,
            "step_size": positive(owner, "step_size", step_size, c * R / (d * M) * T**-0.75),
            "smoothing_radius": smoothing_radius_for(
                owner, self.set, smoothing_radius, c, T, exponent=0.25
            ),
            "estimator": check_estimator(owner, estimator),
        }
        self._shrunk = self.set.shrink(self.params["smoothing_radius"])
        self._project = RowOracle(self._shrunk.project_many, self._shrunk.project)
        self._dimension = d
        self._estimate_scale = self.params["step_size"] * d / self.params["smoothing_radius"]

    def regret_bound(self) -> float:
        """R^2/(2 eta) + eta T L^2/2 + (3 + R/r) delta G T at the actual eta and delta,
        L = dM/delta (2dM/delta for the residual estimator; class docstring)."""
        T, d = self.horizon, self._dimension
        r, R = self.set.inner_radius, self.set.outer_radius
        G, M = self.problem.lipschitz, self.problem.bound
        eta, delta = self.params["step_size"], self.params["smoothing_radius"]
        spread = estimate_norm_bound(self.params["estimator"], d, M, delta)
        return R**2 / (2 * eta) + eta * T * spread**2 / 2 + (3 + R / r) * delta * G * T

    def _reset_rows(self) -> None:
        self._points = self._rows_of(self.set.center)  # x_t of every row
        self._directions = DirectionStream(self.set, self.rngs)
        self._current = self._points
        self._step = np.empty_like(self._points)  # eta * g_t, reused every round
        self._residuals = Residuals(self.rows)

    def _act_rows(self) -> np.ndarray:
        self._current = self._directions.next()
        plays = self._current * self.params["smoothing_radius"]  # y_t = x_t + delta u_t,
        plays += self._points  # one new array (the same sums as x_t + delta*u_t)
        return plays

    def _update_rows(self, losses: float | np.ndarray, gradients: np.ndarray | None) -> None:
        if self.params["estimator"] == "residual":
            losses = self._residuals.of(np.reshape(losses, (-1, 1)))[:, 0]
        # eta g_t = (eta d / delta) f_t u_t: one product per row for the scalar factor.
        coefficients = losses * self._estimate_scale
        np.multiply(self._current, self._per_row(coefficients), out=self._step)
        np.subtract(self._points, self._step, out=self._step)  # x_t - eta g_t
        self._points = self._project(self._step)  # new rows: _step is reusable
        self._counters["projections"] += 1
