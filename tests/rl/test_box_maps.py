"""The maps from the action cube [-1, 1]^shape onto K: image in K, onto, errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bco_gym.sets.balls import L1Ball, L2Ball
from bco_gym.sets.base import ConvexSet
from bco_gym.sets.birkhoff import BirkhoffPolytope
from bco_gym.sets.box import Hypercube
from bco_gym.sets.box_maps import (
    AffineMap,
    GaugeMap,
    ProjectedAffineMap,
    SoftmaxMap,
    box_map,
)
from bco_gym.sets.flow import FlowPolytope
from bco_gym.sets.nuclear import NuclearNormBall
from bco_gym.sets.simplex import Simplex

SETS = {
    "simplex2": lambda: Simplex(2),
    "simplex5": lambda: Simplex(5),
    "l2": lambda: L2Ball(3, radius=2.0),
    "l1": lambda: L1Ball(4, radius=1.5),
    "box": lambda: Hypercube([-1.0, 0.0, 2.0], [1.0, 3.0, 2.5]),
    "nuclear": lambda: NuclearNormBall(3, 2, radius=1.0),
    "flow": lambda: FlowPolytope.grid(3, 3),
    "birkhoff": lambda: BirkhoffPolytope(3),
    "shrunk simplex": lambda: Simplex(4).shrink(0.1),
}
EXPECTED_KIND = {
    "simplex2": SoftmaxMap,
    "simplex5": SoftmaxMap,
    "l2": GaugeMap,
    "l1": GaugeMap,
    "box": AffineMap,
    "nuclear": GaugeMap,
    "flow": ProjectedAffineMap,
    "birkhoff": ProjectedAffineMap,
    "shrunk simplex": ProjectedAffineMap,
}
# the QP projections (flow, Birkhoff) are accurate to the solver's tolerance
PROJECTION_ATOL = 1e-7


def _test_actions(shape: tuple[int, ...], rng: np.random.Generator) -> list[np.ndarray]:
    """Corners of the cube (all of them when few), random points, zero, points outside."""
    dim = int(np.prod(shape))
    if dim <= 8:
        corners = [
            np.array(c, dtype=float).reshape(shape) for c in itertools.product((-1, 1), repeat=dim)
        ]
    else:
        corners = [rng.choice([-1.0, 1.0], size=shape) for _ in range(64)]
    inside = [rng.uniform(-1.0, 1.0, size=shape) for _ in range(64)]
    outside = [3.0 * rng.standard_normal(shape) for _ in range(16)]
    faces = [
        np.where(rng.uniform(size=shape) < 0.3, 1.0, rng.uniform(-1, 1, size=shape))
        for _ in range(16)
    ]
    return [*corners, *inside, *outside, *faces, np.zeros(shape)]


@pytest.mark.parametrize("name", SETS)
def test_map_kind_and_image_lies_in_the_set(name):
    convex_set = SETS[name]()
    mapping = box_map(convex_set)
    assert type(mapping) is EXPECTED_KIND[name]
    atol = PROJECTION_ATOL if mapping.uses_projection else 1e-12
    rng = np.random.default_rng(0)
    for action in _test_actions(convex_set.shape, rng):
        point = mapping(action.astype(np.float32))
        assert point.shape == convex_set.shape and point.dtype == np.float64
        assert convex_set.contains(point, atol=atol), (
            name,
            action,
            convex_set.violation(point, atol),
        )


@pytest.mark.parametrize("name", SETS)
def test_actions_outside_the_cube_are_clipped(name):
    convex_set = SETS[name]()
    mapping = box_map(convex_set)
    action = 4.0 * np.random.default_rng(1).standard_normal(convex_set.shape)
    np.testing.assert_allclose(mapping(action), mapping(np.clip(action, -1, 1)), atol=1e-9)


@pytest.mark.parametrize("n", [2, 5, 100])
@pytest.mark.parametrize("tolerance", [1e-3, 1e-6])
def test_softmax_reaches_every_vertex_within_the_tolerance(n, tolerance):
    mapping = SoftmaxMap(Simplex(n), vertex_tolerance=tolerance)
    for i in range(n):
        corner = -np.ones(n)
        corner[i] = 1.0
        gap = mapping(corner) - np.eye(n)[i]
        # the documented bounds: 2 tol/e in L1, sqrt(2) tol/e in L2
        assert np.abs(gap).sum() <= 2 * tolerance / np.e * (1 + 1e-9)
        assert np.linalg.norm(gap) <= np.sqrt(2) * tolerance / np.e * (1 + 1e-9)
    # and beta is not larger than needed: the L1 gap is at least tol/(2e) (within 2.7x of tol/e)
    assert np.abs(mapping(2 * np.eye(n)[0] - 1) - np.eye(n)[0]).sum() >= tolerance / (2 * np.e)


def test_softmax_is_onto_the_interior_it_can_express():
    simplex = Simplex(6)
    mapping = SoftmaxMap(simplex)
    beta = mapping.inverse_temperature
    rng = np.random.default_rng(2)
    for _ in range(50):
        target = rng.dirichlet(np.ones(6)) + 1e-3
        target /= target.sum()
        logs = np.log(target)
        action = 1.0 + (logs - logs.max()) / beta  # softmax(beta a) = target
        assert action.min() >= -1.0
        np.testing.assert_allclose(mapping(action), target, rtol=1e-12, atol=1e-15)


def _gauge(convex_set: ConvexSet, v: np.ndarray) -> float:
    if isinstance(convex_set, L2Ball):
        return float(np.linalg.norm(v)) / convex_set.radius
    if isinstance(convex_set, L1Ball):
        return float(np.abs(v).sum()) / convex_set.radius
    return float(np.linalg.svd(v, compute_uv=False).sum()) / convex_set.radius


@pytest.mark.parametrize("name", ["l2", "l1", "nuclear"])
def test_gauge_map_is_onto_interior_and_boundary(name):
    convex_set = SETS[name]()
    mapping = box_map(convex_set)
    rng = np.random.default_rng(3)
    targets = [convex_set.sample(rng) for _ in range(30)]
    targets += [convex_set.lmo(rng.standard_normal(convex_set.shape)) for _ in range(10)]
    for target in targets:
        direction = target - convex_set.center
        action = direction * _gauge(convex_set, direction) / np.abs(direction).max()
        assert np.abs(action).max() <= 1.0 + 1e-12
        np.testing.assert_allclose(mapping(action), target, atol=1e-12)


def test_l2_gauge_map_sends_every_corner_to_the_sphere_and_is_continuous_at_zero():
    ball = L2Ball(4, radius=2.5)
    mapping = box_map(ball)
    for corner in itertools.product((-1.0, 1.0), repeat=4):
        assert np.linalg.norm(mapping(np.array(corner))) == pytest.approx(2.5, rel=1e-14)
    np.testing.assert_array_equal(mapping(np.zeros(4)), np.zeros(4))
    small = 1e-6 * np.random.default_rng(4).uniform(-1, 1, 4)
    assert np.linalg.norm(mapping(small)) <= 2.5 * np.abs(small).max() * (1 + 1e-12)


def test_l1_gauge_map_hits_the_vertices():
    ball = L1Ball(3, radius=1.5)
    mapping = box_map(ball)
    for i in range(3):
        for sign in (-1.0, 1.0):
            np.testing.assert_allclose(mapping(sign * np.eye(3)[i]), sign * 1.5 * np.eye(3)[i])


def test_affine_map_sends_corners_to_corners_and_is_onto():
    box = SETS["box"]()
    mapping = box_map(box)
    np.testing.assert_array_equal(mapping(-np.ones(3)), box.low)
    np.testing.assert_array_equal(mapping(np.ones(3)), box.high)
    rng = np.random.default_rng(5)
    for _ in range(20):
        target = box.sample(rng)
        action = (2 * target - box.low - box.high) / (box.high - box.low)
        np.testing.assert_allclose(mapping(action), target, atol=1e-14)


@pytest.mark.parametrize("name", ["flow", "birkhoff", "shrunk simplex"])
def test_projected_map_is_onto(name):
    convex_set = SETS[name]()
    mapping = box_map(convex_set)
    low, high = convex_set.bounds()
    rng = np.random.default_rng(6)
    targets = [convex_set.sample(rng) for _ in range(5)]
    targets += [convex_set.lmo(rng.standard_normal(convex_set.shape)) for _ in range(3)]
    for target in targets:
        action = (2 * target - low - high) / (high - low)
        np.testing.assert_allclose(mapping(action), target, atol=1e-6)


class _LmoOnlyDisk(ConvexSet):
    """The unit disk known only through its oracle (no projection, not a built-in set)."""

    shape = (2,)
    center = np.zeros(2)
    inner_radius = 1.0
    outer_radius = 1.0

    def lmo(self, direction):
        return -np.asarray(direction) / np.linalg.norm(direction)

    def contains(self, x, atol=1e-9):
        return bool(np.linalg.norm(x) <= 1 + atol)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match=r"no map .* onto .*_LmoOnlyDisk.*Implement project\(\)"):
        box_map(_LmoOnlyDisk())
    mapping = box_map(Simplex(3))
    with pytest.raises(ValueError, match=r"shape \(2,\), expected \(3,\)"):
        mapping(np.zeros(2))
    with pytest.raises(ValueError, match="non-finite"):
        mapping(np.array([0.0, np.nan, 0.0]))
    with pytest.raises(
        ValueError, match=r"vertex_tolerance=0.0 is not allowed; expected a real number in \(0, 1\)"
    ):
        SoftmaxMap(Simplex(3), vertex_tolerance=0.0)
    with pytest.raises(TypeError, match="needs a Simplex"):
        SoftmaxMap(L2Ball(3))
