"""BBCG with the two-point estimator: Garber & Kretzu's blocks on two-point feedback."""

from __future__ import annotations

import math

import numpy as np

from bco_gym.agents.bbcg.agent import BlockBanditCG
from bco_gym.agents.estimators import two_point_values
from bco_gym.agents.schedules import block_length, positive
from bco_gym.agents.theory import ProblemConstants, smoothing_radius_for
from bco_gym.agents.twopoint import TwoPointFeedback
from bco_gym.problem import Problem


class BlockBanditCG2(TwoPointFeedback, BlockBanditCG):
    r"""Block Bandit Conditional Gradient on two-point feedback (``feedback="two-point"``).

    Algorithms 1 and 2 of Garber & Kretzu (2020) as in
    :class:`~bco_gym.agents.bbcg.agent.BlockBanditCG`, except that round t of block m plays the
    pair (x_{m-1} + delta u_t, x_{m-1} - delta u_t) and forms
    g_t = (d/(2 delta)) (f_t(x_{m-1} + delta u_t) - f_t(x_{m-1} - delta u_t)) u_t,
    unbiased for the smoothed gradient at x_{m-1}, with ||g_t|| <= dG. No block fast
    path (the runner plays it round by round).

    This library's derivation. The proof of Lemma 5 bounds E||g_hat_m||^2 by K_b times
    the squared norm bound of one estimate plus K_b^2 G^2, so it becomes
    K_b (dG)^2 + K_b^2 G^2. Lemma 6 (the regret lemma, ``lemma_3_regret`` in
    :mod:`~bco_gym.agents.bbcg.bounds`) only uses that bound, and its smoothing terms
    hold for the mean of the two plays (each within delta G of f_t(x_{m-1})): with dG in
    place of dM/delta,

        E[R_T] <= (3 delta G + delta R G/r + G sqrt(eps)
                   + eta G^2 (d sqrt(K_b) + d^2 + 2 K_b)) T + 4R^2/eta.

    delta no longer appears in the variance terms, so it only pays the smoothing terms.
    Following Theorem 1's proof, K_b = round(sqrt(T)) and eps = 16 R^2/sqrt(T) (so
    G sqrt(eps) T = 4RG T^(3/4)); eta minimises 4R^2/eta + eta G^2 T Q with
    Q = d sqrt(K_b) + d^2 + 2K_b, and delta = r/sqrt(T):

        eta = 2cR/(G sqrt(T Q)),   delta = r/sqrt(T),
        E[R_T] <= 2(c + 1/c) R G sqrt(T Q) + 4 R G T^(3/4) + (3r + R) G sqrt(T),

    which at c = 1 (``SCALE_PARAM``) and K_b = sqrt(T) is (4 sqrt(2) + 4) R G T^(3/4)
    plus lower-order terms: still O(T^(3/4)) (the blocks cost K_b G^2 eta T, as in the
    full-information projection-free rate), but free of M and of the d^2 M^2/delta^2
    variance of one point. :meth:`regret_bound` is Lemma 6 at the actual parameters;
    :meth:`lmo_call_bound` is BBCG's with the same estimate norm dG.

    Args:
        problem: a two-point problem (set, horizon, G, M).
        c: the scale constant of eta (default 1).
        block_size: K_b (default round(sqrt(T))).
        step_size: eta (default 2cR/(G sqrt(T Q))).
        smoothing_radius: delta in (0, r] (default r/sqrt(T)).
        tolerance: eps (default 16 R^2/sqrt(T)).
        background: run the routine in a worker thread (True or False).
        batch_size: None (one run) or S (S runs; see :mod:`~bco_gym.agents.batch`).

    References: D. Garber and B. Kretzu, AISTATS 2020 (Algorithms 1-2, Lemmas 5-6,
    Theorem 1); A. Agarwal, O. Dekel and L. Xiao, COLT 2010.
    """

    name = "bbcg2"
    REFERENCE = ("garber2020improved", "agarwal2010optimal")
    supports_blocks = True  # blocks of pairs (S, k, 2, *shape); update_block takes (S, k, 2)
    regret_exponent = 0.75
    _round_losses = (2,)

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
        batch_size: int | None = None,
    ):
        owner = type(self).__name__
        T, d, r, R, G, _M = ProblemConstants.of(problem).symbols()
        c = positive(owner, "c", c, 1.0)
        K = block_length(owner, block_size, max(1, round(math.sqrt(T))), T)
        spread = d * math.sqrt(K) + d * d + 2 * K
        eta = positive(owner, "step_size", step_size, 2 * c * R / (G * math.sqrt(T * spread)))
        delta = smoothing_radius_for(owner, problem.set, smoothing_radius, r, T, exponent=0.5)
        super().__init__(
            problem,
            c=c,
            block_size=K,
            step_size=eta,
            smoothing_radius=delta,
            tolerance=tolerance,
            background=background,
            batch_size=batch_size,
        )
        del self.params["estimator"]  # the two-point estimator, not an option here

    def _estimate_norm(self) -> float:
        """||g_t|| <= dG for the two-point estimate, whatever delta."""
        return self._dimension * self.problem.lipschitz

    def regret_bound(self) -> float:
        """Lemma 6 at the actual parameters with the estimate norm dG (class docstring)."""
        from bco_gym.agents.bbcg import bounds as bbcg_bounds

        return bbcg_bounds.lemma_3_regret(self._constants())

    def _slice_plays(self, offsets: np.ndarray) -> np.ndarray:
        """The slice's pairs (S, k, 2, *shape): x_{m-1} + delta u_t and x_{m-1} - delta u_t."""
        anchors = self._points[:, np.newaxis]
        return np.stack((anchors + offsets, anchors - offsets), axis=2)

    def _slice_values(self) -> np.ndarray:
        """(f_s(x + delta u_s) - f_s(x - delta u_s))/2, so that g_s = (d/delta) v_s u_s."""
        return two_point_values(self._losses)

    def _update_pair_rows(self, pair_losses: np.ndarray) -> None:
        self._losses[:, self._position] = pair_losses
        self._advance(1)
