"""Adaptive and dynamic regret of a run, accumulated while it is played.

A :class:`ChangingTracker` follows one row of a run: the loops hand it each span of
played losses f_t(y_t) as they tally them, it reads the same rounds' linear terms
(theta_t, b_t) from the row's loss sequence and feeds a
:class:`~bco_gym.losses.intervals.IntervalRegret` (memory O(log T), see there). At the
end :meth:`ChangingTracker.fields` gives the result's ``adaptive_regret``,
``dynamic_regret`` and ``interval_regret`` (the per-length maxima, the interval attaining
the adaptive regret, the whole run's regret, the switching regret and segments of
``linear-switching``), or None with the reason in ``interval_regret["reason"]`` for a
family whose interval comparators are not exact (every non-linear family today).

One pass. For the families whose comparator is
:func:`~bco_gym.losses.linear.linear_comparators` of the summed vectors (``linear`` and its
subclasses), the tracker also sums theta_t up to each checkpoint while it reads the
chunks (:class:`ThetaSums`), piece by piece as ``LossSequence.prefix_sums`` does, so
:meth:`ChangingTracker.comparators` gives ``comparator(checkpoints)`` bit for bit and the
adversary is not generated a second time.

A compiled loop can feed the same accumulator: ``IntervalRegret.update(thetas,
constants, played)`` with the span's theta_t (m, dim), b_t (m,) and f_t(y_t) (m,), in
round order, spans of any length (the values do not depend on the split).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bco_gym.losses.base import check_checkpoints
from bco_gym.losses.intervals import IntervalMetrics, IntervalRegret
from bco_gym.losses.linear import LinearLoss, linear_comparators


class ChangingTracker:
    """Interval regrets of one row, fed with its played losses span by span.

    Args:
        sequence: the row's (reset) loss sequence.
        horizon: T.
        checkpoints: the run's checkpoints; given, a linear family's comparators are
            summed in the same pass (:meth:`comparators`).
        rounds: a compiled update for the IntervalRegret
            (:func:`~bco_gym.engine.compiled.interval_rounds_for`; the same values), or None.
        column_sums: the compiled ``theta[a:b].sum(0)`` for :class:`ThetaSums`
            (:func:`bco_gym.agents.kernels.sums.column_sums`; the same floats), or None.
    """

    def __init__(
        self,
        sequence: Any,
        horizon: int,
        checkpoints: Any = None,
        rounds: Any = None,
        column_sums: Any = None,
    ):
        self.sequence = sequence
        self.reason = sequence.changing_reason()
        self.regret = (
            None
            if self.reason is not None
            else IntervalRegret(sequence.set, horizon, sequence.segment_starts(horizon))
        )
        self.horizon = int(horizon)
        self._fed = 0  # rounds read (a chunk boundary, or T)
        if rounds is not None and self.regret is not None:
            self.regret.use_rounds(rounds)
        kind = type(sequence)
        # A linear family's comparators are summed in this pass, also where its interval
        # metrics are not computed (``linear-low-rank``: their cost, not their exactness).
        one_pass = (
            checkpoints is not None
            and kind.comparator is LinearLoss.comparator
            and kind.summed_vectors is LinearLoss.summed_vectors
        )
        self.sums = ThetaSums(checkpoints, column_sums) if one_pass else None
        self._reads = self.regret is not None or self.sums is not None
        self._buffer = np.empty(sequence.chunk_size if self._reads else 0)
        self._buffered = 0  # rounds waiting in the buffer, from round self._fed on

    def add(self, played: np.ndarray) -> None:
        """The next ``len(played)`` rounds' losses f_t(y_t).

        They wait in a buffer until a chunk of the loss sequence is complete (or the
        horizon is reached): the chunk's linear terms are then read once, whatever the
        lengths of the spans the loop hands over, and the chunk is usually the one the
        loop has just evaluated (the sequence's cached chunk).
        """
        if not self._reads:
            self._fed += len(played)
            return
        played = np.asarray(played, dtype=float)
        size = len(self._buffer)
        while len(played):
            end = min(self.horizon, (self._fed // size + 1) * size)  # this chunk's end
            room = end - self._fed - self._buffered
            piece, played = played[:room], played[room:]
            self._buffer[self._buffered : self._buffered + len(piece)] = piece
            self._buffered += len(piece)
            if self._fed + self._buffered == end:
                self._flush()

    def _flush(self) -> None:
        """Feed the buffered rounds (one chunk) to the IntervalRegret and the sums."""
        first, stop = self._fed, self._fed + self._buffered
        for start, end, params, part in self.sequence.chunks(first, stop):
            if self.regret is not None:
                thetas, constants = self.sequence.linear_terms(params, part)
                self.regret.update(thetas, constants, self._buffer[start - first : end - first])
            if self.sums is not None:
                self.sums.add(params["theta"], part.start, start, end)
        self._fed, self._buffered = stop, 0

    def comparators(self) -> list[Any] | None:
        """The comparators at the checkpoints, summed in this pass (after all T rounds),
        or None (a family whose comparator is not its summed vectors', or no checkpoints)."""
        if self.sums is None or self._fed != self.horizon:
            return None
        return linear_comparators(self.sequence.set, self.sums.stops, self.sums.found)

    def fields(self) -> dict[str, Any]:
        """``adaptive_regret``, ``dynamic_regret`` and ``interval_regret`` of a result."""
        return changing_fields(self.regret.result() if self.regret else None, self.reason)


class ThetaSums:
    """sum_{t < T'} theta_t at each checkpoint T', from the rounds in order.

    The rounds come as pieces of chunks; each piece is cut at the checkpoints, and each
    cut piece summed (``theta[part].sum(0)``) and added to the running total, exactly as
    :meth:`~bco_gym.losses.base.LossSequence.prefix_sums` cuts and adds them: the same
    floats in the same order, so the totals are ``summed_vectors``' bit for bit. Given
    ``column_sums`` (:func:`bco_gym.agents.kernels.sums.column_sums`: the kernels are on),
    a span's pieces are summed and added in one compiled call
    (:func:`bco_gym.agents.kernels.prefix.checkpoint_sums`, which sums each piece in
    NumPy's order as ``column_sums`` does).
    """

    def __init__(self, checkpoints: Any, column_sums: Any = None):
        self.stops = check_checkpoints(checkpoints)
        self._column_sums = column_sums  # kernels/sums.column_sums, or None (NumPy's sum)
        self.found: list[np.ndarray] = []  # the total at each checkpoint reached
        self._total: np.ndarray | None = None

    def add(self, theta: np.ndarray, offset: int, start: int, end: int) -> None:
        """Rounds [start, end), whose theta_t are ``theta[offset + t - start]``."""
        counts, marks = [], []  # the pieces cut at the checkpoints; whether one ends there
        reached = len(self.found)
        while start < end and reached < len(self.stops):
            stop = min(end, self.stops[reached])
            counts.append(stop - start)
            marks.append(stop == self.stops[reached])
            reached += marks[-1]
            start = stop
        if not counts:
            return
        if self._compiled(theta):
            self._add_compiled(theta, offset, counts, marks)
            return
        for count, mark in zip(counts, marks, strict=True):
            piece = theta[offset : offset + count].sum(0)
            total = self._total
            self._total = np.array(piece, dtype=float) if total is None else total + piece
            if mark:
                self.found.append(self._total.copy())
            offset += count

    def _compiled(self, theta: np.ndarray) -> bool:
        """Whether the pieces are summed compiled (the same floats): kernels on, rows of
        float64 in C order."""
        return (
            self._column_sums is not None
            and theta.ndim == 2
            and theta.dtype == np.float64
            and theta.flags.c_contiguous
        )

    def _add_compiled(
        self, theta: np.ndarray, offset: int, counts: list[int], marks: list[bool]
    ) -> None:
        """:meth:`add`'s pieces in one call of
        :func:`~bco_gym.agents.kernels.prefix.checkpoint_sums` (the same floats)."""
        from bco_gym.agents.kernels.prefix import checkpoint_sums

        started = self._total is not None
        if self._total is None:
            self._total = np.empty(theta.shape[1])
        out = np.empty((sum(marks), theta.shape[1]))
        checkpoint_sums(
            theta, offset, np.array(counts, dtype=np.int64), np.array(marks), self._total,
            started, out, np.empty(theta.shape[1]),
        )  # fmt: skip
        self.found.extend(out)


def changing_fields(metrics: IntervalMetrics | None, reason: str | None) -> dict[str, Any]:
    """The result fields from the metrics, or None and the reason."""
    if metrics is None:
        return {
            "adaptive_regret": None,
            "dynamic_regret": None,
            "interval_regret": {"reason": reason},
        }
    return {
        "adaptive_regret": metrics.adaptive_regret,
        "dynamic_regret": metrics.dynamic_regret,
        "interval_regret": metrics.as_dict(),
    }
