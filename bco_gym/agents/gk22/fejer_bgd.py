"""Bandit gradient descent whose projection is replaced by separation-oracle steps.

``fejer-bgd``: a projection-free bandit learner with an adaptive-regret guarantee,
derived here in full (module of issue 19; named "so-bgd" until issue 32). It was written
when only the abstract of Garber & Kretzu (COLT 2022, arXiv 2202.04721) could be read,
which announces an algorithm of this kind: online gradient descent with "infeasible
projections" computed by a separation oracle, O(T^{3/4}) adaptive expected regret with
bandit feedback and O(T) oracle calls. Their algorithm is now read and implemented as
``so-bgd`` (:class:`~bco_gym.agents.gk22.so_bgd.SeparationOracleBanditGD`, their Algorithm
10); this module is NOT their pseudocode or their constants: the algorithm and the bound
below are stated and proved in this docstring, and the tests check the bound at the
actual parameters. Results saved under the old name load as ``fejer-bgd``
(:func:`~bco_gym.agents.moved.current_agent_name`).
"""

from __future__ import annotations

import math

import numpy as np

from bco_gym.agents.batch import BatchAgent
from bco_gym.agents.estimators import DirectionStream
from bco_gym.agents.gk22.oracles import (
    TANGENT_FLOOR,
    SeparationSteps,
    require_separation,
    to_affine_hull,
)
from bco_gym.agents.schedules import positive
from bco_gym.agents.theory import ProblemConstants, capped_power
from bco_gym.problem import Problem


class FejerBanditGD(BatchAgent):
    r"""Bandit gradient descent with separation-oracle (Fejer) steps instead of projections.

    Notation: K with centre c, r B(c) ∩ aff(K) ⊆ K ⊆ R B(c), d = aff_dim, V the direction
    space of aff(K), G and M the gradient and value bounds, and for a in [0, r)
    K_a = c + (1 - a/r)(K - c), whose points x have (x + a B) ∩ aff(K) ⊆ K. The only access
    to K is its separation oracle (``ConvexSet.separation``); K_delta's oracle is K's at
    the point c + (x - c)/(1 - delta/r), with the same normal.

    Round t (x_1 = c; u_t uniform on the unit sphere of V):

        y_t = x_t + delta u_t                       (played; in K since x_t in K_delta)
        g_t = (d/delta) f_t(y_t) u_t                (one-point estimate of grad f_hat_t(x_t))
        z = x_t - eta g_t
        while SO_{K_delta}(z) returns a normal a:   (the Fejer steps)
            a_V = P_V a / ||P_V a||;  z = c + P_V(z - delta a_V - c)
        x_{t+1} = z

    (z is also put back on aff(K) before the first call: c + P_V(z - c).) In exact
    arithmetic z stays in aff(K) and the P_V(. - c) maps are no-ops; in floats they stop
    the rounding drift off aff(K) from growing over many rounds until the oracle
    separates z by the affine constraint itself, whose normal has no part in V (a
    tangent part below ``TANGENT_FLOOR`` raises instead of being normalised).

    Lemma (Fejer step). If z is not in K_delta and u is in K_{2 delta}, then
    (u + delta B) ∩ aff(K) ⊆ K_delta (K_{2 delta} is K_delta shrunk towards c by the same
    map, whose inner radius is r - delta), so <a, u + delta a_V> <= b < <a, z>, i.e.
    <a_V, z - u> > delta (z - u is in V), and ||z - delta a_V - u||^2 <=
    ||z - u||^2 - delta^2. Hence ||x_{t+1} - u|| <= ||x_t - eta g_t - u|| for every u in
    K_{2 delta}, and the number of steps in round t is below ||x_t - eta g_t - u||^2 /
    delta^2 for any such u; with u the image of x_t in K_{2 delta} (||x_t - u|| <=
    delta R/(r - delta)) at most (eta ||g_t||/delta + R/(r - delta))^2: O(1) per round.

    Theorem (adaptive regret). For every interval I of rounds and every x in K,

        E[sum_{t in I} f_t(y_t) - f_t(x)] <= 2 R^2/eta + eta |I| (dM/delta)^2/2
                                            + (3 + 2R/r) delta G |I|  =: B(|I|).

    Proof. The Fejer property gives, for u in K_{2 delta}, the gradient-descent
    inequality 2 eta <g_t, x_t - u> <= ||x_t - u||^2 - ||x_{t+1} - u||^2 + eta^2 ||g_t||^2;
    summed over I it telescopes from the interval's own start, ||x_s - u|| <= 2R, and
    ||g_t|| <= dM/delta. E[g_t | past] is the gradient of the smoothed loss f_hat_t (the
    average of f_t over the ball delta B ∩ aff(K) about the point) at x_t, so by convexity
    the smoothed regret is at most 2R^2/eta + eta|I|(dM/delta)^2/2. Smoothing costs delta G
    per round three times (y_t vs x_t, f_hat_t vs f_t at x_t and at u), and u =
    c + (1 - 2 delta/r)(x - c) is within 2 delta R/r of x (2 delta R G / r per round).

    Parameters. Minimising B(T) over eta gives eta = 2R delta/(dM sqrt(T)), then over
    delta, delta = c T^(-1/4) with c = sqrt(2RdM / ((3 + 2R/r) G)), and

        B(T) = 2 sqrt(2 R d M (3 + 2R/r) G) T^(3/4),

    with eta = 2 c R/(dM) T^(-3/4). delta must stay below r/2 (K_{2 delta} non-empty):
    the default is capped at r/4 with a ``UserWarning``. :meth:`regret_bound` is B(T) at
    the actual eta and delta, which bounds the expected regret of every interval, hence
    the adaptive regret's intervals one by one; :meth:`interval_regret_bound` is B(|I|).

    Counters: ``separation_calls`` (every oracle call, the final "inside" answers
    included), ``fejer_steps``; ``projections`` and ``lmo_calls`` stay 0. On the ball,
    l1 ball, box and simplex the steps run for all rows in one compiled call
    (:class:`~bco_gym.agents.gk22.oracles.SeparationSteps`, as so-bgd's), the same bits.

    Args:
        problem: the problem; its set must have a separation oracle (``has_separation``:
            the balls, the box and the simplex).
        c: the scale constant (default sqrt(2RdM/((3 + 2R/r)G))).
        step_size: eta (default 2cR/(dM) T^(-3/4)).
        smoothing_radius: delta in (0, r/2) (default c T^(-1/4), capped at r/4).
        batch_size: None (one run) or S (S runs; each row steps on its own, so row i is
            the single agent with row i's seed bit for bit).

    References: the one-point estimate and smoothing are Flaxman, Kalai & McMahan
    (SODA 2005); the setting (adaptive regret with a separation oracle) is Garber &
    Kretzu (COLT 2022, arXiv 2202.04721), whose Algorithm 10 is ``so-bgd``; adaptive
    regret is Hazan & Seshadhri (ICML 2009).
    """

    name = "fejer-bgd"
    REFERENCE = ("flaxman2005online", "garber2022new")
    requires_projection = False
    SCALE_PARAM = "c"
    regret_exponent = 0.75

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
        require_separation(owner, self.set)
        T, d, r, R, G, M = ProblemConstants.of(problem).symbols()
        c = positive(owner, "c", c, math.sqrt(2 * R * d * M / ((3 + 2 * R / r) * G)))
        delta = capped_power(
            owner,
            "smoothing_radius",
            smoothing_radius,
            scale=c,
            symbol="c",
            horizon=T,
            exponent=0.25,
            cap=r / 4,
            cap_symbol="r/4",
            limit=r / 2,
            limit_symbol="r/2",
            strictly_below=True,
            reason=" (the comparator set K_{2 delta} must not be empty)",
        )
        eta = positive(owner, "step_size", step_size, 2 * c * R / (d * M) * T**-0.75)
        self.params = {"c": c, "step_size": eta, "smoothing_radius": delta}
        self._dimension = d
        self._shrink = 1.0 - delta / r  # K_delta = c + shrink (K - c)
        self._estimate_scale = eta * d / delta

    def interval_regret_bound(self, length: int) -> float:
        """B(|I|) = 2R^2/eta + eta |I| (dM/delta)^2/2 + (3 + 2R/r) delta G |I| (class docstring)."""
        r, R = self.set.inner_radius, self.set.outer_radius
        G, M = self.problem.lipschitz, self.problem.bound
        eta, delta = self.params["step_size"], self.params["smoothing_radius"]
        spread = self._dimension * M / delta
        return 2 * R**2 / eta + eta * length * spread**2 / 2 + (3 + 2 * R / r) * delta * G * length

    def regret_bound(self) -> float:
        """B(T): bounds the expected regret of every interval (the adaptive regret's)."""
        return self.interval_regret_bound(self.horizon)

    def _reset_rows(self) -> None:
        self._points = self._rows_of(self.set.center)  # x_t of every row
        self._directions = DirectionStream(self.set, self.rngs)
        self._current = self._points
        self._counters["separation_calls"] = np.zeros(self.rows, dtype=np.int64)
        self._counters["fejer_steps"] = np.zeros(self.rows, dtype=np.int64)
        self._steps = SeparationSteps.for_set(
            self.set,
            self._shrink,
            self.params["smoothing_radius"],
            fejer=True,
            run_rounds=self.horizon * self.rows,
        )

    def _act_rows(self) -> np.ndarray:
        self._current = self._directions.next()
        plays = self._current * self.params["smoothing_radius"]  # y_t = x_t + delta u_t
        plays += self._points
        return plays

    def _update_rows(self, losses: float | np.ndarray, gradients: np.ndarray | None) -> None:
        coefficients = losses * self._estimate_scale  # eta d f_t / delta per row
        targets = self._points - self._current * self._per_row(coefficients)  # x_t - eta g_t
        rows: range | np.ndarray = range(self.rows)
        if self._steps is not None:  # compiled, the same bits; rows it leaves run below
            counters = self._counters
            rows = self._steps(targets, counters["separation_calls"], counters["fejer_steps"])
        for row in rows:
            targets[row] = self._fejer(targets[row], row)
        self._points = targets

    def _fejer(self, z: np.ndarray, row: int) -> np.ndarray:
        """Steps of length delta along K_delta's separating normals until z is in K_delta."""
        delta, center = self.params["smoothing_radius"], self.set.center
        z = to_affine_hull(self.set, z)
        limit = math.ceil(float(np.sum((z - center) ** 2)) / delta**2) + 1  # u = c bound
        calls, counters = 0, self._counters
        while True:
            calls += 1
            answer = self.set.separation(center + (z - center) / self._shrink, atol=1e-12)
            if answer is None:
                break
            normal = self.set.tangent(answer[0])
            size = math.sqrt(float(np.sum(normal * normal)))
            if calls > limit or size <= TANGENT_FLOOR:
                raise RuntimeError(
                    f"{type(self).__name__}: {calls} separation steps did not reach K_delta "
                    f"(bound {limit}; the last normal's part in aff(K) has norm {size:.3g}); "
                    "the point left aff(K)? (bug)"
                )
            z = to_affine_hull(self.set, z - (delta / size) * normal)
        counters["separation_calls"][row] += calls
        counters["fejer_steps"][row] += calls - 1
        return z


#: The class's name until issue 32 (kept so that old import paths still resolve).
SeparationBanditGD = FejerBanditGD
