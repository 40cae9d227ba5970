"""Online Frank-Wolfe (Hazan & Kale 2012): projection-free, full information."""

from __future__ import annotations

import numpy as np

from bco_gym.agents.batch import BatchAgent, RowOracle
from bco_gym.agents.frank_wolfe import online_frank_wolfe_step
from bco_gym.agents.kernels.compiled_rounds import CompiledRounds
from bco_gym.agents.schedules import decaying_step, positive
from bco_gym.problem import Problem


class OnlineFrankWolfe(BatchAgent):
    r"""Online conditional gradient with one LMO call per round (needs ``feedback="full"``).

    Exactly the online conditional gradient algorithm of Hazan (2016, Section 7.3,
    Theorem 7.3). With x_1 = c (the centre) and nabla_t = grad f_t(x_t)
    (``info["gradient"]``), after playing x_t:

        F_t(x) = eta <nabla_1 + ... + nabla_{t-1}, x> + ||x - x_1||^2
        v_t = argmin_{v in K} <grad F_t(x_t), v>                (one LMO call)
        x_{t+1} = x_t + sigma_t (v_t - x_t),   sigma_t = min(1, 2 t^(-1/2)).

    F_t holds the gradients of the rounds before t, as in the book (the newest gradient
    nabla_t enters F_{t+1}). In round 1, grad F_1(x_1) = 0, so x_2 is the oracle's answer
    to the zero direction (any point of K; sigma_1 = 1), as the algorithm prescribes.

    Theorem 7.3: with eta = D/(2 G T^(3/4)), D >= diam K, the regret is at most
    8 D G T^(3/4). Here D = 2R (R the outer radius), so eta = c R/(G T^(3/4)) with the
    scale knob c = 1 (``SCALE_PARAM``), and Regret_T <= 16 R G T^(3/4).

    Args:
        problem: a problem with ``feedback="full"``.
        c: scale of the step size (default 1, the theorem's choice).
        step_size: eta (default c R/(G T^(3/4))).
        batch_size: None (one run) or S (S runs; see :mod:`~bco_gym.agents.batch`).

    References: E. Hazan and S. Kale, "Projection-free online learning", ICML 2012;
    E. Hazan, "Introduction to Online Convex Optimization", 2016, Section 7.3,
    Algorithm "online conditional gradient" and Theorem 7.3.
    """

    name = "ofw"
    REFERENCE = "hazan2012projection"
    feedback = "full"
    SCALE_PARAM = "c"
    regret_exponent = 0.75
    #: Its compiled rounds (:mod:`bco_gym.agents.ofw.kernel`), played by the compiled lean loop.
    KERNEL = CompiledRounds(
        name="ofw",
        module="bco_gym.agents.ofw.kernel",
        rounds="ofw_rounds",
        window="ofw_window",
        feedback=("full",),
        plays="points",
        shrunk=False,
        counter="lmo_calls",
        compile_seconds=12,
        weight_exponent=0.5,
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
        self.params = {
            "c": c,
            "step_size": positive(owner, "step_size", step_size, c * R / G * T**-0.75),
        }
        self._theorem_parameters = c == 1.0 and step_size is None
        self._lmo = RowOracle(self.set.lmo_many, self.set.lmo)

    def regret_bound(self) -> float | None:
        """Theorem 7.3 of Hazan (2016), 8 D G T^(3/4) with D = 2R, for the theorem's step
        size (c = 1); None for other step sizes (the theorem states no bound for them)."""
        if not self._theorem_parameters:
            return None
        return 16 * self.set.outer_radius * self.problem.lipschitz * self.horizon**0.75

    def _reset_rows(self) -> None:
        self._anchor = np.array(self.set.center, dtype=float)  # x_1 = c
        self._points = self._rows_of(self._anchor)
        self._gradient_sum = np.zeros_like(self._points)  # nabla_1 + ... + nabla_{t-1}
        self._linear = np.zeros_like(self._points)
        self._gradient = np.zeros_like(self._points)

    def _act_rows(self) -> np.ndarray:
        return self._points.copy()

    def _update_rows(self, losses: float | np.ndarray, gradients: np.ndarray | None) -> None:
        np.multiply(self._gradient_sum, self.params["step_size"], out=self._linear)
        weight = decaying_step(self._round + 1, 2.0, 0.5)
        online_frank_wolfe_step(
            self._points, self._linear, self._anchor, weight, self._lmo, self._gradient
        )
        self._gradient_sum += gradients  # nabla_t enters F_{t+1}
        self._counters["lmo_calls"] += 1
