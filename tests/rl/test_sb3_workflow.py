"""stable-baselines3 as its users use it: make_vec_env on every id, a trained model
evaluated through SB3Agent or make_agent, the adapter's double-mapping warning, and
the torch thread count the agents run with."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
import stable_baselines3 as sb3
import torch
from stable_baselines3.common.env_util import make_vec_env

import bco_gym  # noqa: F401  (registers the env ids)
from bco_gym.agents import make_agent
from bco_gym.agents.sb3.agent import PPOAgent, SB3Agent
from bco_gym.envs import ENV_IDS
from bco_gym.sets.box_maps import MappedPoint, box_map
from bco_gym.wrappers import BoxActionAdapter, RegretRecorder


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_make_vec_env_with_the_adapter_works_on_every_id_with_sb3_defaults(env_id):
    vec_env = make_vec_env(env_id, n_envs=2, wrapper_class=BoxActionAdapter)
    assert vec_env.render_mode == "rgb_array"  # SB3's default, which every set now draws
    vec_env.seed(0)
    vec_env.reset()
    actions = np.zeros((2, *vec_env.action_space.shape), dtype=np.float32)
    _, rewards, _, _ = vec_env.step(actions)
    assert rewards.shape == (2,) and np.all(np.isfinite(rewards))
    frames = vec_env.get_images()
    assert len(frames) == 2 and all(frame.ndim == 3 and frame.dtype == np.uint8 for frame in frames)


@pytest.fixture(scope="module")
def trained():
    """A PPO model trained for a few rounds on two adapted simplex envs."""
    vec_env = make_vec_env(
        "BCO-Simplex-v0",
        n_envs=2,
        wrapper_class=BoxActionAdapter,
        env_kwargs={"n": 3, "horizon": 40},
        seed=0,
    )
    model = sb3.PPO(
        "MlpPolicy", vec_env, n_steps=8, batch_size=16, n_epochs=2, seed=0, device="cpu"
    )
    return model.learn(total_timesteps=32)


def _frozen_plays(agent, horizon):
    agent.reset(seed=0)
    plays = []
    for _ in range(horizon):
        plays.append(np.array(agent.act()))
        agent.update(0.5)
    return np.array(plays)


def test_sb3_agent_takes_an_env_wrapped_or_not_or_a_problem(trained):
    env = gym.make("BCO-Simplex-v0", n=3, horizon=12)
    problem = env.unwrapped.problem
    reference = _frozen_plays(SB3Agent(trained, problem), 12)
    for given in (env, env.unwrapped, BoxActionAdapter(env), RegretRecorder(env)):
        np.testing.assert_array_equal(_frozen_plays(SB3Agent(trained, given), 12), reference)
    expected = [
        box_map(problem.set)(trained.predict(np.array([t / 12], np.float32), deterministic=True)[0])
        for t in range(12)
    ]
    np.testing.assert_array_equal(reference, np.array(expected))
    with pytest.raises(TypeError, match=r"SB3Agent needs a Problem or a bco_gym env.*CartPole"):
        SB3Agent(trained, gym.make("CartPole-v1"))


def test_make_agent_wraps_a_trained_model_and_learns_on_from_a_copy(trained):
    env = gym.make("BCO-Simplex-v0", n=3, horizon=30)
    agent = make_agent("sb3-ppo", env, model=trained)
    assert agent.params["pretrained"] is True and agent.params["torch_threads"] == 1
    weights = [p.detach().clone() for p in trained.policy.parameters()]
    agent.reset(seed=1)
    first_copy = [p.detach().clone() for p in agent.model.policy.parameters()]
    assert all(torch.equal(a, b) for a, b in zip(weights, first_copy, strict=True))
    observation, _ = env.reset(seed=1)
    for _ in range(30):
        observation, _, _, _, info = env.step(agent.act(observation))
        agent.update(info["loss"], info)
    assert agent.stats["model_updates"] > 0  # it keeps learning (the copy, not the model)
    after = [p.detach().clone() for p in trained.policy.parameters()]
    assert all(torch.equal(a, b) for a, b in zip(weights, after, strict=True))


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"model": "trained.zip"}, TypeError, r"model='trained.zip' is not allowed; expected a"),
        ({"n_steps": 8}, ValueError, r"brings its own hyperparameters; got \['n_steps'\]"),
    ],
)
def test_make_agent_with_a_model_refuses_what_does_not_fit(trained, kwargs, error, message):
    env = gym.make("BCO-Simplex-v0", n=3, horizon=30)
    model = kwargs.pop("model", trained)
    with pytest.raises(error, match=message):
        make_agent("sb3-ppo", env, model=model, **kwargs)
    with pytest.raises(TypeError, match=r"expected a trained stable_baselines3.SAC model"):
        make_agent("sb3-sac", env, model=trained)


def test_the_adapter_warns_when_given_an_already_mapped_point(trained):
    env = gym.make("BCO-Simplex-v0", n=3, horizon=5)
    adapted = BoxActionAdapter(env)
    agent = SB3Agent(trained, adapted)
    agent.reset(seed=0)
    adapted.reset(seed=0)
    point = agent.act()
    assert isinstance(point, MappedPoint)
    with pytest.warns(UserWarning, match=r"Step the env without the adapter \(adapter.env"):
        adapted.step(point)
    agent.update(0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env.step(agent.act())  # the env itself: no warning
        adapted.step(np.zeros(3, dtype=np.float32))  # a box action: no warning


def test_agents_run_with_one_torch_thread_and_restore_the_callers_count():
    env = gym.make("BCO-Simplex-v0", n=3, horizon=10)
    seen = []

    class Spy(PPOAgent):
        def _act(self):
            with self._random_state.torch():
                seen.append(torch.get_num_threads())
            return super()._act()

    outer = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        for threads in (1, 2):
            agent = Spy(env.unwrapped.problem, torch_threads=threads, n_steps=4)
            assert agent.params["torch_threads"] == threads
            agent.reset(seed=0)
            agent.act()
            assert seen[-1] == threads and torch.get_num_threads() == 2
        assert Spy(env.unwrapped.problem).params["torch_threads"] == 1
    finally:
        torch.set_num_threads(outer)
    for bad in (0, 1.5, True, "2"):
        with pytest.raises(ValueError, match=rf"torch_threads={bad!r} is not allowed"):
            PPOAgent(env.unwrapped.problem, torch_threads=bad)


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("sb3-ppo", {"n_steps": np.int64(8), "gamma": 0.5, "clip_range": lambda _: 0.2}),
        ("sb3-ppo", {"target_kl": None, "hidden_sizes": (4, 4), "policy_kwargs": None}),
        ("sb3-a2c", {"learning_rate": np.float64(1e-3), "use_rms_prop": False}),
        ("sb3-sac", {"ent_coef": "auto_0.1", "target_entropy": "auto", "train_freq": (2, "step")}),
        ("sb3-td3", {"action_noise_std": 0.0, "gradient_steps": -1, "tau": 1.0}),
    ],
)
def test_valid_hyperparameters_pass_the_checks_unchanged(name, kwargs):
    env = gym.make("BCO-Simplex-v0", n=3, horizon=20)
    agent = make_agent(name, env, **kwargs)
    for key, value in kwargs.items():
        assert agent.params[key] is value


def test_sb3_runs_are_labelled_default_not_theory():
    """stable-baselines3's hyperparameters are its own defaults, not a theorem's."""
    from bco_gym.experiment import run

    result = run("BCO-Simplex-v0", "sb3-a2c", horizon=8, env_kwargs={"n": 3})
    assert result.constants == "default"
    tuned = run("BCO-Simplex-v0", "sb3-a2c", horizon=8, env_kwargs={"n": 3}, constants="tuned")
    assert tuned.constants == "tuned"
