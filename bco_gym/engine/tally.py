"""Checkpoints and the exact tallies of a run's per-round losses.

:class:`LossTally` keeps what a result needs of T per-round losses: the losses
themselves while T <= ``ROUND_LOSSES_LIMIT``, beyond that only each checkpoint
segment's exact sum (:class:`ExactSum`, memory flat in T), so the sums are the
correctly rounded ones (``math.fsum``) however the losses stream in. :func:`regret_curve`
turns a tally and the offline comparator into the regret at each checkpoint.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from bco_gym.engine.metrics import ChangingTracker

ROUND_LOSSES_LIMIT = 100_000
DEFAULT_CHECKPOINT_COUNT = 40
# Rounds of losses a streaming tally buffers before adding them to its exact sum.
TALLY_BUFFER = 1 << 16


class LossTally:
    """The per-round losses of a run, summed per checkpoint segment.

    While T <= ``ROUND_LOSSES_LIMIT`` the losses themselves are kept (they go into the
    result). Beyond, each segment keeps only its exact sum (:class:`ExactSum`, O(1)
    memory; the losses pass through a buffer of ``TALLY_BUFFER`` rounds), so memory is
    flat in T and the correctly rounded segment sums and total equal those of the
    stored losses bit for bit.
    """

    def __init__(
        self,
        horizon: int,
        checkpoints: Sequence[int],
        losses: np.ndarray | None = None,
        sequence: Any = None,
        rounds: Any = None,
        exact_add: Any = None,
        column_sums: Any = None,
    ):
        self._stops = list(checkpoints)
        keep = losses is not None or horizon <= ROUND_LOSSES_LIMIT
        self._values = losses if losses is not None else (np.empty(horizon) if keep else None)
        self._filled = 0 if losses is None else len(losses)
        self._buffer = np.empty(0 if keep else min(horizon, TALLY_BUFFER))
        self._buffered = 0  # rounds in the buffer, all of the current segment
        self._exact_add = exact_add  # a compiled ExactSum update, or None (NumPy's)
        self._segment = ExactSum(exact_add)
        self._segments: list[int] = []  # exact sums of the finished segments (scaled ints)
        self._stored: tuple[int, Any] | None = None  # (_filled, _stored_sums())
        # interval regrets (adaptive, dynamic) of the row, fed as the losses come
        self.changing = (
            None
            if sequence is None
            else ChangingTracker(
                sequence, horizon, self._stops, rounds=rounds, column_sums=column_sums
            )
        )
        if self.changing is not None and losses is not None:
            self.changing.add(losses)

    def add(self, values: np.ndarray) -> None:
        """Append the losses of the next ``len(values)`` rounds."""
        if self.changing is not None:
            self.changing.add(values)
        if self._values is not None:
            self._values[self._filled : self._filled + len(values)] = values
            self._filled += len(values)
            return
        while len(values):
            stop = self._stops[len(self._segments)]
            room = min(stop - self._filled, len(self._buffer) - self._buffered)
            piece, values = values[:room], values[room:]
            self._buffer[self._buffered : self._buffered + len(piece)] = piece
            self._buffered += len(piece)
            self._filled += len(piece)
            if self._filled == stop or self._buffered == len(self._buffer):
                self._segment.add(self._buffer[: self._buffered])
                self._buffered = 0
            if self._filled == stop:
                self._segments.append(self._segment.scaled())
                self._segment = ExactSum(self._exact_add)

    def comparators(self) -> list[Any] | None:
        """The comparators summed while the losses streamed in (a linear family, after all
        T rounds; see :class:`~bco_gym.engine.metrics.ChangingTracker`), else None."""
        return None if self.changing is None else self.changing.comparators()

    def round_losses(self) -> np.ndarray | None:
        """The stored losses when T <= ROUND_LOSSES_LIMIT, else None."""
        if self._values is None or len(self._values) > ROUND_LOSSES_LIMIT:
            return None
        return self._values

    def segment_sums(self) -> list[float]:
        """The correctly rounded sum of the losses of each checkpoint segment."""
        if self._values is not None:
            stored = self._stored_sums()
            if stored is None:  # a loss not finite: math.fsum's inf, nan or error
                from bco_gym.wrappers.regret import exact_sum

                bounds = itertools.pairwise([0, *self._stops])
                return [exact_sum(self._values[start:stop]) for start, stop in bounds]
            if isinstance(stored, SegmentTerms):
                return [math.fsum(terms) for terms in stored.segments()]
            return [ExactSum.rounded(scaled) for scaled in stored]
        return [ExactSum.rounded(scaled) for scaled in self._segments]

    def total(self) -> float:
        """The correctly rounded sum of all the losses."""
        if self._values is not None:
            stored = self._stored_sums()
            if stored is None:
                from bco_gym.wrappers.regret import exact_sum

                return exact_sum(self._values)
            if isinstance(stored, SegmentTerms):
                return math.fsum(stored.terms)
            return ExactSum.rounded(sum(stored))
        return ExactSum.rounded(sum(self._segments))

    def _stored_sums(self) -> SegmentTerms | list[int] | None:
        """The stored losses' exact segment sums, taken once per fill (the segments' and the
        total's correctly rounded sums both come from them): with the compiled kernels, as
        :class:`SegmentTerms` (one call for all segments), else, or when a segment's sum
        reaches 2^942, as :meth:`ExactSum.scaled` integers; None when a loss is not finite."""
        if self._stored is None or self._stored[0] != self._filled:
            assert self._values is not None
            found = SegmentTerms.TOO_LARGE
            if self._exact_add is not None:
                found = SegmentTerms.of(self._values, self._stops)
            if found is SegmentTerms.TOO_LARGE:
                found = self._scaled_sums(self._values)
            self._stored = (self._filled, found)
        return self._stored[1]

    def _scaled_sums(self, values: np.ndarray) -> list[int] | None:
        """Each segment's :meth:`ExactSum.scaled`, or None when a loss is not finite."""
        sums = []
        for start, stop in itertools.pairwise([0, *self._stops]):
            exact = ExactSum(self._exact_add)
            try:
                exact.add(values[start:stop])
            except ValueError:
                return None
            sums.append(exact.scaled())
        return sums


class SegmentTerms:
    """Every segment's exact sum as a few floats summing to it exactly, from the compiled
    :func:`~bco_gym.agents.kernels.sums.segment_terms` (one call for all the segments of a
    run's stored losses): a segment's correctly rounded sum is ``math.fsum`` of its terms,
    the run's total ``math.fsum`` of them all, the values :meth:`ExactSum.rounded` gives
    of the same exact sums (tests/engine/test_exact_sums.py).

    Attributes:
        terms: the terms of every segment, segment after segment.
        counts: how many terms each segment has (none for a zero sum).
    """

    #: What :meth:`of` answers when a segment's sum is too large for the terms.
    TOO_LARGE: Any = object()

    def __init__(self, terms: list[float], counts: list[int]):
        self.terms = terms
        self.counts = counts

    @classmethod
    def of(cls, values: np.ndarray, stops: Sequence[int]) -> Any:
        """The exact sums of ``values[a:b]`` for the consecutive segments ending at
        ``stops`` (cut as slices are), or None when a value in them is not finite, or
        ``TOO_LARGE`` (a segment's sum at or above 2^942)."""
        from bco_gym.agents.kernels import sums  # numba is there: the caller has exact_add

        values = np.ascontiguousarray(values, dtype=np.float64)
        ends = np.minimum(np.asarray(stops, dtype=np.int64), len(values))
        starts = np.concatenate([np.zeros(1, dtype=np.int64), ends[:-1]])
        terms = np.empty(len(ends) * sums.LIMBS)
        counts = np.zeros(len(ends), dtype=np.int64)
        status = sums.segment_terms(values.view(np.int64), starts, ends, terms, counts)
        if status == sums.NOT_FINITE:
            return None
        if status == sums.TOO_LARGE:
            return cls.TOO_LARGE
        return cls(terms[: counts.sum()].tolist(), counts.tolist())

    def segments(self) -> list[list[float]]:
        """Each segment's terms."""
        bounds = itertools.pairwise(itertools.accumulate(self.counts, initial=0))
        return [self.terms[start:stop] for start, stop in bounds]


def one_pass_comparators(tallies: Sequence[LossTally]) -> list[list[Any]] | None:
    """Every row's comparators summed in the play's pass, or None unless all rows have them
    (the runner then asks the loss sequences: a second pass)."""
    found = [tally.comparators() for tally in tallies]
    return None if any(c is None for c in found) else found  # type: ignore[return-value]


class ExactSum:
    """The exact sum of a stream of finite floats in O(1) memory (a superaccumulator).

    Every float is v = m 2^(e - 53) with m an integer of at most 53 bits (``np.frexp``).
    Split m = h 2^27 + l (0 <= l < 2^27); per exponent e, the h's and the l's are summed
    as integers: exactly, as float64 ``bincount`` sums of fewer than 2^26 terms stay
    below 2^53, and the int64 totals below 2^63 for fewer than 2^36 terms in all. The
    total is then sum_e (H_e 2^27 + L_e) 2^(e - 53), an exact Python integer times
    2^-(1074 + 53), rounded once by integer true division: the correctly rounded sum,
    the value ``math.fsum`` gives, at a few numpy calls per batch.

    ``compiled`` (:func:`bco_gym.agents.kernels.sums.exact_add`, which the compiled
    loops pass) adds the same integers in one pass over the floats' bits: the same exact
    total, at about 1 µs per batch instead of 15.
    """

    OFFSET = 1074  # np.frexp exponents of finite float64 lie in [-1073, 1024]
    SIZE = OFFSET + 1025
    SPLIT = 27
    BATCH = 1 << 26  # terms per bincount
    MAX_TERMS = 1 << 36  # the int64 bucket totals stay exact below this many terms

    def __init__(self, compiled: Any = None) -> None:
        self._high = np.zeros(self.SIZE, dtype=np.int64)
        self._low = np.zeros(self.SIZE, dtype=np.int64)
        # bco_gym.agents.kernels.sums.exact_add (the same exact total, one pass), or None
        self._compiled = compiled
        self._terms = 0

    def add(self, values: np.ndarray) -> None:
        if self._compiled is not None:
            values = np.ascontiguousarray(values, dtype=np.float64)
            self._terms += len(values)
            if self._terms >= self.MAX_TERMS:
                raise ValueError(f"exact sum: more than {self.MAX_TERMS} terms in one sum")
            if not self._compiled(values.view(np.int64), self._high, self._low, self.SPLIT):
                raise ValueError("exact sum: the losses must be finite")
            return
        if len(values) >= self.BATCH:  # keep each bincount's float64 sums exact
            for start in range(0, len(values), self.BATCH - 1):
                self.add(values[start : start + self.BATCH - 1])
            return
        with np.errstate(over="ignore", invalid="ignore"):
            total = np.add.reduce(values, initial=0.0)
        if not math.isfinite(total) and not np.isfinite(values).all():
            raise ValueError("exact sum: the losses must be finite")
        mantissas, exponents = np.frexp(values)
        integers = np.ldexp(mantissas, 53).astype(np.int64)  # exact: m < 2^53
        buckets = exponents + self.OFFSET
        for accumulator, part in (
            (self._high, integers >> self.SPLIT),  # h, |h| < 2^26 (an arithmetic shift)
            (self._low, integers & ((1 << self.SPLIT) - 1)),  # l = m - h 2^27 in [0, 2^27)
        ):
            counts = np.bincount(buckets, weights=part, minlength=self.SIZE)
            accumulator += counts.astype(np.int64)

    def scaled(self) -> int:
        """The exact sum times 2^(1074 + 53), a Python integer."""
        scaled = 0
        for index in np.flatnonzero(self._high | self._low).tolist():
            scaled += ((int(self._high[index]) << self.SPLIT) + int(self._low[index])) << index
        return scaled

    @classmethod
    def rounded(cls, scaled: int) -> float:
        """``scaled`` / 2^(1074 + 53), correctly rounded (Python's int true division)."""
        return scaled / (1 << (cls.OFFSET + 53))


def default_checkpoints(horizon: int, count: int = DEFAULT_CHECKPOINT_COUNT) -> list[int]:
    """At most ``count`` log-spaced prefix lengths in [1, T], rounded, T included."""
    horizon = check_horizon(horizon)
    raw = np.geomspace(1, horizon, num=count)
    return sorted({*np.rint(raw).astype(int).tolist(), horizon})


def resolve_checkpoints(checkpoints: Sequence[int] | None, horizon: int) -> list[int]:
    """Sorted unique prefix lengths in [1, T] with T added; ValueError naming a bad one."""
    if checkpoints is None:
        return default_checkpoints(horizon)
    values = set()
    for value in checkpoints:
        if isinstance(value, bool) or int(value) != value or not 1 <= value <= horizon:
            raise ValueError(f"checkpoint {value!r} must be an integer in [1, T={horizon}]")
        values.add(int(value))
    return sorted(values | {horizon})


def regret_curve(tally: LossTally, points: list[int], comparators: Sequence[Any]) -> dict[str, Any]:
    """Cumulative loss, comparator value and gap, and regret at each checkpoint."""
    if [c.horizon for c in comparators] != points:
        raise RuntimeError(
            f"the comparator answered for prefixes {[c.horizon for c in comparators]}, "
            f"asked {points}"
        )
    segment_sums = tally.segment_sums()
    cumulative = np.array([math.fsum(segment_sums[: k + 1]) for k in range(len(points))])
    cumulative[-1] = tally.total()
    comparator_loss = np.array([float(c.value) for c in comparators])
    gap = np.array([float(c.gap) for c in comparators])
    regret = cumulative - comparator_loss
    return {
        "checkpoints": np.array(points, dtype=np.int64),
        "cumulative_loss": cumulative,
        "comparator_loss": comparator_loss,
        "comparator_gap": gap,
        "regret": regret,
        "final_regret": float(regret[-1]),
        "final_gap": float(gap[-1]),
    }


#: The largest horizon T the CLI and suite files accept (a run of 10^8 rounds takes hours).
MAX_HORIZON = 10**8


def check_horizon(horizon: Any) -> int:
    if isinstance(horizon, bool) or not isinstance(horizon, int | np.integer) or horizon < 1:
        raise ValueError(f"horizon={horizon!r} must be a positive integer")
    return int(horizon)
