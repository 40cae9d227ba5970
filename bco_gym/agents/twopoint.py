"""The protocol of two-point agents: play pairs of points, learn from f_t at both.

With ``feedback="two-point"`` (Agarwal, Dekel & Xiao 2010) an agent's ``act`` returns a
pair (2, *shape) ((S, 2, *shape) batched) and ``update(loss, info)`` reads
``info["losses"]``, f_t at both points, shape (2,) ((S, 2) batched); ``loss`` (their
mean, what the env counts) is checked but not used. :class:`TwoPointFeedback` is the
mixin that does this for a :class:`~bco_gym.agents.batch.BatchAgent`: it validates the
pair losses and hands them to ``_update_pair_rows(pair_losses (S, 2))``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


class TwoPointFeedback:
    """Mixin (before a BatchAgent in the bases): ``update`` from ``info["losses"]``."""

    feedback = "two-point"

    def update(self, loss: Any, info: dict[str, Any] | None = None) -> None:
        """Learn from f_t at both points of the last pairs: ``info["losses"]`` (S, 2)
        ((2,) for a single agent); ``loss`` is their mean, checked finite."""
        agent: Any = self
        agent._check_can_update(info)
        agent._loss_rows(loss)
        agent._update_pair_rows(self._pair_rows(info["losses"]))
        agent._awaiting_update = False
        agent._round += 1

    def _pair_rows(self, values: Any) -> np.ndarray:
        agent: Any = self
        owner = type(self).__name__
        pairs = np.asarray(values, dtype=float)
        expected = (2,) if agent.batch_size is None else (agent.rows, 2)
        if pairs.shape != expected or not math.isfinite(pairs.sum()):
            raise ValueError(
                f"{owner}: info['losses'] must be finite numbers of shape {expected} (f_t at "
                f"both points of each pair), got {values!r}"
            )
        return pairs.reshape(agent.rows, 2)

    def _update_pair_rows(self, pair_losses: np.ndarray) -> None:
        raise NotImplementedError
