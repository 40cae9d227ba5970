"""A user agent feasible on every set (plays extreme points), for the bench's tests."""

from __future__ import annotations

from typing import Any

import numpy as np

from bco_gym.agents import Agent


class Vertex(Agent):
    """Plays LMO(g) for a Gaussian direction g: a random extreme point of K every round."""

    name = "vertex"

    def _reset(self) -> None:
        self.plays = 0

    def _act(self) -> np.ndarray:
        return np.asarray(self.set.lmo(self.rng.standard_normal(self.set.shape)), dtype=float)

    def _update(self, loss: float, info: Any) -> None:
        self.plays += 1
