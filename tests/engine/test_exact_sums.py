"""The compiled exact-sum update (bco_gym/agents/kernels/sums.py) against math.fsum and
the NumPy update of :class:`~bco_gym.engine.tally.ExactSum`: the same exact totals, so
the same correctly rounded sums, whichever update ran."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

pytest.importorskip("numba")

from bco_gym.agents.kernels import sums as sums_kernel
from bco_gym.agents.kernels.sums import column_sums, exact_add
from bco_gym.engine import compiled
from bco_gym.engine.metrics import ThetaSums
from bco_gym.engine.tally import ExactSum, LossTally, SegmentTerms


def batches():
    rng = np.random.default_rng(11)
    return [
        rng.standard_normal(500) * 10.0 ** rng.integers(-300, 300, 500),
        np.array([1e16, 1.0, -1e16, 3e-300, -0.0, 0.0, 5e-324, -5e-324, 2.2250738585072014e-308]),
        rng.standard_normal(300) * 1e-310,  # subnormals
        np.concatenate([np.full(200, 0.1), np.full(200, -0.1), [2.0**-60]]),
        rng.uniform(-1, 1, 1000) + 1e15,
        np.array([np.finfo(float).max, np.finfo(float).max, -np.finfo(float).max]),
        np.array([-np.finfo(float).max, -1.0, -np.finfo(float).tiny]),
        np.zeros(0),
    ]


@pytest.mark.parametrize("case", range(len(batches())))
def test_compiled_exact_sum_is_fsum_and_the_numpy_total(case):
    values = batches()[case]
    rng = np.random.default_rng(case)
    fast, slow = ExactSum(exact_add), ExactSum()
    for piece in np.array_split(rng.permutation(values), 5):
        fast.add(piece)
        slow.add(piece)
    assert fast.scaled() == slow.scaled()
    try:
        expected = math.fsum(values.tolist())
    except OverflowError:  # fsum's partials overflow; the exact total is still a float
        expected = math.fsum((values / 4).tolist()) * 4
    assert ExactSum.rounded(fast.scaled()) == expected


def test_compiled_exact_sum_reads_strided_input_and_refuses_non_finite():
    values = np.arange(20, dtype=float) * 0.1
    fast = ExactSum(exact_add)
    fast.add(values[::3])  # not contiguous: copied first
    assert ExactSum.rounded(fast.scaled()) == math.fsum(values[::3].tolist())
    for bad in (np.inf, -np.inf, np.nan):
        before = fast.scaled()
        with pytest.raises(ValueError, match="finite"):
            fast.add(np.array([1.0, bad, 2.0]))
        assert fast.scaled() == before  # nothing of the refused batch was added


def test_tallies_give_the_same_sums_with_either_update():
    rng = np.random.default_rng(5)
    losses = rng.standard_normal(3000) * 10.0 ** rng.integers(-5, 5, 3000)
    stops = [1, 10, 500, 2999, 3000]
    fast = LossTally(3000, stops, losses, exact_add=exact_add)
    slow = LossTally(3000, stops, losses)
    assert fast.segment_sums() == slow.segment_sums()
    assert fast.total() == slow.total() == math.fsum(losses.tolist())


def test_tallies_take_the_compiled_sum_only_where_kernels_would_play(monkeypatch):
    import gymnasium as gym

    from bco_gym.engine.runner import single_stage

    env = gym.make("BCO-Ball-v0", horizon=50)
    env.reset(seed=0)
    stage = single_stage(env.unwrapped)
    monkeypatch.setenv(compiled.SWITCH, "auto")
    none = {"rounds": None, "exact_add": None, "column_sums": None}
    assert compiled.tally_kernels(stage) == none
    monkeypatch.setenv(compiled.SWITCH, "on")
    found = compiled.tally_kernels(stage)
    assert found["exact_add"] is exact_add and found["rounds"] is not None
    assert found["column_sums"] is column_sums
    monkeypatch.setenv(compiled.SWITCH, "off")
    assert compiled.tally_kernels(stage) == none


@pytest.mark.parametrize("shape", [(4096, 10), (300, 3), (5000, 129), (4096, 1), (7, 1), (1, 5)])
def test_column_sums_are_numpys_sum_over_rounds(shape):
    """Row after row from +0 (one column: NumPy's pairwise sum), bit for bit, for pieces
    at any offset; signed zeros included."""
    rng = np.random.default_rng(shape[0] + shape[1])
    theta = rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 6, (shape[0], 1))
    theta[: min(3, shape[0])] = -0.0
    out = np.empty(shape[1])
    for first, count in ((0, shape[0]), (0, 1), (shape[0] // 3, shape[0] - shape[0] // 3)):
        if count < 1 or first + count > shape[0]:
            continue
        column_sums(theta, first, count, out)
        assert out.tobytes() == theta[first : first + count].sum(0).tobytes()
    zeros = np.full((9, shape[1]), -0.0)
    column_sums(zeros, 0, 9, out)
    assert out.tobytes() == zeros.sum(0).tobytes()  # +0, as NumPy's


def test_theta_sums_are_the_same_with_the_compiled_pieces():
    rng = np.random.default_rng(2)
    stops = [1, 5, 700, 1500, 4000]
    plain, fast = ThetaSums(stops), ThetaSums(stops, column_sums)
    for chunk_start in range(0, 4000, 512):
        theta = rng.standard_normal((512, 6))
        for sums in (plain, fast):
            sums.add(theta, 0, chunk_start, chunk_start + 300)
            sums.add(theta, 300, chunk_start + 300, chunk_start + 512)
    assert len(fast.found) == len(plain.found) == len(stops)
    for a, b in zip(fast.found, plain.found, strict=True):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("dim", [1, 3, 10])
def test_theta_sums_in_one_compiled_call_per_span_are_numpys(dim):
    """Many checkpoints in one span (log-spaced, as the runs' defaults), spans starting
    mid-chunk, signed zeros and a strided chunk (the NumPy path): the same totals."""
    rng = np.random.default_rng(dim)
    horizon = 3000
    stops = sorted({*np.rint(np.geomspace(1, horizon, 40)).astype(int).tolist(), horizon})
    plain, fast = ThetaSums(stops), ThetaSums(stops, column_sums)
    for chunk_start in range(0, horizon, 1024):
        size = min(1024, horizon - chunk_start)
        theta = rng.standard_normal((size, dim)) * 10.0 ** rng.integers(-3, 4, size=(size, 1))
        theta[: size // 7] = -0.0
        if chunk_start == 1024:
            theta = np.asfortranarray(theta)  # not C order: NumPy's sums
        cut = int(rng.integers(0, size + 1))
        for sums in (plain, fast):
            sums.add(theta, 0, chunk_start, chunk_start + cut)
            sums.add(theta, cut, chunk_start + cut, chunk_start + size)
    assert len(fast.found) == len(plain.found) == len(stops)
    for a, b in zip(fast.found, plain.found, strict=True):
        assert a.tobytes() == b.tobytes()


# -- every segment's exact sum in one call (kernels/sums.segment_terms, SegmentTerms) ---
def adversarial_losses() -> list[np.ndarray]:
    """Cancellation, 1e-300 .. 1e280, subnormals, signed zeros, ties and long runs."""
    rng = np.random.default_rng(17)
    wide = rng.standard_normal(4000) * 10.0 ** rng.integers(-300, 280, 4000)
    cancelling = np.tile([1e16, 1.0, -1e16, 2.0**-70, -1.0, 3e-300], 700)[:4000]
    subnormal = rng.standard_normal(4000) * 1e-310
    zeros = np.where(rng.random(4000) < 0.5, -0.0, 0.0)
    tenths = np.concatenate([np.full(1990, 0.1), np.full(1990, -0.1), np.full(20, 2.0**-60)])
    offset = rng.uniform(-1, 1, 4000) + 1e15
    return [wide, cancelling, subnormal, zeros, rng.permutation(tenths), offset, -wide]


def cuts(length: int) -> list[list[int]]:
    """Checkpoints: one segment, every round its own, log-spaced, and some past the end
    (those segments are empty, as the slices are)."""
    rng = np.random.default_rng(length)
    return [
        [length],
        list(range(1, length + 1)),
        sorted({*np.rint(np.geomspace(1, length, 40)).astype(int).tolist()}),
        sorted({*rng.integers(1, length, 30).tolist(), length, length + 5, length + 9}),
    ]


def numpy_sums(values: np.ndarray, stops: list[int]) -> tuple[list[float], float]:
    """Each segment's and the total's correctly rounded sums by NumPy's ExactSum."""
    scaled = []
    for start, stop in itertools.pairwise([0, *stops]):
        exact = ExactSum()
        exact.add(values[start:stop])
        scaled.append(exact.scaled())
    return [ExactSum.rounded(s) for s in scaled], ExactSum.rounded(sum(scaled))


def same_floats(left, right) -> bool:
    return np.array(left, dtype=float).tobytes() == np.array(right, dtype=float).tobytes()


@pytest.mark.parametrize("case", range(len(adversarial_losses())))
def test_segment_terms_give_every_segments_correctly_rounded_sum(case):
    values = adversarial_losses()[case]
    for stops in cuts(len(values)):
        found = SegmentTerms.of(values, stops)
        assert isinstance(found, SegmentTerms)
        expected, total = numpy_sums(values, stops)
        sums = [math.fsum(terms) for terms in found.segments()]
        assert same_floats(sums, expected)  # signed zeros included
        assert same_floats(math.fsum(found.terms), total)
        fsums = [math.fsum(values[a:b].tolist()) for a, b in itertools.pairwise([0, *stops])]
        assert sums == fsums and math.fsum(found.terms) == math.fsum(values.tolist())
        for terms in found.segments():  # one sign, fewer than 32 significant bits each
            assert len(terms) <= sums_kernel.TOP_LIMB + 1
            assert all(t > 0 for t in terms) or all(t < 0 for t in terms)
            for term in terms:
                mantissa, _ = math.frexp(abs(term))
                assert (mantissa * 2.0**32).is_integer()


def test_segment_terms_of_zero_and_tiny_sums():
    values = np.array([-0.0, -0.0, 5e-324, -5e-324, -5e-324, 1.0, -1.0, -0.0])
    found = SegmentTerms.of(values, [2, 4, 5, 7, 8, 12])
    sums = [math.fsum(terms) for terms in found.segments()]
    assert same_floats(sums, [0.0, 0.0, -5e-324, 0.0, 0.0, 0.0])  # exact zeros are +0
    assert found.counts == [0, 0, 1, 0, 0, 0]
    assert same_floats(math.fsum(found.terms), ExactSum.rounded(0) - 5e-324)


def test_segment_terms_hand_sums_from_2_to_the_942_to_the_exact_integers():
    """Below 2^942 the terms; at or above, TOO_LARGE, and the tally takes ExactSum's
    integers (the same sums as NumPy's, overflowing where they overflow)."""
    for below in (
        np.array([2.0**941, 2.0**941 - 2.0**888, -(2.0**-1000)]),
        np.array([-(2.0**942), 1.0]),
    ):
        found = SegmentTerms.of(below, [len(below)])
        assert isinstance(found, SegmentTerms)
        assert math.fsum(found.terms) == math.fsum(below.tolist())
    for big in (
        np.array([2.0**941, 2.0**941]),
        np.array([-(2.0**942), -1.0]),
        np.array([1e300, 1e300, -1e300, 3.0]),
        np.array([np.finfo(float).max] * 3 + [-np.finfo(float).max] * 2),
    ):
        assert SegmentTerms.of(big, [len(big)]) is SegmentTerms.TOO_LARGE
        stops = [1, len(big)]
        fast = LossTally(len(big), stops, big, exact_add=exact_add)
        assert same_floats(fast.segment_sums(), numpy_sums(big, stops)[0])
        assert same_floats(fast.total(), numpy_sums(big, stops)[1])
    overflowing = np.array([np.finfo(float).max, np.finfo(float).max])
    for exact in (exact_add, None):
        with pytest.raises(OverflowError):
            LossTally(2, [2], overflowing, exact_add=exact).total()


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_segment_terms_refuse_non_finite_and_the_tally_keeps_fsums_answer(bad):
    values = np.array([1.0, 2.0, bad, 4.0, 0.5])
    assert SegmentTerms.of(values, [2, 5]) is None
    stops = [2, 4, 5]
    fast = LossTally(5, stops, values, exact_add=exact_add)
    slow = LossTally(5, stops, values)
    assert same_floats(fast.segment_sums(), slow.segment_sums())
    assert same_floats(fast.total(), slow.total())
    assert fast.segment_sums()[0] == 3.0 and fast.segment_sums()[2] == 0.5


def test_tallies_of_stored_losses_take_the_segment_terms_with_the_kernels():
    rng = np.random.default_rng(8)
    losses = rng.standard_normal(20_000) * 10.0 ** rng.integers(-8, 8, 20_000)
    stops = sorted({*np.rint(np.geomspace(1, 20_000, 40)).astype(int).tolist()})
    fast = LossTally(20_000, stops, losses, exact_add=exact_add)
    slow = LossTally(20_000, stops, losses)
    assert isinstance(fast._stored_sums(), SegmentTerms)
    assert isinstance(slow._stored_sums(), list)
    assert same_floats(fast.segment_sums(), slow.segment_sums())
    assert same_floats(fast.total(), slow.total())
    streamed = LossTally(20_000, stops, exact_add=exact_add)
    for piece in np.array_split(losses, 7):
        streamed.add(piece)
    assert same_floats(streamed.segment_sums(), slow.segment_sums())
    assert same_floats(streamed.total(), slow.total())
