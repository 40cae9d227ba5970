"""Bandit Frank-Wolfe (Chen, Zhang & Karbasi 2019): online Frank-Wolfe on one-point estimates."""

from __future__ import annotations

import math

import numpy as np

from bco_gym.agents.batch import BatchAgent, RowOracle
from bco_gym.agents.estimators import DirectionStream, Residuals, check_estimator
from bco_gym.agents.frank_wolfe import online_frank_wolfe_step
from bco_gym.agents.kernels.compiled_rounds import CompiledRounds
from bco_gym.agents.schedules import decaying_step, positive
from bco_gym.agents.theory import ProblemConstants, smoothing_radius_for
from bco_gym.problem import Problem


class BanditFrankWolfe(BatchAgent):
    r"""Projection-free bandit convex optimization with one LMO call per round.

    The construction Garber & Kretzu (2020, Section 1) describe for Chen, Zhang &
    Karbasi (2019): the online Frank-Wolfe method of Hazan & Kale (2012) run on the
    one-point gradient estimates of Flaxman et al. (2005) over the shrunk set K_delta.
    With x_1 = c (the centre) and u_t uniform on the unit sphere of V:

        y_t = x_t + delta u_t                                   (played)
        g_t = (d/delta) f_t(y_t) u_t
        F_t(x) = eta <g_1 + ... + g_t, x> + ||x - x_1||^2
        v_t = argmin_{v in K_delta} <grad F_t(x_t), v>          (one LMO call)
        x_{t+1} = x_t + sigma_t (v_t - x_t),   sigma_t = min(1, 2 t^(-2/5)).

    Parameters for the O(T^(4/5)) rate: delta = c T^(-1/5) (capped at r),
    eta = c R/(dM) T^(-4/5). Derivation (the online Frank-Wolfe analysis with gradient
    estimates of norm L = dM/delta): with sigma_t ~ t^(-b) the iterates track the
    minimisers of F_t to F_t(x_t) - min F_t ~ R^2 t^(-b) as long as eta L <~ R T^(-3b/2);
    the regret then has the terms G R T^(1 - b/2) (tracking), R^2/eta (regularisation)
    and delta G T (smoothing and shrinking). With eta = R T^(-3b/2)/L these balance at
    delta ~ T^(-1/5), b = 2/5, eta ~ T^(-4/5), giving O(d T^(4/5)). The default
    c = 2 sqrt(RdM/((3 + R/r) G)) balances the regularisation term D^2/eta = 4RdM/c T^(4/5)
    (diameter D = 2R) against the smoothing term (3 + R/r) delta G T = (3 + R/r) c G T^(4/5),
    as for FKM.

    Provenance: the full text of Chen et al. (ar5iv 1805.07474) was not reachable from
    this project's sources beyond its abstract, so their exact constants and step
    schedule could not be checked; the exponents above (delta ~ T^(-1/5), eta ~ T^(-4/5),
    sigma_t ~ t^(-2/5)) are derived from the analysis sketched here and reproduce the
    paper's O(n T^(4/5)) rate. For the same reason :meth:`regret_bound` returns None.

    Residual feedback (``estimator="residual"``; Zhang, Zhou, Ji & Zavlanos 2022):
    g_t = (d/delta)(f_t(y_t) - f_{t-1}(y_{t-1})) u_t, f_0(y_0) := 0 for the first round,
    unbiased for the smoothed gradient with ||g_t|| <= 2dM/delta: the derivation above
    holds with L = 2dM/delta (the default parameters stay the one-point ones).

    Args:
        problem: the problem (set with an LMO; no projection needed).
        c: the scale constant (``SCALE_PARAM``; default 2 sqrt(RdM/((3 + R/r) G))).
        step_size: eta (default c R/(dM) T^(-4/5)).
        smoothing_radius: delta in (0, r] (default c T^(-1/5), capped at r).
        estimator: "one-point" (default, the paper's) or "residual".
        batch_size: None (one run) or S (S runs; see :mod:`~bco_gym.agents.batch`).

    References: L. Chen, M. Zhang and A. Karbasi, "Projection-free bandit convex
    optimization", AISTATS 2019; E. Hazan and S. Kale, "Projection-free online learning",
    ICML 2012; D. Garber and B. Kretzu, AISTATS 2020, Section 1 and Table 1.
    """

    name = "bfw"
    REFERENCE = "chen2019projection"
    SCALE_PARAM = "c"
    regret_exponent = 0.8
    #: Its compiled rounds (:mod:`bco_gym.agents.bfw.kernel`), played by the compiled lean loop.
    KERNEL = CompiledRounds(
        name="bfw",
        module="bco_gym.agents.bfw.kernel",
        rounds="bfw_rounds",
        window="bfw_window",
        feedback=("bandit", "full"),
        plays="one-point",
        shrunk=True,
        counter="lmo_calls",
        compile_seconds=16,
        weight_exponent=0.4,
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
        c = positive(owner, "c", c, 2 * math.sqrt(R * d * M / ((3 + R / r) * G)))
        self.params = {
            "c": c,
            "step_size": positive(owner, "step_size", step_size, c * R / (d * M) * T**-0.8),
            "smoothing_radius": smoothing_radius_for(
                owner, self.set, smoothing_radius, c, T, exponent=0.2
            ),
            "estimator": check_estimator(owner, estimator),
        }
        self._shrunk = self.set.shrink(self.params["smoothing_radius"])
        self._lmo = RowOracle(self._shrunk.lmo_many, self._shrunk.lmo)
        self._dimension = d
        self._estimate_scale = d / self.params["smoothing_radius"]

    def _reset_rows(self) -> None:
        self._anchor = np.array(self.set.center, dtype=float)  # x_1 = c
        self._points = self._rows_of(self._anchor)
        self._estimate_sum = np.zeros_like(self._points)  # g_1 + ... + g_t
        self._linear = np.zeros_like(self._points)  # eta * (g_1 + ... + g_t)
        self._gradient = np.zeros_like(self._points)
        self._estimate = np.zeros_like(self._points)  # g_t, reused every round
        self._directions = DirectionStream(self.set, self.rngs)
        self._current = self._points
        self._residuals = Residuals(self.rows)

    def _act_rows(self) -> np.ndarray:
        self._current = self._directions.next()
        plays = self._current * self.params["smoothing_radius"]  # y_t = x_t + delta u_t,
        plays += self._points  # one new array (the same sums as x_t + delta*u_t)
        return plays

    def _update_rows(self, losses: float | np.ndarray, gradients: np.ndarray | None) -> None:
        eta = self.params["step_size"]
        if self.params["estimator"] == "residual":
            losses = self._residuals.of(np.reshape(losses, (-1, 1)))[:, 0]
        coefficients = losses * self._estimate_scale  # g_t = (d / delta) f_t u_t
        np.multiply(self._current, self._per_row(coefficients), out=self._estimate)
        self._estimate_sum += self._estimate
        np.multiply(self._estimate_sum, eta, out=self._linear)
        weight = decaying_step(self._round + 1, 2.0, 0.4)
        online_frank_wolfe_step(
            self._points, self._linear, self._anchor, weight, self._lmo, self._gradient
        )
        self._counters["lmo_calls"] += 1
