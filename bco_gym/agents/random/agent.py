"""The random agent: independent points of K, the no-learning baseline."""

from __future__ import annotations

import numpy as np

from bco_gym.agents.batch import BatchAgent, slice_rounds
from bco_gym.agents.schedules import block_length
from bco_gym.problem import Problem
from bco_gym.sets.mixtures import vertex_mixture

#: The default block size of the fast path (at most the memory budget's slice).
DEFAULT_BLOCK_SIZE = 1024
#: The sampling laws: the set's own (``sample_many``) and the vertex mixture.
LAWS = ("set", "vertex-mixture")


class RandomAgent(BatchAgent):
    """Plays x_t i.i.d. from a sampling law on K, ignoring all feedback.

    Two laws (``law``): ``"set"`` (the default, and the law of every result published
    before it had a choice) is the set's own ``sample`` distribution, drawn by
    ``set.sample_many``; ``"vertex-mixture"`` is
    :func:`~bco_gym.sets.mixtures.vertex_mixture`: Dirichlet(1, ..., 1) weights on the
    centre and k i.i.d. vertices of the set's vertex law (uniform permutation matrices,
    uniform s-t paths, rank-one matrices rho u v^T; see :mod:`bco_gym.sets.mixtures`),
    which costs no LMO call on the Birkhoff and flow polytopes and no SVD on the
    nuclear-norm ball (random play at scale; standard-v2's scale scenarios use it).

    Its expected regret is linear in T whenever the best action beats the mean of the
    set's sampling distribution. The rounds are cut into blocks of ``block_size`` from
    round 0, each cut into slices of at most :func:`~bco_gym.agents.batch.slice_rounds`
    rounds. At the first round of a slice every row draws the whole slice at once with
    ``set.sample_many(rng, length)`` from its own generator (one call per row and
    slice, vectorised for the built-in sets); ``act`` hands the slice out round by
    round, ``block_actions`` hands out the rest of it. The chunks depend only on the
    round, never on S or on the path, so row i of a batch is bit for bit the single
    agent reset with s_i, and both paths give identical points. Memory: one slice per
    row, as the block path.

    Args:
        problem: the problem.
        law: ``"set"`` (default) or ``"vertex-mixture"``.
        block_size: rounds per block of the fast path (default min(1024, T, the
            budget's slice), so a block's memory is bounded at large dimension).
        batch_size: None (one run) or S (S runs; see :mod:`~bco_gym.agents.batch`).
    """

    name = "random"
    REFERENCE = None
    supports_blocks = True
    regret_exponent = 1.0

    def __init__(
        self,
        problem: Problem,
        *,
        law: str = "set",
        block_size: int | None = None,
        batch_size: int | None = None,
    ):
        super().__init__(problem, batch_size)
        if law not in LAWS:
            raise ValueError(f"RandomAgent: law={law!r}; allowed: {', '.join(map(repr, LAWS))}")
        self._slice = slice_rounds(self.set.dim)
        default = min(DEFAULT_BLOCK_SIZE, self.horizon, self._slice)
        self.params = {
            "law": law,
            "block_size": block_length(type(self).__name__, block_size, default, self.horizon),
        }
        self._draw = self.set.sample_many if law == "set" else self._mixture
        self._chunk = np.empty((self.rows, 0, *self.set.shape))
        self._next = 0  # the chunk's first unplayed index

    def _reset_rows(self) -> None:
        self._chunk = np.empty((self.rows, 0, *self.set.shape))
        self._next = 0

    def _act_rows(self) -> np.ndarray:
        self._refill()
        plays = self._chunk[:, self._next].copy()
        self._next += 1
        return plays

    def _update_rows(self, losses: float | np.ndarray, gradients: np.ndarray | None) -> None:
        pass

    def _block_rows(self) -> np.ndarray:
        self._refill()
        plays = self._chunk[:, self._next :]
        self._next = self._chunk.shape[1]
        return plays

    def _update_block_rows(self, losses: np.ndarray) -> None:
        pass

    def _refill(self) -> None:
        """At a slice's first round (the chunk played out): draw the slice, (S, k, *shape)."""
        if self._next < self._chunk.shape[1]:
            return
        size = self.params["block_size"]
        block_end = min((self._round // size + 1) * size, self.horizon)
        count = min(block_end - self._round, self._slice)
        self._chunk = np.stack([self._draw(rng, count) for rng in self.rngs])
        self._next = 0

    def _mixture(self, rng: np.random.Generator, count: int) -> np.ndarray:
        return vertex_mixture(self.set, rng, count)
