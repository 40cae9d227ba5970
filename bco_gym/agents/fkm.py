"""Flaxman, Kalai & McMahan (2005): bandit gradient descent with a one-point estimate."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bco_gym.agents.base import Agent
from bco_gym.agents.estimators import DirectionStream
from bco_gym.agents.schedules import positive, smoothing_radius_for
from bco_gym.problem import Problem


class FlaxmanAgent(Agent):
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
    centre alone; see :class:`~bco_gym.agents.bbcg.BlockBanditCG`).

    Args:
        problem: the problem; its set must have a Euclidean projection.
        c: the scale constant (default sqrt(RdM/((3 + R/r)G))).
        step_size: eta (default c R/(dM) T^(-3/4)).
        smoothing_radius: delta in (0, r] (default c T^(-1/4), capped at r).

    References: A. Flaxman, A. T. Kalai and H. B. McMahan, "Online convex optimization in
    the bandit setting: gradient descent without a gradient", SODA 2005; E. Hazan,
    "Introduction to Online Convex Optimization", 2016, Section 6.4.
    """

    name = "fkm"
    requires_projection = True
    SCALE_PARAM = "c"
    OPTIONS = ("c", "step_size", "smoothing_radius")
    regret_exponent = 0.75

    def __init__(
        self,
        problem: Problem,
        *,
        c: float | None = None,
        step_size: float | None = None,
        smoothing_radius: float | None = None,
    ):
        super().__init__(problem)
        owner = type(self).__name__
        T = self.horizon
        d, r, R = self.set.aff_dim, self.set.inner_radius, self.set.outer_radius
        G, M = problem.lipschitz, problem.bound
        c = positive(owner, "c", c, math.sqrt(R * d * M / ((3 + R / r) * G)))
        self.params = {
            "c": c,
            "step_size": positive(owner, "step_size", step_size, c * R / (d * M) * T**-0.75),
            "smoothing_radius": smoothing_radius_for(
                owner, self.set, smoothing_radius, c, T, exponent=0.25
            ),
        }
        self._shrunk = self.set.shrink(self.params["smoothing_radius"])
        self._dimension = d
        self._step = np.empty(self.set.shape)  # eta * g_t, reused every round

    def regret_bound(self) -> float:
        """R^2/(2 eta) + eta T d^2 M^2/(2 delta^2) + (3 + R/r) delta G T at the actual
        eta and delta (the derivation in the class docstring)."""
        T, d = self.horizon, self._dimension
        r, R = self.set.inner_radius, self.set.outer_radius
        G, M = self.problem.lipschitz, self.problem.bound
        eta, delta = self.params["step_size"], self.params["smoothing_radius"]
        return R**2 / (2 * eta) + eta * T * (d * M / delta) ** 2 / 2 + (3 + R / r) * delta * G * T

    def _reset(self) -> None:
        self._point = np.array(self.set.center, dtype=float)
        self._directions = DirectionStream(self.set, self.rng)
        self._current = self._point

    def _act(self) -> np.ndarray:
        self._current = self._directions.next()
        play = self._current * self.params["smoothing_radius"]  # y_t = x_t + delta u_t,
        play += self._point  # one new array (the same sums as x_t + delta*u_t)
        return play

    def _update(self, loss: float, info: dict[str, Any] | None) -> None:
        eta, delta = self.params["step_size"], self.params["smoothing_radius"]
        np.multiply(self._current, eta * self._dimension * loss / delta, out=self._step)
        np.subtract(self._point, self._step, out=self._step)  # x_t - eta g_t
        self._point = self._shrunk.project(self._step)  # a new array: _step is reusable
        self.stats["projections"] += 1
