"""LMO and projection of every set, checked against linprog, vertices and the VI."""

from __future__ import annotations

import numpy as np
import pytest
from set_cases import POLYTOPES, SHRINK_FRACTION, far_point

from bco_gym.sets import ConvexSet

DIRECTIONS = 8


def _set_and_minimum(case, shrunk: bool):
    """The set (shrunk or not) and g -> min over it of <g, x>, from the base LP."""
    base = case.make()
    if not shrunk:
        return base, (lambda g: case.lp(base, g)) if case.lp else None
    shrunk_set = base.shrink(SHRINK_FRACTION * base.inner_radius)
    a, c = shrunk_set.scale, base.center

    def minimum(g):
        return float(np.vdot(g, c)) + a * (case.lp(base, g) - float(np.vdot(g, c)))

    return shrunk_set, minimum if case.lp else None


@pytest.mark.parametrize("shrunk", [False, True], ids=["K", "K_delta"])
def test_lmo_is_feasible_and_optimal(case, shrunk, rng):
    convex_set, minimum = _set_and_minimum(case, shrunk)
    samples = [convex_set.sample(rng) for _ in range(30)]
    for _ in range(DIRECTIONS):
        g = rng.standard_normal(convex_set.shape)
        vertex = convex_set.lmo(g)
        assert vertex.shape == convex_set.shape
        assert convex_set.contains(vertex, atol=1e-9), convex_set.violation(vertex)
        value = float(np.vdot(g, vertex))
        if minimum is not None:
            assert value == pytest.approx(minimum(g), abs=1e-8)
        assert value <= min(float(np.vdot(g, y)) for y in samples) + 1e-12


@pytest.mark.parametrize("case", POLYTOPES, ids=repr)
def test_lmo_matches_best_vertex(case, rng):
    convex_set = case.make()
    vertices = case.vertices(convex_set)
    for _ in range(DIRECTIONS):
        g = rng.standard_normal(convex_set.shape)
        value = float(np.vdot(g, convex_set.lmo(g)))
        assert value == pytest.approx(float(np.min(vertices @ g.ravel())), abs=1e-12)


@pytest.mark.parametrize("case", POLYTOPES, ids=repr)
def test_lmo_answers_are_vertices(case, rng):
    convex_set = case.make()
    vertices = case.vertices(convex_set)
    for _ in range(DIRECTIONS):
        vertex = convex_set.lmo(rng.standard_normal(convex_set.shape)).ravel()
        assert np.min(np.abs(vertices - vertex).sum(axis=1)) < 1e-12


def test_lmo_returns_new_array(case, rng):
    convex_set = case.make()
    g = rng.standard_normal(convex_set.shape)
    first = convex_set.lmo(g)
    first += 100.0
    assert convex_set.contains(convex_set.lmo(g))


def _projection_tolerance(case) -> float:
    """Closed forms are exact to rounding; the QP answers are polished to about 1e-12."""
    return 1e-9


@pytest.mark.parametrize("shrunk", [False, True], ids=["K", "K_delta"])
def test_projection_variational_inequality(case, shrunk, rng):
    convex_set, _ = _set_and_minimum(case, shrunk)
    tolerance = _projection_tolerance(case)
    samples = [convex_set.sample(rng) for _ in range(10)]
    samples += [convex_set.lmo(rng.standard_normal(convex_set.shape)) for _ in range(10)]
    for scale in (0.5, 3.0):
        x = far_point(convex_set, rng, scale)
        p = convex_set.project(x)
        assert convex_set.contains(p, atol=1e-9), convex_set.violation(p)
        worst = max(float(np.vdot(x - p, y - p)) for y in samples)
        assert worst <= tolerance * (1.0 + np.linalg.norm(x - p))
        # exact certificate: max over K of <x - p, y - p> is attained at lmo(p - x)
        certificate = float(np.vdot(x - p, convex_set.lmo(p - x) - p))
        assert certificate <= tolerance * (1.0 + np.linalg.norm(x - p))


def test_projection_idempotent_and_nonexpansive(case, rng):
    convex_set = case.make()
    tolerance = _projection_tolerance(case)
    points = [far_point(convex_set, rng, scale) for scale in (0.3, 1.0, 2.0, 5.0)]
    projections = [convex_set.project(x) for x in points]
    for x, p in zip(points, projections, strict=True):
        assert np.linalg.norm(convex_set.project(p) - p) <= tolerance
        assert np.linalg.norm(x - p) <= np.linalg.norm(x - convex_set.center) + tolerance
    for i in range(len(points)):
        for j in range(i):
            moved = np.linalg.norm(projections[i] - projections[j])
            assert moved <= np.linalg.norm(points[i] - points[j]) + tolerance


def test_contains_agrees_with_projection(case, rng):
    convex_set = case.make()
    tolerance = _projection_tolerance(case)
    inside = [convex_set.sample(rng) for _ in range(5)] + [convex_set.center.copy()]
    for x in inside:
        assert convex_set.contains(x)
        assert np.linalg.norm(convex_set.project(x) - x) <= tolerance
    outside = 0
    for _ in range(8):
        x = far_point(convex_set, rng, 2.0)
        moved = np.linalg.norm(convex_set.project(x) - x)
        assert convex_set.contains(x) == (moved <= tolerance)
        outside += not convex_set.contains(x)
    assert outside >= 4


def test_projection_unavailable_message():
    class Interval(ConvexSet):
        shape = (1,)
        center = np.zeros(1)
        inner_radius = outer_radius = 1.0

        def lmo(self, direction):
            return -np.sign(np.asarray(direction, dtype=float))

        def contains(self, x, atol=1e-9):
            return abs(float(np.asarray(x)[0])) <= 1 + atol

    interval = Interval()
    assert not interval.has_projection
    with pytest.raises(NotImplementedError, match=r"projection-free agents \('bbcg'"):
        interval.project(np.zeros(1))


def test_bounds_match_the_lmo(case):
    convex_set = case.make()
    low, high = convex_set.bounds()
    generic_low, generic_high = ConvexSet.bounds(convex_set)
    np.testing.assert_allclose(low, generic_low, atol=1e-9)
    np.testing.assert_allclose(high, generic_high, atol=1e-9)


def test_samples_are_feasible_and_seeded(case):
    convex_set = case.make()
    first = [convex_set.sample(np.random.default_rng(7)) for _ in range(3)]
    again = convex_set.sample(np.random.default_rng(7))
    np.testing.assert_array_equal(first[0], again)
    points = [convex_set.sample(np.random.default_rng(seed)) for seed in range(20)]
    for x in points:
        assert x.shape == convex_set.shape
        assert convex_set.contains(x, atol=1e-9), convex_set.violation(x)
    assert np.std(np.array(points), axis=0).max() > 1e-3
