"""The random agent: independent points of K, the no-learning baseline."""

from __future__ import annotations

from typing import Any

import numpy as np

from bco_gym.agents.base import Agent
from bco_gym.agents.schedules import block_length
from bco_gym.problem import Problem


class RandomAgent(Agent):
    """Plays x_t = ``set.sample(rng)`` each round, ignoring all feedback.

    Its expected regret is linear in T whenever the best action beats the mean of the
    set's sampling distribution. Block fast path: the rounds are cut into blocks of
    ``block_size`` from round 0; ``block_actions`` draws the rest of the current block in
    the same order as round-by-round play, so both paths give identical points.

    Args:
        problem: the problem.
        block_size: rounds per block of the fast path (default 1024).
    """

    name = "random"
    supports_blocks = True
    OPTIONS = ("block_size",)
    regret_exponent = 1.0

    def __init__(self, problem: Problem, *, block_size: int | None = None):
        super().__init__(problem)
        self.params = {
            "block_size": block_length(
                type(self).__name__, block_size, min(1024, self.horizon), self.horizon
            )
        }

    def _reset(self) -> None:
        pass

    def _act(self) -> np.ndarray:
        return np.asarray(self.set.sample(self.rng), dtype=float)

    def _update(self, loss: float, info: dict[str, Any] | None) -> None:
        pass

    def _block_actions(self) -> np.ndarray:
        size = self.params["block_size"]
        stop = min((self._round // size + 1) * size, self.horizon)
        return np.stack([self._act() for _ in range(self._round, stop)])

    def _update_block(self, losses: np.ndarray) -> None:
        pass
