"""Block Bandit Conditional Gradient (BBCG): Algorithms 1-2 of Garber & Kretzu (2020)."""

from __future__ import annotations

import math
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from bco_gym.agents.bbcg import bounds as bbcg_bounds
from bco_gym.agents.blocks import BlockBandit
from bco_gym.agents.estimators import (
    Residuals,
    check_estimator,
    estimate_norm_bound,
)
from bco_gym.agents.frank_wolfe import ConditionalGradientRows, conditional_gradient_rows
from bco_gym.agents.schedules import block_length, flag, positive
from bco_gym.agents.theory import ProblemConstants, smoothing_radius_for
from bco_gym.problem import Problem


class BlockBanditCG(BlockBandit):
    r"""Block Bandit Conditional Gradient, exactly Algorithms 1 and 2 of the paper.

    Notation: horizon T, centre c, inner/outer radii r/R, d = ``aff_dim`` (the paper's n;
    exploration lives in V = aff(K) - c), G the Lipschitz and M the value bound of the
    losses, K_delta = c + (1 - delta/r)(K - c).

    Algorithm 1. Split the T rounds into blocks of K_b rounds (the last may be shorter);
    x_0 = x_1 = c. In block m = 1, 2, ...:

    * play y_t = x_{m-1} + delta*u_t with a fresh u_t uniform on the unit sphere of V
      (so y_t is in K), and form g_t = (d/delta) f_t(y_t) u_t;
    * g_hat_m = sum of the block's g_t (one matrix product per slice of the block);
    * for m > 1, x_m = the output of Algorithm 2 on
      F_m(x) = eta*<g_hat_1 + ... + g_hat_{m-1}, x> + ||x - x_1||^2 over K_delta,
      warm-started at x_{m-1}, to Frank-Wolfe gap <= eps (x_1 = x_0 for m = 1).

    Algorithm 2 (:func:`~bco_gym.agents.frank_wolfe.conditional_gradient_rows`): do-while
    Frank-Wolfe with exact line search sigma = clip(gap / (2||v - z||^2), 0, 1), one LMO
    call per iteration, stop once gap = <grad F(z), z - v> <= eps. The LMO of K_delta is
    K's, rescaled: c + (1 - delta/r)(lmo_K(g) - c).

    x_m depends only on blocks 1..m-1 and is first played in block m+1, so the routine
    for block m may run while block m is played: with ``background=True`` it runs in a
    worker thread started at the block's first round and is joined at its last; the
    routine's inputs are fixed at the block's start, so actions and statistics are
    bit-identical to the synchronous mode. As in the paper the routine also runs for the
    last block (its output is never played; its LMO calls are counted).

    Block fast path: a block's plays do not depend on its losses, so ``block_actions()``
    returns the rest of the current slice of the block and ``update_block(losses)``
    absorbs them, bit-identical to round-by-round play; ``block_anchor()`` is
    (x_{m-1}, delta). A block is cut into slices of at most
    :func:`~bco_gym.agents.batch.slice_rounds` rounds (a fixed memory budget): each
    slice's directions are drawn at its start and its part of g_hat_m added at its end,
    at the same boundaries on every path, so memory stays bounded at large dimension.

    Batched (``batch_size`` S): every row runs Algorithm 1 with its own generator, the
    routines of all rows run together (each row's iterations its own), and row i is
    bit for bit the single agent with row i's seed.

    Theorem 1 parameters (d in place of n): K_b = round(sqrt(T)),
    eta = 2cR/(dM) T^(-3/4), delta = c T^(-1/4), eps = 16 R^2 T^(-1/2), for any c > 0 with
    c T^(-1/4) <= r. Then

        E[R_T] <= (3cG + cRG/r + 6GR + 4cG^2R/(dM) + 4RdM/c) T^(3/4),
        E[LMO calls] <= (3/4 + Gc/(2dM) + G^2c^2/(4d^2M^2)) T   (the paper's count;
        :meth:`lmo_call_bound` gives a bound for the routine as implemented).

    The default is the paper's choice c = sqrt(dMr/G), for which the bound reads
    (8(R/r) sqrt(dMrG) + 6GR + 4GR sqrt(rG/(dM))) T^(3/4) (using 3 <= 3R/r).

    The smoothing radius is capped at r. For small T the formula exceeds r -- on the
    simplex with n = 10 and linear losses, c/r = 9, so until T ~ (c/r)^4 ~ 6,600 -- and
    then K_delta = {c}: BBCG plays the centre plus exploration, its regret is linear,
    and a ``UserWarning`` says so. This is a property of the theorem's parameters, not a
    bug; a smaller ``c`` (or a longer horizon) leaves the degenerate regime.

    Residual feedback (``estimator="residual"``; Zhang, Zhou, Ji & Zavlanos 2022):
    g_t = (d/delta)(f_t(y_t) - f_{t-1}(y_{t-1})) u_t, the residual taken round to round in
    play order (across blocks too), f_0(y_0) := 0 for the first round. It is unbiased
    for the smoothed gradient at x_{m-1} given the past, and ||g_t|| <= 2dM/delta; the
    cross terms of Lemma 5's block sum still vanish (g_t minus its conditional mean is a
    martingale difference), so Lemmas 5 and 6 (``lemma_3_regret``) hold with dM/delta
    replaced by 2dM/delta, which :meth:`regret_bound` and :meth:`lmo_call_bound` use;
    Theorem 1's closed form is not claimed for it. The defaults stay the paper's.

    Args:
        problem: the problem (set, horizon, G, M).
        c: Theorem 1's free constant (``SCALE_PARAM``); default sqrt(dMr/G).
        block_size: K_b (default round(sqrt(T))).
        step_size: eta (default from c).
        smoothing_radius: delta in (0, r] (default from c, capped at r).
        tolerance: eps (default 16 R^2 / sqrt(T)).
        background: run the conditional-gradient routine in a worker thread (True or
            False).
        estimator: "one-point" (default, the paper's) or "residual".
        batch_size: None (one run) or S (S runs; see :mod:`~bco_gym.agents.batch`).

    Stats: ``rounds``, ``lmo_calls``, ``projections`` (always 0),
    ``lmo_calls_per_block`` (one entry per finished block; 0 for block 1) and ``cg_gap``
    (the certified gap of the last routine, None before block 2 ends). Batched:
    ``lmo_calls_per_block`` is an int64 array (S, blocks), ``cg_gap`` a float array (S,)
    (NaN before block 2 ends); ``row_stats(i)`` gives row i's single-agent dict.

    References: D. Garber and B. Kretzu, "Improved regret bounds for projection-free
    bandit convex optimization", AISTATS 2020, Algorithms 1-2 and Theorem 1.
    """

    name = "bbcg"
    REFERENCE = "garber2020improved"
    SCALE_PARAM = "c"
    regret_exponent = 0.75

    def __init__(
        self,
        problem: Problem,
        *,
        c: float | None = None,
        block_size: int | None = None,
        step_size: float | None = None,
        smoothing_radius: float | None = None,
        tolerance: float | None = None,
        background: bool = False,
        estimator: str = "one-point",
        batch_size: int | None = None,
    ):
        super().__init__(problem, batch_size)
        owner = type(self).__name__
        T, d, r, R, G, M = ProblemConstants.of(problem).symbols()
        c = positive(owner, "c", c, math.sqrt(d * M * r / G))
        delta = smoothing_radius_for(owner, self.set, smoothing_radius, c, T, exponent=0.25)
        self.params = {
            "c": c,
            "block_size": block_length(owner, block_size, max(1, round(math.sqrt(T))), T),
            "step_size": positive(owner, "step_size", step_size, 2 * c * R / (d * M) * T**-0.75),
            "smoothing_radius": delta,
            "tolerance": positive(owner, "tolerance", tolerance, 16 * R**2 / math.sqrt(T)),
            "background": flag(owner, "background", background),
            "estimator": check_estimator(owner, estimator),
        }
        self._theorem_parameters = (
            block_size is None
            and step_size is None
            and smoothing_radius is None
            and tolerance is None
            and c * T**-0.25 <= r
            and estimator == "one-point"
        )
        self._use_shrunk_set(delta)
        self._executor: ThreadPoolExecutor | None = None
        self._pending: Future | _Finished | None = None

    # -- theory -------------------------------------------------------------------------
    def _constants(self) -> bbcg_bounds.BBCGConstants:
        p = self.params
        return bbcg_bounds.BBCGConstants(
            horizon=self.horizon,
            block_size=p["block_size"],
            dimension=self._dimension,
            inner_radius=self.set.inner_radius,
            outer_radius=self.set.outer_radius,
            lipschitz=self.problem.lipschitz,
            bound=self.problem.bound,
            smoothing_radius=p["smoothing_radius"],
            step_size=p["step_size"],
            tolerance=p["tolerance"],
            estimate_norm=self._estimate_norm(),
        )

    def _estimate_norm(self) -> float:
        """A bound on one round's estimate g_t: dM/delta, 2dM/delta for the residual."""
        return estimate_norm_bound(
            self.params["estimator"],
            self._dimension,
            self.problem.bound,
            self.params["smoothing_radius"],
        )

    def regret_bound(self) -> float:
        """The expected-regret bound for this problem and these parameters.

        The paper's Lemma 3 at the actual parameters
        (:func:`~bco_gym.agents.bbcg.bounds.lemma_3_regret`) and, with Theorem 1's
        parameters (any c with c T^(-1/4) <= r, the other hyperparameters at their
        defaults), the larger of that and the theorem's closed form. The two coincide
        when T is a perfect square; with K_b = round(sqrt(T)) the closed form alone can
        fall slightly below Lemma 3, so the larger one is the valid bound.
        """
        constants = self._constants()
        lemma = bbcg_bounds.lemma_3_regret(constants)
        if not self._theorem_parameters:
            return lemma
        return max(lemma, bbcg_bounds.theorem_1_regret(constants, self.params["c"]))

    def lmo_call_bound(self) -> float:
        """A bound on the expected total LMO calls of the routine as implemented.

        (ceil(T/K_b) - 1)(1 + A H) with A = max(16 R_delta^2/eps^2, 2/eps) and
        H = eps + eta min(2 R_delta E, sqrt(eps) E + (eta/2) E2),
        E = sqrt(K_b) dM/delta + K_b G, E2 = K_b (dM/delta)^2 + K_b^2 G^2 (proofs in
        :mod:`~bco_gym.agents.bbcg.bounds`). It holds at any parameters.

        Where it differs from the paper's count (proof of Theorem 1 with Lemma 4:
        L_m <= max(16R^2/eps^2, 2/eps)(h_{m,1} - eps), and the closed form
        (3/4 + Gc/(2dM) + G^2c^2/(4d^2M^2)) T): Lemma 4 counts the iterations until
        F - min F <= eps, hence its "- eps", while Algorithm 2 as implemented (and as
        stated) is a do-while that stops on the Frank-Wolfe gap, which is never smaller
        than F - min F. So every routine makes at least one call, the certifying one
        (the paper's count can fall below the number of routines: at step_size=1e-12
        on the ball with T = 10^4 it is 1e-5 while 99 calls are made), and every step
        taken lowers F - min F by at least 1/A until the gap, not the excess, is <= eps:
        hence 1 + A h_m instead of A (h_m - eps). The start excess is bounded as in the
        paper, with ||x*_m - x*_{m-1}|| <= eta ||g_hat||/2 (2-strong convexity) and also
        by the diameter 2 R_delta of K_delta.
        """
        return bbcg_bounds.expected_lmo_calls(self._constants())

    # -- stats ----------------------------------------------------------------------------
    def _row_extra_stats(self, row: int) -> dict[str, Any]:
        gap = self._gaps[row]
        return {**super()._row_extra_stats(row), "cg_gap": None if math.isnan(gap) else float(gap)}

    def _batch_extra_stats(self) -> dict[str, Any]:
        return {**super()._batch_extra_stats(), "cg_gap": self._gaps.copy()}

    # -- Algorithm 1 ------------------------------------------------------------------------
    def _reset_rows(self) -> None:
        self._wait_pending()
        super()._reset_rows()
        self._gaps = np.full(self.rows, np.nan)
        self._residuals = Residuals(self.rows)

    def _slice_values(self) -> np.ndarray:
        """The slice's (S, k) values v_s with g_s = (d/delta) v_s u_s: f_s(y_s), or the
        residuals f_s(y_s) - f_{s-1}(y_{s-1}) in play order."""
        if self.params["estimator"] == "residual":
            return self._residuals.of(self._losses)
        return self._losses

    def _block_started(self) -> None:
        """Launch the routine of the block that just began in the worker (``background``)."""
        if self._block > 1 and self.params["background"]:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bbcg")
            self._pending = self._executor.submit(
                self._routine, self._estimate_sum.copy(), self._points
            )

    def _finish_block(self) -> None:
        """End block m: g_hat_m = (d/delta) sum f_s u_s; x_m from the routine (m > 1)."""
        estimate = (self._dimension / self.params["smoothing_radius"]) * self._block_sum
        calls = np.zeros(self.rows, dtype=np.int64)
        if self._block > 1:
            if self._pending is not None:
                result, self._pending = self._pending.result(), None
            else:
                result = self._routine(self._estimate_sum, self._points)
            self._points = result.points
            calls = result.iterations
            self._counters["lmo_calls"] = self._counters["lmo_calls"] + calls  # an array now
            self._gaps = result.gaps
        self._calls_per_block.append(calls)
        self._estimate_sum += estimate

    def _routine(self, estimate_sum: np.ndarray, start: np.ndarray) -> ConditionalGradientRows:
        """Algorithm 2 on F_m(x) = eta*<estimate_sum, x> + ||x - x_1||^2 over K_delta."""
        return conditional_gradient_rows(
            self._lmo,
            self.params["step_size"] * estimate_sum,
            self._anchor,
            start,
            self.params["tolerance"],
        )

    # -- background worker housekeeping ------------------------------------------------------
    def _wait_pending(self) -> None:
        pending = getattr(self, "_pending", None)
        if isinstance(pending, Future):
            pending.result()
        self._pending = None

    def close(self) -> None:
        """Join a running routine and stop the worker thread (restarted on demand)."""
        self._wait_pending()
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    def __getstate__(self) -> dict[str, Any]:
        """Picklable state: a running routine is joined and kept as its result."""
        state = self.__dict__.copy()
        state["_executor"] = None
        if isinstance(self._pending, Future):
            state["_pending"] = _Finished(self._pending.result())
        return state


class _Finished:
    """A routine result standing in for a finished Future (after unpickling)."""

    def __init__(self, result: ConditionalGradientRows):
        self._result = result

    def result(self) -> ConditionalGradientRows:
        return self._result
