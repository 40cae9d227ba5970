"""Adaptive and dynamic regret of a run, accumulated while it is played.

A :class:`ChangingTracker` follows one row of a run: the loops hand it each span of
played losses f_t(y_t) as they tally them, it reads the same rounds' linear terms
(theta_t, b_t) from the row's loss sequence and feeds a
:class:`~bco_gym.losses.intervals.IntervalRegret` (memory O(log T), see there). At the
end :meth:`ChangingTracker.fields` gives the result's ``adaptive_regret``,
``dynamic_regret`` and ``interval_regret`` (the per-length maxima, the worst interval,
the switching regret and segments of ``linear-switching``), or None with the reason in
``interval_regret["reason"]`` for a family whose interval comparators are not exact
(every non-linear family today).

A compiled loop can feed the same accumulator: ``IntervalRegret.update(thetas,
constants, played)`` with the span's theta_t (m, dim), b_t (m,) and f_t(y_t) (m,), in
round order, spans of any length (the values do not depend on the split).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bco_gym.losses.intervals import IntervalMetrics, IntervalRegret


class ChangingTracker:
    """Interval regrets of one row, fed with its played losses span by span.

    Args:
        sequence: the row's (reset) loss sequence.
        horizon: T.
    """

    def __init__(self, sequence: Any, horizon: int):
        self.sequence = sequence
        self.reason = sequence.changing_reason()
        self.regret = (
            None
            if self.reason is not None
            else IntervalRegret(sequence.set, horizon, sequence.segment_starts(horizon))
        )
        self.horizon = int(horizon)
        self._fed = 0  # rounds handed to the IntervalRegret (a chunk boundary, or T)
        self._buffer = np.empty(0 if self.regret is None else sequence.chunk_size)
        self._buffered = 0  # rounds waiting in the buffer, from round self._fed on

    def add(self, played: np.ndarray) -> None:
        """The next ``len(played)`` rounds' losses f_t(y_t).

        They wait in a buffer until a chunk of the loss sequence is complete (or the
        horizon is reached): the chunk's linear terms are then read once, whatever the
        lengths of the spans the loop hands over, and the chunk is usually the one the
        loop has just evaluated (the sequence's cached chunk).
        """
        if self.regret is None:
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
        """Feed the buffered rounds (one chunk) to the IntervalRegret."""
        first, stop = self._fed, self._fed + self._buffered
        assert self.regret is not None
        for start, end, params, part in self.sequence.chunks(first, stop):
            thetas, constants = self.sequence.linear_terms(params, part)
            self.regret.update(thetas, constants, self._buffer[start - first : end - first])
        self._fed, self._buffered = stop, 0

    def fields(self) -> dict[str, Any]:
        """``adaptive_regret``, ``dynamic_regret`` and ``interval_regret`` of a result."""
        return changing_fields(self.regret.result() if self.regret else None, self.reason)


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
