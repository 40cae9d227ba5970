"""Per-round latency in flat memory: a fixed log-bucket histogram of round times.

A run's rounds are timed one by one (agent plus environment, the comparator excluded)
and each time goes into one of a fixed number of logarithmic buckets, so the memory of
the measurement does not grow with the horizon: :data:`BUCKETS` counters whatever T is.
Bucket i >= 1 holds times in [LOW 2^((i-1)/PER_OCTAVE), LOW 2^(i/PER_OCTAVE)) µs, bucket 0
everything below LOW and the last bucket everything from HIGH up. A quantile is read as
the upper edge of the bucket that holds its rank (nearest-rank definition), clipped to the
exact maximum, which is kept on the side: so it is at most 2^(1/PER_OCTAVE) - 1 (2.2 %)
above the true quantile, never below it, and ``p50 <= p90 <= p99 <= max`` always holds.
"""

from __future__ import annotations

import math

import numpy as np

#: Buckets per doubling of time (relative resolution 2^(1/32) - 1 = 2.2 %).
PER_OCTAVE = 32
#: Lower edge of the first regular bucket, in µs (about one nanosecond).
LOW = 2.0**-10
#: Octaves covered above LOW: up to 2^30 µs, about 18 minutes for one round.
OCTAVES = 40
#: Number of counters, the underflow and overflow buckets included.
BUCKETS = PER_OCTAVE * OCTAVES + 2
#: The quantiles a summary reports, by key.
QUANTILES = {"p50": 0.50, "p90": 0.90, "p99": 0.99}


class LatencyHistogram:
    """Round times (µs) in :data:`BUCKETS` fixed logarithmic buckets.

    ``add(times_us, weight)`` counts each time ``weight`` times (a block loop's rounds
    share their slice's time); ``summary()`` is the dict ``{"p50", "p90", "p99", "max"}``
    in µs, empty before any round.
    """

    def __init__(self) -> None:
        self.counts = np.zeros(BUCKETS, dtype=np.int64)
        self.maximum = 0.0

    @property
    def rounds(self) -> int:
        """How many round times were counted."""
        return int(self.counts.sum())

    def add(self, times_us: np.ndarray | float, weight: int | np.ndarray = 1) -> None:
        """Count each of ``times_us`` (µs, >= 0) ``weight`` times; ``weight`` is one count
        for all, or one per time (an integer array of the same shape)."""
        times = np.atleast_1d(np.asarray(times_us, dtype=np.float64))
        if times.size == 0:
            return
        weights = None
        if not isinstance(weight, int | np.integer):
            weights = np.asarray(weight)
            if weights.shape != times.shape or weights.dtype.kind not in "iu":
                raise ValueError(
                    f"weight must be a count of rounds or an integer array of shape "
                    f"{times.shape} (one count per time), got {weight!r}"
                )
            weight = int(weights.min())
        if weight < 1:
            raise ValueError(f"weight must be a positive count of rounds, got {weight!r}")
        index = np.zeros(times.shape, dtype=np.int64)
        positive = times >= LOW
        with np.errstate(divide="ignore"):
            octaves = np.log2(times[positive] / LOW)
        index[positive] = np.minimum(
            np.floor(octaves * PER_OCTAVE).astype(np.int64) + 1, BUCKETS - 1
        )
        if weights is None:
            self.counts += weight * np.bincount(index, minlength=BUCKETS)
        else:
            np.add.at(self.counts, index, weights)
        self.maximum = max(self.maximum, float(times.max()))

    def quantile(self, q: float) -> float:
        """The nearest-rank q-quantile (µs) as its bucket's upper edge, at most the maximum."""
        total = self.rounds
        if total == 0:
            return math.nan
        rank = max(1, math.ceil(q * total))
        bucket = int(np.searchsorted(np.cumsum(self.counts), rank))
        return min(upper_edge(bucket), self.maximum)

    def summary(self) -> dict[str, float]:
        """``{"p50", "p90", "p99", "max"}`` in µs (an empty dict before any round)."""
        if self.rounds == 0:
            return {}
        values = {key: self.quantile(q) for key, q in QUANTILES.items()}
        values["max"] = self.maximum
        return values

    def merge(self, other: LatencyHistogram) -> None:
        """Add ``other``'s counts (and maximum) to this histogram."""
        self.counts += other.counts
        self.maximum = max(self.maximum, other.maximum)


def upper_edge(bucket: int) -> float:
    """The upper edge (µs) of ``bucket``; the overflow bucket's is infinite."""
    if bucket >= BUCKETS - 1:
        return math.inf
    return LOW * 2.0 ** (bucket / PER_OCTAVE)
