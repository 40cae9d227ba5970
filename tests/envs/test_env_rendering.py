"""rgb_array rendering of every set: K (or its shadow) above the loss curve."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from scipy.spatial import ConvexHull

from bco_gym import BanditConvexEnv
from bco_gym.envs.registration import ENV_IDS
from bco_gym.envs.rendering import (
    COMPARATOR_COLOR,
    LOSS_COLOR,
    PLAY_COLOR,
    SET_FILL,
    STRIP_HEIGHT,
    PlaneView,
    plane_basis,
)
from bco_gym.losses import LinearLoss
from bco_gym.sets import L2Ball, Simplex


def rendered(convex_set, plays: int = 10) -> tuple[BanditConvexEnv, np.ndarray]:
    env = BanditConvexEnv(convex_set, LinearLoss(convex_set), 50, render_mode="rgb_array")
    env.reset(seed=0)
    rng = np.random.default_rng(1)
    for _ in range(plays):
        env.step(convex_set.sample(rng))
    return env, env.render()


@pytest.mark.parametrize("convex_set", [Simplex(2), Simplex(3), L2Ball(2)], ids=repr)
def test_frame_is_an_rgb_uint8_image_with_set_plays_and_comparator(convex_set):
    env, frame = rendered(convex_set)
    assert frame.shape == (256 + STRIP_HEIGHT, 256, 3) and frame.dtype == np.uint8
    colors = set(map(tuple, np.unique(frame.reshape(-1, 3), axis=0).tolist()))
    assert {SET_FILL, COMPARATOR_COLOR, PLAY_COLOR, LOSS_COLOR} <= colors
    assert env.metadata["render_modes"] == ["rgb_array"]


@pytest.mark.parametrize(
    ("convex_set", "area"),
    [(L2Ball(2), math.pi), (Simplex(3), math.sqrt(3) / 2)],  # triangle of side sqrt(2)
    ids=repr,
)
def test_filled_area_matches_the_set(convex_set, area):
    view = PlaneView(convex_set)
    filled = np.all(view.frame(None, [])[:256] == SET_FILL, axis=-1).sum()
    pixel_area = 1.0 / view._scale**2
    assert filled * pixel_area == pytest.approx(area, rel=0.03)


def test_comparator_is_drawn_where_it_lies():
    convex_set = Simplex(3)
    env, frame = rendered(convex_set, plays=0)
    best = env.losses.comparator([env.horizon])[0].point
    rows, cols = env._view._pixels(env._view.coordinates(best[np.newaxis]))
    np.testing.assert_array_equal(frame[rows[0], cols[0]], COMPARATOR_COLOR)


def test_no_render_mode_renders_nothing():
    env = BanditConvexEnv(Simplex(10), LinearLoss(Simplex(10)), 5)
    env.reset(seed=0)
    assert env.render() is None
    assert env.metadata["render_modes"] == BanditConvexEnv.metadata["render_modes"] == ["rgb_array"]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_id_renders_as_stable_baselines3_asks(env_id):
    env = gym.make(env_id, render_mode="rgb_array", horizon=300)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(5):
        env.step(env.unwrapped.set.sample(rng))
    frame = env.render()
    assert frame.shape == (256 + STRIP_HEIGHT, 256, 3) and frame.dtype == np.uint8
    colors = set(map(tuple, np.unique(frame.reshape(-1, 3), axis=0).tolist()))
    assert {SET_FILL, COMPARATOR_COLOR, LOSS_COLOR} <= colors


def test_the_shadow_of_a_large_simplex_is_its_plane_polygon():
    """Simplex(5) on the plane of two orthonormal directions u, v within V: its shadow is
    the convex hull of the vertices' coordinates, whose area the fill must match."""
    convex_set = Simplex(5)
    gradients = np.array([[1.0, -1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0, -2.0]])
    basis = plane_basis(convex_set, gradients)
    np.testing.assert_allclose(basis.T @ basis, np.eye(2), atol=1e-12)
    np.testing.assert_allclose(basis.sum(axis=0), 0.0, atol=1e-12)  # within V
    spans = np.abs(basis.T @ (gradients / np.linalg.norm(gradients, axis=1, keepdims=True)).T)
    np.testing.assert_allclose(np.sort(np.linalg.svd(spans, compute_uv=False)), 1.0, atol=1e-9)
    view = PlaneView(convex_set, basis)
    vertices = view.coordinates(np.eye(5))
    hull = ConvexHull(vertices)
    filled = np.all(view.frame(None, [])[:256] == SET_FILL, axis=-1).sum()
    assert filled / view._scale**2 == pytest.approx(hull.volume, rel=0.03)


# The plane basis LAPACK returned for the test above under OPENBLAS_CORETYPE=Prescott (issue 44):
# e_3 and e_4 project 1.7e-16 apart, where the host's basis puts them at one point.
PRESCOTT_BASIS = [
    ["-0x1.0000000000000p-52", "0x1.6a09e667f3bcdp-1"],
    ["-0x1.6a09e667f3bcep-53", "-0x1.6a09e667f3bcdp-1"],
    ["-0x1.a20bd700c2c3fp-2", "0x1.0000000000000p-52"],
    ["-0x1.a20bd700c2c3fp-2", "0x1.0000000000000p-54"],
    ["0x1.a20bd700c2c3ep-1", "0x1.0000000000000p-52"],
]


def test_vertices_a_rounding_apart_on_the_plane_still_fill_the_shadow():
    """Two vertices whose shadows part by a rounding made a 1e-16 edge; the fill divided
    its tolerance by that edge's e_y and drew nothing (0 pixels against the hull's area)."""
    basis = np.array([[float.fromhex(v) for v in row] for row in PRESCOTT_BASIS])
    view = PlaneView(Simplex(5), basis)
    vertices = view.coordinates(np.eye(5))
    assert 0.0 < abs(vertices[2, 1] - vertices[3, 1]) < 1e-15  # e_3, e_4: a rounding apart
    filled = np.all(view.frame(None, [])[:256] == SET_FILL, axis=-1).sum()
    assert filled / view._scale**2 == pytest.approx(ConvexHull(vertices).volume, rel=0.03)
    gradients = np.array([[1.0, -1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0, -2.0]])
    host = PlaneView(Simplex(5), plane_basis(Simplex(5), gradients))
    host_filled = np.all(host.frame(None, [])[:256] == SET_FILL, axis=-1).sum()
    assert abs(int(filled) - int(host_filled)) <= 0.005 * host_filled  # the same picture


def test_a_large_set_is_viewed_on_the_plane_of_its_losses():
    env = gym.make("BCO-Simplex-v0", n=6, horizon=50, render_mode="rgb_array").unwrapped
    env.reset(seed=0)
    env.render()
    center = env.set.center
    gradients = np.stack([env.losses.gradient(t, center) for t in range(50)])
    np.testing.assert_array_equal(env._view._basis, plane_basis(env.set, gradients))
    env.reset(seed=1)
    assert env._view is None  # another episode, other losses: the plane is rebuilt
