"""Saha & Tewari (2011): bandit FTRL with a self-concordant barrier, for smooth losses."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bco_gym import portable
from bco_gym.agents.barriers import (
    BallBarrier,
    Barrier,
    BoxBarrier,
    NonnegativeBarrier,
    barrier_for,
)
from bco_gym.agents.batch import BatchAgent
from bco_gym.agents.kernels import agent_kernel_wanted
from bco_gym.agents.schedules import positive
from bco_gym.problem import Problem

#: A damped Newton step below this decrement is a full step (quadratic convergence).
FULL_STEP_DECREMENT = 0.25
#: Products A_t's NumPy computation forms at a time (d^3 in all: in slices above this).
ROOT_PRODUCTS = 1 << 16


class SahaTewari(BatchAgent):
    r"""Saha & Tewari (2011), Algorithm 1: Dikin-ellipsoid sampling, barrier FTRL (smooth losses).

    Plays on the Dikin ellipsoid of x_t and runs FTRL with a nu-self-concordant barrier R
    of K as regulariser (:mod:`~bco_gym.agents.barriers`). Algorithm 1, in coordinates w
    of aff(K) (x = c + Q w, d = ``aff_dim``):

        x_1 = argmin_K R                              (the FTRL point of no loss)
        A_t = (hess R(x_t))^(-1/2)                    (symmetric square root)
        u_t uniform on the unit sphere S^(d-1)
        y_t = x_t + delta A_t u_t                     (played: ||y_t - x_t||_{x_t} = delta <= 1,
                                                       in the Dikin ellipsoid, so in K)
        g_t = (d/delta) f_t(y_t) A_t^(-1) u_t         (Lemma 5: E g_t = grad f_hat_t(x_t),
                                                       f_hat_t(x) = E_{v in B} f_t(x + delta A_t v))
        x_{t+1} = argmin_K eta sum_{s<=t} <g_s, x> + R(x)

    The FTRL step is solved by damped Newton (Nesterov 2004, Section 4.1.5) from x_t, the
    Hessian's eigenvectors V and roots sigma from an SVD of the barrier's factor M
    (hess R = M^T M, :mod:`~bco_gym.agents.barriers`), which also give A_t = V diag(1/sigma)
    V^T and A_t^(-1) = V diag(sigma) V^T:
    Newton direction Delta = -H^{-1} grad Phi, decrement lambda = sqrt(grad Phi^T H^{-1}
    grad Phi); step Delta/(1 + lambda) while lambda >= 1/4 (it stays in the Dikin ellipsoid,
    so inside K), the full step Delta below (quadratic convergence). **Stopping rule:**
    stop once lambda <= ``newton_tolerance`` (default 1e-9; then Phi(x) - min Phi <=
    lambda^2 ~ 1e-18, Nesterov Thm 4.1.13); or once a full step (lambda < 1/4) failed to
    halve lambda, which exact arithmetic guarantees (lambda_+ <= (lambda/(1 - lambda))^2), so
    lambda has reached its rounding floor (x extremely near the boundary; counted in
    ``stats["newton_stalled"]``); or after ``max_newton_steps`` (default 50; counted in
    ``stats["newton_unconverged"]``, only with a step size far above the theorem's). A step
    whose point rounds outside K (possible only at the rounding floor) is halved. At x_t the
    decrement
    is eta ||g_t||_{x_t,*} <= sqrt(2 nu log T / T), so a round takes ~3-4 steps;
    ``stats["newton_steps"]`` counts them all. No projection and no LMO is called
    (``projections`` and ``lmo_calls`` stay 0).

    Compiled solve. With numba installed (the ``fast`` extra) and ``BCO_GYM_KERNELS`` "on",
    or "auto" (the default) from T * S >= 100,000 run-rounds, the work
    between two SVDs is one compiled call (:func:`~bco_gym.agents.saha_tewari.kernel.newton_step`;
    the SVD stays NumPy's): the same arithmetic in the same order (every reduction NumPy's
    pairwise sum, no BLAS product on either side), so plays, counters and results are the
    NumPy solve's bit for bit, about twice as fast at n = 10 (benchmarks/bench_saha_tewari.py).

    Parameters (Theorem 3, from the proof's inequality (11)). With C = ``problem.bound``
    (|f_t| <= C on K), H = ``smoothness`` (every f_t H-smooth), D = 2R >= diam K,
    nu the barrier parameter, and log T read as log max(T, 2):

        (11)  E[R_T] <= H T delta^2 D^2 + eta T (Cd/delta)^2 + 2 nu log T / eta + L' sqrt(T);
        eta   = (delta/(Cd)) sqrt(2 nu log T / T)            (minimises (11) over eta)
        delta = min(1, (Cd sqrt(2 nu log T) / (H D^2 sqrt(T)))^(1/3))   (minimises over delta)

    delta is capped at 1 (Algorithm 1 takes delta in [0, 1]); with H = 0 (linear losses)
    delta = 1, the paper's remark after (11) (the rate of Abernethy, Hazan & Rakhlin 2008).

    Readings taken where the paper is loose (so that :meth:`regret_bound` is a true
    bound at the actual parameters):

    * **Theorem 3's constant.** Minimising (11) over delta gives 3 * 2^(1/3) (H nu log T)^(1/3)
      (CdD)^(2/3) T^(2/3), not the printed 3 (...): the printed bound is below the proof's by
      2^(1/3). :meth:`regret_bound` evaluates the chain of (11) at the actual eta and delta
      (= 3 * 2^(1/3)(...) + ... at the defaults), not the printed expression.
    * **Lemma 4's constant.** The FTRL step moves x_t by at most lambda/(1 - lambda) in the
      local norm when the decrement lambda = eta ||g_t||_{x_t,*} < 1 (Nesterov Thm 4.1.13),
      so the stability term is eta ||g_t||_*^2 / (1 - lambda) per round, not eta
      ||g_t||_*^2: the bound carries 1/(1 - lambda_bar), lambda_bar = eta C d / delta
      = sqrt(2 nu log T / T) at the defaults. If lambda_bar >= 1 (a large ``step_size``)
      Lemma 4 does not apply and the bound is the trivial 2CT (|f_t| <= C).
    * **The comparator.** The paper moves x* to a point 1/sqrt(T) from the boundary and
      claims R <= 2 nu log T there and |f_t(x*) - f_t(x~)| <= L'/sqrt(T); near a sharp
      vertex (the simplex's) such a point is farther from x* than 1/sqrt(T). We take
      x~ = x_1 + (1 - T^(-2))(x* - x_1): its Minkowski gauge about x_1 is <= 1 - T^(-2), so
      R(x~) - R(x_1) <= nu log(T^2) = 2 nu log T (Nemirovski & Todd 2008, (2.9)): the paper's
      term, and the move costs at most T G ||x* - x~|| <= G D / T.
    * **The Lipschitz constant.** L' = 2C/D + DH is derived in the paper for functions
      with room around every point; we use the problem's declared G (``lipschitz``).
    * **The smoothing.** f_hat_t(x~) (term (C)) evaluates f_t on x~ + delta A_t B, and
      f_hat_t(y_t) (terms (A), (B)) on x_t + delta A_t (u_t + B), up to local norm 2 delta
      from x_t; both may leave K (A_t is x_t's): the losses must be convex and H-smooth on
      a neighbourhood of K, as the linear, quadratic and regression families are (defined
      on all of R^n).
    * **H.** The Problem does not declare a smoothness constant; ``smoothness`` defaults
      to 1, the ``quadratic`` family's (||x - z_t||^2/2); a linear loss is H-smooth for
      every H >= 0, so the default bound holds for it too (smoothness=0 gives delta = 1).
      For other losses pass their H (``regression``, (<a_t, x - c> - b_t)^2: H = 2 F^2
      with F the feature norm): :meth:`regret_bound` is a bound only for H-smooth losses,
      so not for ``absolute`` (not differentiable) nor ``portfolio`` (-log <r_t, x>, not
      smooth near the boundary, undefined beyond it), whatever ``smoothness``.

    So :meth:`regret_bound` is

        H T delta^2 D^2 + eta T (Cd/delta)^2 / (1 - eta C d/delta) + 2 nu log T / eta + G D / T.

    Args:
        problem: the problem; its set must have a barrier here (ball, box, simplex,
            Birkhoff, flow polytope), else :class:`~bco_gym.errors.UnsupportedSetError`.
        smoothness: H >= 0 (default 1.0).
        step_size: eta (default Theorem 3's).
        smoothing_radius: delta in (0, 1] (default Theorem 3's), in units of the Dikin
            ellipsoid (y_t - x_t has local norm delta).
        newton_tolerance: the Newton decrement at which the FTRL solve stops (1e-9).
        max_newton_steps: the most Newton steps of one solve (50).
        batch_size: None (one run) or S (S runs, row i the single agent with seed i).

    References: A. Saha and A. Tewari, "Improved regret guarantees for online smooth
    convex optimization with bandit feedback", AISTATS 2011, Algorithm 1, Theorem 3,
    Lemmas 4-6, inequality (11); J. Abernethy, E. Hazan and A. Rakhlin, "Competing in the
    dark", COLT 2008; Y. Nesterov, "Introductory Lectures on Convex Optimization", 2004,
    Section 4.1.
    """

    name = "saha-tewari"
    REFERENCE = "saha2011improved"
    requires_projection = False
    SCALE_PARAM = None
    regret_exponent = 2 / 3

    def __init__(
        self,
        problem: Problem,
        *,
        smoothness: float = 1.0,
        step_size: float | None = None,
        smoothing_radius: float | None = None,
        newton_tolerance: float = 1e-9,
        max_newton_steps: int = 50,
        batch_size: int | None = None,
    ):
        super().__init__(problem, batch_size)
        owner = type(self).__name__
        self.barrier: Barrier = barrier_for(self.set, owner)
        smoothness = _nonnegative(owner, "smoothness", smoothness)
        T, d, nu = self.horizon, self.set.aff_dim, self.barrier.parameter
        C, D = problem.bound, 2.0 * self.set.outer_radius
        log_t = math.log(max(T, 2))
        if smoothness > 0:
            ratio = C * d * math.sqrt(2 * nu * log_t) / (smoothness * D**2 * math.sqrt(T))
            default_delta = min(1.0, ratio ** (1 / 3))
        else:
            default_delta = 1.0
        delta = positive(owner, "smoothing_radius", smoothing_radius, default_delta)
        if delta > 1.0:
            raise ValueError(
                f"{owner}: smoothing_radius={smoothing_radius!r} must be in (0, 1] (the play "
                "must stay in the Dikin ellipsoid, Algorithm 1)"
            )
        default_eta = delta / (C * d) * math.sqrt(2 * nu * log_t / T)
        self.params = {
            "smoothness": smoothness,
            "step_size": positive(owner, "step_size", step_size, default_eta),
            "smoothing_radius": delta,
            "newton_tolerance": positive(owner, "newton_tolerance", newton_tolerance, 1e-9),
            "max_newton_steps": _count(owner, "max_newton_steps", max_newton_steps),
        }
        self._dimension = d

    def regret_bound(self) -> float:
        """(11) at the actual eta and delta, with the readings of the class docstring:
        H T delta^2 D^2 + eta T (Cd/delta)^2/(1 - lambda_bar) + 2 nu log T/eta + G D/T,
        lambda_bar = eta C d/delta; the trivial 2CT when lambda_bar >= 1 (Lemma 4 does not
        apply)."""
        T, d, nu = self.horizon, self._dimension, self.barrier.parameter
        C, G, D = self.problem.bound, self.problem.lipschitz, 2.0 * self.set.outer_radius
        H, eta = self.params["smoothness"], self.params["step_size"]
        delta = self.params["smoothing_radius"]
        spread = C * d / delta  # ||g_t||_{x_t,*} <= Cd/delta (Lemma 6)
        decrement = eta * spread
        if decrement >= 1.0:
            return 2.0 * C * T
        log_t = math.log(max(T, 2))
        stability = eta * T * spread**2 / (1.0 - decrement)
        return H * T * delta**2 * D**2 + stability + 2 * nu * log_t / eta + G * D / T

    # -- rows -------------------------------------------------------------------------------
    def _reset_rows(self) -> None:
        d = self._dimension
        self._counters.update({"newton_steps": 0, "newton_stalled": 0, "newton_unconverged": 0})
        self._coordinates = np.zeros((self.rows, d))  # w_t of x_t = c + Q w_t
        self._sums = np.zeros((self.rows, d))  # sum_s g_s (coordinates)
        self._roots = np.zeros((self.rows, d, d))  # A_t
        self._inverse_roots = np.zeros((self.rows, d, d))  # A_t^(-1)
        self._directions = np.zeros((self.rows, d))  # u_t
        self._kernel = self._kernel_arguments()
        for row in range(self.rows):  # x_1 = argmin R, from the centre
            self._solve(row)

    def _act_rows(self) -> np.ndarray:
        plays = np.empty((self.rows, *self.set.shape))
        delta = self.params["smoothing_radius"]
        for row in range(self.rows):
            u = self.rngs[row].standard_normal(self._dimension)
            u /= math.sqrt(portable.dot(u, u))
            self._directions[row] = u
            offset = portable.matvec(self._roots[row], u)
            play = self.barrier.point(self._coordinates[row] + delta * offset)
            plays[row] = play.reshape(self.set.shape)
        return plays

    def _update_rows(self, losses: float | np.ndarray, gradients: np.ndarray | None) -> None:
        scale = self._dimension / self.params["smoothing_radius"]
        values = np.broadcast_to(np.asarray(losses, dtype=float), (self.rows,))
        for row in range(self.rows):
            estimate = (scale * float(values[row])) * (
                portable.matvec(self._inverse_roots[row], self._directions[row])
            )
            self._sums[row] += estimate  # g_t
            self._solve(row)

    def _solve(self, row: int) -> None:
        """x_{t+1} = argmin eta <sum g_s, x> + R(x) by damped Newton from x_t (class
        docstring), then A_t, A_t^(-1) at the new point."""
        linear = self.params["step_size"] * self._sums[row]
        if self._kernel is not None:
            self._solve_compiled(row, linear)
            return
        point = self._coordinates[row].copy()
        tolerance = self.params["newton_tolerance"]
        steps, previous = 0, math.inf
        _, gradient, factor = self.barrier.derivatives(point)
        while True:
            # hess R = M^T M = V diag(sigma^2) V^T from the SVD M = U diag(sigma) V^T
            _, sigma, rotation = np.linalg.svd(factor, full_matrices=False)
            gradient = gradient + linear
            scaled = np.add.reduce(rotation * gradient, axis=1) / sigma  # diag(1/sigma) V^T grad
            decrement = math.sqrt(float(np.add.reduce(scaled * scaled)))  # lambda
            if decrement <= tolerance:
                break
            if previous < FULL_STEP_DECREMENT and decrement > previous / 2:
                # the last step was a full one (lambda < 1/4), which in exact arithmetic
                # at least halves the decrement (quadratic convergence): it has reached its
                # rounding floor (x extremely near the boundary). A damped step need not
                # halve it, so this test applies only after a full step.
                self._add(row, "newton_stalled", 1)
                break
            if steps == self.params["max_newton_steps"]:
                self._add(row, "newton_unconverged", 1)
                break
            columns = np.ascontiguousarray(rotation.T)  # V
            direction = -np.add.reduce(columns * (scaled / sigma), axis=1)  # -H^(-1) grad Phi
            if decrement >= FULL_STEP_DECREMENT:
                direction /= 1.0 + decrement
            trial = self.barrier.derivatives(point + direction)
            while not math.isfinite(trial[0]):  # rounding at the boundary only: halve
                direction /= 2.0
                trial = self.barrier.derivatives(point + direction)
            point += direction
            _, gradient, factor = trial
            steps += 1
            previous = decrement
        self._add(row, "newton_steps", steps)
        self._coordinates[row] = point
        # A_t = (hess R)^(-1/2) = V diag(1/sigma) V^T, A_t^(-1) = V diag(sigma) V^T
        _roots_into(rotation, sigma, self._roots[row], self._inverse_roots[row])

    def _kernel_arguments(self) -> tuple[Any, ...] | None:
        """The barrier's arrays for the compiled solve (not the compiled function, so that
        the agent pickles), or None (the NumPy solve) unless
        ``BCO_GYM_KERNELS`` is "on", or "auto" with T * S >= ``AGENT_MIN_RUN_ROUNDS``, and
        numba is installed (:func:`~bco_gym.agents.kernels.agent_kernel_wanted`)."""
        barrier = self.barrier
        kinds = {BallBarrier: 0, BoxBarrier: 1, NonnegativeBarrier: 2}
        if not agent_kernel_wanted(self.horizon * self.rows) or type(barrier) not in kinds:
            return None
        from bco_gym.agents.saha_tewari import kernel as compiled

        compiled.announce_compile()
        kind = kinds[type(barrier)]
        n = barrier.center.size
        empty, no_rows = np.zeros(0), np.zeros(0, dtype=np.int64)
        has_basis = barrier.basis is not None
        basis = barrier.basis if has_basis else np.zeros((0, 0))
        basis_t = barrier.basis_t if has_basis else np.zeros((0, 0))
        radius_squared, low, high, rows = 0.0, empty, empty, no_rows
        if kind == compiled.BARRIER_BALL:
            radius_squared, factor_rows = barrier.radius_squared, n
        elif kind == compiled.BARRIER_BOX:
            low, high, factor_rows = barrier.low, barrier.high, 2 * n
        else:
            rows = barrier._rows.astype(np.int64)
            factor_rows = rows.size
        d = self._dimension
        self._work = np.zeros((compiled.WORK_ROWS, max(n, d)))
        self._factors = np.zeros((2, factor_rows, d))  # M at the point, M at the trial
        self._state = np.zeros(2)  # (steps, previous decrement)
        return (
            kind,
            barrier.center,
            float(radius_squared),
            low,
            high,
            basis,
            basis_t,
            has_basis,
            rows,
        )

    def _solve_compiled(self, row: int, linear: np.ndarray) -> None:
        """:meth:`_solve` with the work between two SVDs compiled (:mod:`.kernels.barrier`):
        the same SVDs (NumPy's), the same arithmetic, the same counters."""
        from bco_gym.agents.saha_tewari.kernel import (
            CONTINUE,
            STALLED,
            UNCONVERGED,
            newton_step,
            start_solve,
        )

        point, factor = self._coordinates[row], self._factors[0]
        start_solve(*self._kernel, point, self._work, self._factors, self._state)
        options = (
            float(self.params["newton_tolerance"]),
            int(self.params["max_newton_steps"]),
            FULL_STEP_DECREMENT,
        )
        roots, inverse_roots = self._roots[row], self._inverse_roots[row]
        status = CONTINUE
        while status == CONTINUE:
            _, sigma, rotation = np.linalg.svd(factor, full_matrices=False)
            status = newton_step(
                *self._kernel,
                point,
                linear,
                *options,
                sigma,
                rotation,
                roots,
                inverse_roots,
                self._work,
                self._factors,
                self._state,
            )
        if status == STALLED:
            self._add(row, "newton_stalled", 1)
        elif status == UNCONVERGED:
            self._add(row, "newton_unconverged", 1)
        self._add(row, "newton_steps", int(self._state[0]))

    def _row_extra_stats(self, row: int) -> dict[str, Any]:
        rounds = max(self._round, 1)
        steps = self._counters.get("newton_steps", 0)
        count = steps if isinstance(steps, int) else int(steps[row])
        return {"newton_steps_per_round": count / rounds}


def _roots_into(
    rotation: np.ndarray, sigma: np.ndarray, roots: np.ndarray, inverse_roots: np.ndarray
) -> None:
    """A = V diag(1/sigma) V^T into ``roots``, A^(-1) = V diag(sigma) V^T into
    ``inverse_roots`` (V = rotation^T): A[i, k] = sum_j (V[i, j]/sigma_j) V[k, j], each a
    pairwise sum along a row of a 2-D array of the products (no BLAS product: the compiled
    solve's order), taken ROOT_PRODUCTS at a time."""
    columns = np.ascontiguousarray(rotation.T)  # V
    d = len(sigma)
    chunk = max(1, ROOT_PRODUCTS // (d * d))
    for first in range(0, d, chunk):
        part = slice(first, first + chunk)
        for scaled, out in ((columns[part] / sigma, roots), (columns[part] * sigma, inverse_roots)):
            products = scaled[:, None, :] * columns[None, :, :]  # (i, k, j)
            out[part] = np.add.reduce(products.reshape(-1, d), axis=1).reshape(-1, d)


def _nonnegative(owner: str, key: str, value: Any) -> float:
    """``value`` as a finite float >= 0; a ValueError naming it otherwise."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        raise ValueError(f"{owner}: {key}={value!r} must be a finite number >= 0")
    if not (math.isfinite(float(value)) and float(value) >= 0.0):
        raise ValueError(f"{owner}: {key}={value!r} must be a finite number >= 0")
    return float(value)


def _count(owner: str, key: str, value: Any) -> int:
    """``value`` as an int >= 1; a ValueError naming it otherwise."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{owner}: {key}={value!r} must be an integer >= 1")
    return int(value)
