"""RegretRecorder: end-of-episode keys, regret of known plays, regret curves, exact sums."""

from __future__ import annotations

import math
import warnings

import gymnasium as gym
import numpy as np
import pytest

from bco_gym import BanditConvexEnv
from bco_gym.losses import LinearLoss
from bco_gym.sets import L2Ball, Simplex
from bco_gym.wrappers import RegretRecorder
from bco_gym.wrappers.regret import exact_sum

END_KEYS = {"regret", "cumulative_loss", "comparator_loss", "comparator_gap", "comparator_point"}


def recorded_env(convex_set, horizon: int, **loss_kwargs) -> RegretRecorder:
    return RegretRecorder(
        BanditConvexEnv(convex_set, LinearLoss(convex_set, **loss_kwargs), horizon)
    )


def play(env: RegretRecorder, actions) -> list[dict]:
    return [env.step(action)[4] for action in actions]


def simplex_vertex_values(env: RegretRecorder, stop: int) -> np.ndarray:
    """sum_{t < stop} f_t(e_i) for every vertex e_i, straight from the loss sequence."""
    losses = env.unwrapped.losses
    n = env.unwrapped.set.n
    return np.array(
        [exact_sum(losses.losses(0, np.tile(np.eye(n)[i], (stop, 1)))) for i in range(n)]
    )


def test_keys_appear_at_the_end_only_and_hold_the_totals():
    env = recorded_env(Simplex(4), horizon=30)
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    actions = [env.unwrapped.set.sample(rng) for _ in range(30)]
    infos = play(env, actions)
    assert all(END_KEYS.isdisjoint(info) for info in infos[:-1])
    final = infos[-1]
    assert END_KEYS <= set(final)
    direct = env.unwrapped.losses.losses(0, np.stack(actions))
    assert final["cumulative_loss"] == math.fsum(direct)
    assert final["comparator_loss"] == pytest.approx(
        simplex_vertex_values(env, 30).min(), abs=1e-12
    )
    assert final["comparator_gap"] == 0.0
    assert final["regret"] == final["cumulative_loss"] - final["comparator_loss"]
    assert Simplex(4).contains(final["comparator_point"])
    np.testing.assert_array_equal(env.round_losses, [info["loss"] for info in infos])


@pytest.mark.parametrize("convex_set", [Simplex(5), L2Ball(3)], ids=repr)
def test_playing_the_comparator_has_zero_regret(convex_set):
    horizon = 200
    env = recorded_env(convex_set, horizon)
    env.reset(seed=2)
    best = env.unwrapped.losses.comparator([horizon])[0]
    final = play(env, [best.point] * horizon)[-1]
    tolerance = final["comparator_gap"] + 1e-9 * (1 + abs(final["cumulative_loss"]))
    assert abs(final["regret"]) <= tolerance


def test_playing_the_worst_vertex_has_large_positive_regret():
    horizon = 200
    env = recorded_env(Simplex(4), horizon, mean_norm=0.5, noise=0.5)
    env.reset(seed=3)
    losses = env.unwrapped.losses
    summed = sum(losses.gradient(t, losses.set.center) for t in range(horizon))  # sum of theta_t
    worst = losses.set.lmo(-summed)
    final = play(env, [worst] * horizon)[-1]
    values = simplex_vertex_values(env, horizon)
    assert final["regret"] == pytest.approx(values.max() - values.min(), rel=1e-12)
    assert final["regret"] > 0.1 * horizon  # the mean's strength makes the gap linear in T


def test_regret_curve_matches_a_direct_computation_at_prefixes():
    horizon = 120
    env = recorded_env(Simplex(3), horizon)
    env.reset(seed=4)
    rng = np.random.default_rng(5)
    actions = np.stack([env.unwrapped.set.sample(rng) for _ in range(horizon)])
    play(env, actions[:90])
    checkpoints = [1, 7, 50, 90]
    regret, gap = env.regret_curve(checkpoints)
    direct = env.unwrapped.losses.losses(0, actions[:90])
    for value, stop in zip(regret, checkpoints, strict=True):
        expected = math.fsum(direct[:stop]) - simplex_vertex_values(env, stop).min()
        assert value == pytest.approx(expected, abs=1e-12)
    np.testing.assert_array_equal(gap, np.zeros(4))
    play(env, actions[90:])
    final_regret, _ = env.regret_curve([horizon])
    env.reset(seed=4)
    final = play(env, actions)[-1]
    assert final_regret[0] == final["regret"]


@pytest.mark.parametrize("checkpoints", [[], [0, 5], [5, 3], [4, 4], [11]])
def test_regret_curve_rejects_bad_checkpoints(checkpoints):
    env = recorded_env(Simplex(3), horizon=20)
    env.reset(seed=0)
    play(env, [np.full(3, 1 / 3)] * 10)
    with pytest.raises(ValueError, match=r"must increase strictly within \[1, 10\]"):
        env.regret_curve(checkpoints)


def test_round_losses_are_read_only_and_survive_the_next_episode():
    env = recorded_env(Simplex(3), horizon=5)
    env.reset(seed=0)
    play(env, [np.full(3, 1 / 3), np.eye(3)[0], np.eye(3)[1]])
    kept = env.round_losses
    assert kept.dtype == np.float64 and kept.shape == (3,)
    with pytest.raises(ValueError, match="read-only"):
        kept[0] = 1.0
    snapshot = kept.copy()
    with pytest.warns(UserWarning, match="reset after 3 of 5 rounds.*no regret was reported"):
        env.reset(seed=1)
    assert env.round_losses.shape == (0,)
    play(env, [np.eye(3)[2]] * 5)
    np.testing.assert_array_equal(kept, snapshot)


def test_works_over_gym_make_and_its_wrappers():
    env = RegretRecorder(gym.make("BCO-Simplex-v0", n=3, horizon=50))
    env.reset(seed=0)
    final = play(env, [np.full(3, 1 / 3)] * 50)[-1]
    # At the centre f_t(c) = 0 exactly for linear losses, so the regret is -min.
    assert final["cumulative_loss"] == pytest.approx(0.0, abs=1e-12)
    assert final["regret"] == pytest.approx(-final["comparator_loss"], abs=1e-12)
    assert final["regret"] >= 0.0


def test_exact_sum_is_correctly_rounded_where_naive_sums_are_not():
    values = np.tile([1e16, 1.0, -1e16, 1e-3], 50_000)  # spans several internal chunks
    assert exact_sum(values) == math.fsum(values.tolist()) == pytest.approx(50_000 * 1.001)
    assert float(np.cumsum(values)[-1]) != exact_sum(values)
    assert exact_sum(np.empty(0)) == 0.0


def test_a_huge_horizon_allocates_with_the_rounds_played():
    env = RegretRecorder(gym.make("BCO-Simplex-v0", n=3, horizon=10**12))
    assert env._losses.nbytes <= 8 * 4096
    env.reset(seed=0)
    center = env.unwrapped.set.center
    for _ in range(5000):
        env.step(center)
    assert len(env.round_losses) == 5000 and env._losses.nbytes <= 8 * 2 * 5000
    np.testing.assert_array_equal(
        env.round_losses, env.unwrapped.losses.losses(0, np.tile(center, (5000, 1)))
    )


def test_a_time_limit_outside_the_recorder_is_reported_at_the_next_reset():
    env = gym.wrappers.TimeLimit(RegretRecorder(gym.make("BCO-Simplex-v0", n=3, horizon=20)), 4)
    env.reset(seed=0)
    for _ in range(4):
        *_, truncated, info = env.step(env.unwrapped.set.center)
    assert truncated and "regret" not in info
    with pytest.warns(UserWarning, match="after 4 of 20 rounds.*TimeLimit"):
        env.reset(seed=0)


def test_a_time_limit_inside_the_recorder_reports_the_regret_without_warning():
    env = RegretRecorder(gym.make("BCO-Simplex-v0", n=3, horizon=20, max_episode_steps=4))
    env.reset(seed=0)
    for _ in range(4):
        *_, info = env.step(env.unwrapped.set.center)
    assert np.isfinite(info["regret"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env.reset(seed=1)
