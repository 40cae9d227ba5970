"""SB3Agent and the sb3-* agents: online learning faithful to SB3's learn(), frozen
evaluation, reproducibility without global random state, errors.

The legacy global numpy generator appears on purpose (NPY002): SB3 draws from it, and
the agents must neither depend on it nor disturb it.
"""
# ruff: noqa: NPY002

from __future__ import annotations

import inspect
import math
import random
import sys

import gymnasium as gym
import numpy as np
import pytest
import stable_baselines3 as sb3
import torch

import bco_gym  # noqa: F401  (registers the env ids)
from bco_gym.agents.sb3.agent import (
    SB3_AGENTS,
    A2CAgent,
    PPOAgent,
    SACAgent,
    SB3Agent,
    TD3Agent,
)
from bco_gym.problem import Problem
from bco_gym.sets import L2Ball, Simplex
from bco_gym.sets.box_maps import box_map
from bco_gym.wrappers import BoxActionAdapter, RegretRecorder

# small settings so every algorithm trains several times within a few dozen rounds
TINY = {
    PPOAgent: {"n_steps": 8, "hidden_sizes": [8]},
    A2CAgent: {"n_steps": 4, "hidden_sizes": [8]},
    SACAgent: {"learning_starts": 10, "batch_size": 8, "hidden_sizes": [8]},
    TD3Agent: {"learning_starts": 10, "batch_size": 8, "hidden_sizes": [8]},
}


def _linear_losses(horizon: int, n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=(horizon, n))


def _play(agent, vectors: np.ndarray, seed: int, disturb: bool = False) -> np.ndarray:
    """Plays of one episode against the linear losses <vectors[t], x>."""
    agent.reset(seed=seed)
    plays = []
    for t, vector in enumerate(vectors):
        if disturb:  # the caller's global generators must not matter
            np.random.seed(1000 + t)
            torch.manual_seed(2000 + t)
            random.seed(3000 + t)
        point = agent.act()
        plays.append(point)
        agent.update(float(vector @ point))
    return np.array(plays)


class _RecordPoints(gym.Wrapper):
    """Records every point the inner env is stepped with."""

    def __init__(self, env):
        super().__init__(env)
        self.points = []

    def step(self, action):
        self.points.append(np.array(action, dtype=float))
        return self.env.step(action)


@pytest.mark.parametrize("agent_class", list(TINY))
def test_online_agent_replays_sb3_learn_exactly(agent_class):
    """act/update drive SB3's own learning: the plays equal those of model.learn(T)."""
    horizon = 40
    env = gym.make("BCO-Simplex-v0", n=3, horizon=horizon)
    # gamma > 0 so that bootstrapping and episode-start flags matter too
    agent = agent_class(env.unwrapped.problem, gamma=0.9, **TINY[agent_class])
    agent.reset(seed=7)
    observation, _ = env.reset(seed=agent.model_seed)
    plays = []
    for _ in range(horizon):
        point = agent.act(observation)
        plays.append(point)
        observation, _, _, _, info = env.step(point)
        agent.update(info["loss"], info)
    assert agent.stats["model_updates"] >= 3

    recorder = _RecordPoints(gym.make("BCO-Simplex-v0", n=3, horizon=horizon))
    model = agent.make_model(agent.model_seed, env=BoxActionAdapter(recorder))
    model.learn(total_timesteps=horizon)
    np.testing.assert_array_equal(np.array(recorder.points[:horizon]), np.array(plays))


@pytest.mark.parametrize("agent_class", [PPOAgent, TD3Agent])
def test_same_seed_same_plays_whatever_the_global_random_state(agent_class):
    problem = Problem(Simplex(4), 30, lipschitz=2.0, bound=2.0)
    vectors = _linear_losses(30, 4, seed=0)
    first = _play(agent_class(problem, **TINY[agent_class]), vectors, seed=3)
    again = _play(agent_class(problem, **TINY[agent_class]), vectors, seed=3, disturb=True)
    other = _play(agent_class(problem, **TINY[agent_class]), vectors, seed=4)
    np.testing.assert_array_equal(first, again)
    assert not np.allclose(first, other)


def test_agent_leaves_the_global_random_state_alone():
    problem = Problem(L2Ball(2), 20, lipschitz=1.0, bound=1.0)
    np.random.seed(5)
    torch.manual_seed(5)
    random.seed(5)
    before = (np.random.get_state()[1].copy(), torch.get_rng_state().clone(), random.getstate())
    agent = A2CAgent(problem, **TINY[A2CAgent])
    _play(agent, _linear_losses(20, 2, seed=1), seed=0)
    assert np.array_equal(np.random.get_state()[1], before[0])
    assert torch.equal(torch.get_rng_state(), before[1])
    assert random.getstate() == before[2]


def _parameters(model) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.policy.parameters()]


def _same(first: list[torch.Tensor], second: list[torch.Tensor]) -> bool:
    return all(torch.equal(a, b) for a, b in zip(first, second, strict=True))


def test_frozen_mode_plays_the_mean_action_and_never_learns():
    problem = Problem(Simplex(3), 25, lipschitz=2.0, bound=2.0)
    model = PPOAgent(problem, **TINY[PPOAgent]).make_model(seed=0)
    weights = _parameters(model)
    agent = SB3Agent(model, problem)
    assert agent.params["online"] is False and agent.params["deterministic"] is True
    plays = _play(agent, _linear_losses(25, 3, seed=2), seed=0)
    mapping = box_map(problem.set)
    for t, point in enumerate(plays):
        observation = np.array([t / 25], dtype=np.float32)
        action, _ = model.predict(observation, deterministic=True)
        np.testing.assert_array_equal(point, mapping(action))
    assert _same(weights, _parameters(model)) and model.num_timesteps == 0
    assert agent.stats == {"rounds": 25, "lmo_calls": 0, "projections": 0, "model_updates": 0}


def test_online_mode_learns_on_a_copy_and_restarts_from_it():
    problem = Problem(Simplex(3), 40, lipschitz=2.0, bound=2.0)
    model = A2CAgent(problem, **TINY[A2CAgent]).make_model(seed=1)
    weights = _parameters(model)
    agent = SB3Agent(model, problem, online=True)
    vectors = _linear_losses(40, 3, seed=3)
    first = _play(agent, vectors, seed=9)
    assert agent.stats["model_updates"] == 9  # every 4 rounds, none after the last round
    assert not _same(weights, _parameters(agent.model))
    assert _same(weights, _parameters(model))  # the model passed in is untouched
    np.testing.assert_array_equal(_play(agent, vectors, seed=9), first)


@pytest.mark.parametrize("agent_class", [PPOAgent, A2CAgent])
def test_tiny_online_run_through_the_regret_recorder(agent_class):
    env = RegretRecorder(gym.make("BCO-Simplex-v0", n=5, horizon=300))
    agent = agent_class(env.unwrapped.problem)
    observation, _ = env.reset(seed=0)
    agent.reset(seed=0)
    done = False
    while not done:
        observation, _, terminated, truncated, info = env.step(agent.act(observation))
        agent.update(info["loss"], info)
        done = terminated or truncated
    assert math.isfinite(info["regret"])
    # regret is measured against the best point of K, which the map can reach
    assert info["regret"] >= -1e-9 - info["comparator_gap"]
    assert agent.stats["rounds"] == 300 and agent.stats["model_updates"] > 0


def test_tiny_online_run_through_the_experiment_runner():
    from bco_gym.experiment import run

    env = gym.make("BCO-Simplex-v0", n=4, horizon=200)
    result = run(env, PPOAgent(env.unwrapped.problem), seed=1)
    assert result.agent == "sb3-ppo" and result.horizon == 200
    assert np.all(np.isfinite(result.regret))
    assert result.params["gamma"] == 0.0 and result.scale_param == "learning_rate"


def test_names_work_through_make_agent_and_bco_gym_compare(monkeypatch, tmp_path):
    """Once the sb3-* names are in AGENTS, `bco-gym compare` runs them like any agent."""
    from bco_gym.agents import AGENTS, make_agent
    from bco_gym.cli import main

    for name, agent_class in SB3_AGENTS.items():
        monkeypatch.setitem(AGENTS, name, agent_class)
    env = gym.make("BCO-Ball-v0", n=3, horizon=50)
    assert make_agent("sb3-sac", env, learning_starts=5).params["learning_starts"] == 5
    with pytest.raises(ValueError, match="unknown keyword"):
        make_agent("sb3-td3", env, n_epochs=3)
    out = tmp_path / "compare"
    argv = ["compare", "--agents", "sb3-ppo,sb3-a2c,random", "--horizon", "100", "--seeds", "1"]
    assert main([*argv, "--out", str(out), "--quiet"]) == 0
    rows = (out / "table.csv").read_text().splitlines()
    header = rows[0].split(",")
    table = {row.split(",")[1]: dict(zip(header, row.split(","), strict=True)) for row in rows[1:]}
    assert set(table) == {"sb3-ppo", "sb3-a2c", "random"}
    assert all(math.isfinite(float(table[name]["regret_mean"])) for name in table)


def test_options_are_keywords_of_the_sb3_constructors():
    own = {"hidden_sizes", "vertex_tolerance", "action_noise_std", "model", "torch_threads"}
    for agent_class in SB3_AGENTS.values():
        signature = inspect.signature(getattr(sb3, agent_class.algorithm).__init__).parameters
        assert set(agent_class.OPTIONS) - own <= set(signature), agent_class.name
        assert set(agent_class.DEFAULTS) <= set(agent_class.OPTIONS), agent_class.name


def test_registry_and_defaults():
    from bco_gym.agents import AGENTS

    registry = {name: cls for name, cls in AGENTS.items() if name.startswith("sb3-")}
    assert sorted(registry) == ["sb3-a2c", "sb3-ppo", "sb3-sac", "sb3-td3"]
    problem = Problem(Simplex(3), 50, lipschitz=1.0, bound=1.0)
    agent = registry["sb3-ppo"](problem, learning_rate=3e-4)
    assert agent.params["learning_rate"] == 3e-4 and agent.params["batch_size"] == 64
    assert agent.SCALE_PARAM == "learning_rate"
    assert SACAgent(problem).model.buffer_size == 51  # the whole horizon fits
    assert isinstance(TD3Agent(problem).model.action_noise, sb3.common.noise.NormalActionNoise)


def test_errors_name_the_problem(monkeypatch):
    problem = Problem(Simplex(3), 10, lipschitz=1.0, bound=1.0)
    with pytest.raises(
        ValueError, match=r"unknown hyperparameter\(s\) \['n_step'\]; allowed: .*'n_steps'"
    ):
        PPOAgent(problem, n_step=8)
    with pytest.raises(
        ValueError,
        match=r"learning_rate=-1.0 is not allowed; expected a finite real number \(a Python",
    ):
        A2CAgent(problem, learning_rate=-1.0)
    wrong = PPOAgent(Problem(Simplex(4), 10, 1.0, 1.0)).model
    with pytest.raises(
        ValueError, match=r"action space is Box\(-1.0, 1.0, \(4,\), float32\), expected .*\(3,\)"
    ):
        SB3Agent(wrong, problem)
    with pytest.raises(TypeError, match="needs a stable-baselines3 PPO, A2C, SAC or TD3 model"):
        SB3Agent("not a model", problem)
    with pytest.raises(ValueError, match=r"online mode needs train_freq in steps"):
        SACAgent(problem, train_freq=(1, "episode"))
    with pytest.raises(ValueError, match="deterministic=True needs online=False"):
        SB3Agent(PPOAgent(problem).model, problem, online=True, deterministic=True)
    monkeypatch.setitem(sys.modules, "stable_baselines3", None)
    with pytest.raises(ImportError, match=r"pip install 'bco_gym\[rl\]'"):
        PPOAgent(problem)
    with pytest.raises(ImportError, match=r"pip install 'bco_gym\[rl\]'"):
        SB3Agent(None, problem)


def test_sb3_agents_give_equal_results_through_run_and_run_many():
    """Labels and outcomes equal on both paths: the online sb3-* agents by name ("default"
    constants, their own scale parameter), a frozen model under its own name."""
    from bco_gym.engine import run, run_many

    settings = {"horizon": 30, "env_kwargs": {"n": 3}}
    kwargs = {"n_steps": 8, "hidden_sizes": [8]}
    many = run_many("BCO-Simplex-v0", "sb3-ppo", [0, 2], agent_kwargs=kwargs, **settings)
    for seed, result in zip([0, 2], many, strict=True):
        one = run("BCO-Simplex-v0", "sb3-ppo", seed=seed, agent_kwargs=kwargs, **settings)
        assert result.same_outcome(one)
    assert many[0].constants == "custom" and many[0].scale_param == "learning_rate"
    plain = run_many("BCO-Simplex-v0", "sb3-a2c", [1], **settings)[0]
    assert plain.constants == "default"
    assert plain.same_outcome(run("BCO-Simplex-v0", "sb3-a2c", seed=1, **settings))

    problem = Problem(Simplex(3), 30, lipschitz=2.0, bound=2.0)
    model = PPOAgent(problem, **TINY[PPOAgent]).make_model(seed=0)

    def frozen(problem):
        return SB3Agent(model, problem, name="ppo-frozen")

    rows = run_many("BCO-Simplex-v0", frozen, [0, 1], **settings)
    assert [r.agent for r in rows] == ["ppo-frozen", "ppo-frozen"]
    assert rows[1].same_outcome(run("BCO-Simplex-v0", frozen, seed=1, **settings))
    assert rows[1].constants == "default"
    env = gym.make("BCO-Simplex-v0", n=3, horizon=30)
    built = run(env, SB3Agent(model, env, name="ppo-frozen"), seed=1, constants="default")
    assert built.agent == "ppo-frozen"  # a built agent: the same plays, its class recorded
    np.testing.assert_array_equal(built.round_losses, rows[1].round_losses)
    assert built.agent_spec["import_path"] == "bco_gym.agents.sb3.agent:SB3Agent"
    with pytest.raises(ValueError, match="name=''"):
        SB3Agent(model, problem, name="")
