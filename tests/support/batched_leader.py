"""The worked BatchAgent example of docs/your_own_agent.md (kept equal to it by a test)."""

from __future__ import annotations

from typing import Any

import numpy as np

from bco_gym.agents import BatchAgent


# -- begin docs example --
class BatchedLeader(BatchAgent):
    """examples/your_own_agent.py's EstimatedLeader over S rows at once: row i plays
    x_t = c + (1 - delta/r)(lmo(sum of its estimates) - c) plus delta times a direction
    drawn from its own generator, and learns g_t = (d / delta) f_t(y_t) u_t."""

    name = "batched-leader"
    SCALE_PARAM = "c_delta"
    THEORY_DEFAULTS = False

    def __init__(self, problem: Any, c_delta: float = 1.0, batch_size: int | None = None):
        super().__init__(problem, batch_size)  # self.rows = S (1 when single)
        delta = c_delta * self.set.inner_radius * problem.horizon**-0.25
        self.params = {"c_delta": float(c_delta), "delta": float(delta)}

    def _reset_rows(self) -> None:  # every row's state, shape (S, *shape)
        self.estimates = np.zeros((self.rows, *self.set.shape))

    def _act_rows(self) -> np.ndarray:  # the S plays of this round, (S, *shape)
        center, delta = self.set.center, self.params["delta"]
        if self._round:
            leaders = self.set.lmo_many(self.estimates)  # one LMO per row
            self._counters["lmo_calls"] += 1  # every row made one call
        else:
            leaders = np.broadcast_to(center, self.estimates.shape)
        draws = np.stack([rng.standard_normal(self.set.shape) for rng in self.rngs])
        directions = self.set.tangent_many(draws)  # in aff(K)
        norms = np.linalg.norm(directions.reshape(self.rows, -1), axis=1)
        self.directions = directions / norms.reshape(self._column_shape)
        shrink = 1.0 - delta / self.set.inner_radius
        return center + shrink * (leaders - center) + delta * self.directions

    def _update_rows(self, losses: Any, gradients: Any) -> None:  # losses (S,)
        scale = self.set.aff_dim / self.params["delta"]
        column = np.reshape(np.asarray(losses, dtype=float), self._column_shape)
        self.estimates += scale * column * self.directions


# -- end docs example --
