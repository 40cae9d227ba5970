"""The linear families' compiled chunk draw (bco_gym/agents/kernels/losses.py) gives the
NumPy draw's theta_t and offsets bit for bit, and is refused where it does not apply."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from bco_gym.agents.kernels.losses import linear_thetas, linear_values
from bco_gym.engine import compiled
from bco_gym.experiment import run_many
from bco_gym.losses import make_losses
from bco_gym.sets import Hypercube, L1Ball, L2Ball, NuclearNormBall, Simplex

FAMILIES = ("linear", "linear-switching", "linear-drift", "linear-adversarial")


def sets():
    yield L2Ball(1)
    yield L2Ball(10, radius=2.5)
    yield L2Ball(37)  # several blocks of 8 accumulators and a remainder
    yield L2Ball(129)  # above NumPy's pairwise block of 128: the long pairwise sum
    yield L2Ball(300, radius=0.1)
    yield L1Ball(7)
    low = [-1.0, 0.0, -2.0, -3.0, 0.5, 0.0, 1.0, 1.5, -2.0]
    yield Hypercube(low=low, high=[1.0] * 4 + [2.0] * 5)


def pair(family, convex_set, seed, **kwargs):
    numpy_draw, compiled_draw = (make_losses(family, convex_set, **kwargs) for _ in range(2))
    for sequence in (numpy_draw, compiled_draw):
        sequence.reset(np.random.default_rng(seed))
    return numpy_draw, compiled_draw


@pytest.mark.parametrize("family", FAMILIES)
def test_compiled_chunks_are_the_numpy_chunks_bit_for_bit(family):
    for number, convex_set in enumerate(sets()):
        if family in ("linear-drift", "linear-adversarial") and convex_set.dim < 2:
            continue  # the plane families need a plane
        kwargs = {"noise": 0.7} if number % 2 else {}
        numpy_draw, compiled_draw = pair(family, convex_set, number, **kwargs)
        assert compiled_draw.use_kernel(linear_thetas)
        for index in (0, 1, 5):
            expected, found = numpy_draw.chunk(index), compiled_draw.chunk(index)
            assert set(found) == set(expected)
            for key in expected:
                assert found[key].shape == expected[key].shape
                np.testing.assert_array_equal(found[key], expected[key])  # same bits
                assert found[key].tobytes() == expected[key].tobytes()  # and signs of zeros


@pytest.mark.parametrize("family", FAMILIES)
def test_compiled_values_are_the_numpy_values_bit_for_bit(family):
    rng = np.random.default_rng(7)
    for number, convex_set in enumerate(sets()):
        if family in ("linear-drift", "linear-adversarial") and convex_set.dim < 2:
            continue
        numpy_draw, compiled_draw = pair(family, convex_set, number)
        compiled_draw.use_kernel(linear_thetas, linear_values)
        points = rng.standard_normal((300, convex_set.dim)) * 10.0 ** rng.integers(-8, 8, (300, 1))
        points[:3] = 0.0  # products of zeros: signed zeros summed
        points[3] = -0.0
        for first, stop in ((0, 300), (4000, 4300), (5, 6)):
            for start, end, params, part in numpy_draw.chunks(first, stop):
                span = points[start - first : end - first]
                want = numpy_draw._evaluate(params, part, span)
                index = start // compiled_draw.chunk_size
                got = compiled_draw._evaluate(compiled_draw.chunk(index), part, span)
                assert got.tobytes() == want.tobytes()
        # a strided span is evaluated by NumPy (the compiled code takes contiguous arrays)
        params = compiled_draw.chunk(0)
        strided = np.asfortranarray(points[:50])
        want = numpy_draw._evaluate(numpy_draw.chunk(0), slice(0, 50), strided)
        assert compiled_draw._evaluate(params, slice(0, 50), strided).tobytes() == want.tobytes()


def test_the_compiled_draw_is_refused_where_V_is_not_all_of_R_n():
    for convex_set in (Simplex(5), NuclearNormBall(3, 4)):
        sequence = make_losses("linear", convex_set)
        sequence.reset(np.random.default_rng(0))
        assert not sequence.use_kernel(linear_thetas)
        assert sequence._thetas is None


@pytest.mark.parametrize(
    ("env", "agent"),
    [("BCO-Hypercube-v0", "fkm"), ("BCO-Ball-v0", "bbcg")],  # the compiled loop; the block loop
)
def test_runs_are_the_same_with_kernels_on_and_off(monkeypatch, env, agent):
    """Whole batched runs with kernels on (compiled draws, values and tallies, and fkm's
    compiled rounds) and off: the same per-round losses and comparators, bit for bit (on
    the box the kernels' arithmetic is NumPy's throughout; bbcg plays its NumPy block
    loop either way)."""
    results = {}
    for mode in ("on", "off"):
        monkeypatch.setenv(compiled.SWITCH, mode)
        results[mode] = run_many(env, agent, [3, 4], horizon=5000)
    for on, off in zip(results["on"], results["off"], strict=True):
        np.testing.assert_array_equal(on.comparator_loss, off.comparator_loss)
        np.testing.assert_array_equal(on.cumulative_loss, off.cumulative_loss)
        assert on.final_regret == off.final_regret
        assert on.adaptive_regret == off.adaptive_regret


def test_kernel_losses_of_zero_products_are_numpys_plus_zero():
    """A play at the centre 0 against theta_t < 0 in every entry: every product is -0.
    NumPy's row sum starts from its identity +0, so the loss is +0 - 0 = +0; the rounds
    kernels' loss must be the same float, sign included."""
    from bco_gym.agents.ogd.kernel import ogd_rounds
    from bco_gym.losses.base import row_dot
    from bco_gym.sets import L2Ball

    n, k = 10, 3
    theta = -np.abs(np.random.default_rng(0).standard_normal((1, k, n))) - 0.1
    offset = np.zeros((1, k))
    oracle = compiled._oracle(L2Ball(n))
    check = compiled._set_check(L2Ball(n), 1e-9)
    losses = np.empty((1, k))
    points = np.zeros((1, n))
    ogd_rounds(
        points,
        theta,
        offset,
        -1.0,
        0.0,
        oracle,
        check,
        losses,
        (0, 0, k),
        0,
        -1,
        np.empty((6, n)),
        np.empty((5, 1, n)),
    )
    expected = row_dot(theta[0], np.zeros((k, n))) - offset[0]
    assert losses[0].tobytes() == expected.tobytes()
    assert not np.signbit(losses[0]).any()
