"""Every agent on every registered env id, through ``gym.make`` and the Gymnasium loop.

Each action is checked independently with the set's ``contains`` (besides the env's
own check, which would raise ``InfeasibleActionError``). Sizes are small and episodes
short; the full-information agents run with ``feedback="full"``. So that the iterates
reach the boundary of K_delta within a short episode, the learning agents run with a
large step size (and the bandit ones with delta = r/2); the default parameters are
exercised by the block-path test below. Every registered set
has a projection here (the QP extra is installed), so every agent runs on every id.
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from agent_helpers import ALL_AGENTS

import bco_gym  # noqa: F401  (registers the ids)
from bco_gym.agents import AGENTS, make_agent
from bco_gym.envs import ENV_IDS
from bco_gym.wrappers import RegretRecorder

SIZES = {
    "BCO-Simplex-v0": {"n": 4},
    "BCO-Ball-v0": {"n": 3},
    "BCO-L1Ball-v0": {"n": 3},
    "BCO-Hypercube-v0": {"n": 3},
    "BCO-NuclearBall-v0": {"rows": 3, "cols": 2},
    "BCO-ShortestPath-v0": {"grid": 3},
    "BCO-Birkhoff-v0": {"n": 3},
    "BCO-Portfolio-v0": {"dataset": "djia"},
}
HORIZON = 40


def test_every_registered_id_is_covered():
    assert set(SIZES) == set(ENV_IDS)


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("name", ALL_AGENTS)
def test_every_agent_plays_feasible_actions_on_every_env(env_id, name):
    feedback = AGENTS[name].feedback
    env = RegretRecorder(gym.make(env_id, horizon=HORIZON, feedback=feedback, **SIZES[env_id]))
    convex_set = env.unwrapped.problem.set
    overrides = {} if name == "random" else {"step_size": 1.0}
    if name in ("bbcg", "fkm", "bfw"):
        overrides["smoothing_radius"] = convex_set.inner_radius / 2
    if name == "bbcg":
        overrides["tolerance"] = 1e-6
    agent = make_agent(name, env, **overrides)
    observation, info = env.reset(seed=0)
    agent.reset(seed=0)
    done, rounds, farthest = False, 0, 0.0
    while not done:
        action = agent.act(observation)
        farthest = max(farthest, float(np.linalg.norm(action - convex_set.center)))
        assert action.shape == convex_set.shape
        assert convex_set.contains(action, atol=1e-9), f"{name} on {env_id}: {action!r}"
        observation, reward, terminated, truncated, info = env.step(action)
        assert reward == -info["loss"]
        agent.update(info["loss"], info)
        done = terminated or truncated
        rounds += 1
    assert rounds == HORIZON == agent.stats["rounds"]
    assert np.isfinite(info["regret"])
    if name != "random":  # the iterate left the centre (exploration alone reaches r/2)
        assert farthest > 0.6 * convex_set.inner_radius
    env.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_bbcg_block_path_matches_the_gym_loop(env_id):
    """The fast path (block plays, losses read from the env's sequence) reproduces the
    actions of the step-by-step Gymnasium loop bit for bit."""
    env = gym.make(env_id, horizon=HORIZON, **SIZES[env_id])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        agent = make_agent("bbcg", env, tolerance=1e-4)
    observation, _ = env.reset(seed=1)
    agent.reset(seed=2)
    stepped = []
    for _ in range(HORIZON):
        action = agent.act(observation)
        stepped.append(action)
        observation, _, _, _, info = env.step(action)
        agent.update(info["loss"])
    env.reset(seed=1)
    agent.reset(seed=2)
    losses = env.unwrapped.losses
    blocked, t = [], 0
    while t < HORIZON:
        plays = agent.block_actions()
        agent.update_block(losses.losses(t, plays))
        blocked.extend(plays)
        t += len(plays)
    np.testing.assert_array_equal(np.array(blocked), np.array(stepped))
