"""Blocks of rounds played at one point plus exploration: the machinery Garber &
Kretzu's block agents share (``bbcg``, ``bbcg2``, ``loo-bbgd``).

The horizon is split into blocks of K rounds (the last may be shorter). Block m plays
y_t = x_{m-1} + delta u_t, u_t uniform on the unit sphere of V = aff(K) - c (so y_t is
in K for x_{m-1} in K_delta), and sums f_t(y_t) u_t (or the values
:meth:`BlockBandit._slice_values` says) into the block's estimate; how x_m follows from
the block's estimate is each algorithm's (:meth:`BlockBandit._finish_block`).

A block's plays do not depend on its losses, so ``block_actions()`` returns the rest of
the current slice of the block and ``update_block(losses)`` absorbs them, bit-identical
to round-by-round play; ``block_anchor()`` is (x_{m-1}, delta). A block is cut into
slices of at most :func:`~bco_gym.agents.batch.slice_rounds` rounds (a fixed memory
budget): each slice's directions are drawn at its start and its part of the block's sum
added at its end, at the same boundaries on every path, so memory stays bounded at large
dimension.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bco_gym.agents.batch import BatchAgent, RowOracle, slice_rounds
from bco_gym.agents.estimators import tangent_gaussian_rows
from bco_gym.problem import Problem


class BlockBandit(BatchAgent):
    """An agent that plays blocks of rounds at x_{m-1} + delta u_t (module docstring).

    A subclass resolves ``params`` (with ``block_size`` and ``smoothing_radius``), calls
    :meth:`_use_shrunk_set` with delta, and ends each block in :meth:`_finish_block`
    (from ``self._block_sum``, the block's sum of v_s u_s; appending the block's oracle
    calls to ``self._calls_per_block``). Hooks: :meth:`_slice_values` (the v_s of the
    slice, f_s(y_s) by default), :meth:`_slice_plays` (one point by default),
    :meth:`_block_started` (nothing by default).

    Stats: ``lmo_calls_per_block`` (one entry per finished block; 0 for block 1),
    an int64 array (S, blocks) batched.
    """

    supports_blocks = True
    #: The shape of one round's losses beyond the row axis: () one point, (2,) two.
    _round_losses: tuple[int, ...] = ()

    def __init__(self, problem: Problem, batch_size: int | None = None):
        super().__init__(problem, batch_size)
        self._dimension = self.set.aff_dim
        self._slice = slice_rounds(self.set.dim)

    def _use_shrunk_set(self, delta: float) -> None:
        """K_delta = c + (1 - delta/r)(K - c) and its LMO (K's, rescaled about c)."""
        self._shrunk = self.set.shrink(delta)
        self._lmo = RowOracle(self._shrunk.lmo_many, self._shrunk.lmo)

    @property
    def iterate(self) -> np.ndarray:
        """x_{m-1}, the point played (plus exploration) in the current block (a copy):
        (S, *shape) batched, ``set.shape`` single; after block m's last update, x_m."""
        return self._points.copy() if self.batch_size is not None else self._points[0].copy()

    # -- stats ----------------------------------------------------------------------------
    def _row_extra_stats(self, row: int) -> dict[str, Any]:
        return {"lmo_calls_per_block": [int(calls[row]) for calls in self._calls_per_block]}

    def _batch_extra_stats(self) -> dict[str, Any]:
        calls = np.zeros((self.rows, len(self._calls_per_block)), dtype=np.int64)
        for block, per_row in enumerate(self._calls_per_block):
            calls[:, block] = per_row
        return {"lmo_calls_per_block": calls}

    # -- row hooks ------------------------------------------------------------------------
    def _reset_rows(self) -> None:
        self._anchor = np.array(self.set.center, dtype=float)  # x_1 = x_0 = c, never modified
        self._points = self._rows_of(self._anchor)  # x_{m-1} of every row
        self._estimate_sum = np.zeros_like(self._points)  # g_hat_1 + ... + g_hat_{m-1}
        self._block_sum = np.zeros_like(self._points)  # sum v_s u_s over the block so far
        self._block = 0  # index m of the current block (0 before the first)
        self._block_start = 0
        self._block_rounds = 0  # rounds in the current block
        self._block_played = 0  # rounds of the current block already played
        self._slice_rounds = 0  # rounds in the current slice
        self._position = 0  # rounds of the current slice already played
        # The slice's u_t = P_V g_t / ||P_V g_t||, kept as P_V g_t and its norms.
        self._tangent = np.empty((self.rows, 0, *self.set.shape))
        self._norms = np.empty((self.rows, 0))
        self._plays = self._tangent
        self._losses = np.empty((self.rows, 0))
        self._calls_per_block: list[np.ndarray] = []

    def _act_rows(self) -> np.ndarray:
        self._start_slice_if_needed()
        return self._plays[:, self._position].copy()

    def _update_rows(self, losses: float | np.ndarray, gradients: np.ndarray | None) -> None:
        self._losses[:, self._position] = losses
        self._advance(1)

    def _block_rows(self) -> np.ndarray:
        self._start_slice_if_needed()
        # No copy: the rest of the slice is handed over whole, and update_block must
        # follow and end the slice, so these plays are never read again.
        return self._plays[:, self._position :]

    def _block_anchor_rows(self) -> tuple[np.ndarray, float]:
        """x_{m-1} and delta: the block plays x_{m-1} + delta*u_t, x_{m-1} in K_delta."""
        return self._points, self.params["smoothing_radius"]

    def _update_block_rows(self, losses: np.ndarray) -> None:
        self._losses[:, self._position : self._position + losses.shape[1]] = losses
        self._advance(losses.shape[1])

    # -- blocks and slices ------------------------------------------------------------------
    def _advance(self, rounds: int) -> None:
        self._position += rounds
        self._block_played += rounds
        if self._position == self._slice_rounds:
            self._finish_slice()
            if self._block_played == self._block_rounds:
                self._finish_block()

    def _start_slice_if_needed(self) -> None:
        """Draw the next slice's directions and plays (starting a block if one ended)."""
        if self._position < self._slice_rounds:
            return
        if self._block_played == self._block_rounds:
            self._start_block()
        k = min(self._slice, self._block_rounds - self._block_played)
        self._slice_rounds, self._position = k, 0
        self._tangent, self._norms = tangent_gaussian_rows(self.set, self.rngs, k)
        # y_t = x_{m-1} + delta * u_t = x_{m-1} + (delta/||P_V g_t||) P_V g_t, in two passes.
        scale = self.params["smoothing_radius"] / self._norms
        offsets = self._tangent * scale.reshape(scale.shape + (1,) * len(self.set.shape))
        self._plays = self._slice_plays(offsets)
        self._losses = np.empty((self.rows, k, *self._round_losses))

    def _slice_plays(self, offsets: np.ndarray) -> np.ndarray:
        """The slice's plays from delta*u_t (S, k, *shape): x_{m-1} + delta*u_t (in place)."""
        offsets += self._points[:, np.newaxis]
        return offsets

    def _slice_values(self) -> np.ndarray:
        """The slice's (S, k) values v_s with g_s = (d/delta) v_s u_s: f_s(y_s)."""
        return self._losses

    def _start_block(self) -> None:
        """Begin block m+1."""
        self._block += 1
        self._block_start += self._block_rounds
        self._block_rounds = min(self.params["block_size"], self.horizon - self._block_start)
        self._block_played = 0
        self._block_sum = np.zeros_like(self._points)
        self._block_started()

    def _block_started(self) -> None:
        """What an algorithm does when a block begins (BBCG's worker starts its routine)."""

    def _finish_slice(self) -> None:
        """Add the slice's sum_s v_s u_s = sum_s (v_s/||P_V g_s||) P_V g_s, row by row."""
        weights = self._slice_values() / self._norms
        flat = self._tangent.reshape(self.rows, self._slice_rounds, -1)
        # Each row's rounds added one after another (portable.vecmat's order, row by row):
        # no BLAS product, whose order depends on the CPU, and each row's value its own.
        sums = np.add.reduce(np.multiply(weights[:, :, np.newaxis], flat), axis=1)
        self._block_sum += sums.reshape(self._block_sum.shape)

    def _finish_block(self) -> None:
        """End block m: x_m from the block's estimate (each algorithm's)."""
        raise NotImplementedError
