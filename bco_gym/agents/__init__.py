"""Online learners for bandit convex optimization, behind one policy API.

``make_agent(name, env_or_problem, batch_size=None, **overrides)`` builds an agent from
a :class:`~bco_gym.problem.Problem` (or from an env, reading ``env.unwrapped.problem``)
with its theorem's default hyperparameters; any of them can be overridden by keyword.
Given a vector env (an object with ``num_envs``, such as
``bco_gym.envs.BanditConvexVectorEnv``) or a ``batch_size``, the agent acts on a batch
of S runs at once (:mod:`bco_gym.agents.batch`), row i bit for bit the single agent.

Agents from outside the library: :func:`register` a name, give an import path
``"package.module:ClassName"``, or declare an entry point in the group
``bco_gym.agents``; :func:`resolve_agent` reads every form (:mod:`.registry`).

An algorithm is one folder: its agent classes, its compiled kernel and its bounds
(``fkm/``: fkm and fkm2; ``bfw/``, ``ofw/``, ``ogd/``; ``bbcg/``: bbcg and bbcg2;
``gk22/``: loo-bbgd, so-bgd and fejer-bgd; ``saha_tewari/``, ``bandit_newton/``,
``pbgd/``, ``random/``, ``sb3/``). What several share sits beside them: the protocol
(:mod:`.base`, :mod:`.batch`, :mod:`.blocks`), the theorems' parameters (:mod:`.theory`),
estimators, schedules, Frank-Wolfe steps, barriers, the
registry, and the kernels' shared helpers (:mod:`.kernels`). Modules of the old layout
still import (:mod:`.moved`).
"""

from __future__ import annotations

from typing import Any

from bco_gym.agents import moved
from bco_gym.agents.bandit_newton import BanditNewton
from bco_gym.agents.base import Agent
from bco_gym.agents.batch import BLOCK_BUDGET_FLOATS, BatchAgent, check_batch_size
from bco_gym.agents.bbcg import BlockBanditCG, BlockBanditCG2
from bco_gym.agents.bfw import BanditFrankWolfe
from bco_gym.agents.fkm import FlaxmanAgent, FlaxmanTwoPoint
from bco_gym.agents.gk22 import FejerBanditGD, LOOBlockBanditGD, SeparationOracleBanditGD
from bco_gym.agents.ofw import OnlineFrankWolfe
from bco_gym.agents.ogd import OnlineGradientDescent
from bco_gym.agents.pbgd import PBGD, PBGD2
from bco_gym.agents.random import RandomAgent
from bco_gym.agents.registry import (
    AgentSpec,
    available_agents,
    find_agent,
    register,
    resolve_agent,
    spec_of_instance,
    unregister,
)
from bco_gym.agents.saha_tewari import SahaTewari
from bco_gym.agents.sb3 import SB3_AGENTS, SB3Agent
from bco_gym.problem import Problem, own_copy

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
        FlaxmanTwoPoint,
        BlockBanditCG2,
        FejerBanditGD,
        LOOBlockBanditGD,
        SahaTewari,
        SeparationOracleBanditGD,
        PBGD,
        PBGD2,
        BanditNewton,
    )
}
#: The class of "fejer-bgd" under its name when "so-bgd" named it (old import paths resolve).
SeparationBanditGD = FejerBanditGD
# old modules (bco_gym.agents.fkm2, ...) import as the modules that now hold their code
moved.install()
# stable-baselines3 agents: importing them is free; building one needs the `rl` extra.
AGENTS.update(SB3_AGENTS)


def make_agent(
    name: Any, env_or_problem: Any, batch_size: int | None = None, **overrides: Any
) -> Agent:
    """Build the agent ``name`` for a problem (or an env's ``unwrapped.problem``).

    ``name`` is anything :func:`~bco_gym.agents.registry.resolve_agent` takes: a
    built-in or registered name, an entry-point name, an import path
    ``"package.module:ClassName"``, an Agent subclass, a factory or an ``AgentSpec``.

    A vector env (an object with ``num_envs``) gives a batched agent with
    ``batch_size = num_envs``; a ``batch_size`` S with a Problem or a single env gives
    one for S runs. ``batch_size=None`` with a single env or a Problem: the single agent.

    Raises ValueError for an unknown name or keyword (listing the allowed ones), a bad
    ``batch_size``, or a batch for an agent without a batched form (the sb3 agents);
    TypeError when ``env_or_problem`` carries no Problem or ``name`` is not an agent.
    """
    spec = resolve_agent(name)
    spec.check_overrides(overrides)
    rows = _batch_size_of(spec.name, env_or_problem, batch_size)
    problem = own_copy(problem_of(env_or_problem))  # the agent's own set (own_copy)
    if rows is not None and not spec.batched:
        batched = ", ".join(n for n, c in AGENTS.items() if issubclass(c, BatchAgent))
        raise ValueError(
            f"agent {spec.name!r} ({spec.import_path}) has no batched form (got "
            f"batch_size={rows}); batched agents: {batched}. run_many plays any other agent "
            "as one single agent per seed"
        )
    return spec.build(problem, batch_size=rows, **overrides)


def _batch_size_of(name: str, env_or_problem: Any, batch_size: Any) -> int | None:
    """S from ``batch_size`` or a vector env's ``num_envs`` (which must agree)."""
    rows = check_batch_size(f"make_agent({name!r})", batch_size)
    num_envs = getattr(env_or_problem, "num_envs", None)
    if num_envs is None:
        return rows
    num_envs = check_batch_size(f"make_agent({name!r}): the vector env's num_envs", num_envs)
    if rows is not None and rows != num_envs:
        raise ValueError(
            f"make_agent({name!r}): batch_size={rows} but the vector env has "
            f"num_envs={num_envs}; pass batch_size=None or {num_envs}"
        )
    return num_envs


def problem_of(env_or_problem: Any) -> Problem:
    """The Problem itself, or ``env.unwrapped.problem`` (or ``env.problem``) for an env.

    Works for single and vector envs alike, without importing ``bco_gym.envs``.
    """
    if isinstance(env_or_problem, Problem):
        return env_or_problem
    unwrapped = getattr(env_or_problem, "unwrapped", env_or_problem)
    problem = getattr(unwrapped, "problem", None)
    if not isinstance(problem, Problem):
        problem = getattr(env_or_problem, "problem", None)
    if not isinstance(problem, Problem):
        raise TypeError(
            f"make_agent needs a Problem or an env whose unwrapped.problem is one; got "
            f"{type(env_or_problem).__name__}"
        )
    return problem


__all__ = [
    "AGENTS",
    "BLOCK_BUDGET_FLOATS",
    "PBGD",
    "PBGD2",
    "Agent",
    "AgentSpec",
    "BanditFrankWolfe",
    "BanditNewton",
    "BatchAgent",
    "BlockBanditCG",
    "BlockBanditCG2",
    "FejerBanditGD",
    "FlaxmanAgent",
    "FlaxmanTwoPoint",
    "LOOBlockBanditGD",
    "OnlineFrankWolfe",
    "OnlineGradientDescent",
    "RandomAgent",
    "SB3Agent",
    "SahaTewari",
    "SeparationOracleBanditGD",
    "available_agents",
    "find_agent",
    "make_agent",
    "problem_of",
    "register",
    "resolve_agent",
    "spec_of_instance",
    "unregister",
]
