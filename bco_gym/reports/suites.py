"""Suites: versioned, named lists of scenarios that agents are scored on.

A :class:`~bco_gym.reports.scenario.Scenario` is one setting (an env id and its
``gym.make`` keyword arguments, a horizon, the evaluation seeds) with the reference
agents that are always run on it.
A suite is a tuple of scenarios under a versioned name in :data:`SUITES`; a version,
once published, is never changed (a new one is added instead), so scores computed on
``standard-v1`` stay comparable. The built-in suites are data: one TOML file each in
``bco_gym/data/suites/``, read by the loader of a user's suite file
(:func:`load_suite_file`, ``bco-gym bench --suite FILE.toml``).

* ``quick-v1``: a few small scenarios, under a minute here (smoke tests, first tries);
* ``standard-v1``: the main job's scenarios (``make demo``), with three at scale (sets of
  dimension >= 1,000: a 64x64 nuclear-norm ball, a 23x23 grid's flow polytope, the 32x32
  Birkhoff polytope), each played at several horizons for the compute frontier and with
  theory constants beside constants tuned on seeds disjoint from the evaluation seeds
  (:class:`~bco_gym.reports.scenario.ScaleTuning`).

The changes to a suite while it was still open are in CHANGELOG.md.

``bco-gym bench --agents A,B --suite NAME`` runs every given agent beside the reference
agents of each scenario on the same seeds; ``bco-gym demo`` runs ``standard-v1`` with the
built-in agents.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from bco_gym.reports.scenario import SLUG, ScaleTuning, Scenario

BANDIT = ("bbcg", "fkm", "bfw", "random")
#: The bandit agents whose free constant the scale scenarios tune.
TUNED = ("bbcg", "fkm", "bfw")

# -- suites from files, choosing scenarios, degenerate rows ---------------------------------------
SMOKE_TEST_NOTE = "smoke test: verdicts at T <= 2,000 are not evidence"
#: Suites whose verdicts are smoke tests, not evidence (their horizons are too short).
SMOKE_TESTS: dict[str, str] = {"quick-v1": SMOKE_TEST_NOTE, "quick-v2": SMOKE_TEST_NOTE}

#: Suite -> why a newer suite supersedes it (``bench`` warns when it runs it).
SUPERSEDED: dict[str, str] = {
    "quick-v1": (
        "quick-v2 supersedes quick-v1 (kept unchanged so that old scores stay comparable): "
        "quick-v1's drift scenario turns its mean by 1e-5 rad per round, 0.02 rad over its "
        "2,000 rounds (i.i.d. losses again), and on its simplex scenario Theorem 1's smoothing "
        "radius is capped at r, so bbcg, fkm and bfw play the centre and tie with random"
    ),
}

#: The top-level keys a suite file may hold.
FILE_KEYS = ("name", "scenario")


def scenario_fields() -> tuple[str, ...]:
    """The keys of a ``[[scenario]]`` table: :class:`Scenario`'s fields."""
    return tuple(f.name for f in fields(Scenario))


def _tuples(value: Any) -> Any:
    """TOML's arrays as tuples (nested too), tables as dicts: Scenario's field types."""
    if isinstance(value, list):
        return tuple(_tuples(item) for item in value)
    if isinstance(value, dict):
        return {key: _tuples(item) for key, item in value.items()}
    return value


def _plain(value: Any) -> Any:
    """env and agent keyword arguments as the sweeps store them: arrays as lists."""
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def scenario_from_table(table: Mapping[str, Any], where: str = "scenario") -> Scenario:
    """A :class:`Scenario` from a table of its fields (a TOML ``[[scenario]]`` table).

    Arrays become tuples; ``tuning`` is a table of :class:`ScaleTuning`'s fields. Every
    value is then checked by the one validation every scenario goes through
    (:meth:`Scenario.__post_init__`). ValueError naming an unknown key and the allowed ones.
    """
    if not isinstance(table, Mapping):
        raise ValueError(f"{where}: expected a table of Scenario fields, got {table!r}")
    allowed = scenario_fields()
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown}; allowed: {', '.join(allowed)}")
    missing = [name for name in ("name", "env_id", "agents", "seeds") if name not in table]
    if missing:
        raise ValueError(f"{where}: missing key(s) {missing}")
    values = {key: _tuples(value) for key, value in table.items()}
    if "horizon" not in values:
        values["horizon"] = None
    for name in ("env_kwargs", "agent_kwargs"):
        if name in values and isinstance(values[name], dict):
            values[name] = _plain(table[name])
    tuning = values.get("tuning")
    if tuning is not None:
        if not isinstance(tuning, dict):
            raise ValueError(f"{where}: tuning={tuning!r}; expected a table")
        allowed_tuning = tuple(f.name for f in fields(ScaleTuning))
        unknown = sorted(set(tuning) - set(allowed_tuning))
        if unknown:
            raise ValueError(
                f"{where}.tuning: unknown key(s) {unknown}; allowed: {', '.join(allowed_tuning)}"
            )
        if "fixed" in tuning:
            tuning["fixed"] = _plain(table["tuning"]["fixed"])
        if "grid" in tuning:
            tuning["grid"] = tuple(
                float(v) if isinstance(v, int) and not isinstance(v, bool) else v
                for v in tuning["grid"]
            )
        try:
            values["tuning"] = ScaleTuning(**tuning)
        except TypeError as error:
            raise ValueError(f"{where}.tuning: {error}") from None
    try:
        return Scenario(**values)
    except TypeError as error:
        raise ValueError(f"{where}: {error}") from None


def load_suite_file(path: str | os.PathLike) -> tuple[str, tuple[Scenario, ...]]:
    """(name, scenarios) of a suite file: TOML with ``[[scenario]]`` tables.

    The optional top-level ``name`` (default: the file's stem) names the suite in
    scores.csv and the report. ValueError for an unreadable file, a key that is not a
    field, a value :class:`Scenario` refuses, two scenarios of one name, or a scenario
    whose env or agents refuse its keywords (:func:`check_scenario`). The built-in
    suites are files of this form too (:func:`builtin_suite_path`), read by the same code.
    """
    path = Path(path)
    name, scenarios = _read_suite(path)
    if name in BUILTIN_NAMES:
        raise ValueError(
            f"suite file {str(path)!r}: name={name!r} is a built-in suite's; choose another"
        )
    for scenario in scenarios:
        check_scenario(scenario, f"suite file {str(path)!r}", scenario.agents)
    return name, scenarios


def _read_suite(path: Path) -> tuple[str, tuple[Scenario, ...]]:
    """(name, scenarios) of the suite file ``path``, every value checked by
    :class:`Scenario` (its env and agents are not built here)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ValueError(f"suite file {str(path)!r} is unreadable: {error}") from None
    except UnicodeDecodeError as error:
        raise ValueError(
            f"suite file {str(path)!r} is not UTF-8 text (byte {error.start}: {error.reason}); "
            "save it as UTF-8"
        ) from None
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"suite file {str(path)!r} is not valid TOML: {error}") from None
    unknown = sorted(set(document) - set(FILE_KEYS))
    if unknown:
        raise ValueError(
            f"suite file {str(path)!r}: unknown top-level key(s) {unknown}; allowed: "
            f"{', '.join(FILE_KEYS)} (each scenario is a [[scenario]] table)"
        )
    name = document.get("name", path.stem)
    if not isinstance(name, str) or not SLUG.fullmatch(name):
        raise ValueError(f"suite file {str(path)!r}: name={name!r}; expected a slug")
    tables = document.get("scenario")
    if not isinstance(tables, list) or not tables:
        raise ValueError(f"suite file {str(path)!r} holds no [[scenario]] table")
    where = f"suite file {str(path)!r}"
    scenarios = []
    for index, table in enumerate(tables, start=1):
        named = table.get("name") if isinstance(table, Mapping) else None
        shown = f"scenario {index}" + (f" ({named!r})" if isinstance(named, str) else "")
        try:
            scenarios.append(scenario_from_table(table, shown))
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
    names = [scenario.name for scenario in scenarios]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"{where}: scenario name(s) {duplicates} used twice")
    return name, tuple(scenarios)


def builtin_suite_path(name: str) -> Path:
    """The TOML file of the built-in suite ``name`` (``bco_gym/data/suites/NAME.toml``)."""
    import bco_gym.data

    return Path(bco_gym.data.__file__).resolve().parent / "suites" / f"{name}.toml"


def _builtin_suites() -> dict[str, tuple[Scenario, ...]]:
    suites = {}
    for name in BUILTIN_NAMES:
        found, scenarios = _read_suite(builtin_suite_path(name))
        if found != name:
            raise ValueError(f"{builtin_suite_path(name)} names suite {found!r}, not {name!r}")
        suites[name] = scenarios
    return suites


class _BuiltinSuites(MutableMapping[str, tuple[Scenario, ...]]):
    """Suite name -> its scenarios, read from the files on first use: reading and checking
    the built-in suites (every row's agent resolved) takes about a second, which a command
    that reads no suite (``bco-gym --help``, ``run``, ``list``) does not pay."""

    def __init__(self) -> None:
        self._suites: dict[str, tuple[Scenario, ...]] | None = None

    def _read(self) -> dict[str, tuple[Scenario, ...]]:
        if self._suites is None:
            self._suites = _builtin_suites()
        return self._suites

    def __getitem__(self, name: str) -> tuple[Scenario, ...]:
        return self._read()[name]

    def __setitem__(self, name: str, scenarios: tuple[Scenario, ...]) -> None:
        self._read()[name] = scenarios

    def __delitem__(self, name: str) -> None:
        del self._read()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())

    def __repr__(self) -> str:
        return f"SUITES({', '.join(self)})"


class _ScaleScenarios(Sequence[Scenario]):
    """A built-in suite's scenarios at scale (named ``scale-*``), read with the suites."""

    def __init__(self, suite: str) -> None:
        self.suite = suite

    def _scenarios(self) -> tuple[Scenario, ...]:
        return tuple(s for s in SUITES[self.suite] if s.name.startswith("scale-"))

    def __getitem__(self, index: Any) -> Any:
        return self._scenarios()[index]

    def __len__(self) -> int:
        return len(self._scenarios())

    def __repr__(self) -> str:
        return f"{self.suite}'s scale-* scenarios"


#: The built-in suites, oldest first: each a TOML file in ``bco_gym/data/suites/``.
BUILTIN_NAMES = ("quick-v1", "standard-v1", "quick-v2", "standard-v2", "standard-v3")
#: Suite name -> its scenarios (read from :func:`builtin_suite_path`'s files on first use).
SUITES: MutableMapping[str, tuple[Scenario, ...]] = _BuiltinSuites()
#: standard-v1's and standard-v2's scenarios at scale (sets of dimension >= 1,000).
SCALE_V1: Sequence[Scenario] = _ScaleScenarios("standard-v1")
SCALE_V2: Sequence[Scenario] = _ScaleScenarios("standard-v2")


def check_scenario(
    scenario: Scenario,
    where: str,
    agents: Sequence[str] = (),
    agent_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """Build ``scenario``'s env once and, on it, each of ``agents`` with its keyword
    arguments (the scenario's ``agent_kwargs``, its tuning's ``fixed``, then
    ``agent_kwargs``); an agent whose row has its own feedback (``agent_feedback``) on
    the env with that feedback. Nothing is played.

    ValueError naming ``where`` (the suite), the scenario and what was refused: an env
    too large for the machine (from the keywords, before it is built: there is no
    override), env or loss keywords the env refuses, and keyword arguments an agent
    refuses (unknown, not finite, overflowing). An agent that cannot be built on this
    scenario even with its defaults (a set it does not support, its own code raising)
    is not refused here: its cells fail, with the reason, as a faulty agent's do.
    """
    import gymnasium as gym

    from bco_gym.engine.memory import NO_OVERRIDE, check_planned_memory

    named = f"{where}: scenario {scenario.name!r}"
    env_kwargs = dict(scenario.env_kwargs)
    if scenario.horizon is not None:
        env_kwargs["horizon"] = scenario.horizon
    try:
        check_planned_memory(scenario.env_id, env_kwargs, 1, False, NO_OVERRIDE)
    except ValueError as error:
        raise ValueError(f"{named}: {error}") from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            env = gym.make(scenario.env_id, **env_kwargs)
    except (TypeError, ValueError, gym.error.Error, MemoryError) as error:
        shown = json.dumps(dict(scenario.env_kwargs), default=repr)
        raise ValueError(
            f"{named}: {scenario.env_id} refuses env_kwargs {shown}: {_one_line(error)}"
        ) from None
    envs = {None: env}
    try:
        tuning = scenario.tuning
        for agent in agents:
            kwargs = {**scenario.agent_kwargs.get(agent, {}), **(agent_kwargs or {}).get(agent, {})}
            feedback = scenario.agent_feedback.get(agent)
            if feedback not in envs:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    envs[feedback] = gym.make(
                        scenario.env_id, **{**env_kwargs, "feedback": feedback}
                    )
            _check_agent(named, agent, envs[feedback], kwargs)
            if tuning is not None and agent in tuning.fixed:
                _check_agent(f"{named} (tuning)", agent, env, {**kwargs, **tuning.fixed[agent]})
    finally:
        for made in envs.values():
            made.close()


def _check_agent(named: str, agent: str, env: Any, kwargs: Mapping[str, Any]) -> None:
    """ValueError naming ``agent`` and its keywords when it builds on ``env`` with its
    defaults but not with ``kwargs`` (a variant's bound keywords included)."""
    import dataclasses

    from bco_gym.agents import make_agent
    from bco_gym.agents.registry import resolve_agent
    from bco_gym.errors import AgentError

    spec = resolve_agent(agent)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            make_agent(spec, env, **kwargs)
        return
    except AgentError:
        return  # its own code raised: its cells fail, with the reason
    except (TypeError, ValueError, ArithmeticError) as error:
        refused = error
    if not kwargs and not spec.kwargs:
        return  # its defaults fail here (a set it does not support): its cells say why
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            make_agent(dataclasses.replace(spec, kwargs=()), env)
    except Exception:
        return
    given = {**dict(spec.kwargs), **kwargs}
    shown = ", ".join(f"{key}={value!r}" for key, value in given.items())
    raise ValueError(f"{named}: agent {agent!r} with {shown}: {_one_line(refused)}")


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def resolve_suite(suite: str) -> tuple[str, tuple[Scenario, ...]]:
    """(name, scenarios) of a built-in suite's name or a suite file's path (``.toml``)."""
    if not isinstance(suite, str):
        raise ValueError(f"suite={suite!r}; expected a suite name or a .toml file")
    if suite in SUITES:
        return suite, SUITES[suite]
    if suite.endswith(".toml") or os.sep in suite:
        return load_suite_file(suite)
    raise ValueError(
        f"unknown suite {suite!r}; allowed: {', '.join(SUITES)}, or a suite file FILE.toml"
    )


def select_scenarios(
    suite: str, scenarios: Sequence[Scenario], names: Sequence[str] | None
) -> tuple[Scenario, ...]:
    """The scenarios named (in the suite's order); all of them for None.

    ValueError naming every name not in the suite, with the suite's scenarios.
    """
    if names is None:
        return tuple(scenarios)
    if not names:
        raise ValueError("--scenarios is empty; name at least one scenario")
    known = [scenario.name for scenario in scenarios]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(
            f"scenario(s) {', '.join(map(repr, unknown))} not in suite {suite!r}; its "
            f"scenarios: {', '.join(known)}"
        )
    return tuple(scenario for scenario in scenarios if scenario.name in names)


def suite_label(suite: str) -> str:
    """The suite's name as scores.csv's suite column gives it: a smoke test says so."""
    return f"{suite} (smoke test)" if suite in SMOKE_TESTS else suite


def centre_players(scenario: Scenario, horizon: int | None = None) -> dict[str, float]:
    """Agent -> delta / r for every agent of ``scenario`` whose theory constants cap its
    smoothing radius delta at the inner radius r at ``horizon`` (default the scenario's):
    K_delta is then the centre alone and the agent plays the centre plus exploration.

    Built for the problem each agent would play (warnings silenced); agents without a
    smoothing radius (random, full-information agents, RL agents) are never listed.
    """
    import warnings

    import gymnasium as gym

    from bco_gym.agents import make_agent

    horizon = horizon or scenario.horizon
    problems: dict[str | None, Any] = {}  # the problem of each feedback the rows play
    capped = {}
    for agent in scenario.agents:
        if agent == "random" or agent.startswith("sb3-"):
            continue
        feedback = scenario.agent_feedback.get(agent)
        if feedback not in problems:
            kwargs = scenario.env_kwargs_of(agent)
            if horizon is not None:
                kwargs["horizon"] = horizon
            env = gym.make(scenario.env_id, **kwargs)
            problems[feedback] = env.unwrapped.problem
            env.close()
        problem = problems[feedback]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            built = make_agent(agent, problem, **scenario.agent_kwargs.get(agent, {}))
        delta = getattr(built, "params", {}).get("smoothing_radius")
        if delta is not None and float(delta) >= float(problem.set.inner_radius) * (1 - 1e-12):
            capped[agent] = float(delta) / float(problem.set.inner_radius)
    return capped


__all__ = [
    "BANDIT",
    "BUILTIN_NAMES",
    "FILE_KEYS",
    "SCALE_V1",
    "SCALE_V2",
    "SMOKE_TESTS",
    "SMOKE_TEST_NOTE",
    "SUITES",
    "SUPERSEDED",
    "TUNED",
    "ScaleTuning",
    "Scenario",
    "builtin_suite_path",
    "centre_players",
    "check_scenario",
    "load_suite_file",
    "resolve_suite",
    "scenario_fields",
    "scenario_from_table",
    "select_scenarios",
    "suite_label",
]
