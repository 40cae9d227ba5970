"""What a run is made of: the env and agent it plays, their seeds, its labels.

Shared by :func:`~bco_gym.engine.runner.run` and
:func:`~bco_gym.engine.many.run_many`: checking ids, seeds and horizons, building
(or accepting) the env and the agent, the seed of the agent (:func:`agent_seed_for`)
and the ``constants`` label of a result.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from bco_gym.engine.tally import check_horizon

AGENT_STREAM = 1
#: Env seeds from here up (the fresh seeds of ``bco-gym bench --fresh-seeds``) give their
#: agent a seed that is a SHA-256 digest of theirs (:func:`agent_seed_for`).
FRESH_SEED_FLOOR = 2**64
AGENT_SEED_DOMAIN = b"bco_gym agent seed\x00"
CONSTANTS_LABELS = ("theory", "default", "tuned", "custom")


def _prepare_env(
    env_id_or_env: str | gym.Env, horizon: int | None, env_kwargs: Mapping[str, Any] | None
) -> tuple[gym.Env, str, bool]:
    """(env wrapped with a RegretRecorder, its id, whether this call made it)."""
    from bco_gym.wrappers import RegretRecorder

    if isinstance(env_id_or_env, str):
        check_env_id(env_id_or_env)
        kwargs = dict(env_kwargs or {})
        if horizon is not None:
            kwargs["horizon"] = check_horizon(horizon)
        env = RegretRecorder(gym.make(env_id_or_env, **kwargs))
        return env, env_id_or_env, True
    if not isinstance(env_id_or_env, gym.Env):
        raise TypeError(
            f"run() needs an env id (str) or a gymnasium.Env, got {type(env_id_or_env).__name__}"
        )
    if env_kwargs:
        raise ValueError("env_kwargs apply only when run() makes the env from an id")
    env = env_id_or_env
    env_horizon = env.unwrapped.problem.horizon
    if horizon is not None and check_horizon(horizon) != env_horizon:
        raise ValueError(f"horizon={horizon} differs from the given env's horizon {env_horizon}")
    if find_wrapper(env, RegretRecorder) is None:
        env = RegretRecorder(env)
    spec = env.unwrapped.spec or getattr(env, "spec", None)
    return env, (spec.id if spec is not None else type(env.unwrapped).__name__), False


def _prepare_agent(
    agent: Any, env: gym.Env, agent_kwargs: Mapping[str, Any] | None
) -> tuple[Any, Any]:
    """(agent for env's problem, its AgentSpec): one built from any form
    :func:`~bco_gym.agents.resolve_agent` takes, or an Agent already built."""
    from bco_gym.agents import make_agent
    from bco_gym.agents.base import Agent
    from bco_gym.agents.registry import spec_of_instance

    if not isinstance(agent, Agent):
        spec = resolve_spec(agent, "run()")
        built = make_agent(spec, env, **dict(agent_kwargs or {}))
        return built, spec.labelled(built)
    if agent_kwargs:
        raise ValueError("agent_kwargs apply only when run() builds the agent itself")
    # As make_agent does (first: it names an __init__ that skipped Agent.__init__, before
    # any attribute that call sets is read): finite parameters and regret bound.
    agent.check_parameters()
    env_horizon = env.unwrapped.problem.horizon
    if agent.horizon != env_horizon:
        raise ValueError(
            f"the agent was built for horizon {agent.horizon}, the env has {env_horizon}"
        )
    return agent, spec_of_instance(agent)


def prepare_isolated(
    agent: Any, problem: Any, agent_kwargs: Mapping[str, Any] | None, seeds: Sequence[int]
) -> tuple[Any, Any]:
    """(the agents built in their own process for ``problem``, one per seed, as one
    batched agent; their AgentSpec): :mod:`~bco_gym.engine.isolation`. ValueError for
    an agent already built (it must be built in its process) or not importable by path."""
    from bco_gym.agents.base import Agent
    from bco_gym.engine.isolation import IsolatedAgents

    if isinstance(agent, Agent) or getattr(agent, "batch_size", None) is not None:
        raise ValueError(
            "isolate=True builds the agent in its own process: pass its name, import path, "
            f"class or factory, not a built {type(agent).__name__}"
        )
    spec = resolve_spec(agent, "isolate=True")
    overrides = dict(agent_kwargs or {})
    spec.check_overrides({**dict(spec.kwargs), **overrides})
    rows = IsolatedAgents(
        spec, problem, len(seeds), overrides=overrides, label=spec.name, seeds=list(seeds)
    )
    return rows, rows.labelled(spec)


def check_isolate(isolate: Any) -> bool:
    """``isolate`` if it is a bool; TypeError naming it otherwise."""
    if not isinstance(isolate, bool):
        raise TypeError(f"isolate={isolate!r} must be True or False")
    return isolate


def resolve_spec(agent: Any, where: str) -> Any:
    """``resolve_agent(agent)``, its TypeError naming the tool (``where``)."""
    from bco_gym.agents import resolve_agent

    try:
        return resolve_agent(agent)
    except TypeError as error:
        raise TypeError(
            f"{where} needs an agent name, an import path, an Agent subclass or factory, or "
            f"a built Agent: {error}"
        ) from None


def constants_label(constants: str | None, spec: Any, built_here: bool, agent_kwargs: Any) -> str:
    """The ``constants`` label of a run (module docstring); ValueError for an unknown one.

    ``spec`` is the run's AgentSpec, ``built_here`` whether the tool built the agent
    (rather than being handed one).
    """
    if constants is None:
        if not built_here or agent_kwargs or getattr(spec, "kwargs", ()):
            return "custom"
        constants = "theory"
    if constants not in CONSTANTS_LABELS:
        raise ValueError(f"constants={constants!r}; allowed: {', '.join(CONSTANTS_LABELS)}")
    return "default" if constants == "theory" and not spec.constants_free else constants


def named_failure(
    error: Exception, label: str, seeds: Sequence[int], agent: Any
) -> Exception | None:
    """What to raise instead of ``error``, raised while ``agent`` (labelled ``label``)
    played ``seeds`` (one per row), so that it names the agent, the seed and the round;
    None to re-raise ``error`` itself.

    The library's own errors (an infeasible play, an invalid loss) keep their type and
    name the seed where they named the row. Any other error is the agent's code's: a
    ValueError or TypeError keeps its type and gains the prefix "agent 'x' seed s round
    t:"; anything else becomes an :class:`~bco_gym.errors.AgentError` saying so, with
    ``error`` as its cause.
    """
    from bco_gym.errors import AgentError, InfeasibleActionError, InvalidLossError

    own = (InfeasibleActionError, InvalidLossError, AgentError, MemoryError)
    if isinstance(error, own) or type(error).__module__.startswith("bco_gym"):
        if len(seeds) > 1 and error.args and isinstance(error.args[0], str):
            named = re.sub(
                r"\brow (\d+)\b",
                lambda m: (
                    f"seed {seeds[int(m.group(1))]} (row {m.group(1)})"
                    if int(m.group(1)) < len(seeds)
                    else m.group(0)
                ),
                error.args[0],
            )
            error.args = (named, *error.args[1:])
        return None
    row = getattr(agent, "failed_row", None)
    if len(seeds) == 1:
        row = 0
    rows_agent = getattr(agent, "agents", None)
    single = rows_agent[row] if rows_agent is not None and row is not None else agent
    rounds = getattr(agent, "failed_round", None)  # an isolated agent's, as it reported it
    if rounds is None:
        rounds = getattr(single, "_round", None)
    which = f"seed {seeds[row]}" if row is not None else f"seeds {list(seeds)}"
    where = (
        f"agent {label!r} {which} failed in round {rounds}"
        if rounds is not None
        else (f"agent {label!r} {which} failed")
    )
    if isinstance(error, ValueError | TypeError) and len(error.args) == 1:
        error.args = (f"{where}: {error.args[0]}",)
        error.agent_failure_prefix = f"{where}: "  # type: ignore[union-attr]
        return None
    failure = AgentError(f"{where}: {type(error).__name__}: {error}")
    failure.__cause__ = error
    return failure


def find_wrapper(env: gym.Env, kind: type) -> Any:
    """The outermost wrapper of type ``kind`` around ``env`` (or None)."""
    current = env
    while True:
        if isinstance(current, kind):
            return current
        if not isinstance(current, gym.Wrapper):
            return None
        current = current.env


def agent_seed_for(seed: int) -> int:
    """The agent's seed for env seed ``seed`` (a uint64).

    Below :data:`FRESH_SEED_FLOOR` (every public seed, every result before fresh seeds):
    word 0 of ``SeedSequence([seed, 1])``, a stream independent of the env's. It is cheap to
    evaluate, so an agent can invert it over a small range (the public seeds 0-999 in a
    fraction of a second) and recover the env's seed: public seeds protect against
    mistakes, not against an agent that reads the env's code (docs/benchmark.md, "Threat
    model"). From the floor up (the 128-bit seeds ``bco-gym bench --fresh-seeds`` draws):
    the first 8 bytes (little-endian) of SHA-256(:data:`AGENT_SEED_DOMAIN` + the seed's
    big-endian bytes), so recovering the env's seed from the agent's is a SHA-256
    preimage search over 2^127 seeds.
    """
    seed = check_seed(seed)
    if seed >= FRESH_SEED_FLOOR:
        text = seed.to_bytes((seed.bit_length() + 7) // 8, "big")
        return int.from_bytes(hashlib.sha256(AGENT_SEED_DOMAIN + text).digest()[:8], "little")
    state = np.random.SeedSequence([seed, AGENT_STREAM]).generate_state(1, np.uint64)
    return int(state[0])


def check_env_id(env_id: str) -> str:
    """``env_id`` if gymnasium knows it; ValueError listing bco_gym's ids otherwise."""
    from bco_gym.envs import ENV_IDS

    name = env_id.split(":", 1)[-1]
    if env_id not in gym.registry and name not in gym.registry:
        raise ValueError(f"unknown env id {env_id!r}; valid ids: {', '.join(ENV_IDS)}")
    return env_id


def check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed={seed!r} must be a non-negative integer")
    return int(seed)


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def want_progress(progress: Any, horizon: int) -> Any:
    """Whether to show a bar over rounds; a callable ``progress(rounds)`` is kept as it
    is (the loops call it as rounds advance: :func:`~bco_gym.engine.loops.progress_bar`)."""
    if callable(progress):
        return progress
    if progress is None:
        import sys

        return horizon >= 100_000 and sys.stderr.isatty()
    return bool(progress)
