"""The Regularized Bandit Newton method of Suggala, Ravikumar & Netrapalli (COLT 2021)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bco_gym.agents.bandit_newton.bounds import (
    C1,
    C2,
    C3,
    EXPLORATION,
    Parameters,
    theorem_7,
    volume_samples,
)
from bco_gym.agents.bandit_newton.region import (
    Derivatives,
    Domain,
    FocusRegion,
    minimize_over,
    newton,
    positive_definite,
)
from bco_gym.agents.barriers import Barrier, barrier_for
from bco_gym.agents.batch import BatchAgent
from bco_gym.agents.schedules import positive
from bco_gym.problem import Problem

COUNTERS = (
    "restarts",
    "focus_updates",
    "outside_plays",
    "indefinite_rounds",
    "newton_steps",
    "constrained_solves",
    "unconverged_solves",
    "nonconvex_restart_tests",
)


class BanditNewton(BatchAgent):
    r"""Regularized Bandit Newton (Suggala, Ravikumar & Netrapalli 2021, Algorithm 1).

    Bandit convex optimisation for (nearly) quadratic losses: a regularised Newton method
    whose gradient *and Hessian* come from one loss value a round, with the curvature
    learnt so far shaping the exploration, kept stable by a shrinking focus region and
    protected by a restart test. Theorem 7: regret O~(d^11 (d + nu)^5 sqrt(T)) with high
    probability against adaptive adversaries, for losses eps-close to convex quadratics
    bounded by B.

    Everything is written in coordinates w of V = aff(K) - c (x = c + Q w, d =
    ``aff_dim``), with R the nu-self-concordant barrier of K from
    :mod:`~bco_gym.agents.barriers` (ball, box, simplex, Birkhoff, flow polytope). The
    pseudocode's lines, and the code that carries each out:

    * lines 2-4 (``_new_epoch``): xi = T^(-4); x_1 = argmin R (damped Newton from c);
      F_1 = X_xi = xi x_1 + (1 - xi) X
      (:class:`~bco_gym.agents.bandit_newton.region.FocusRegion`), with N uniform
      samples of F_1 for the volume test.
    * line 6 (``_act_row``): M_t = hess R(x_t) + sum_{s<t} eta_s H^_s.
    * lines 7-9: v_1, v_2 uniform on S^(d-1); y_t = x_t + lambda M_t^(-1/2) (v_1 + v_2),
      played if it is in X (in its interior: the barrier is finite there).
    * line 10 (``_update_row``): g^_t = (d/lambda) f_t(y_t) M_t^(1/2) v_1 and
      H^_t = (d^2/(2 lambda^2)) f_t(y_t) M_t^(1/2) (v_1 v_2^T + v_2 v_1^T) M_t^(1/2),
      unbiased for quadratic f_t (Proposition 1 with C = lambda M_t^(-1/2)).
    * lines 11-12: otherwise x_t is played and g^_t = 0, H^_t = 0.
    * line 14: f^_t(x) = <g^_t - H^_t x_t, x> + x^T H^_t x / 2, kept as the running sums
      A = sum H^_s, b = sum (g^_s - H^_s x_s) and sum f^_s(x_s) (``_restart_due``).
    * lines 16-17: restart when sum_s f^_s(x_s) - min_{F_t} sum_s f^_s <= -beta/eta_1:
      the rounds left are played as a new run of T - t rounds (the paper: "act as if
      time step t + 1 is time step 1 and run the algorithm for T - t steps"), with
      Theorem 7's parameters for that horizon.
    * line 19 (``_omd_step``): x_(t+1) = argmin_{F_t} eta_t <g^_t, x> + Phi_{R_(t+1)}(x,
      x_t) with R_(t+1)(x) = R(x) + sum_{s<=t} (eta_s/2)(x - x_s)^T H^_s (x - x_s), whose
      Bregman divergence is that of R plus (x - x_t)^T S (x - x_t)/2, S = sum_{s<=t}
      eta_s H^_s: damped Newton over int X, and when its minimiser leaves F_t the barrier
      method over F_t (the paper's "IPM":
      :func:`~bco_gym.agents.bandit_newton.region.minimize_over`).
    * lines 21-25 (``_focus_step``): with M_(t+1) = hess R(x_(t+1)) + S, if Vol(F_t
      intersected with B_{alpha, M_(t+1)}(x_(t+1))) <= Vol(F_t)/2 then F_(t+1) is that
      intersection and eta_(t+1) = (1 + gamma) eta_t, else nothing changes.

    The efficient implementation (Section 7), as written there: the volume ratio is the
    fraction of N = ceil(32 log T) uniform samples of F_t inside the ellipsoid (Hoeffding:
    wrong with probability <= T^(-4) when the ratio is <= 1/4 or >= 3/4), samples drawn
    anew only when the region changes, starting from the old samples inside the new
    ellipsoid (uniform on F_(t+1)); the restart test minimises the convexified
    sum_s f^_s(y) + (y - x_t)^T hess R(x_t) (y - x_t)/(d^2 alpha^2 eta_1) of Remark 24 and
    evaluates sum_s f^_s at its minimiser.

    Parameters: Theorem 7's (:mod:`~bco_gym.agents.bandit_newton.bounds`), lambda =
    1/4, alpha = c_1 (nu + d) d log^2(dT), beta = d log(dT), gamma = c_2/(d log T),
    eta_1 = c_3/(d^7 (B + eps) alpha^4 sqrt(T) log T), B = ``problem.bound``, eps =
    ``misspecification`` (0: exactly quadratic losses), with c_1 = 1600 and c_2 =
    ln(10)/12 (the values the proofs of Lemmas 18 and 22 need) and c_3 = 1
    (``SCALE_PARAM``). log T is read as log max(T, 2).

    Deviations, each named and tested (tests/agents/test_agents_bandit_newton.py):

    * **No regret bound.** Theorem 7's bound is O~(...) with unstated universal constants
      (:mod:`~bco_gym.agents.bandit_newton.bounds`), so :meth:`regret_bound` returns
      None, not a number the paper does not prove.
    * **The universal constants** c_1, c_2, c_3 are unstated in the theorem; c_1 and c_2
      are read from the proofs as above, c_3 = 1 is a choice.
    * **Uniform samples** of F_t come from hit-and-run chains (``walk_steps`` steps each;
      the paper uses a Dikin walk, Laddha et al. 2020), started from the previous samples
      inside the new ellipsoid (or from x_(t+1) when none is) and, for F_1, from x_1 with
      5 ``walk_steps`` steps: uniform in the limit, approximately so after finitely many
      steps.
    * **The restart test** is the paper's approximate one (Remark 24); when the
      convexified objective is not convex (possible only far from the theorem's eta_1) the
      round's test is skipped and counted (``nonconvex_restart_tests``).
    * **An indefinite M_t** (the Hessian estimates' noise beating hess R; excluded with
      high probability at the theorem's eta_1, Lemma 21) has no M_t^(-1/2): the round
      plays x_t with g^_t = 0, H^_t = 0, as lines 11-12, and is counted
      (``indefinite_rounds``); so is a Newton step whose Hessian is not positive definite
      (``unconverged_solves``: x_(t+1) = x_t).
    * **Solves** stop at a Newton decrement <= ``newton_tolerance`` (1e-9), after at least
      one step (a mirror step never skipped), or after ``max_newton_steps`` (50); the
      barrier method stops at a duality gap <= 1e-9 max(1, |value|).

    Batched (``batch_size`` S): each row runs the method with its own generator and
    state; row i is the single agent with seed i, bit for bit.

    Args:
        problem: the problem; its set must have a barrier here (ball, box, simplex,
            Birkhoff, flow polytope), else :class:`~bco_gym.errors.UnsupportedSetError`.
        c1, c2, c3: Theorem 7's constants (defaults 1600, ln(10)/12, 1).
        misspecification: eps, the losses' distance to convex quadratics (default 0).
        exploration: lambda (default 1/4).
        focus_radius: alpha; restart_threshold: beta; rate_increment: gamma;
            step_size: eta_1 (defaults: Theorem 7's for each run's horizon; a value given
            here holds for every run after a restart).
        samples: N (default ceil(32 log T)).
        walk_steps: hit-and-run steps per refresh of the samples (default 10 d).
        newton_tolerance, max_newton_steps: the solves' stopping rule (1e-9, 50).
        batch_size: None (one run) or S.

    Stats: ``restarts``, ``focus_updates``, ``outside_plays`` (y_t not in X: x_t played),
    ``indefinite_rounds``, ``newton_steps`` (all solves), ``constrained_solves`` (barrier
    method runs), ``unconverged_solves``, ``nonconvex_restart_tests``; ``projections``
    and ``lmo_calls`` stay 0.

    References: A. S. Suggala, P. Ravikumar and P. Netrapalli, "Efficient bandit convex
    optimization: beyond linear losses", COLT 2021 (PMLR 134), Algorithm 1, Proposition 1,
    Theorems 6-7, Lemmas 18-25, Remark 24, Section 7; Y. Nesterov, "Introductory Lectures
    on Convex Optimization", 2004, Sections 4.1-4.2; R. L. Smith, "Efficient Monte Carlo
    procedures for generating points uniformly distributed over bounded regions",
    Operations Research 32, 1984.
    """

    name = "bandit-newton"
    REFERENCE = "suggala2021efficient"
    requires_projection = False
    SCALE_PARAM = "c3"
    regret_exponent = 0.5

    def __init__(
        self,
        problem: Problem,
        *,
        c1: float = C1,
        c2: float = C2,
        c3: float = C3,
        misspecification: float = 0.0,
        exploration: float = EXPLORATION,
        focus_radius: float | None = None,
        restart_threshold: float | None = None,
        rate_increment: float | None = None,
        step_size: float | None = None,
        samples: int | None = None,
        walk_steps: int | None = None,
        newton_tolerance: float = 1e-9,
        max_newton_steps: int = 50,
        batch_size: int | None = None,
    ):
        super().__init__(problem, batch_size)
        owner = type(self).__name__
        self.barrier: Barrier = barrier_for(self.set, owner)
        self._domain = Domain.of(self.barrier)
        d = self.set.aff_dim
        self._dimension = d
        if not (isinstance(exploration, float | int) and 0.0 < exploration <= 0.5):
            raise ValueError(
                f"{owner}: exploration={exploration!r} must be in (0, 1/2] (the play must "
                "stay in the Dikin ellipsoid: ||y_t - x_t||_(M_t) <= 2 lambda <= 1)"
            )
        if isinstance(misspecification, bool) or not (
            isinstance(misspecification, float | int)
            and math.isfinite(misspecification)
            and misspecification >= 0
        ):
            raise ValueError(f"{owner}: misspecification={misspecification!r} must be >= 0")
        self._overrides = {
            "focus_radius": focus_radius,
            "restart_threshold": restart_threshold,
            "rate_increment": rate_increment,
            "step_size": step_size,
            "samples": samples,
        }
        self._constants = {
            "c1": positive(owner, "c1", c1, c1),
            "c2": positive(owner, "c2", c2, c2),
            "c3": positive(owner, "c3", c3, c3),
        }
        self._misspecification = float(misspecification)
        self._exploration = float(exploration)
        first = self._epoch_parameters(self.horizon)
        self.params = {
            **self._constants,
            "misspecification": self._misspecification,
            "exploration": self._exploration,
            "focus_radius": first.focus_radius,
            "restart_threshold": first.restart_threshold,
            "rate_increment": first.rate_increment,
            "step_size": first.step_size,
            "samples": first.samples,
            "walk_steps": _count(owner, "walk_steps", walk_steps, 10 * d),
            "newton_tolerance": positive(owner, "newton_tolerance", newton_tolerance, 1e-9),
            "max_newton_steps": _count(owner, "max_newton_steps", max_newton_steps, 50),
        }
        solve = newton(self._barrier_derivatives, np.zeros(d), 1e-12, 100)
        self._center = solve.point  # x_1 = argmin R, in coordinates

    # -- parameters ---------------------------------------------------------------------------
    def _epoch_parameters(self, horizon: int) -> Parameters:
        """Theorem 7's parameters for a run of ``horizon`` rounds, overrides applied."""
        owner = type(self).__name__
        given = self._overrides
        values = theorem_7(
            horizon,
            self._dimension,
            self.barrier.parameter,
            self.problem.bound,
            self._misspecification,
            **self._constants,
            focus_radius=positive(owner, "focus_radius", given["focus_radius"], 1.0)
            if given["focus_radius"] is not None
            else None,
        )
        alpha = values["focus_radius"]
        return Parameters(
            horizon=horizon,
            exploration=self._exploration,
            focus_radius=alpha,
            restart_threshold=positive(
                owner, "restart_threshold", given["restart_threshold"], values["restart_threshold"]
            ),
            rate_increment=positive(
                owner, "rate_increment", given["rate_increment"], values["rate_increment"]
            ),
            step_size=positive(owner, "step_size", given["step_size"], values["step_size"]),
            shrink=float(horizon) ** -4,
            samples=_count(owner, "samples", given["samples"], volume_samples(horizon)),
        )

    def regret_bound(self) -> None:
        """None: Theorem 7's bound, O~(d^11 (d + nu)^5 sqrt(T)), has unstated universal
        constants (:mod:`~bco_gym.agents.bandit_newton.bounds`)."""
        return None

    # -- barrier --------------------------------------------------------------------------------
    def _barrier_derivatives(self, point: np.ndarray) -> Derivatives:
        value, gradient, factor = self.barrier.derivatives(point)
        if not math.isfinite(value):
            return value, gradient, np.eye(len(point))
        return value, gradient, factor.T @ factor

    def _inside(self, point: np.ndarray) -> bool:
        """Whether ``point`` is in int X (the barrier's domain)."""
        domain = self._domain
        if domain.ball is not None:
            offset = point - domain.ball[0]
            return bool(offset @ offset < domain.ball[1] ** 2)
        return bool(np.all(domain.rows @ point < domain.limits))  # type: ignore[union-attr,operator]

    # -- rows -------------------------------------------------------------------------------
    def _reset_rows(self) -> None:
        self._counters.update(dict.fromkeys(COUNTERS, 0))
        self._runs = [self._new_epoch(row, 0) for row in range(self.rows)]

    def _new_epoch(self, row: int, start: int) -> _Run:
        """Lines 2-4 for the rounds start+1..T (a restart's new run)."""
        p = self._epoch_parameters(self.horizon - start)
        pole = self._center
        region = FocusRegion(self._domain.scaled(pole, p.shrink), p.focus_radius)
        starts = np.repeat(pole[np.newaxis], p.samples, axis=0)
        samples = region.walk(starts, 5 * self.params["walk_steps"], self.rngs[row])
        return _Run(p, pole, region, samples, self._barrier_derivatives(pole))

    def _act_rows(self) -> np.ndarray:
        plays = np.empty((self.rows, *self.set.shape))
        for row in range(self.rows):
            plays[row] = self._act_row(row).reshape(self.set.shape)
        return plays

    def _act_row(self, row: int) -> np.ndarray:
        """Lines 6-9 and 11-12: the point to play."""
        run, d = self._runs[row], self._dimension
        run.pending = None
        values, vectors = np.linalg.eigh(run.hessian + run.sum_steps)  # M_t
        if not values[0] > 0.0:
            self._add(row, "indefinite_rounds")
            return self.barrier.point(run.point)
        rng = self.rngs[row]
        first, second = rng.standard_normal(d), rng.standard_normal(d)
        first /= math.sqrt(float(first @ first))
        second /= math.sqrt(float(second @ second))
        roots = np.sqrt(values)
        offset = vectors @ ((vectors.T @ (first + second)) / roots)  # M_t^(-1/2)(v_1 + v_2)
        play = run.point + run.parameters.exploration * offset
        if not self._inside(play):
            self._add(row, "outside_plays")
            return self.barrier.point(run.point)
        run.pending = (vectors * roots @ vectors.T, first, second)  # (M_t^(1/2), v_1, v_2)
        return self.barrier.point(play)

    def _update_rows(self, losses: float | np.ndarray, gradients: np.ndarray | None) -> None:
        values = np.broadcast_to(np.asarray(losses, dtype=float), (self.rows,))
        for row in range(self.rows):
            self._update_row(row, float(values[row]))

    def _update_row(self, row: int, loss: float) -> None:
        """Lines 10 and 14-25 after the loss of the round's play."""
        run = self._runs[row]
        if run.pending is None:  # g^ = 0, H^ = 0: nothing moves (lines 11-12)
            return
        root, first, second = run.pending
        d, lam = self._dimension, run.parameters.exploration
        gradient = (d / lam * loss) * (root @ first)
        cross = np.outer(first, second)
        hessian = (d * d / (2 * lam * lam) * loss) * (root @ (cross + cross.T) @ root)
        run.absorb(gradient, hessian)
        if self._restart_due(row, run):
            self._add(row, "restarts")
            start = self._round + 1
            if start < self.horizon:
                self._runs[row] = self._new_epoch(row, start)
            return
        next_steps = run.sum_steps + run.rate * hessian  # S = sum_{s<=t} eta_s H^_s
        point, derivatives = self._omd_step(row, run, gradient, next_steps)
        self._focus_step(row, run, point, next_steps, derivatives)

    def _restart_due(self, row: int, run: _Run) -> bool:
        """Line 16 with Remark 24's convexified minimisation over F_t."""
        p, d = run.parameters, self._dimension
        kappa = p.convexifier / (d * d)
        weight = 2 * kappa * run.hessian
        matrix = run.sum_hessians + weight  # the convexified objective's Hessian
        if not positive_definite(matrix):
            self._add(row, "nonconvex_restart_tests")
            return False
        minimiser = np.linalg.solve(matrix, weight @ run.point - run.sum_linear)
        if not run.region.contains(minimiser):

            def objective(y: np.ndarray) -> Derivatives:
                offset = y - run.point
                value = (
                    run.sum_linear @ y
                    + 0.5 * y @ run.sum_hessians @ y
                    + kappa * offset @ run.hessian @ offset
                )
                return value, run.sum_linear + matrix @ y - weight @ run.point, matrix

            minimiser = self._constrained(row, objective, run)
        value = run.sum_linear @ minimiser + 0.5 * minimiser @ run.sum_hessians @ minimiser
        return run.sum_values - value <= -p.restart_threshold / p.step_size

    def _omd_step(
        self, row: int, run: _Run, gradient: np.ndarray, next_steps: np.ndarray
    ) -> tuple[np.ndarray, Derivatives | None]:
        """Line 19: argmin_{F_t} eta_t <g^_t, x> + Phi_{R_(t+1)}(x, x_t), and the barrier's
        derivatives there when the solve computed them last (else None)."""
        linear = run.rate * gradient - run.barrier_gradient
        last: dict[str, Any] = {}

        def objective(x: np.ndarray) -> Derivatives:
            value, grad, hess = self._barrier_derivatives(x)
            last["point"], last["barrier"] = x, (value, grad, hess)
            if not math.isfinite(value):
                return value, grad, hess
            offset = x - run.point
            pulled = next_steps @ offset
            return (
                value + linear @ x + 0.5 * offset @ pulled,
                grad + linear + pulled,
                hess + next_steps,
            )

        first = (
            run.barrier_value + linear @ run.point,
            run.rate * gradient,
            run.hessian + next_steps,
        )
        solve = newton(
            objective,
            run.point,
            self.params["newton_tolerance"],
            self.params["max_newton_steps"],
            first,
        )
        self._add(row, "newton_steps", solve.steps)
        if not solve.converged:
            self._add(row, "unconverged_solves")
            return run.point, None
        if run.region.contains(solve.point):
            if last.get("point") is not None and np.array_equal(last["point"], solve.point):
                return solve.point, last["barrier"]
            return solve.point, None
        return self._constrained(row, objective, run), None

    def _constrained(self, row: int, objective: Any, run: _Run) -> np.ndarray:
        """The barrier method over F_t from x_t (an interior point of F_t)."""
        self._add(row, "constrained_solves")
        solve = minimize_over(
            objective,
            run.region,
            run.point,
            self.params["newton_tolerance"],
            self.params["max_newton_steps"],
        )
        self._add(row, "newton_steps", solve.steps)
        if not solve.converged:
            self._add(row, "unconverged_solves")
        return solve.point

    def _focus_step(
        self,
        row: int,
        run: _Run,
        point: np.ndarray,
        next_steps: np.ndarray,
        derivatives: Derivatives | None = None,
    ) -> None:
        """Lines 21-25, then x_(t+1) and S become the run's (``derivatives``: the
        barrier's at x_(t+1), when known)."""
        if derivatives is None:
            derivatives = self._barrier_derivatives(point)
        shape = derivatives[2] + next_steps  # M_(t+1)
        run.move(point, next_steps, derivatives)
        if not positive_definite(shape):
            return  # no ellipsoid: this M has no positive-definite form
        region = run.region
        if region.fraction_inside(run.samples, point, shape) > 0.5:
            return
        offsets = run.samples - point
        inside = np.einsum("ij,ij->i", offsets @ shape, offsets) <= region.radius**2
        region.add(point, shape)
        run.rate *= 1 + run.parameters.rate_increment
        self._add(row, "focus_updates")
        survivors = run.samples[inside]
        if len(survivors) == 0:
            survivors = point[np.newaxis]
        starts = survivors[np.arange(len(run.samples)) % len(survivors)]
        run.samples = region.walk(starts, self.params["walk_steps"], self.rngs[row])


class _Run:
    """One row's state within a run of Algorithm 1 (an epoch between restarts)."""

    def __init__(
        self,
        parameters: Parameters,
        point: np.ndarray,
        region: FocusRegion,
        samples: np.ndarray,
        derivatives: Derivatives,
    ):
        d = len(point)
        self.parameters, self.region, self.samples = parameters, region, samples
        self.point = point.copy()  # x_t
        self.rate = parameters.step_size  # eta_t
        self.sum_steps = np.zeros((d, d))  # S = sum_{s<t} eta_s H^_s
        self.sum_hessians = np.zeros((d, d))  # A = sum_s H^_s
        self.sum_linear = np.zeros(d)  # b = sum_s (g^_s - H^_s x_s)
        self.sum_values = 0.0  # sum_s f^_s(x_s)
        self.barrier_value, self.barrier_gradient, self.hessian = derivatives
        self.pending: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def absorb(self, gradient: np.ndarray, hessian: np.ndarray) -> None:
        """f^_t into the running sums (line 14)."""
        pulled = hessian @ self.point
        self.sum_hessians += hessian
        self.sum_linear += gradient - pulled
        self.sum_values += gradient @ self.point - 0.5 * self.point @ pulled

    def move(self, point: np.ndarray, sum_steps: np.ndarray, derivatives: Derivatives) -> None:
        """x_(t+1), S and the barrier's derivatives at x_(t+1)."""
        self.point, self.sum_steps = point, sum_steps
        self.barrier_value, self.barrier_gradient, self.hessian = derivatives


def _count(owner: str, key: str, value: Any, default: int) -> int:
    """``value`` (``default`` when None) as an int >= 1; a ValueError naming it otherwise."""
    chosen = default if value is None else value
    if (
        isinstance(chosen, bool | np.bool_)
        or not isinstance(chosen, int | np.integer)
        or chosen < 1
    ):
        raise ValueError(f"{owner}: {key}={chosen!r} must be an integer >= 1")
    return int(chosen)
