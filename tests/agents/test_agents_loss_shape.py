"""A loss that is not one real number per run is refused at every agent's ``update``.

Single agents (the built-ins, the sb3 agents, a frozen ``SB3Agent``) take one real
number; batched agents take shape (S,). Anything else gets a ValueError that names
``loss``, the shape it had and the forms allowed, never NumPy's "only 0-dimensional
arrays can be converted to Python scalars".
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import bco_gym  # noqa: F401  (registers the env ids)
from bco_gym.agents import AGENTS, SB3_AGENTS, BatchAgent, make_agent

pytestmark = pytest.mark.filterwarnings("ignore:.*reaches the inner radius:UserWarning")

BUILT_IN = sorted(name for name in AGENTS if name not in SB3_AGENTS)
SB3_SMALL = {"n_steps": 4, "hidden_sizes": [4]}


def _feedback(name: str) -> str:
    return {"full": "full", "two-point": "two-point"}.get(AGENTS[name].feedback, "bandit")


def _played(name: str, batch_size: int | None = None, **overrides):
    """(agent, info) after one act, on the 3-simplex with the agent's feedback."""
    feedback = _feedback(name)
    env = gym.make("BCO-Simplex-v0", n=3, horizon=20, feedback=feedback)
    agent = make_agent(name, env, batch_size=batch_size, **overrides)
    agent.reset(seed=0 if batch_size is None else list(range(batch_size)))
    agent.act(None)
    rows = () if batch_size is None else (batch_size,)
    info = {"t": 0}
    if feedback == "full":
        info["gradient"] = np.zeros((*rows, 3))
    if feedback == "two-point":
        info["losses"] = np.zeros((*rows, 2))
    return agent, info


def _refuses(agent, loss, info, shape: str) -> None:
    with pytest.raises(ValueError) as caught:
        agent.update(loss, info)
    message = str(caught.value)
    assert "loss" in message and shape in message, message
    assert "real number" in message, message  # the allowed forms
    assert "0-dimensional" not in message, message


def _accepts_after(agent, loss, info) -> None:
    """The refusal left the agent usable: the right loss is taken."""
    agent.update(loss, info)


@pytest.mark.parametrize("name", BUILT_IN)
def test_single_built_in_agents_name_a_non_scalar_loss(name):
    agent, info = _played(name)
    _refuses(agent, np.array([1.0, 2.0]), info, "shape (2,)")
    _refuses(agent, [[0.5]], info, "shape (1, 1)")
    _refuses(agent, "0.5", info, "str")
    _accepts_after(agent, np.float32(0.5), info)


@pytest.mark.parametrize("name", [n for n in BUILT_IN if issubclass(AGENTS[n], BatchAgent)])
def test_batched_agents_name_a_loss_of_the_wrong_shape(name):
    agent, info = _played(name, batch_size=2)
    _refuses(agent, np.zeros((2, 2)), info, "shape (2, 2)")
    _refuses(agent, 0.5, info, "shape ()")
    _accepts_after(agent, np.array([0.5, 0.25]), info)


@pytest.mark.parametrize("name", ["sb3-ppo", "sb3-td3"])
def test_sb3_agents_name_a_non_scalar_loss(name):
    overrides = SB3_SMALL if name == "sb3-ppo" else {"hidden_sizes": [4]}
    agent, info = _played(name, **overrides)
    _refuses(agent, np.array([1.0, 2.0]), info, "shape (2,)")
    _accepts_after(agent, 0.5, info)


def test_frozen_sb3_agent_names_a_non_scalar_loss():
    from bco_gym.agents.sb3.agent import PPOAgent, SB3Agent

    env = gym.make("BCO-Simplex-v0", n=3, horizon=20)
    model = PPOAgent(env.unwrapped.problem, **SB3_SMALL).make_model(seed=0)
    agent = SB3Agent(model, env)
    agent.reset(seed=0)
    agent.act(None)
    _refuses(agent, np.array([1.0, 2.0]), {"t": 0}, "shape (2,)")
    _accepts_after(agent, 0.5, {"t": 0})
