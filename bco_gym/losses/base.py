"""The oblivious adversary: loss sequences generated in seeded chunks.

A :class:`LossSequence` is the whole sequence f_0, f_1, ... on a set K, fixed by one
seed drawn at :meth:`LossSequence.reset` before any action is seen. Round t's
parameters live in chunk k = t // chunk_size, drawn from its own generator
``default_rng([seed, 1, k])``; parameters shared by all rounds come from
``default_rng([seed, 0])``. So memory stays flat in the horizon and the same seed
gives the same losses whatever order or batch size the rounds are read in.

The chunk size depends only on the family and the set (about 2^19 floats of
per-round parameters per chunk, at most 4096 rounds), never on how rounds are read.

Rounds are numbered from 0 in code (round t here is f_{t+1} in the paper).
"""

from __future__ import annotations

import abc
import numbers
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from bco_gym.io import json_digest
from bco_gym.portable import row_dot as row_dot  # the losses' row products, re-exported
from bco_gym.sets.base import ConvexSet

Params = dict[str, np.ndarray]

MAX_CHUNK_ROUNDS = 4096
CHUNK_FLOATS = 1 << 19


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


#: Chunks a sequence keeps after reading them (:meth:`LossSequence.chunk`).
RECENT_CHUNKS = 2


def chunk_size_for(floats_per_round: int) -> int:
    """Rounds per chunk: a power of two with about CHUNK_FLOATS floats, in [16, 4096]."""
    rounds = CHUNK_FLOATS // max(1, int(floats_per_round))
    return int(min(MAX_CHUNK_ROUNDS, max(16, 1 << max(0, rounds.bit_length() - 1))))


class LossSequence(abc.ABC):
    """An oblivious loss sequence f_0, f_1, ... on a convex set.

    Subclasses draw the sequence-level parameters (:meth:`_draw_globals`) and the
    per-round parameters of one chunk (:meth:`_draw_chunk`), evaluate losses for a
    slice of a chunk at a batch of points (:meth:`_evaluate`) and gradients
    (:meth:`_gradient`), state ``lipschitz`` (G) and ``bound`` (M) over K, and compute the
    offline comparator (:meth:`comparator`). ``supports`` says on which sets the
    family is defined; the registry (:func:`bco_gym.losses.make_losses`) checks it.

    Attributes:
        set: the feasible set K.
        chunk_size: rounds per generated chunk (fixed by the family and the set).
        horizon: the number of rounds the sequence has (rounds 0..horizon-1), or None
            for the generated families, which go on forever. Reading a round at or past
            a finite horizon raises ValueError; ``BanditConvexEnv`` takes its default
            horizon from here.
    """

    name: ClassVar[str]
    #: Whether the rounds are i.i.d. given what the family draws at reset: f_t = f(., xi_t)
    #: with xi_1, xi_2, ... independent and identically distributed around parameters
    #: fixed at reset. Then no agent that plays before it sees a round's loss can reach a
    #: regret far below zero, which ``bco-gym bench`` checks
    #: (:mod:`bco_gym.reports.integrity`). False for switching, drifting and adversarial
    #: families, real data and a user's losses.
    stationary: ClassVar[bool] = False

    def __init__(self, convex_set: ConvexSet):
        if not isinstance(convex_set, ConvexSet):
            raise TypeError(f"loss family needs a ConvexSet, got {type(convex_set).__name__}")
        if not self.supports(convex_set):
            raise ValueError(
                f"loss family {self.name!r} is not defined on {convex_set!r}; {self.support_note()}"
            )
        self.set = convex_set
        self.chunk_size = chunk_size_for(self._floats_per_round())
        self._seed: int | None = None
        self._globals: Params = {}
        self._recent: dict[int, Params] = {}  # the last chunks read, by index (RECENT_CHUNKS)
        self.horizon: int | None = None

    # -- which sets ---------------------------------------------------------------------
    @classmethod
    def supports(cls, convex_set: ConvexSet) -> bool:
        """Whether the family is defined on ``convex_set`` (default: every set)."""
        return isinstance(convex_set, ConvexSet)

    @classmethod
    def support_note(cls) -> str:
        """Which sets the family supports, in words (for error messages)."""
        return "it is defined on every convex set"

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

    def digest(self) -> str:
        """SHA-256 (hex) of what fixes the sequence: its family (class), parameters
        (:meth:`describe`), set and seed (after :meth:`reset`). Two runs pair only when
        their digests agree; families holding data (arrays, callables) override this."""
        return json_digest(
            {
                "family": f"{type(self).__module__}.{type(self).__qualname__}",
                "parameters": self.describe(),
                "set": repr(self.set),
                "seed": self.seed,
            },
            default=repr,
        )

    def __repr__(self) -> str:
        """The class, the set and the parameters: ``LinearLoss(Simplex(n=3), mean_norm=0.5,
        noise=0.5)``; a finite sequence shows its horizon."""
        fields = self._repr_fields()
        if self.horizon is not None and "horizon" not in fields:
            fields["horizon"] = self.horizon
        shown = ", ".join([repr(self.set), *(f"{key}={value!r}" for key, value in fields.items())])
        return f"{type(self).__name__}({shown})"

    def _repr_fields(self) -> dict[str, Any]:
        """The parameters the repr shows (default: ``describe()`` less the name)."""
        return {key: value for key, value in self.describe().items() if key != "name"}

    # -- the sequence ---------------------------------------------------------------------
    def reset(self, rng: np.random.Generator) -> None:
        """Fix the whole sequence from one draw of ``rng`` (the env's ``np_random``)."""
        self._seed = int(rng.integers(0, 2**63 - 1))
        self._globals = self._draw_globals(np.random.default_rng([self._seed, 0]))
        self._recent = {}

    @property
    def seed(self) -> int:
        if self._seed is None:
            raise RuntimeError(f"{type(self).__name__}: call reset(rng) before reading losses")
        return self._seed

    def chunk(self, index: int) -> Params:
        """Per-round parameters of rounds [index*chunk_size, (index+1)*chunk_size).

        The last ``RECENT_CHUNKS`` chunks read are kept: a loop that reads a span across a
        chunk boundary and then the earlier chunk again (a block loop's tally after its
        losses) draws each chunk once.
        """
        found = self._recent.get(index)
        if found is None:
            rng = np.random.default_rng([self.seed, 1, index])
            found = self._draw_chunk(rng, index * self.chunk_size, self.chunk_size)
            if len(self._recent) >= RECENT_CHUNKS:
                del self._recent[next(iter(self._recent))]  # the oldest drawn
            self._recent[index] = found
        return found

    def chunks(self, start: int, stop: int) -> Iterator[tuple[int, int, Params, slice]]:
        """Yield (first round, end round, chunk params, slice) covering [start, stop)."""
        self._check_within_horizon(stop)
        t = start
        while t < stop:
            index, offset = divmod(t, self.chunk_size)
            end = min(stop, (index + 1) * self.chunk_size)
            yield t, end, self.chunk(index), slice(offset, offset + end - t)
            t = end

    def loss(self, t: int, x: np.ndarray) -> float:
        """f_t(x) for one round."""
        index, offset = divmod(self._check_existing_round(t), self.chunk_size)
        point = self._check_point(x)
        values = self._evaluate(self.chunk(index), slice(offset, offset + 1), point[np.newaxis])
        return float(values[0])

    def losses(self, start: int, points: np.ndarray) -> np.ndarray:
        """f_t(points[t - start]) for t = start, ..., start + len(points) - 1 (float64)."""
        start = _check_round(start)
        points = np.asarray(points, dtype=float)
        if points.shape[1:] != self.set.shape:
            raise ValueError(
                f"{self.name} loss: points have shape {points.shape}, expected "
                f"(k, {', '.join(map(str, self.set.shape))}) for k rounds"
            )
        out = np.empty(len(points))
        for t0, t1, params, part in self.chunks(start, start + len(points)):
            out[t0 - start : t1 - start] = self._evaluate(
                params, part, points[t0 - start : t1 - start]
            )
        return out

    def gradient(self, t: int, x: np.ndarray) -> np.ndarray:
        """A (sub)gradient of f_t at x, shaped like x."""
        index, offset = divmod(self._check_existing_round(t), self.chunk_size)
        return self._gradient(self.chunk(index), offset, self._check_point(x))

    def cumulative_loss(self, point: np.ndarray, checkpoints: Sequence[int]) -> np.ndarray:
        """sum_{t < T'} f_t(point) for each prefix length T' (sorted), streamed by chunk."""
        point = self._check_point(point)
        stops = check_checkpoints(checkpoints)
        totals = self.prefix_sums(
            stops,
            lambda params, part: (
                self._evaluate(
                    params, part, np.broadcast_to(point, (_length(part), *point.shape))
                ).sum(keepdims=True),
            ),
        )
        return np.array([float(total[0][0]) for total in totals])

    def prefix_sums(
        self,
        checkpoints: Sequence[int],
        statistic: Callable[[Params, slice], tuple[np.ndarray, ...]],
    ) -> list[tuple[np.ndarray, ...]]:
        """Running sums of ``statistic(params, part)`` over rounds [0, T') for each T'.

        One pass over the rounds, chunk by chunk (memory flat in T'); ``statistic``
        returns a tuple of arrays already summed over the rounds in ``part``.
        """
        totals: tuple[np.ndarray, ...] | None = None
        results, done = [], 0
        for stop in check_checkpoints(checkpoints):
            for _, _, params, part in self.chunks(done, stop):
                values = statistic(params, part)
                totals = (
                    tuple(np.array(v, dtype=float) for v in values)
                    if totals is None
                    else tuple(a + b for a, b in zip(totals, values, strict=True))
                )
            assert totals is not None
            results.append(tuple(a.copy() for a in totals))
            done = stop
        return results

    # -- offline comparator ----------------------------------------------------------------
    @abc.abstractmethod
    def comparator(self, checkpoints: Sequence[int]) -> list[Comparator]:
        """min_{x in K} sum_{t < T'} f_t(x) for each prefix length T' in ``checkpoints``.

        Returns one :class:`Comparator` per distinct prefix length, in increasing order.
        """

    # -- changing environments (bco_gym.losses.intervals) ----------------------------------
    def linear_terms(self, params: Params, part: slice) -> tuple[np.ndarray, np.ndarray]:
        """(theta_t (m, dim), b_t (m,)) of rounds ``params[part]`` with f_t(x) = <theta_t, x> + b_t.

        Only for linear families (:meth:`changing_reason` is None); others raise.
        """
        raise NotImplementedError(f"{self.name} loss: {self.changing_reason()}")

    def changing_reason(self) -> str | None:
        """Why adaptive and dynamic regret are not computed exactly here (None: they are)."""
        return (
            f"the {self.name!r} family is not linear, so the best point of every interval "
            "and of every round (min over K of a sum of its losses) is not computed exactly; "
            "adaptive and dynamic regret are reported for linear losses only"
        )

    def bind_horizon(self, horizon: int) -> None:
        """Told the env's horizon T (by ``BanditConvexEnv``); families that need T use it."""
        return None

    def segment_starts(self, horizon: int) -> list[int] | None:
        """Start rounds of the segments of a switching adversary within [0, horizon), or None."""
        return None

    # -- hooks for subclasses ------------------------------------------------------------
    def _floats_per_round(self) -> int:
        """Floats of per-round parameters (sets the chunk size; default: K's dimension)."""
        return self.set.dim

    def _draw_globals(self, rng: np.random.Generator) -> Params:
        """Sequence-level parameters (default: none)."""
        return {}

    @abc.abstractmethod
    def _draw_chunk(self, rng: np.random.Generator, first: int, size: int) -> Params:
        """Per-round parameters of rounds first, ..., first + size - 1 (leading axis size).

        ``rng`` is the chunk's own generator; ``first`` (a multiple of ``chunk_size``) is
        there for families whose rounds depend on absolute time (e.g. switching means).
        """

    @abc.abstractmethod
    def _evaluate(self, params: Params, part: slice, points: np.ndarray) -> np.ndarray:
        """Losses of rounds params[part] at points (len(points) == rounds in part)."""

    @abc.abstractmethod
    def _gradient(self, params: Params, offset: int, x: np.ndarray) -> np.ndarray:
        """Gradient of the loss of round ``offset`` of the chunk at x."""

    # -- validation ----------------------------------------------------------------------
    def _check_within_horizon(self, stop: int) -> int:
        """``stop`` (an end round) if rounds [0, stop) exist; ValueError naming the horizon."""
        if self.horizon is not None and stop > self.horizon:
            raise ValueError(
                f"{self.name} loss: round {stop - 1} is past the sequence's horizon "
                f"{self.horizon} (its rounds are 0..{self.horizon - 1})"
            )
        return stop

    def _check_existing_round(self, t: int) -> int:
        """``t`` as an int if it is a round of the sequence; ValueError otherwise."""
        t = _check_round(t)
        self._check_within_horizon(t + 1)
        return t

    def _check_point(self, x: np.ndarray) -> np.ndarray:
        point = np.asarray(x, dtype=float)
        if point.shape != self.set.shape:
            raise ValueError(
                f"{self.name} loss: point has shape {point.shape}, expected {self.set.shape}"
            )
        return point


def _check_round(t: int) -> int:
    if type(t) is int and t >= 0:  # the common case, before the slower Integral check
        return t
    if isinstance(t, bool) or not isinstance(t, numbers.Integral) or t < 0:
        raise ValueError(f"round t={t!r} must be an integer >= 0 (rounds are numbered from 0)")
    return int(t)


def _length(part: slice) -> int:
    return int(part.stop - part.start)


def check_checkpoints(checkpoints: Sequence[int]) -> list[int]:
    """Sorted unique positive prefix lengths; ValueError otherwise."""
    try:
        values = sorted({_check_round(c) for c in checkpoints})
    except (TypeError, ValueError):
        values = []
    if not values or values[0] < 1:
        raise ValueError(
            f"checkpoints {list(checkpoints)!r} must be a non-empty list of prefix lengths >= 1"
        )
    return values


def check_number(
    family: str,
    label: str,
    value: float,
    low: float = 0.0,
    *,
    strict: bool = False,
    high: float | None = None,
) -> float:
    """``value`` as a finite float in [low, high] ((low, high] if ``strict``); else ValueError."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    below = number <= low if strict else number < low
    above = high is not None and number > high
    if not np.isfinite(number) or below or above:
        interval = f"{'(' if strict else '['}{low:g}, {'inf)' if high is None else f'{high:g}]'}"
        raise ValueError(f"{family} loss: {label}={value!r} must be a finite number in {interval}")
    return number
