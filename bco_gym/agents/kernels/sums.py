"""Sums the tallies take, compiled: the exact sum's accumulation and the column sums of theta_t.

:class:`~bco_gym.engine.tally.ExactSum` holds, per binary exponent, the integer sums of
the high and low halves of the floats' 53-bit integer mantissas. Its NumPy update takes
``np.frexp`` and two ``np.bincount`` calls of 2,099 buckets per batch of losses, about
15 µs however short the batch; :func:`exact_add` adds the same integers in one pass over
the floats' bits. The two write different (but equal) representations of subnormal
floats, so their bucket arrays may differ, never their exact totals
(:meth:`~bco_gym.engine.tally.ExactSum.scaled`): a sum's value, being exact, does not
depend on which update ran (tests/engine/test_exact_sums.py).

:func:`column_sums` is ``theta[a:b].sum(0)``, the pieces
:class:`~bco_gym.engine.metrics.ThetaSums` adds up for the comparators, in NumPy's order,
without its per-row inner-loop calls (about 10 ns a round on n = 10, against 2.5).
"""

from __future__ import annotations

from bco_gym.agents.kernels.oracles import jit, pairwise_sum

#: The bits of a float64: 52 of fraction, 11 of biased exponent.
FRACTION_BITS, EXPONENT_MASK = 52, 0x7FF


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
        word = bits[k]
        biased = (word >> FRACTION_BITS) & EXPONENT_MASK
        mantissa = word & ((1 << FRACTION_BITS) - 1)
        if biased == 0:
            bucket = 53
        else:
            mantissa |= 1 << FRACTION_BITS
            bucket = biased + FRACTION_BITS
        if word < 0:
            mantissa = -mantissa
        high[bucket] += mantissa >> split
        low[bucket] += mantissa & mask
    return True


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
