"""Single agents seen as one batched agent: the runner's loops speak only the batched API.

The batched-agent API (BRIEF/DESIGN: ``batch_size`` S, ``reset(seed=[...])``,
``act(obs) -> (S, *shape)``, ``update(losses (S,), info)``, the block path with (S, k)
arrays, ``stats`` counters of shape (S,), ``row_stats(i)``) is what the loops call.
:class:`RowAgents` gives it to S single agents by calling each in turn: exact (row i
*is* the single agent) and the way every agent runs in a batch when it has no batched
implementation (SB3 agents, agents users write), and the way :func:`run` plays its one
agent (a batch of one: the loops are the same code for one run and for many).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class RowAgents:
    """S single agents (same class and parameters) played as one batched agent.

    Args:
        agents: the single agents, row i = ``agents[i]``.
    """

    def __init__(self, agents: Sequence[Any]):
        self.agents = list(agents)
        if not self.agents:
            raise ValueError("RowAgents needs at least one agent")
        first = self.agents[0]
        self.batch_size = len(self.agents)
        self.name = first.name
        self.problem = first.problem
        self.horizon = first.horizon
        self.feedback = first.feedback
        self.supports_blocks = bool(getattr(first, "supports_blocks", False))
        self.SCALE_PARAM = getattr(first, "SCALE_PARAM", None)
        self._single = self.batch_size == 1
        self.failed_row: int | None = None  # the row whose agent raised, if one did

    @property
    def params(self) -> dict[str, Any]:
        return self.agents[0].params

    @property
    def stats(self) -> dict[str, Any]:
        """Counters as arrays of shape (S,); ``rounds`` an int, as a batched agent's."""
        keys = self.agents[0].stats.keys()
        stats: dict[str, Any] = {}
        for key in keys:
            values = [agent.stats.get(key) for agent in self.agents]
            stats[key] = values[0] if key == "rounds" else np.array(values)
        return stats

    def row_stats(self, row: int) -> dict[str, Any]:
        """Row ``row``'s stats, as the single agent's dict."""
        return self.agents[row].stats

    def regret_bound(self) -> float | None:
        return self.agents[0].regret_bound()

    def reset(self, seed: Sequence[int | None]) -> None:
        seeds = list(seed)
        if len(seeds) != self.batch_size:
            raise ValueError(f"RowAgents.reset: {len(seeds)} seeds for {self.batch_size} rows")
        for agent, row_seed in zip(self.agents, seeds, strict=True):
            agent.reset(seed=row_seed)

    def close(self) -> None:
        for agent in self.agents:
            agent.close()

    # -- per round -----------------------------------------------------------------------
    def act(self, observations: np.ndarray) -> np.ndarray:
        """Each row's play; the row whose agent raised is kept as ``failed_row``."""
        if self._single:
            self.failed_row = 0
            return np.asarray(self.agents[0].act(observations[0]))[np.newaxis]
        plays = []
        for row, (agent, observation) in enumerate(zip(self.agents, observations, strict=True)):
            try:
                plays.append(agent.act(observation))
            except Exception:
                self.failed_row = row
                raise
        return np.stack(plays)

    def update(self, losses: np.ndarray, info: dict[str, Any]) -> None:
        gradients, pairs = info.get("gradient"), info.get("losses")
        for row, agent in enumerate(self.agents):
            row_info = {"loss": float(losses[row]), "t": info["t"]}
            if gradients is not None:
                row_info["gradient"] = gradients[row]
            if pairs is not None:  # two-point feedback: f_t at both points
                row_info["losses"] = pairs[row]
            try:
                agent.update(row_info["loss"], row_info)
            except Exception:
                self.failed_row = row
                raise

    # -- the block path ------------------------------------------------------------------
    def block_actions(self) -> np.ndarray:
        if self._single:
            return np.asarray(self.agents[0].block_actions())[np.newaxis]
        blocks = [agent.block_actions() for agent in self.agents]
        if len({len(block) for block in blocks}) != 1:
            raise RuntimeError(f"{self.name}: rows returned blocks of different lengths (bug)")
        return np.stack(blocks)

    def block_anchor(self) -> tuple[np.ndarray, float] | None:
        anchors = [agent.block_anchor() for agent in self.agents]
        if any(a is None for a in anchors) or len({float(a[1]) for a in anchors}) != 1:
            return None
        return np.stack([a[0] for a in anchors]), float(anchors[0][1])

    def update_block(self, losses: np.ndarray) -> None:
        for agent, row_losses in zip(self.agents, losses, strict=True):
            agent.update_block(row_losses)
