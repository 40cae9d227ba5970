"""Explore-then-commit: a user agent of about 30 lines, scored by the bench like any other.

For T0 = ceil(T^(2/3)) rounds it plays x_t = c + delta u_t around the centre c of K
(u_t uniform on the unit sphere of the tangent space V, delta = r / 2) and averages the
one-point estimates (d / delta) f_t(x_t) u_t of the mean loss gradient (Flaxman et al.
2005); then it plays the LMO of that average for the rest of the run. Against i.i.d.
linear losses its regret is O(T^(2/3)) up to constants; against a drifting or adversarial
sequence the committed point can be arbitrarily bad.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bco_gym.agents import Agent


class ExploreCommit(Agent):
    """Explore for ceil(T^(2/3)) rounds with one-point estimates, then commit to the LMO."""

    name = "explore-commit"

    def __init__(self, problem: Any):
        super().__init__(problem)
        explore = min(self.horizon, math.ceil(self.horizon ** (2 / 3)))
        self.params = {"explore": explore, "delta": 0.5 * self.set.inner_radius}

    def _reset(self) -> None:
        self.gradient = np.zeros(self.set.shape)
        self.direction = np.zeros(self.set.shape)
        self.committed: np.ndarray | None = None
        self.played = 0

    def _act(self) -> np.ndarray:
        if self.played < self.params["explore"]:
            direction = self.set.tangent(self.rng.standard_normal(self.set.shape))
            self.direction = direction / np.linalg.norm(direction)
            return self.set.center + self.params["delta"] * self.direction
        if self.committed is None:
            self.committed = np.asarray(self.set.lmo(self.gradient), dtype=float)
        return self.committed

    def _update(self, loss: float, info: Any) -> None:
        if self.played < self.params["explore"]:
            scale = self.set.aff_dim / (self.params["delta"] * self.params["explore"])
            self.gradient += scale * loss * self.direction
        self.played += 1
