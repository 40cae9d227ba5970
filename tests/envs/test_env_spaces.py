"""ConvexSetSpace: a Box over K's bounding box whose membership and sampling are K's."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from gymnasium import error, spaces
from gymnasium.vector.utils import batch_space

from bco_gym import ConvexSetSpace
from bco_gym.sets import L2Ball, Simplex

SETS = [Simplex(3), Simplex(6), L2Ball(2), L2Ball(5, radius=2.0)]


@pytest.mark.parametrize("convex_set", SETS, ids=repr)
def test_bounds_dtype_and_box_type(convex_set):
    space = ConvexSetSpace(convex_set)
    low, high = convex_set.bounds()
    assert isinstance(space, spaces.Box) and space.dtype == np.float64
    assert space.shape == convex_set.shape
    np.testing.assert_array_equal(space.low, low)
    np.testing.assert_array_equal(space.high, high)


@pytest.mark.parametrize("convex_set", SETS, ids=repr)
def test_contains_agrees_with_the_set(convex_set):
    space = ConvexSetSpace(convex_set, atol=1e-9)
    rng = np.random.default_rng(0)
    box_points = rng.uniform(space.low, space.high, size=(300, *space.shape))
    inside = [convex_set.sample(rng) for _ in range(100)]
    near = [x + 1e-6 * rng.standard_normal(space.shape) for x in inside]
    verdicts = []
    for x in [*box_points, *inside, *near]:
        verdict = space.contains(x)
        assert verdict == convex_set.contains(x, atol=1e-9)
        verdicts.append(verdict)
    assert any(verdicts) and not all(verdicts)  # both outcomes were exercised


def test_contains_rejects_wrong_shapes_dtypes_and_junk():
    space = ConvexSetSpace(Simplex(3))
    assert space.contains([0.2, 0.3, 0.5])
    assert np.array([1.0, 0.0, 0.0], dtype=np.float32) in space
    assert not space.contains(np.full(4, 0.25))
    assert not space.contains(np.full((3, 1), 1 / 3))
    assert not space.contains(np.array([0.2, 0.3, 0.5], dtype=complex))
    assert not space.contains("abc")
    assert not space.contains([[0.5], [0.5, 0.0]])


@pytest.mark.parametrize("convex_set", SETS, ids=repr)
def test_samples_lie_in_the_set_and_follow_the_seed(convex_set):
    space = ConvexSetSpace(convex_set, seed=5)
    draws = [space.sample() for _ in range(100)]
    assert all(x.dtype == np.float64 and convex_set.contains(x) for x in draws)
    space.seed(5)
    np.testing.assert_array_equal(space.sample(), draws[0])
    with pytest.raises(error.Error, match="masks are not supported"):
        space.sample(mask=np.ones(3))


def test_equality_is_by_value_and_survives_copies():
    space = ConvexSetSpace(Simplex(3), seed=1)
    assert space == ConvexSetSpace(Simplex(3))
    assert space != ConvexSetSpace(Simplex(4))
    assert space != ConvexSetSpace(Simplex(3), atol=1e-6)
    assert space != ConvexSetSpace(L2Ball(2)) and ConvexSetSpace(L2Ball(2)) != ConvexSetSpace(
        L2Ball(2, 2.0)
    )
    box = spaces.Box(0.0, 1.0, (3,), np.float64)
    assert space != box and box != space  # same bounds, different membership
    for clone in (pickle.loads(pickle.dumps(space)), copy.deepcopy(space)):
        assert clone == space and clone.set is not space.set
        assert clone.contains(np.array([0.2, 0.3, 0.5])) and not clone.contains(np.ones(3))
        np.testing.assert_array_equal(clone.sample(), copy.deepcopy(space).sample())


def test_batch_space_samples_and_checks_every_row():
    space = ConvexSetSpace(Simplex(3), seed=2)
    batched = batch_space(space, 4)
    assert isinstance(batched, ConvexSetSpace) and batched.batch == 4
    assert batched.shape == (4, 3) and batched == batch_space(ConvexSetSpace(Simplex(3)), 4)
    sample = batched.sample()
    assert sample.shape == (4, 3) and all(Simplex(3).contains(row) for row in sample)
    assert batched.contains(sample)
    sample[2] = [0.6, 0.6, 0.0]
    assert not batched.contains(sample)
    assert not batched.contains(sample[:3])
    with pytest.raises(ValueError, match="already a batch space"):
        batch_space(batched, 2)


@pytest.mark.parametrize(
    ("kwargs", "error_type", "message"),
    [
        ({"convex_set": "simplex"}, TypeError, "needs a ConvexSet"),
        ({"atol": -1.0}, ValueError, "atol=-1.0 must be finite and >= 0"),
        ({"batch": 0}, ValueError, "batch=0 must be None or an integer >= 1"),
        ({"batch": 1.5}, ValueError, "batch=1.5"),
    ],
)
def test_invalid_space_arguments(kwargs, error_type, message):
    arguments = {"convex_set": Simplex(3), **kwargs}
    with pytest.raises(error_type, match=message):
        ConvexSetSpace(**arguments)
