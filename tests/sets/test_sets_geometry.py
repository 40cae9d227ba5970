"""Geometry of every set: the tangent projector, honest radii, and the shrunk set."""

from __future__ import annotations

import numpy as np
import pytest
from set_cases import CASES, POLYTOPES, SHRINK_FRACTION, unit_tangent

from bco_gym.sets import ConvexSet


def tangent_matrix(convex_set: ConvexSet) -> np.ndarray:
    """The matrix of ``tangent`` on the flattened space, column by column."""
    basis = np.eye(convex_set.dim)
    columns = [convex_set.tangent(e.reshape(convex_set.shape)).ravel() for e in basis]
    return np.array(columns).T


def test_tangent_is_an_orthogonal_projector_of_rank_aff_dim(case):
    convex_set = case.make()
    matrix = tangent_matrix(convex_set)
    np.testing.assert_allclose(matrix, matrix.T, atol=1e-12)
    np.testing.assert_allclose(matrix @ matrix, matrix, atol=1e-12)
    assert np.linalg.matrix_rank(matrix, tol=1e-8) == convex_set.aff_dim
    if convex_set.aff_dim == convex_set.dim:
        np.testing.assert_array_equal(matrix, np.eye(convex_set.dim))


@pytest.mark.parametrize("case", [c for c in CASES if c.equalities], ids=repr)
def test_tangent_keeps_points_in_the_affine_hull(case, rng):
    convex_set = case.make()
    equalities, rhs = case.equalities(convex_set)
    c = convex_set.center.ravel()
    np.testing.assert_allclose(equalities @ c, rhs, atol=1e-12)
    for _ in range(5):
        step = convex_set.tangent(rng.standard_normal(convex_set.shape)).ravel()
        assert np.linalg.norm(step) > 0.1
        np.testing.assert_allclose(equalities @ (c + 3.7 * step), rhs, atol=1e-11)


@pytest.mark.parametrize("case", POLYTOPES, ids=repr)
def test_tangent_range_is_spanned_by_vertex_differences(case):
    convex_set = case.make()
    vertices = case.vertices(convex_set)
    differences = vertices[1:] - vertices[0]
    assert np.linalg.matrix_rank(differences, tol=1e-9) == convex_set.aff_dim
    matrix = tangent_matrix(convex_set)
    np.testing.assert_allclose(differences @ matrix, differences, atol=1e-12)


def test_tangent_many_matches_tangent(case, rng):
    convex_set = case.make()
    batch = rng.standard_normal((6, *convex_set.shape))
    many = convex_set.tangent_many(batch)
    assert many.shape == batch.shape
    for row, v in zip(many, batch, strict=True):
        np.testing.assert_allclose(row, convex_set.tangent(v), atol=1e-13)
    assert convex_set.tangent_many(batch[:0]).shape == (0, *convex_set.shape)


def test_tangent_many_does_not_modify_its_input(case, rng):
    convex_set = case.make()
    batch = rng.standard_normal((3, *convex_set.shape))
    kept = batch.copy()
    convex_set.tangent_many(batch)
    convex_set.tangent(batch[0])
    np.testing.assert_array_equal(batch, kept)


def test_inner_radius_is_honest(case, rng):
    convex_set = case.make()
    c, r = convex_set.center, convex_set.inner_radius
    assert r > 0 and convex_set.contains(c)
    for _ in range(40):
        point = c + r * unit_tangent(convex_set, rng)
        assert convex_set.contains(point, atol=1e-9), convex_set.violation(point)


def test_inner_radius_is_tight(case):
    convex_set = case.make()
    c, r = convex_set.center, convex_set.inner_radius
    u = case.tight_direction(convex_set)
    assert np.linalg.norm(u) == pytest.approx(1.0)
    np.testing.assert_allclose(convex_set.tangent(u), u, atol=1e-12)
    assert convex_set.contains(c + r * u, atol=1e-9)
    assert not convex_set.contains(c + r * (1.0 + 1e-6) * u, atol=1e-9)


def test_outer_radius_is_honest(case, rng):
    convex_set = case.make()
    c, radius = convex_set.center, convex_set.outer_radius
    distances = [
        np.linalg.norm(convex_set.lmo(rng.standard_normal(convex_set.shape)) - c) for _ in range(40)
    ]
    distances += [np.linalg.norm(convex_set.sample(rng) - c) for _ in range(20)]
    assert max(distances) <= radius + 1e-9
    if case.vertices is None:  # balls: every LMO answer is an extreme point at distance R
        assert min(distances[:40]) == pytest.approx(radius, abs=1e-9)


@pytest.mark.parametrize("case", POLYTOPES, ids=repr)
def test_outer_radius_is_attained_by_a_vertex(case):
    convex_set = case.make()
    vertices = case.vertices(convex_set)
    distances = np.linalg.norm(vertices - convex_set.center.ravel(), axis=1)
    assert distances.max() == pytest.approx(convex_set.outer_radius, abs=1e-9)


def test_shrunk_set_oracles_follow_the_formulas(shrunk_case, rng):
    base = shrunk_case.make()
    delta = SHRINK_FRACTION * base.inner_radius
    shrunk = base.shrink(delta)
    c, a = base.center, 1.0 - delta / base.inner_radius
    assert shrunk.scale == pytest.approx(a)
    assert shrunk.inner_radius == pytest.approx(a * base.inner_radius)
    assert shrunk.outer_radius == pytest.approx(a * base.outer_radius)
    assert shrunk.aff_dim == base.aff_dim
    for _ in range(5):
        g = rng.standard_normal(base.shape)
        np.testing.assert_allclose(shrunk.lmo(g), c + a * (base.lmo(g) - c), atol=1e-12)
        x = c + 2.0 * base.outer_radius * rng.standard_normal(base.shape)
        expected = c + a * (base.project(c + (x - c) / a) - c)
        np.testing.assert_allclose(shrunk.project(x), expected, atol=1e-9)
        y = c + rng.uniform(0.5, 1.5) * (base.sample(rng) - c)
        assert shrunk.contains(y) == base.contains(c + (y - c) / a)
        np.testing.assert_allclose(shrunk.tangent(g), base.tangent(g), atol=0)


def test_shrunk_set_keeps_the_smoothing_ball_inside(shrunk_case, rng):
    base = shrunk_case.make()
    delta = SHRINK_FRACTION * base.inner_radius
    shrunk = base.shrink(delta)
    points = [shrunk.lmo(rng.standard_normal(base.shape)) for _ in range(10)]
    points += [shrunk.sample(rng) for _ in range(10)]
    for x in points:
        assert shrunk.contains(x)
        for _ in range(5):
            y = x + delta * unit_tangent(base, rng)
            assert base.contains(y, atol=1e-9), base.violation(y)


def test_shrinking_by_the_inner_radius_leaves_the_centre(shrunk_case, rng):
    base = shrunk_case.make()
    point = base.shrink(base.inner_radius)
    np.testing.assert_allclose(point.lmo(rng.standard_normal(base.shape)), base.center)
    np.testing.assert_allclose(point.project(base.sample(rng)), base.center)
    assert point.contains(base.center) and not point.contains(base.sample(rng))
    with pytest.raises(ValueError, match=r"delta=.* must lie in \[0, r\]"):
        base.shrink(1.5 * base.inner_radius)
