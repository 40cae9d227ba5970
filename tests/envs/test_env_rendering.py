"""rgb_array rendering of sets of affine dimension 1 or 2."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bco_gym import BanditConvexEnv
from bco_gym.envs.rendering import COMPARATOR_COLOR, PLAY_COLOR, SET_FILL, PlaneView
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
    assert frame.shape == (256, 256, 3) and frame.dtype == np.uint8
    colors = {tuple(int(c) for c in pixel) for pixel in frame.reshape(-1, 3)}
    assert {SET_FILL, COMPARATOR_COLOR, PLAY_COLOR} <= colors
    assert env.metadata["render_modes"] == ["rgb_array"]


@pytest.mark.parametrize(
    ("convex_set", "area"),
    [(L2Ball(2), math.pi), (Simplex(3), math.sqrt(3) / 2)],  # triangle of side sqrt(2)
    ids=repr,
)
def test_filled_area_matches_the_set(convex_set, area):
    view = PlaneView(convex_set)
    filled = np.all(view.frame(None, []) == SET_FILL, axis=-1).sum()
    pixel_area = 1.0 / view._scale**2
    assert filled * pixel_area == pytest.approx(area, rel=0.03)


def test_comparator_is_drawn_where_it_lies():
    convex_set = Simplex(3)
    env, frame = rendered(convex_set, plays=0)
    best = env.losses.comparator([env.horizon])[0].point
    rows, cols = env._view._pixels(env._view.coordinates(best[np.newaxis]))
    np.testing.assert_array_equal(frame[rows[0], cols[0]], COMPARATOR_COLOR)


def test_no_render_mode_renders_nothing_and_large_sets_list_no_modes():
    env = BanditConvexEnv(Simplex(10), LinearLoss(Simplex(10)), 5)
    env.reset(seed=0)
    assert env.render() is None and env.metadata["render_modes"] == []
    assert BanditConvexEnv.metadata["render_modes"] == ["rgb_array"]
