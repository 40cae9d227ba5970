"""The oblivious adversary: loss sequences generated in seeded chunks.

A :class:`LossSequence` is the whole sequence f_1, f_2, ... on a set K, fixed by one
seed drawn at :meth:`LossSequence.reset` before any action is seen. Round t's
parameters live in chunk k = t // chunk_size, drawn from its own generator
``default_rng([seed, 1, k])``; so memory stays flat in the horizon and the same seed
gives the same losses whatever order or batch size the rounds are read in.

Rounds are numbered from 0 in code (round t here is f_{t+1} in the paper).
"""

from __future__ import annotations

import abc
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from bco_gym.sets.base import ConvexSet

Params = dict[str, np.ndarray]


@dataclass(frozen=True)
class Comparator:
    """The best fixed action in hindsight for the first ``horizon`` rounds.

    Attributes:
        horizon: the prefix length T' (rounds 0..T'-1).
        point: a minimiser x* in K of sum_{t < T'} f_t(x) (certified up to ``gap``).
        value: sum_{t < T'} f_t(point).
        gap: certified bound on value - min_K sum f_t (0.0 when exact).
    """

    horizon: int
    point: np.ndarray
    value: float
    gap: float


class LossSequence(abc.ABC):
    """An oblivious loss sequence f_0, f_1, ... on a convex set.

    Subclasses draw the sequence-level parameters (:meth:`_draw_globals`) and the
    per-round parameters of one chunk (:meth:`_draw_chunk`), evaluate losses for a
    slice of a chunk at a batch of points (:meth:`_evaluate`) and gradients
    (:meth:`_gradient`), state ``lipschitz`` (G) and ``bound`` (M) over K, and compute the
    offline comparator (:meth:`comparator`).
    """

    name: ClassVar[str]
    chunk_size: ClassVar[int] = 1024

    def __init__(self, convex_set: ConvexSet):
        if not isinstance(convex_set, ConvexSet):
            raise TypeError(f"loss family needs a ConvexSet, got {type(convex_set).__name__}")
        self.set = convex_set
        self._seed: int | None = None
        self._globals: Params = {}
        self._cached_index = -1
        self._cached: Params = {}

    # -- constants ----------------------------------------------------------------------
    @property
    @abc.abstractmethod
    def lipschitz(self) -> float:
        """G: a bound on the (sub)gradient norm of every f_t over K."""

    @property
    @abc.abstractmethod
    def bound(self) -> float:
        """M: a bound on |f_t(x)| over K."""

    def describe(self) -> dict[str, Any]:
        """The family's name and parameters (JSON-serialisable) for result metadata."""
        return {"name": self.name}

    # -- the sequence ---------------------------------------------------------------------
    def reset(self, rng: np.random.Generator) -> None:
        """Fix the whole sequence from one draw of ``rng`` (the env's ``np_random``)."""
        self._seed = int(rng.integers(0, 2**63 - 1))
        self._globals = self._draw_globals(np.random.default_rng([self._seed, 0]))
        self._cached_index = -1
        self._cached = {}

    @property
    def seed(self) -> int:
        if self._seed is None:
            raise RuntimeError(f"{type(self).__name__}: call reset(rng) before reading losses")
        return self._seed

    def chunk(self, index: int) -> Params:
        """Per-round parameters of rounds [index*chunk_size, (index+1)*chunk_size)."""
        if index != self._cached_index:
            rng = np.random.default_rng([self.seed, 1, index])
            self._cached = self._draw_chunk(rng, self.chunk_size)
            self._cached_index = index
        return self._cached

    def chunks(self, start: int, stop: int) -> Iterator[tuple[int, int, Params, slice]]:
        """Yield (first round, end round, chunk params, slice) covering [start, stop)."""
        t = start
        while t < stop:
            index, offset = divmod(t, self.chunk_size)
            end = min(stop, (index + 1) * self.chunk_size)
            yield t, end, self.chunk(index), slice(offset, offset + end - t)
            t = end

    def loss(self, t: int, x: np.ndarray) -> float:
        """f_t(x) for one round."""
        index, offset = divmod(t, self.chunk_size)
        values = self._evaluate(self.chunk(index), slice(offset, offset + 1), x[np.newaxis])
        return float(values[0])

    def losses(self, start: int, points: np.ndarray) -> np.ndarray:
        """f_t(points[t - start]) for t = start, ..., start + len(points) - 1 (float64)."""
        points = np.asarray(points, dtype=float)
        out = np.empty(len(points))
        for t0, t1, params, part in self.chunks(start, start + len(points)):
            out[t0 - start : t1 - start] = self._evaluate(
                params, part, points[t0 - start : t1 - start]
            )
        return out

    def gradient(self, t: int, x: np.ndarray) -> np.ndarray:
        """A (sub)gradient of f_t at x, shaped like x."""
        index, offset = divmod(t, self.chunk_size)
        return self._gradient(self.chunk(index), offset, x)

    # -- offline comparator ----------------------------------------------------------------
    @abc.abstractmethod
    def comparator(self, checkpoints: Sequence[int]) -> list[Comparator]:
        """min_{x in K} sum_{t < T'} f_t(x) for each prefix length T' in ``checkpoints``."""

    # -- hooks for subclasses ------------------------------------------------------------
    def _draw_globals(self, rng: np.random.Generator) -> Params:
        """Sequence-level parameters (default: none)."""
        return {}

    @abc.abstractmethod
    def _draw_chunk(self, rng: np.random.Generator, size: int) -> Params:
        """Per-round parameters for ``size`` consecutive rounds (arrays with leading axis size)."""

    @abc.abstractmethod
    def _evaluate(self, params: Params, part: slice, points: np.ndarray) -> np.ndarray:
        """Losses of rounds params[part] at points (len(points) == rounds in part)."""

    @abc.abstractmethod
    def _gradient(self, params: Params, offset: int, x: np.ndarray) -> np.ndarray:
        """Gradient of the loss of round ``offset`` of the chunk at x."""


def check_checkpoints(checkpoints: Sequence[int]) -> list[int]:
    """Sorted unique positive prefix lengths; ValueError otherwise."""
    values = sorted({int(c) for c in checkpoints})
    if not values or values[0] < 1:
        raise ValueError(f"checkpoints {list(checkpoints)!r} must be positive prefix lengths")
    return values
