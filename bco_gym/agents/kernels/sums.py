"""Sums the tallies take, compiled: the exact sum's accumulation and the column sums of theta_t.

:class:`~bco_gym.engine.tally.ExactSum` holds, per binary exponent, the integer sums of
the high and low halves of the floats' 53-bit integer mantissas. Its NumPy update takes
``np.frexp`` and two ``np.bincount`` calls of 2,099 buckets per batch of losses, about
15 µs however short the batch; :func:`exact_add` adds the same integers in one pass over
the floats' bits. The two write different (but equal) representations of subnormal
floats, so their bucket arrays may differ, never their exact totals
(:meth:`~bco_gym.engine.tally.ExactSum.scaled`): a sum's value, being exact, does not
depend on which update ran (tests/engine/test_exact_sums.py).

:func:`segment_terms` takes every checkpoint segment's exact sum of a run's stored losses
in one call: per segment, the same integer buckets, then carried into 32-bit limbs, each
limb an exactly representable float, so the segment's correctly rounded sum is
``math.fsum`` of its few terms and the run's total ``math.fsum`` of all of them (the value
:meth:`~bco_gym.engine.tally.ExactSum.rounded` gives, being the same exact sum rounded).

:func:`column_sums` is ``theta[a:b].sum(0)``, the pieces
:class:`~bco_gym.engine.metrics.ThetaSums` adds up for the comparators, in NumPy's order,
without its per-row inner-loop calls (about 10 ns a round on n = 10, against 2.5).
"""

from __future__ import annotations

import math

import numpy as np

from bco_gym.agents.kernels.oracles import inline, jit, pairwise_sum

#: The bits of a float64: 52 of fraction, 11 of biased exponent.
FRACTION_BITS, EXPONENT_MASK = 52, 0x7FF
#: ExactSum's buckets: a float's bucket is its biased exponent + 52 (53 for subnormals and
#: zeros), bucket b holding integer mantissas of weight 2^(b - 53) times 2^-1074.
BUCKETS, SUBNORMAL_BUCKET, SPLIT = 2099, 53, 27
#: A segment's exact sum in limbs of 32 bits from 2^-1074 up: 70 limbs hold the bucket
#: totals of fewer than 2^36 terms (below 2^(2134 - 1074); ExactSum.MAX_TERMS).
LIMB_BITS, LIMBS = 32, 70
LIMB_MASK = (1 << LIMB_BITS) - 1
#: The terms are handed out only below 2^(32 (TOP_LIMB + 1) - 1074) = 2^942 in magnitude,
#: so that math.fsum of any number of them never meets an intermediate overflow.
TOP_LIMB = 62
#: What :func:`segment_terms` returns.
SUMMED, NOT_FINITE, TOO_LARGE = 0, 1, 2


@jit
def exact_add(bits, high, low, split):  # pragma: no cover - compiled
    """Add the floats whose bits (int64 view) are ``bits`` to the buckets: a finite x is
    m 2^(b - 1127) with m its signed integer mantissa (|m| < 2^53) and b its bucket
    (biased exponent + 52; 53 for zeros and subnormals, whose exponent is 1 - 1075);
    high[b] += m >> split, low[b] += m & (2^split - 1), the buckets of
    ``ExactSum``. Returns False, having added nothing, when a float is not finite."""
    for k in range(bits.size):
        if (bits[k] >> FRACTION_BITS) & EXPONENT_MASK == EXPONENT_MASK:
            return False
    mask = (1 << split) - 1
    for k in range(bits.size):
        mantissa, bucket = mantissa_and_bucket(bits[k])
        high[bucket] += mantissa >> split
        low[bucket] += mantissa & mask
    return True


@inline
def mantissa_and_bucket(word):  # pragma: no cover - compiled
    """(m, b) of a finite float whose bits (int64) are ``word``: its signed integer
    mantissa (|m| < 2^53) and its bucket (biased exponent + 52; 53 for zeros and
    subnormals, whose exponent is 1 - 1075), the float being m 2^(b - 1127)."""
    biased = (word >> FRACTION_BITS) & EXPONENT_MASK
    mantissa = word & ((1 << FRACTION_BITS) - 1)
    if biased == 0:
        bucket = SUBNORMAL_BUCKET
    else:
        mantissa |= 1 << FRACTION_BITS
        bucket = biased + FRACTION_BITS
    if word < 0:
        mantissa = -mantissa
    return mantissa, bucket


@jit
def segment_terms(bits, starts, ends, terms, counts):  # pragma: no cover - compiled
    """The exact sum of every segment ``values[starts[k]:ends[k]]`` (``bits``: the float64
    values viewed as int64; ``0 <= starts[k]``, ``ends[k] <= bits.size``, a segment empty
    when ``ends[k] <= starts[k]``) as ``counts[k]`` floats of the sum's sign, whose exact
    sum it is: segment k's terms follow segment k - 1's in ``terms`` (room for ``LIMBS``
    per segment).

    Each segment's floats go into ExactSum's buckets (:func:`exact_add`); the buckets'
    integers are added into 32-bit limbs, carried, made positive (the sign kept apart),
    and each non-zero limb L_i is the term +-L_i 2^(32 i - 1074): a float exactly (fewer
    than 32 significant bits, a multiple of 2^-1074). Returns SUMMED; NOT_FINITE at a
    value not finite in a segment; TOO_LARGE when a segment's sum reaches 2^942
    (``TOP_LIMB``; the caller then takes the exact integers instead)."""
    high = np.zeros(BUCKETS, np.int64)
    low = np.zeros(BUCKETS, np.int64)
    limbs = np.zeros(LIMBS, np.int64)
    mask = (1 << SPLIT) - 1
    position = 0
    for k in range(starts.size):
        lowest, highest = BUCKETS, -1
        for j in range(starts[k], ends[k]):
            if (bits[j] >> FRACTION_BITS) & EXPONENT_MASK == EXPONENT_MASK:
                return NOT_FINITE
            mantissa, bucket = mantissa_and_bucket(bits[j])
            high[bucket] += mantissa >> SPLIT
            low[bucket] += mantissa & mask
            lowest = min(lowest, bucket)
            highest = max(highest, bucket)
        for bucket in range(lowest, highest + 1):
            shift = bucket - SUBNORMAL_BUCKET
            add_shifted(limbs, high[bucket], shift + SPLIT)
            add_shifted(limbs, low[bucket], shift)
            high[bucket] = 0
            low[bucket] = 0
        negative = carry_limbs(limbs) < 0
        if negative:  # the magnitude: negate, carry again (the top carry is then 0)
            for i in range(LIMBS):
                limbs[i] = -limbs[i]
            carry_limbs(limbs)
        counts[k] = 0
        for i in range(LIMBS):
            if limbs[i] != 0:
                if i > TOP_LIMB:
                    return TOO_LARGE
                term = math.ldexp(float(limbs[i]), LIMB_BITS * i - 1074)
                terms[position] = -term if negative else term
                position += 1
                counts[k] += 1
                limbs[i] = 0
    return SUMMED


@jit
def add_shifted(limbs, value, shift):  # pragma: no cover - compiled
    """limbs += value 2^shift (value an int64, shift >= 0), each limb given less than 2^32
    in magnitude: value = hi 2^32 + lo, lo in [0, 2^32), |hi| < 2^31, so
    lo 2^r < 2^63 and |hi 2^r| < 2^62 for r < 32."""
    if value == 0:
        return
    index, r = shift // LIMB_BITS, shift % LIMB_BITS
    part = (value & LIMB_MASK) << r
    limbs[index] += part & LIMB_MASK
    limbs[index + 1] += part >> LIMB_BITS
    part = (value >> LIMB_BITS) << r
    limbs[index + 1] += part & LIMB_MASK
    limbs[index + 2] += part >> LIMB_BITS


@jit
def carry_limbs(limbs):  # pragma: no cover - compiled
    """Carry the limbs into [0, 2^32) each, from the lowest; returns the carry out of the
    top (-1 for a negative sum, whose limbs are then its two's complement)."""
    carry = 0
    for i in range(LIMBS):
        word = limbs[i] + carry
        carry = word >> LIMB_BITS
        limbs[i] = word & LIMB_MASK
    return carry


@jit
def column_sums(values, first, count, out):  # pragma: no cover - compiled
    """out[i] = ``values[first : first + count].sum(0)[i]`` as NumPy takes it from its
    identity +0: row after row, in order, for rows of more than one entry; for rows of
    one entry the rows are one contiguous column, which NumPy sums pairwise."""
    n = values.shape[1]
    if n == 1:
        out[0] = 0.0 + pairwise_sum(values[:, 0], first, count)
        return
    for i in range(n):
        out[i] = 0.0
    for r in range(first, first + count):
        for i in range(n):
            out[i] += values[r, i]
