"""The random agent: independent points of K, the no-learning baseline."""

from __future__ import annotations

import numpy as np

from bco_gym.agents.batch import BatchAgent, slice_rounds
from bco_gym.agents.schedules import block_length
from bco_gym.problem import Problem

#: The default block size of the fast path (at most the memory budget's slice).
DEFAULT_BLOCK_SIZE = 1024


class RandomAgent(BatchAgent):
    """Plays x_t = ``set.sample(rng)`` each round, ignoring all feedback.

    Its expected regret is linear in T whenever the best action beats the mean of the
    set's sampling distribution. Row i of a batch samples with its own generator (the
    sets sample one point per call, so each row costs one call per round). Block fast
    path: the rounds are cut into blocks of ``block_size`` from round 0, each handed out
    in slices of at most :func:`~bco_gym.agents.batch.slice_rounds` plays;
    ``block_actions`` draws the rest of the current slice in the same order as
    round-by-round play, so both paths give identical points.

    Args:
        problem: the problem.
        block_size: rounds per block of the fast path (default min(1024, T, the
            budget's slice), so a block's memory is bounded at large dimension).
        batch_size: None (one run) or S (S runs; see :mod:`~bco_gym.agents.batch`).
    """

    name = "random"
    supports_blocks = True
    OPTIONS = ("block_size",)
    regret_exponent = 1.0

    def __init__(
        self, problem: Problem, *, block_size: int | None = None, batch_size: int | None = None
    ):
        super().__init__(problem, batch_size)
        self._slice = slice_rounds(self.set.dim)
        default = min(DEFAULT_BLOCK_SIZE, self.horizon, self._slice)
        self.params = {
            "block_size": block_length(type(self).__name__, block_size, default, self.horizon)
        }

    def _reset_rows(self) -> None:
        pass

    def _act_rows(self) -> np.ndarray:
        return self._draw(1)[:, 0]

    def _update_rows(self, losses: float | np.ndarray, gradients: np.ndarray | None) -> None:
        pass

    def _block_rows(self) -> np.ndarray:
        size = self.params["block_size"]
        block_end = min((self._round // size + 1) * size, self.horizon)
        return self._draw(min(block_end - self._round, self._slice))

    def _update_block_rows(self, losses: np.ndarray) -> None:
        pass

    def _draw(self, count: int) -> np.ndarray:
        """(S, count, *shape): ``count`` samples of each row, in round order."""
        plays = np.empty((self.rows, count, *self.set.shape))
        for row, rng in enumerate(self.rngs):
            for index in range(count):
                plays[row, index] = self.set.sample(rng)
        return plays
