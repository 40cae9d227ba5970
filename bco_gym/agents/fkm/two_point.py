"""Two-point bandit gradient descent (Agarwal, Dekel & Xiao 2010; Shamir 2017)."""

from __future__ import annotations

import math

import numpy as np

from bco_gym.agents.batch import BatchAgent, RowOracle
from bco_gym.agents.estimators import DirectionStream, two_point_values
from bco_gym.agents.kernels.compiled_rounds import CompiledRounds
from bco_gym.agents.schedules import positive
from bco_gym.agents.theory import ProblemConstants, smoothing_radius_for
from bco_gym.agents.twopoint import TwoPointFeedback
from bco_gym.problem import Problem


class FlaxmanTwoPoint(TwoPointFeedback, BatchAgent):
    r"""Projected gradient descent on two-point estimates over the shrunk set K_delta.

    Needs ``feedback="two-point"``. Update (x_1 = c, u_t uniform on the unit sphere of V):

        plays (x_t + delta u_t, x_t - delta u_t)        (both in K since x_t in K_delta)
        g_t = (d/(2 delta)) (f_t(x_t + delta u_t) - f_t(x_t - delta u_t)) u_t
        x_{t+1} = Pi_{K_delta}(x_t - eta g_t)

    g_t is unbiased for the gradient of the smoothed loss at x_t and, f_t being
    G-Lipschitz, ||g_t|| <= dG whatever delta. This library's derivation, as FKM's
    (:class:`~bco_gym.agents.fkm.agent.FlaxmanAgent`) with the estimate's norm dG in place of
    dM/delta: projected gradient descent on <g_t, x> over K_delta gives
    sum E<g_t, x_t - x> <= R^2/(2 eta) + eta T d^2 G^2/2; the env counts the mean of the
    two losses, each within delta G of f_t(x_t), and smoothing at x_t and at the
    comparator costs delta G each, shrinking the comparator into K_delta delta R G/r:

        E[R_T] <= R^2/(2 eta) + eta T d^2 G^2/2 + (3 + R/r) delta G T.

    The variance term no longer grows as delta shrinks, so delta only pays the smoothing
    term: delta = r/sqrt(T), eta = c R/(dG sqrt(T)) (one knob c, ``SCALE_PARAM``,
    default 1), and

        E[R_T] <= ((1/(2c) + c/2) R d G + (3r + R) G) sqrt(T),

    (R d + 3r + R) G sqrt(T) at c = 1: the O(d G R sqrt(T)) rate of Agarwal et al.
    (Shamir's sharper sqrt(d) needs a concentration bound on E||g_t||^2 not used here).

    Args:
        problem: a two-point problem; its set must have a Euclidean projection.
        c: the scale constant of eta (default 1).
        step_size: eta (default c R/(dG sqrt(T))).
        smoothing_radius: delta in (0, r] (default r/sqrt(T)).
        batch_size: None (one run) or S (S runs; see :mod:`~bco_gym.agents.batch`).

    References: A. Agarwal, O. Dekel and L. Xiao, "Optimal algorithms for online convex
    optimization with multi-point bandit feedback", COLT 2010; O. Shamir, "An optimal
    algorithm for bandit and zero-order convex optimization with two-point feedback",
    JMLR 2017.
    """

    name = "fkm2"
    REFERENCE = ("agarwal2010optimal", "shamir2017optimal")
    requires_projection = True
    SCALE_PARAM = "c"
    regret_exponent = 0.5
    #: Its compiled rounds (:mod:`bco_gym.agents.fkm.kernel`), played by the compiled lean loop.
    KERNEL = CompiledRounds(
        name="fkm2",
        module="bco_gym.agents.fkm.kernel",
        rounds="fkm2_rounds",
        window="fkm2_window",
        feedback=("two-point",),
        plays="two-point",
        shrunk=True,
        counter="projections",
        compile_seconds=15,
    )

    def __init__(
        self,
        problem: Problem,
        *,
        c: float | None = None,
        step_size: float | None = None,
        smoothing_radius: float | None = None,
        batch_size: int | None = None,
    ):
        super().__init__(problem, batch_size)
        owner = type(self).__name__
        T, d, r, R, G, _M = ProblemConstants.of(problem).symbols()
        c = positive(owner, "c", c, 1.0)
        self.params = {
            "c": c,
            "step_size": positive(owner, "step_size", step_size, c * R / (d * G * math.sqrt(T))),
            "smoothing_radius": smoothing_radius_for(
                owner, self.set, smoothing_radius, r, T, exponent=0.5
            ),
        }
        shrunk = self.set.shrink(self.params["smoothing_radius"])
        self._project = RowOracle(shrunk.project_many, shrunk.project)
        self._dimension = d

    def regret_bound(self) -> float:
        """R^2/(2 eta) + eta T d^2 G^2/2 + (3 + R/r) delta G T at the actual eta, delta."""
        T, d = self.horizon, self._dimension
        r, R, G = self.set.inner_radius, self.set.outer_radius, self.problem.lipschitz
        eta, delta = self.params["step_size"], self.params["smoothing_radius"]
        return R**2 / (2 * eta) + eta * T * (d * G) ** 2 / 2 + (3 + R / r) * delta * G * T

    def _reset_rows(self) -> None:
        self._points = self._rows_of(self.set.center)  # x_t of every row
        self._directions = DirectionStream(self.set, self.rngs)
        self._current = self._points

    def _act_rows(self) -> np.ndarray:
        self._current = self._directions.next()
        offsets = self._current * self.params["smoothing_radius"]
        return np.stack((self._points + offsets, self._points - offsets), axis=1)

    def _update_pair_rows(self, pair_losses: np.ndarray) -> None:
        eta, delta = self.params["step_size"], self.params["smoothing_radius"]
        coefficients = eta * self._dimension * two_point_values(pair_losses) / delta
        step = self._current * self._per_row(coefficients)
        self._points = self._project(self._points - step)
        self._counters["projections"] += 1
