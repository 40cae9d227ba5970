"""PBGD: parameter-free bandit gradient descent for a moving optimum (Zhao, Wang, Zhang &
Zhou, JMLR 2021), from one point (``pbgd``) and from two (``pbgd2``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bco_gym.agents.batch import BatchAgent, RowOracle
from bco_gym.agents.estimators import DirectionStream, two_point_values
from bco_gym.agents.pbgd.bounds import (
    PBGDConstants,
    dynamic_regret,
    prior_weights,
    step_size_grid,
)
from bco_gym.agents.schedules import positive
from bco_gym.agents.twopoint import TwoPointFeedback
from bco_gym.problem import Problem


class PBGD(BatchAgent):
    r"""Parameter-free Bandit Gradient Descent with one-point feedback (PBGD).

    Dynamic regret, against any comparator path u_1..u_T of K whose length
    P = sum_t ||u_t - u_(t-1)|| is unknown: N experts run projected gradient descent with
    step sizes on a geometric grid, and exponential weights (Hedge) over them pick the
    grid point that suits the unknown P (Zhang, Lu & Zhou 2018's Ader, made bandit).

    Notation: horizon T, centre c, inner/outer radii r/R (D = 2R bounds diam K), d =
    ``aff_dim`` (exploration stays in V = aff(K) - c), C and G the value and gradient
    bounds of the losses (``problem.bound``, ``problem.lipschitz``), K_delta = c + (1 -
    delta/r)(K - c) (the library's ``shrink(delta)``: x + delta u is in K for every x in
    K_delta and unit u in V).

    The algorithm (meta-algorithm and experts), x_(1,i) = c for every expert i:

        x_t = sum_i p_(t,i) x_(t,i)                       (the meta's combination)
        play y_t = x_t + delta u_t, u_t uniform on the unit sphere of V
        g_t = (d/delta) f_t(y_t) u_t                      (one-point estimate)
        l_(t,i) = <g_t, x_(t,i) - x_t>                     (linearised surrogate loss)
        p_(t+1,i) = w_i exp(-epsilon sum_{s<=t} l_(s,i)) / Z   (Hedge, prior w, rate epsilon)
        x_(t+1,i) = Pi_{K_delta}(x_(t,i) - eta_i g_t)    (expert i: gradient descent)

    with prior w_i = (N+1)/(N i (i+1)) (more weight on small steps) and step sizes
    eta_i = eta_min 2^(i-1), i = 1..N, N the first index with eta_min 2^(N-1) > eta_max.

    Parameters, as the peer library PyNOL (``pynol/learner/models/dynamic/pbgd.py``)
    sets them and says are the paper's: with D = 2R,

        delta   = min(r/2, sqrt(d) R T^(-1/4)),
        eta_min = R sqrt(7R^2) / (sqrt(d) C T^(3/4)),
        eta_max = R sqrt(7R^2 + 2R^2 T) / (sqrt(d) C T^(3/4)),

    and the meta's rate epsilon = sqrt(8/T)/(L D), L = dC/delta the estimate's norm bound,
    which minimises the meta part of :meth:`regret_bound` at ln(1/w) = 1.

    What could not be checked, and the one deliberate difference from the peer:

    * **The paper's text.** The JMLR paper's full text was not reachable (only its
      abstract: O(T^(3/4)(1+P_T)^(1/2)) from one point, O((T(1+P_T))^(1/2)) from two,
      no knowledge of P_T needed). The pseudocode above and the parameters are read from
      PyNOL; the bound below is this library's derivation, not the paper's theorem.
    * **The meta's rate.** PyNOL runs Hedge in its multiplicative ("greedy") form with a
      decreasing rate epsilon_t = 2/(L D sqrt(t)). That form has no regret guarantee:
      p_(t+1) is proportional to p_1 exp(-sum_s epsilon_s l_s), so an expert that lost
      early, when the rates were large, must win back its weight at the later, smaller
      rates; on two experts whose losses swap after T/4 rounds it stays behind for the
      rest of the run, a regret of about T/2 against the better one
      (tests/agents/test_agents_pbgd_peer.py shows it with PyNOL's own Hedge). A fixed rate
      (the textbook Hedge bound, which the dynamic-regret argument needs) is used here;
      with the same fixed rate given to PyNOL the two implementations play the same points
      to rounding (the peer test).
    * **Start.** Every expert starts at the centre c (PyNOL draws a random start unless a
      ``prior`` point is given).

    :meth:`regret_bound` (``path_length`` P, default 0: static regret) is

        min_i [ln(1/w_i)/epsilon + epsilon T (L D)^2/8 + (R^2 + 2DP)/(2 eta_i)
               + eta_i T L^2/2] + (2 + R/r) G delta T

    at the actual parameters (:func:`~bco_gym.agents.pbgd.bounds.dynamic_regret`, which
    derives it): a bound on E[sum_t f_t(y_t)] - sum_t f_t(u_t) for every path of length at
    most P, for convex G-Lipschitz losses bounded by C on K and fixed in advance.

    Args:
        problem: the problem; its set must have a Euclidean projection.
        smoothing_radius: delta in (0, r] (default the formula above).
        min_step_size: eta_min (default above).
        max_step_size: eta_max >= eta_min (default above).
        meta_rate: epsilon (default sqrt(8/T)/(L D)).
        batch_size: None (one run) or S (S runs; row i the single agent with seed i, bit
            for bit).

    Stats: ``projections`` (N per round: one per expert), ``lmo_calls`` 0; ``weights``,
    the meta's last p_t (a list; batched, an (S, N) array).

    References: P. Zhao, G. Wang, L. Zhang and Z.-H. Zhou, "Bandit convex optimization in
    non-stationary environments", JMLR 22(125), 2021 (AISTATS 2020); L. Zhang, S. Lu and
    Z.-H. Zhou, "Adaptive online learning in dynamic environments", NeurIPS 2018;
    M. Zinkevich, ICML 2003; PyNOL (L.-F. Li, P. Zhao et al., github.com/li-lf/PyNOL).
    """

    name = "pbgd"
    REFERENCE = "zhao2021bandit"
    requires_projection = True
    SCALE_PARAM = None
    regret_exponent = 0.75

    def __init__(
        self,
        problem: Problem,
        *,
        smoothing_radius: float | None = None,
        min_step_size: float | None = None,
        max_step_size: float | None = None,
        meta_rate: float | None = None,
        batch_size: int | None = None,
    ):
        super().__init__(problem, batch_size)
        owner = type(self).__name__
        T, d = self.horizon, self.set.aff_dim
        r, R = self.set.inner_radius, self.set.outer_radius
        delta = positive(owner, "smoothing_radius", smoothing_radius, self._default_radius())
        if delta > r:
            raise ValueError(
                f"{owner}: smoothing_radius={delta:g} exceeds the inner radius r={r:g} of "
                f"{self.set!r}; allowed: 0 < smoothing_radius <= r"
            )
        smallest, largest = self._default_steps(delta)
        smallest = positive(owner, "min_step_size", min_step_size, smallest)
        largest = positive(owner, "max_step_size", max_step_size, largest)
        if largest < smallest:
            raise ValueError(
                f"{owner}: max_step_size={largest:g} is below min_step_size={smallest:g}; "
                "allowed: 0 < min_step_size <= max_step_size"
            )
        norm = self._estimate_norm(delta)
        default_rate = math.sqrt(8.0 / T) / (norm * 2.0 * R)
        self._steps = np.array(step_size_grid(smallest, largest))
        self._prior = np.array(prior_weights(len(self._steps)))
        self.params = {
            "smoothing_radius": delta,
            "min_step_size": smallest,
            "max_step_size": largest,
            "meta_rate": positive(owner, "meta_rate", meta_rate, default_rate),
            "experts": len(self._steps),
        }
        self._shrunk = self.set.shrink(delta)
        self._project = RowOracle(self._shrunk.project_many, self._shrunk.project)
        self._dimension = d
        self._size = int(np.prod(self.set.shape))

    # -- parameters (the peer's formulas) ---------------------------------------------------
    def _default_radius(self) -> float:
        """delta = min(r/2, sqrt(d) R T^(-1/4))."""
        d, R = self.set.aff_dim, self.set.outer_radius
        return min(self.set.inner_radius / 2, math.sqrt(d) * R * self.horizon**-0.25)

    def _default_steps(self, delta: float) -> tuple[float, float]:
        """(eta_min, eta_max) = R sqrt(7R^2 (+ 2R^2 T)) / (sqrt(d) C T^(3/4))."""
        T, d, R = self.horizon, self.set.aff_dim, self.set.outer_radius
        scale = R / (math.sqrt(d) * self.problem.bound * T**0.75)
        return scale * math.sqrt(7 * R**2), scale * math.sqrt(7 * R**2 + 2 * R**2 * T)

    def _estimate_norm(self, delta: float) -> float:
        """L >= ||g_t||: dC/delta for the one-point estimate."""
        return self.set.aff_dim * self.problem.bound / delta

    # -- theory ---------------------------------------------------------------------------
    def constants(self) -> PBGDConstants:
        """The numbers :meth:`regret_bound` is evaluated at."""
        p = self.params
        return PBGDConstants(
            horizon=self.horizon,
            inner_radius=self.set.inner_radius,
            outer_radius=self.set.outer_radius,
            lipschitz=self.problem.lipschitz,
            smoothing_radius=p["smoothing_radius"],
            estimate_norm=self._estimate_norm(p["smoothing_radius"]),
            meta_rate=p["meta_rate"],
            step_sizes=tuple(float(s) for s in self._steps),
            prior=tuple(float(w) for w in self._prior),
        )

    def regret_bound(self, path_length: float = 0.0) -> float:
        """A bound on the expected dynamic regret against every comparator path of length
        at most ``path_length`` (0: the static regret), at the actual parameters
        (:func:`~bco_gym.agents.pbgd.bounds.dynamic_regret`)."""
        length = float(path_length)
        if isinstance(path_length, bool) or not (math.isfinite(length) and length >= 0.0):
            raise ValueError(
                f"{type(self).__name__}: path_length={path_length!r} must be a finite number >= 0"
            )
        return dynamic_regret(self.constants(), length)

    # -- rows -----------------------------------------------------------------------------
    def _reset_rows(self) -> None:
        count, size = len(self._steps), self._size
        center = np.asarray(self.set.center, dtype=float).reshape(size)
        self._experts = np.repeat(center[np.newaxis, np.newaxis], self.rows, axis=0)
        self._experts = np.repeat(self._experts, count, axis=1)  # x_(t,i): (S, N, n)
        self._scores = np.repeat(np.log(self._prior)[np.newaxis], self.rows, axis=0)
        self._weights = np.repeat(self._prior[np.newaxis], self.rows, axis=0)  # p_t
        self._points = self._rows_of(center)  # x_t: (S, n)
        self._directions = DirectionStream(self.set, self.rngs)
        self._current = np.zeros((self.rows, size))  # u_t

    def _combine(self) -> None:
        """x_t = sum_i p_(t,i) x_(t,i), summed over i in order (each row on its own)."""
        self._points = np.add.reduce(self._weights[:, :, np.newaxis] * self._experts, axis=1)

    def _act_rows(self) -> np.ndarray:
        self._combine()
        self._current = self._directions.next().reshape(self.rows, self._size)
        plays = self._points + self.params["smoothing_radius"] * self._current
        return plays.reshape(self.rows, *self.set.shape)

    def _update_rows(self, losses: float | np.ndarray, gradients: np.ndarray | None) -> None:
        values = np.broadcast_to(np.asarray(losses, dtype=float), (self.rows,))
        scale = self._dimension / self.params["smoothing_radius"]
        self._learn((scale * values)[:, np.newaxis] * self._current)

    def _learn(self, estimates: np.ndarray) -> None:
        """Meta and experts from g_t (S, n): l_(t,i), Hedge, then every expert's step."""
        offsets = self._experts - self._points[:, np.newaxis, :]
        surrogate = np.add.reduce(estimates[:, np.newaxis, :] * offsets, axis=2)  # (S, N)
        self._scores -= self.params["meta_rate"] * surrogate
        top = np.max(self._scores, axis=1, keepdims=True)
        weights = np.exp(self._scores - top)
        self._weights = weights / np.add.reduce(weights, axis=1, keepdims=True)
        steps = self._steps[np.newaxis, :, np.newaxis] * estimates[:, np.newaxis, :]
        moved = (self._experts - steps).reshape(-1, *self.set.shape)
        self._experts = self._project(moved).reshape(self._experts.shape)
        self._counters["projections"] += len(self._steps)

    def _row_extra_stats(self, row: int) -> dict[str, Any]:
        return {"weights": [float(w) for w in self._weights[row]]}

    def _batch_extra_stats(self) -> dict[str, Any]:
        return {"weights": self._weights.copy()}


class PBGD2(TwoPointFeedback, PBGD):
    r"""PBGD with two-point feedback (``pbgd2``): the same experts and meta as
    :class:`~bco_gym.agents.PBGD`, each round playing the pair x_t + delta u_t,
    x_t - delta u_t and estimating
    g_t = (d/(2 delta)) (f_t(x_t + delta u_t) - f_t(x_t - delta u_t)) u_t,
    whose norm is at most L = dG whatever delta (Agarwal, Dekel & Xiao 2010). Needs
    ``feedback="two-point"`` (regret on the mean of the pair, as the env counts it).

    Parameters, as PyNOL sets them (unchecked against the paper, whose text was not
    reachable; :class:`~bco_gym.agents.PBGD`'s notes apply): delta = min(r/2, d R /
    sqrt(T)), eta_min = sqrt(7R^2/(2 G^2 d^2 T)), eta_max = sqrt((7R^2 + 2R^2 T)/(2 G^2
    d^2 T)), epsilon = sqrt(8/T)/(L D); :meth:`regret_bound` is
    :class:`~bco_gym.agents.PBGD`'s with L = dG, which gives O(sqrt(T (1 + P))) (the
    abstract's rate) up to the grid's factor.

    References: as :class:`~bco_gym.agents.PBGD`'s; A. Agarwal, O. Dekel and L. Xiao,
    "Optimal algorithms for online convex optimization with multi-point bandit feedback",
    COLT 2010.
    """

    name = "pbgd2"
    REFERENCE = "zhao2021bandit"
    regret_exponent = 0.5

    def _default_radius(self) -> float:
        """delta = min(r/2, d R / sqrt(T))."""
        d, R = self.set.aff_dim, self.set.outer_radius
        return min(self.set.inner_radius / 2, d * R / math.sqrt(self.horizon))

    def _default_steps(self, delta: float) -> tuple[float, float]:
        """(eta_min, eta_max) = sqrt((7R^2 (+ 2R^2 T)) / (2 G^2 d^2 T))."""
        T, d, R = self.horizon, self.set.aff_dim, self.set.outer_radius
        denominator = 2 * self.problem.lipschitz**2 * d**2 * T
        return math.sqrt(7 * R**2 / denominator), math.sqrt((7 * R**2 + 2 * R**2 * T) / denominator)

    def _estimate_norm(self, delta: float) -> float:
        """L >= ||g_t||: dG for the two-point estimate."""
        return self.set.aff_dim * self.problem.lipschitz

    def _act_rows(self) -> np.ndarray:
        self._combine()
        self._current = self._directions.next().reshape(self.rows, self._size)
        offsets = self.params["smoothing_radius"] * self._current
        pairs = np.stack((self._points + offsets, self._points - offsets), axis=1)
        return pairs.reshape(self.rows, 2, *self.set.shape)

    def _update_pair_rows(self, pair_losses: np.ndarray) -> None:
        scale = self._dimension / self.params["smoothing_radius"]
        values = scale * two_point_values(pair_losses)
        self._learn(values[:, np.newaxis] * self._current)
