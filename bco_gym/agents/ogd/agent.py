"""Online projected gradient descent (Zinkevich 2003): the O(sqrt(T)) reference line."""

from __future__ import annotations

import math

import numpy as np

from bco_gym.agents.batch import BatchAgent, RowOracle
from bco_gym.agents.kernels.compiled_rounds import CompiledRounds
from bco_gym.agents.schedules import positive
from bco_gym.problem import Problem


class OnlineGradientDescent(BatchAgent):
    r"""Projected online gradient descent (needs ``feedback="full"`` and a projection).

    With x_1 = c (the centre) and nabla_t = grad f_t(x_t) (``info["gradient"]``):

        x_{t+1} = Pi_K(x_t - eta nabla_t)      (one Euclidean projection per round).

    For every x in K, sum_t <nabla_t, x_t - x> <= ||x_1 - x||^2/(2 eta) + (eta/2) sum_t
    ||nabla_t||^2 <= R^2/(2 eta) + eta G^2 T/2 (Zinkevich 2003, Theorem 1, with
    ||x_1 - x|| <= R since x_1 is the centre). The minimiser is eta = R/(G sqrt(T)); with
    the scale knob c (``SCALE_PARAM``), eta = c R/(G sqrt(T)) and

        Regret_T <= (1/(2c) + c/2) R G sqrt(T)     (= R G sqrt(T) at c = 1).

    Args:
        problem: a problem with ``feedback="full"`` whose set has a projection.
        c: scale of the step size (default 1).
        step_size: eta (default c R/(G sqrt(T))).
        batch_size: None (one run) or S (S runs; see :mod:`~bco_gym.agents.batch`).

    References: M. Zinkevich, "Online convex programming and generalized infinitesimal
    gradient ascent", ICML 2003; E. Hazan, "Introduction to Online Convex Optimization",
    2016, Theorem 3.1.
    """

    name = "ogd"
    REFERENCE = "zinkevich2003online"
    feedback = "full"
    requires_projection = True
    SCALE_PARAM = "c"
    regret_exponent = 0.5
    #: Its compiled rounds (:mod:`bco_gym.agents.ogd.kernel`), played by the compiled lean loop.
    KERNEL = CompiledRounds(
        name="ogd",
        module="bco_gym.agents.ogd.kernel",
        rounds="ogd_rounds",
        window="ogd_window",
        feedback=("full",),
        plays="points",
        shrunk=False,
        counter="projections",
        compile_seconds=10,
    )

    def __init__(
        self,
        problem: Problem,
        *,
        c: float | None = None,
        step_size: float | None = None,
        batch_size: int | None = None,
    ):
        super().__init__(problem, batch_size)
        owner = type(self).__name__
        R, G, T = self.set.outer_radius, problem.lipschitz, self.horizon
        c = positive(owner, "c", c, 1.0)
        default = c * R / (G * math.sqrt(T))
        self.params = {"c": c, "step_size": positive(owner, "step_size", step_size, default)}
        self._project = RowOracle(self.set.project_many, self.set.project)

    def regret_bound(self) -> float:
        """R^2/(2 eta) + eta G^2 T/2 at the actual step size eta."""
        R, G, T = self.set.outer_radius, self.problem.lipschitz, self.horizon
        eta = self.params["step_size"]
        return R**2 / (2 * eta) + eta * G**2 * T / 2

    def _reset_rows(self) -> None:
        self._points = self._rows_of(self.set.center)

    def _act_rows(self) -> np.ndarray:
        return self._points.copy()

    def _update_rows(self, losses: float | np.ndarray, gradients: np.ndarray | None) -> None:
        step = self.params["step_size"] * gradients
        self._points = self._project(self._points - step)
        self._counters["projections"] += 1
