"""BanditConvexEnv: observations, rewards, seeding, truncation, feedback, bad input."""

from __future__ import annotations

import dataclasses
import math

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded

from bco_gym import BanditConvexEnv, InfeasibleActionError
from bco_gym.losses import LinearLoss
from bco_gym.sets import ConvexSet, L2Ball, Simplex


def simplex_env(n: int = 3, horizon: int = 20, **kwargs) -> BanditConvexEnv:
    convex_set = Simplex(n)
    return BanditConvexEnv(convex_set, LinearLoss(convex_set), horizon, **kwargs)


def rollout(env: BanditConvexEnv, actions: np.ndarray, seed: int) -> list[float]:
    env.reset(seed=seed)
    return [env.step(a)[1] for a in actions]


def random_actions(convex_set: ConvexSet, count: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([convex_set.sample(rng) for _ in range(count)])


def test_observation_is_a_fresh_float32_fraction_of_rounds():
    env = simplex_env(horizon=4)
    first, info = env.reset(seed=0)
    assert first.dtype == np.float32 and first.shape == (1,) and first[0] == 0.0
    assert info == {"t": 0}
    seen = [first]
    for t in range(1, 5):
        observation, *_ = env.step(env.set.center)
        assert observation.dtype == np.float32 and observation.shape == (1,)
        assert observation[0] == np.float32(t / 4)
        assert observation in env.observation_space
        assert not any(np.shares_memory(observation, other) for other in seen)
        seen.append(observation)


def test_reward_is_minus_the_linear_loss_at_the_played_point():
    env = simplex_env(n=4, horizon=30)
    env.reset(seed=3)
    for t, action in enumerate(random_actions(env.set, 30)):
        _, reward, _, _, info = env.step(action)
        assert type(reward) is float and type(info["loss"]) is float
        assert reward == -info["loss"] and info["t"] == t + 1 and env.round == t + 1
        theta = env.losses.gradient(t, action)  # linear: the gradient is theta_t
        assert info["loss"] == pytest.approx(float(theta @ (action - env.set.center)), abs=1e-12)
        assert abs(info["loss"]) <= env.problem.bound


def test_same_seed_same_rewards_and_different_seeds_differ():
    env = simplex_env(n=5, horizon=25)
    actions = random_actions(env.set, 25)
    first = rollout(env, actions, seed=11)
    assert rollout(env, actions, seed=11) == first
    assert rollout(simplex_env(n=5, horizon=25), actions, seed=11) == first
    assert rollout(env, actions, seed=12) != first


def test_reset_without_seed_continues_the_seeded_stream():
    env = simplex_env(horizon=5)
    actions = random_actions(env.set, 5)
    env.reset(seed=4)
    second = rollout_unseeded(env, actions)
    env.reset(seed=4)
    assert rollout_unseeded(env, actions) == second
    env.reset(seed=5)
    assert rollout_unseeded(env, actions) != second


def rollout_unseeded(env: BanditConvexEnv, actions: np.ndarray) -> list[float]:
    env.reset()
    return [env.step(a)[1] for a in actions]


def test_truncates_itself_exactly_at_the_horizon_and_never_terminates():
    env = simplex_env(horizon=7)
    env.reset(seed=0)
    flags = [env.step(env.set.center)[2:4] for _ in range(7)]
    assert flags == [(False, False)] * 6 + [(False, True)]
    with pytest.raises(ResetNeeded, match="truncated after horizon=7 rounds"):
        env.step(env.set.center)
    env.reset()
    assert env.round == 0 and env.step(env.set.center)[3] is False


def test_step_before_reset_raises_reset_needed():
    with pytest.raises(ResetNeeded, match=r"before calling env\.reset"):
        simplex_env().step(np.full(3, 1 / 3))


def test_full_feedback_reports_the_loss_gradient():
    env = simplex_env(n=4, horizon=10, feedback="full")
    env.reset(seed=2)
    for t, action in enumerate(random_actions(env.set, 10)):
        info = env.step(action)[4]
        np.testing.assert_array_equal(info["gradient"], env.losses.gradient(t, action))
    bandit = simplex_env(n=4, horizon=10)
    bandit.reset(seed=2)
    assert "gradient" not in bandit.step(bandit.set.center)[4]


def test_problem_is_frozen_and_holds_the_loss_constants():
    env = simplex_env(n=6, horizon=12, feedback="full")
    problem = env.unwrapped.problem
    assert problem.set is not env.set and repr(problem.set) == repr(env.set)  # a copy
    assert problem.horizon == 12 and problem.feedback == "full"
    assert problem.lipschitz == env.losses.lipschitz and problem.bound == env.losses.bound
    with pytest.raises(dataclasses.FrozenInstanceError):
        problem.horizon = 5  # type: ignore[misc]


def test_losses_by_family_name():
    env = BanditConvexEnv(L2Ball(3), "linear", 10, loss_kwargs={"mean_norm": 0.25, "noise": 0.5})
    assert isinstance(env.losses, LinearLoss) and env.losses.lipschitz == 0.75
    with pytest.raises(ValueError, match=r"unknown loss family 'nope'; allowed: linear, "):
        BanditConvexEnv(L2Ball(3), "nope", 10)


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (np.full(2, 0.5), r"shape \(2,\), expected \(3,\)"),
        (np.full((3, 1), 1 / 3), r"shape \(3, 1\), expected \(3,\)"),
        (np.array([0.5, np.nan, 0.5]), "non-finite"),
        (np.array([np.inf, 0.0, 0.0]), "non-finite"),
        (
            np.array([0.5, 0.5, 0.07]),
            r"sum of entries 1.07 \(1 \+ 0.07\), expected 1 within atol=1e-09",
        ),
        (np.array([1.2, -0.2, 0.0]), r"entry 1 is -0.2, expected >= 0"),
        ([[0.5], [0.5, 0.0]], "not a numeric array"),
        ("abc", "not a numeric array"),
    ],
)
def test_bad_actions_raise_infeasible_action_error(action, message):
    env = simplex_env()
    env.reset(seed=0)
    with pytest.raises(InfeasibleActionError, match=message) as caught:
        env.step(action)
    assert isinstance(caught.value, ValueError) and "round 0" in str(caught.value)
    assert env.round == 0  # a refused action does not consume a round


def test_tolerance_admits_rounding_and_float32_actions():
    env = simplex_env(atol=1e-6)
    env.reset(seed=0)
    env.step(np.array([0.5, 0.5, 1e-7]))
    env.step(np.full(3, 1 / 3, dtype=np.float32))
    with pytest.raises(InfeasibleActionError, match="within atol=1e-06"):
        env.step(np.array([0.5, 0.5, 1e-5]))


def test_project_mode_plays_the_projection_and_says_so():
    env = simplex_env(n=3, horizon=5, on_infeasible="project", feedback="full")
    env.reset(seed=1)
    outside = np.array([0.9, 0.6, -0.3])
    projected = env.set.project(outside)
    info = env.step(outside)[4]
    assert info["projected"] is True
    assert info["loss"] == env.losses.loss(0, projected)
    np.testing.assert_array_equal(info["gradient"], env.losses.gradient(0, projected))
    assert "projected" not in env.step(env.set.center)[4]
    with pytest.raises(InfeasibleActionError, match="non-finite"):
        env.step(np.array([np.nan, 0.5, 0.5]))
    with pytest.raises(InfeasibleActionError, match="shape"):
        env.step(np.ones(4))


class SimplexWithoutProjection(Simplex):
    project = ConvexSet.project


def test_project_mode_needs_a_projection():
    convex_set = SimplexWithoutProjection(3)
    with pytest.raises(ValueError, match="on_infeasible='project' needs a Euclidean projection"):
        BanditConvexEnv(convex_set, LinearLoss(convex_set), 5, on_infeasible="project")


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"horizon": 0}, ValueError, "horizon=0 is not allowed; expected an integer >= 1"),
        ({"horizon": -3}, ValueError, "horizon=-3"),
        ({"horizon": 2.5}, ValueError, "horizon=2.5"),
        ({"horizon": True}, ValueError, "horizon=True"),
        (
            {"feedback": "partial"},
            ValueError,
            "feedback='partial' is not allowed; allowed: 'bandit', 'full'",
        ),
        ({"on_infeasible": "clip"}, ValueError, "allowed: 'raise', 'project'"),
        ({"render_mode": "human"}, ValueError, "render_mode='human' is not allowed"),
    ],
)
def test_invalid_constructor_arguments(kwargs, error, message):
    arguments = {"horizon": 10, **kwargs}
    with pytest.raises(error, match=message):
        simplex_env(**arguments)


def test_losses_must_live_on_the_env_set():
    with pytest.raises(
        ValueError, match=r"defined on Simplex\(n=4\), the env's set is Simplex\(n=3\)"
    ):
        BanditConvexEnv(Simplex(3), LinearLoss(Simplex(4)), 10)
    with pytest.raises(TypeError, match="LossSequence or a family name"):
        BanditConvexEnv(Simplex(3), 42, 10)  # type: ignore[arg-type]
    with pytest.raises(
        ValueError, match=r"loss_kwargs=\{.noise.: 0.1\} apply to a family name only"
    ):
        BanditConvexEnv(Simplex(3), LinearLoss(Simplex(3)), 10, loss_kwargs={"noise": 0.1})
    equal_copy = BanditConvexEnv(Simplex(3), LinearLoss(Simplex(3)), 10)  # same set, rebuilt
    equal_copy.reset(seed=0)
    assert equal_copy.step(np.full(3, 1 / 3))[4]["t"] == 1


def test_gym_make_wrappers_keep_the_errors():
    env = gym.make("BCO-Simplex-v0", n=3, horizon=2)
    with pytest.raises(ResetNeeded):
        env.step(np.full(3, 1 / 3))
    env.reset(seed=0)
    with pytest.raises(InfeasibleActionError, match="sum of entries 2"):
        env.step(np.array([1.0, 1.0, 0.0]))
    env.step(np.full(3, 1 / 3))
    assert env.step(np.full(3, 1 / 3))[3] is True
    with pytest.raises(ResetNeeded, match="truncated"):
        env.step(np.full(3, 1 / 3))


def test_cumulative_reward_matches_the_batched_losses():
    env = simplex_env(n=5, horizon=50)
    actions = random_actions(env.set, 50, seed=9)
    rewards = rollout(env, actions, seed=21)
    batched = env.losses.losses(0, actions)
    assert math.fsum(rewards) == pytest.approx(-math.fsum(batched), abs=1e-12)
