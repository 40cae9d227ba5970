"""Online Frank-Wolfe (Hazan & Kale 2012): projection-free, full information."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bco_gym.agents.base import Agent
from bco_gym.agents.frank_wolfe import online_frank_wolfe_step
from bco_gym.agents.schedules import decaying_step, positive
from bco_gym.problem import Problem


class OnlineFrankWolfe(Agent):
    r"""Online conditional gradient with one LMO call per round (needs ``feedback="full"``).

    With x_1 = c (the centre) and nabla_t = grad f_t(x_t) (``info["gradient"]``):

        F_t(x) = eta <nabla_1 + ... + nabla_t, x> + ||x - x_1||^2
        v_t = argmin_{v in K} <grad F_t(x_t), v>                (one LMO call)
        x_{t+1} = x_t + sigma_t (v_t - x_t),   sigma_t = min(1, 2 t^(-1/2)).

    Parameters of Hazan (2016), Theorem 7.3: eta = D/(2 G T^(3/4)) with D = 2R the
    diameter bound, i.e. eta = c R/(G T^(3/4)) with the scale knob c = 1 (``SCALE_PARAM``),
    and then Regret_T <= 8 D G T^(3/4) = 16 R G T^(3/4). Variant: the newest gradient
    enters F_t before the step (Hazan & Kale 2012, Algorithm 1); the book's version uses
    nabla_1..nabla_{t-1}, which shifts the step index in the proof by one.

    Args:
        problem: a problem with ``feedback="full"``.
        c: scale of the step size (default 1, the theorem's choice).
        step_size: eta (default c R/(G T^(3/4))).

    References: E. Hazan and S. Kale, "Projection-free online learning", ICML 2012;
    E. Hazan, "Introduction to Online Convex Optimization", 2016, Section 7.3.
    """

    name = "ofw"
    feedback = "full"
    SCALE_PARAM = "c"
    OPTIONS = ("c", "step_size")
    regret_exponent = 0.75

    def __init__(self, problem: Problem, *, c: float | None = None, step_size: float | None = None):
        super().__init__(problem)
        owner = type(self).__name__
        R, G, T = self.set.outer_radius, problem.lipschitz, self.horizon
        c = positive(owner, "c", c, 1.0)
        self.params = {
            "c": c,
            "step_size": positive(owner, "step_size", step_size, c * R / G * T**-0.75),
        }
        self._theorem_parameters = c == 1.0 and step_size is None

    def regret_bound(self) -> float | None:
        """Theorem 7.3 of Hazan (2016), 8 D G T^(3/4) with D = 2R, for the theorem's step
        size (c = 1); None for other step sizes (the theorem states no bound for them)."""
        if not self._theorem_parameters:
            return None
        return 16 * self.set.outer_radius * self.problem.lipschitz * self.horizon**0.75

    def _reset(self) -> None:
        center = np.array(self.set.center, dtype=float)
        self._anchor = center
        self._point = center.copy()
        self._gradient_sum = np.zeros(self.set.shape)
        self._linear = np.zeros(self.set.shape)
        self._gradient = np.zeros(self.set.shape)

    def _act(self) -> np.ndarray:
        return self._point.copy()

    def _update(self, loss: float, info: dict[str, Any] | None) -> None:
        self._gradient_sum += _gradient(self, info)
        np.multiply(self._gradient_sum, self.params["step_size"], out=self._linear)
        weight = decaying_step(self._round + 1, 2.0, 0.5)
        online_frank_wolfe_step(
            self._point, self._linear, self._anchor, weight, self.set.lmo, self._gradient
        )
        self.stats["lmo_calls"] += 1


def _gradient(agent: Agent, info: dict[str, Any] | None) -> np.ndarray:
    """info["gradient"] as a finite array of the set's shape (ValueError otherwise)."""
    gradient = np.asarray(info["gradient"], dtype=float)  # base checked the key exists
    # A sum is finite iff every entry is (short of overflow), and cheaper than isfinite().all().
    if gradient.shape != agent.set.shape or not math.isfinite(gradient.sum()):
        raise ValueError(
            f"{type(agent).__name__}: info['gradient'] must be a finite array of shape "
            f"{agent.set.shape}, got shape {gradient.shape}"
        )
    return gradient
