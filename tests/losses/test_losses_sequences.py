"""Every family on every set it supports: determinism, chunking, constants, gradients."""

from __future__ import annotations

import json

import numpy as np
import pytest
from losses_helpers import CASE_IDS, CASES, SETS, SMOOTH, feasible_points, sequence

from bco_gym.losses import make_losses
from bco_gym.sets import Simplex


@pytest.mark.parametrize(("family", "set_name"), CASES, ids=CASE_IDS)
def test_same_seed_same_sequence_and_different_seeds_differ(family: str, set_name: str):
    rng = np.random.default_rng(1)
    points = feasible_points(SETS[set_name], rng, 10)
    rounds = np.arange(len(points)) * 37
    first, again, other = (sequence(family, set_name, seed) for seed in (5, 5, 6))
    values = [
        [s.loss(int(t), x) for t, x in zip(rounds, points, strict=True)]
        for s in (first, again, other)
    ]
    assert values[0] == values[1]
    assert not np.allclose(values[0], values[2])


@pytest.mark.parametrize(("family", "set_name"), CASES, ids=CASE_IDS)
def test_reading_order_does_not_change_the_sequence(family: str, set_name: str):
    losses = sequence(family, set_name)
    boundary = losses.chunk_size
    start = boundary - 6  # the batch straddles two chunks
    points = feasible_points(SETS[set_name], np.random.default_rng(2), 6)[:12]
    batched = losses.losses(start, points)
    forward = [losses.loss(start + i, x) for i, x in enumerate(points)]
    fresh = sequence(family, set_name)  # reads the later chunk first, then goes backwards
    backward = [fresh.loss(start + i, points[i]) for i in reversed(range(len(points)))][::-1]
    np.testing.assert_array_equal(batched, forward)
    np.testing.assert_array_equal(batched, backward)
    assert batched.dtype == np.float64


@pytest.mark.parametrize(("family", "set_name"), CASES, ids=CASE_IDS)
def test_constants_bound_losses_and_gradients_over_k(family: str, set_name: str):
    convex_set = SETS[set_name]
    losses = sequence(family, set_name, seed=3)
    rng = np.random.default_rng(3)
    points = feasible_points(convex_set, rng, 15)
    rounds = rng.choice(3 * losses.chunk_size, size=40, replace=False)
    largest_value, largest_gradient = 0.0, 0.0
    for t in rounds:
        values = [losses.loss(int(t), x) for x in points]
        largest_value = max(largest_value, max(abs(v) for v in values))
        norms = [np.linalg.norm(losses.gradient(int(t), x)) for x in points]
        largest_gradient = max(largest_gradient, max(norms))
    assert largest_value <= losses.bound * (1 + 1e-12)
    assert largest_gradient <= losses.lipschitz * (1 + 1e-12)
    assert largest_value > 0 and largest_gradient > 0


@pytest.mark.parametrize(("family", "set_name"), CASES, ids=CASE_IDS)
def test_gradient_is_a_subgradient_and_matches_finite_differences(family: str, set_name: str):
    convex_set = SETS[set_name]
    losses = sequence(family, set_name, seed=4)
    rng = np.random.default_rng(4)
    points = feasible_points(convex_set, rng, 6)
    for t in range(0, 300, 29):
        for x, y in zip(points, points[::-1], strict=True):
            gradient = losses.gradient(t, x)
            assert gradient.shape == convex_set.shape
            # convexity: f(y) >= f(x) + <g, y - x>
            assert losses.loss(t, y) >= losses.loss(t, x) + np.vdot(gradient, y - x) - 1e-9
        if family not in SMOOTH:
            continue
        x = points[1]  # a sample: interior (relative) point
        direction = convex_set.tangent(rng.standard_normal(convex_set.shape))
        step = 1e-5
        slope = (losses.loss(t, x + step * direction) - losses.loss(t, x - step * direction)) / (
            2 * step
        )
        assert slope == pytest.approx(np.vdot(losses.gradient(t, x), direction), rel=1e-5, abs=1e-7)


@pytest.mark.parametrize(("family", "set_name"), CASES, ids=CASE_IDS)
def test_describe_is_json_and_rebuilds_the_same_sequence(family: str, set_name: str):
    losses = sequence(family, set_name, seed=7)
    description = json.loads(json.dumps(losses.describe()))
    name = description.pop("name")
    assert name == family
    rebuilt = make_losses(name, SETS[set_name], **description)
    rebuilt.reset(np.random.default_rng(7))
    x = np.asarray(SETS[set_name].center, dtype=float)
    assert [rebuilt.loss(t, x) for t in range(5)] == [losses.loss(t, x) for t in range(5)]


def test_linear_switching_changes_its_mean_every_period():
    losses = sequence("linear-switching", "simplex", noise=0.0, period=5, mean_norm=0.5)
    thetas = np.stack([losses.gradient(t, SETS["simplex"].center) for t in range(20)])
    for period in range(4):
        block = thetas[5 * period : 5 * period + 5]
        np.testing.assert_array_equal(block, np.broadcast_to(block[0], block.shape))
        np.testing.assert_allclose(block[0], losses.period_mean(period))
        assert np.linalg.norm(block[0]) == pytest.approx(0.5)
        assert block[0].sum() == pytest.approx(0.0, abs=1e-12)  # in V
    assert not np.allclose(thetas[0], thetas[5])


def test_linear_default_has_a_clear_best_action():
    """The issue's requirement: ||mean|| >= 0.5 while ||theta_t|| <= 1."""
    losses = sequence("linear", "ball")
    assert losses.lipschitz == pytest.approx(1.0)
    mean = np.mean([losses.gradient(t, np.zeros(3)) for t in range(4000)], axis=0)
    assert np.linalg.norm(mean) == pytest.approx(0.5, abs=0.03)


def test_completion_target_is_low_rank_inside_the_ball():
    losses = sequence("completion", "nuclear", rank=2, signal=0.8)
    singular = np.linalg.svd(losses.target(), compute_uv=False)
    np.testing.assert_allclose(singular[:2], 0.8 * 2.0 / 2)
    np.testing.assert_allclose(singular[2:], 0.0, atol=1e-12)
    assert SETS["nuclear"].contains(losses.target())


def test_memory_stays_flat_in_the_horizon():
    import tracemalloc

    losses = make_losses("linear", Simplex(20))
    losses.reset(np.random.default_rng(0))
    horizon = 200_000  # T x n floats would be 32 MB
    tracemalloc.start()
    losses.comparator([horizon // 2, horizon])
    losses.cumulative_loss(np.full(20, 0.05), [horizon])
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 8 * 2**20
