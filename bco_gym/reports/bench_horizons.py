"""Agents that declare an affordable horizon: played fewer rounds, beside references that are.

FKM's projection costs milliseconds a round on standard-v2's large polytopes, so the
scenarios at scale let it play shorter horizons (``Scenario.agent_horizons``). A given
agent may say the same of itself (:meth:`~bco_gym.agents.Agent.affordable_horizon`):
where a scenario's horizon T exceeds what it can afford, h, ``bco-gym bench`` plays it h
rounds on the same seeds, and plays the scenario's reference rows at h too (their theory
rows, and their tuned rows with the constants tuned for the scenario), so that it is
compared like with like. Those rows form a scenario of their own in the report and in
scores.csv, named ``<scenario>-T<h>`` (:func:`short_scenario`), whose title says whose
horizon it is; an agent whose own horizons (FKM at scale) stop short of h is left out.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bco_gym.engine.result import RunResult
from bco_gym.reports.suites import Scenario

#: ``<scenario>-T<h>``: a scenario played at an agent's affordable horizon h.
SHORT = re.compile(r"^(?P<name>.+)-T(?P<horizon>[0-9]+)$")


def affordable_horizons(scenario: Scenario, agents: Sequence[str], horizon: int) -> dict[str, int]:
    """Agent -> the horizon it plays in ``scenario``, for the agents among ``agents`` that
    declare fewer affordable rounds than ``horizon`` on the scenario's problem."""
    from bco_gym.agents import Agent, resolve_agent

    declared = {}
    for agent in agents:
        factory = resolve_agent(agent).factory
        method = getattr(factory, "affordable_horizon", None)
        if method is not None and getattr(method, "__func__", None) is not (
            Agent.affordable_horizon.__func__  # type: ignore[attr-defined]
        ):
            declared[agent] = method
    if not declared:
        return {}
    problem = _problem(scenario, horizon)
    found = {}
    for agent, method in declared.items():
        value = method(problem)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(
                f"{agent}: affordable_horizon returned {value!r}; expected None or an int >= 1"
            )
        if value < horizon:
            found[agent] = int(value)
    return found


def _problem(scenario: Scenario, horizon: int) -> Any:
    import gymnasium as gym

    env = gym.make(scenario.env_id, horizon=horizon, **dict(scenario.env_kwargs))
    try:
        return env.unwrapped.problem
    finally:
        env.close()


def short_scenario(
    scenario: Scenario, horizon: int, agents: Sequence[str], of: int | None = None
) -> Scenario:
    """``scenario`` at ``horizon``: named ``<name>-T<horizon>``, with the reference agents
    that can play that many rounds (an agent with horizons of its own, FKM at scale,
    only up to the largest of them), and a title saying whose horizon it is (of ``of``
    rounds, default the scenario's horizon)."""
    references = tuple(
        agent
        for agent in scenario.agents
        if agent not in scenario.agent_horizons or horizon <= max(scenario.agent_horizons[agent])
    )
    title = (
        f"{scenario.title or scenario.env_id}, at T = {horizon:,} (of "
        f"{of or scenario.horizon or horizon:,}): "
        f"the rounds {', '.join(agents)} can afford"
    )
    tuning = scenario.tuning
    if tuning is not None:
        kept = tuple(agent for agent in tuning.agents if agent in references)
        tuning = (
            replace(
                tuning,
                agents=kept,
                fixed={a: kw for a, kw in tuning.fixed.items() if a in kept},
                agent_horizons={a: h for a, h in tuning.agent_horizons.items() if a in kept},
            )
            if kept
            else None
        )
    return replace(
        scenario,
        name=f"{scenario.name}-T{horizon}",
        title=title,
        agents=references,
        horizon=horizon,
        horizons=(),
        agent_horizons={},
        agent_kwargs={a: kw for a, kw in scenario.agent_kwargs.items() if a in references},
        agent_feedback={a: f for a, f in scenario.agent_feedback.items() if a in references},
        tuning=tuning,
    )


def play_references_short(
    scenario: Scenario,
    short: Scenario,
    out: Path,
    common: Mapping[str, Any],
    baseline: str = "random",
) -> list[RunResult]:
    """The reference rows of ``short`` (:func:`short_scenario` of ``scenario``) and the
    ``baseline``'s: theory rows into ``runs/<short>``, tuned rows with the constants tuned
    for ``scenario`` (``tuning/<scenario>*.json``) into ``runs/<short>-tuned``."""
    from bco_gym.sweeps.sweep import cells, run_cells

    agents = list(dict.fromkeys([*short.agents, baseline]))
    grid = []
    for agent in agents:
        kwargs = dict(short.agent_kwargs.get(agent, {}))
        grid += cells(
            short.env_id, agent, [short.horizon], list(short.seeds),
            env_kwargs=short.env_kwargs_of(agent), agent_kwargs={agent: kwargs} if kwargs else None,
            constants={agent: "theory"},
        )  # fmt: skip
    results = list(run_cells(grid, out=out / "runs" / short.name, failures="record", **common))
    overrides = _tuned_constants(scenario, out)
    tuned = []
    for agent in short.tuning.agents if short.tuning is not None else ():
        if agent not in overrides:
            continue
        kwargs = {**short.agent_kwargs.get(agent, {}), **overrides[agent]}
        tuned += cells(
            short.env_id, agent, [short.horizon], list(short.seeds),
            env_kwargs=dict(short.env_kwargs), agent_kwargs={agent: kwargs},
            constants={agent: "tuned"},
        )  # fmt: skip
    if tuned:
        directory = out / "runs" / f"{short.name}-tuned"
        results += run_cells(tuned, out=directory, failures="record", **common)
    return results


def _tuned_constants(scenario: Scenario, out: Path) -> Any:
    """The reference agents' tuned constants for ``scenario`` (every tuning file of it
    that :func:`~bco_gym.reports.scale.play_scenario` saved), keyed as ``overrides()``."""
    from bco_gym.sweeps.tuning import AgentKeyed, load_tuned

    found = AgentKeyed()
    for path in sorted((out / "tuning").glob(f"{scenario.name}*.json")):
        if path.stem != scenario.name and not re.fullmatch(
            re.escape(scenario.name) + r"-T[0-9]+", path.stem
        ):
            continue  # another scenario's, or the given agents' tuning
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found.update(load_tuned(path).overrides())
    return found
