"""Online learners for bandit convex optimization, behind one policy API.

``make_agent(name, env_or_problem, **overrides)`` builds an agent from a
:class:`~bco_gym.problem.Problem` (or from an env, reading ``env.unwrapped.problem``)
with its theorem's default hyperparameters; any of them can be overridden by keyword.
"""

from __future__ import annotations

from typing import Any

from bco_gym.agents.base import Agent
from bco_gym.agents.bbcg import BlockBanditCG
from bco_gym.agents.bfw import BanditFrankWolfe
from bco_gym.agents.fkm import FlaxmanAgent
from bco_gym.agents.ofw import OnlineFrankWolfe
from bco_gym.agents.ogd import OnlineGradientDescent
from bco_gym.agents.random import RandomAgent
from bco_gym.agents.sb3 import SB3_AGENTS, SB3Agent
from bco_gym.problem import Problem

#: make_agent names -> agent classes.
AGENTS: dict[str, type[Agent]] = {
    cls.name: cls
    for cls in (
        BlockBanditCG,
        FlaxmanAgent,
        BanditFrankWolfe,
        OnlineFrankWolfe,
        OnlineGradientDescent,
        RandomAgent,
    )
}
# stable-baselines3 agents: importing them is free; building one needs the `rl` extra.
AGENTS.update(SB3_AGENTS)


def make_agent(name: str, env_or_problem: Any, **overrides: Any) -> Agent:
    """Build the agent ``name`` for a problem (or an env's ``unwrapped.problem``).

    Raises ValueError for an unknown name or keyword (listing the allowed ones) and
    TypeError when ``env_or_problem`` carries no Problem.
    """
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; valid names: {', '.join(AGENTS)}")
    cls = AGENTS[name]
    unknown = sorted(set(overrides) - set(cls.OPTIONS))
    if unknown:
        allowed = ", ".join(cls.OPTIONS) or "none"
        raise ValueError(
            f"{cls.__name__} ('{name}') got unknown keyword(s) {', '.join(unknown)}; "
            f"allowed: {allowed}"
        )
    return cls(problem_of(env_or_problem), **overrides)


def problem_of(env_or_problem: Any) -> Problem:
    """The Problem itself, or ``env.unwrapped.problem`` for an env (no envs import)."""
    if isinstance(env_or_problem, Problem):
        return env_or_problem
    unwrapped = getattr(env_or_problem, "unwrapped", env_or_problem)
    problem = getattr(unwrapped, "problem", None)
    if not isinstance(problem, Problem):
        raise TypeError(
            f"make_agent needs a Problem or an env whose unwrapped.problem is one; got "
            f"{type(env_or_problem).__name__}"
        )
    return problem


__all__ = [
    "AGENTS",
    "Agent",
    "BanditFrankWolfe",
    "BlockBanditCG",
    "FlaxmanAgent",
    "OnlineFrankWolfe",
    "OnlineGradientDescent",
    "RandomAgent",
    "SB3Agent",
    "make_agent",
    "problem_of",
]
