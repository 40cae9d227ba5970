"""What one ``bco-gym bench`` will play, decided before anything runs: the agents given
(each resolved once), the scenarios of the suite with their agents (a given agent left
out where the scenario's feedback does not suit it, with the reason), and the directory
(``bench.json`` names its suite: another suite's or a stranger's directory is refused)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bco_gym import io as files
from bco_gym.reports.bench_provenance import BASELINE
from bco_gym.reports.suites import Scenario, resolve_suite, select_scenarios

MARKER = "bench.json"
OWNER_FILE = ".bco-gym-owner.json"  # the CLI's mark of a command's directory (cli_checks)
FORMAT = 1


def feedback_of(agent: str) -> str:
    from bco_gym.agents.registry import resolve_agent

    return resolve_agent(agent).feedback


def check_agents(agents: Sequence[str]) -> list[str]:
    """The given agents, resolved once each (ValueError/TypeError naming a bad one)."""
    if not agents:
        raise ValueError("bench needs at least one agent")
    duplicates = sorted({a for a in agents if list(agents).count(a) > 1})
    if duplicates:
        raise ValueError(f"agents listed twice: {', '.join(duplicates)}")
    for agent in agents:
        feedback_of(agent)
    return list(agents)


class SupersededSuiteWarning(UserWarning):
    """The suite run has a successor (:data:`~bco_gym.reports.suites.SUPERSEDED` says why)."""


def plan(
    suite: str,
    agents: Sequence[str],
    seeds: int | None = None,
    scenarios: Sequence[str] | None = None,
    agent_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[tuple[Scenario, tuple[str, ...], dict[str, str]]]:
    """(scenario with its seeds, agents to run, given agents left out -> why) per scenario.

    ``suite`` is a built-in suite's name or a suite file (``.toml``,
    :func:`~bco_gym.reports.suites.load_suite_file`); ``scenarios`` the names of the
    scenarios to run (None: all; a name not in the suite is refused, naming it). A given
    agent that is one of the scenario's agents under another spelling (the same
    identity) is run once, as the scenario's; ``agent_kwargs`` may not change a
    reference agent (give a variant ``NAME[key=value]`` instead).
    """
    from bco_gym.agents.registry import resolve_agent

    agent_kwargs = dict(agent_kwargs or {})
    name, found = resolve_suite(suite)
    chosen_scenarios = select_scenarios(name, found, scenarios)
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 2):
        raise ValueError(f"seeds must be an integer >= 2 (paired intervals), got {seeds!r}")
    steps = []
    for scenario in chosen_scenarios:
        if seeds is not None:
            scenario = replace(scenario, seeds=tuple(range(seeds)))
        feedback = scenario.env_kwargs.get("feedback", "bandit")
        skipped = {}
        chosen = list(dict.fromkeys([*scenario.agents, BASELINE]))
        known = {resolve_agent(agent).identity() for agent in chosen}
        for agent in agents:
            if agent in chosen and agent_kwargs.get(agent):
                raise ValueError(
                    f"--agent-kwargs for {agent!r}, one of the scenario {scenario.name!r}'s "
                    "reference agents, would change the reference; give a variant instead, "
                    f"e.g. '{agent}[key=value]'"
                )
            needs = feedback_of(agent)
            if agent in chosen or resolve_agent(agent).identity(agent_kwargs.get(agent)) in known:
                continue
            if needs != "bandit" and needs != feedback:
                skipped[agent] = f"needs feedback={needs!r}, the scenario gives {feedback!r}"
                continue
            chosen.append(agent)
        steps.append((scenario, tuple(chosen), skipped))
    return steps


def claim_directory(out: Path, suite: str) -> None:
    """Create ``out`` or check it is this suite's bench directory; then mark it."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is not a directory")
    try:
        document = files.read_marker(out, MARKER) if out.is_dir() else None
    except (OSError, ValueError) as error:
        raise ValueError(f"{error}; not a bench") from None
    if document is not None:
        if document.get("suite") != suite:
            found = document.get("suite")
            raise ValueError(
                f"{str(out)!r} holds a bench of suite {found!r}, not {suite!r}; pick another "
                "directory"
            )
        return
    entries = list(out.iterdir()) if out.is_dir() else []
    strangers = [entry.name for entry in entries if entry.name != OWNER_FILE]
    if strangers:
        raise ValueError(
            f"{str(out)!r} is not empty and is not a bench directory (no {MARKER}; found "
            f"{', '.join(sorted(strangers)[:5])}); pick a new or empty directory"
        )
    files.claim_directory(out, MARKER, {"format": FORMAT, "suite": suite})


def scenario_horizon(scenario: Scenario) -> int:
    """The horizon the bench scores ``scenario`` at: its own, or its env's (data sets)."""
    from bco_gym.reports.demo import own_horizon

    return scenario.horizon if scenario.horizon is not None else own_horizon(scenario)


def sweep_options(
    scenario: Scenario,
    agents: Sequence[str],
    agent_kwargs: Mapping[str, Mapping[str, Any]] | None,
    labels: Mapping[str, str] | None,
    isolate: Sequence[str],
) -> dict[str, Any]:
    """The keyword arguments of the scenario's grid (:func:`~bco_gym.sweeps.sweep.cells`):
    the env's, the scenario's and the given agents' keyword arguments, labels, isolation.
    The env's are the scenario's: ``agents`` share them (:func:`row_groups`)."""
    kwargs = {a: dict(kw) for a, kw in scenario.agent_kwargs.items() if a in agents}
    given = {a: dict(kw) for a, kw in (agent_kwargs or {}).items() if a in agents}
    return {
        "env_kwargs": dict(scenario.env_kwargs),
        "agent_kwargs": {**kwargs, **given} or None,
        "constants": dict.fromkeys(kwargs, "theory") or None,
        "labels": {a: label for a, label in (labels or {}).items() if a in agents},
        "isolate": [agent for agent in agents if agent in isolate],
    }


def row_groups(scenario: Scenario, agents: Sequence[str]) -> list[tuple[dict[str, Any], list[str]]]:
    """``agents`` grouped by the env keyword arguments their rows play
    (:meth:`~bco_gym.reports.scenario.Scenario.env_kwargs_of`: the scenario's, with a
    row's own feedback where it declares one), the scenario's own first."""
    groups: dict[str | None, list[str]] = {None: []}
    for agent in agents:
        groups.setdefault(scenario.agent_feedback.get(agent), []).append(agent)
    return [(scenario.env_kwargs_of(members[0]), members) for members in groups.values() if members]


__all__ = [
    "FORMAT",
    "MARKER",
    "OWNER_FILE",
    "SupersededSuiteWarning",
    "check_agents",
    "claim_directory",
    "feedback_of",
    "plan",
    "row_groups",
    "scenario_horizon",
    "sweep_options",
]
