"""One scenario of a benchmark suite: :class:`Scenario` and its tuning, :class:`ScaleTuning`,
each value checked when it is made (the one validation a built-in scenario and one read
from a user's suite file both go through). The suites themselves are in
:mod:`bco_gym.reports.suites`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def _positive(where: str, name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{where}: {name}={value!r}; expected a positive integer")


def _horizon(where: str, name: str, value: Any) -> None:
    """A horizon: a positive integer at most the CLI's ``MAX_HORIZON``."""
    from bco_gym.engine.tally import MAX_HORIZON

    _positive(where, name, value)
    if value > MAX_HORIZON:
        raise ValueError(
            f"{where}: {name}={value:,}; at most {MAX_HORIZON:,} rounds (the CLI's limit)"
        )


def _names(where: str, name: str, value: Any) -> None:
    if not isinstance(value, tuple) or not value:
        raise ValueError(f"{where}: {name}={value!r}; expected a non-empty tuple of agent names")
    for agent in value:
        if not isinstance(agent, str) or not agent:
            raise ValueError(f"{where}: {name} holds {agent!r}; expected agent names (strings)")
    duplicates = sorted({a for a in value if value.count(a) > 1})
    if duplicates:
        raise ValueError(f"{where}: {name} lists {duplicates} twice")


def _env_id(where: str, env_id: Any) -> None:
    """One of bco_gym's ids (``module:`` prefixes allowed, as the CLI allows them)."""
    from bco_gym.envs.registration import ENV_IDS

    if not isinstance(env_id, str) or env_id.split(":", 1)[-1] not in ENV_IDS:
        raise ValueError(
            f"{where}: env_id={env_id!r}; allowed: {', '.join(ENV_IDS)} (bco_gym's "
            "environments, optionally as 'module:ID')"
        )


def _agents_known(where: str, agents: Sequence[str]) -> None:
    from bco_gym.agents.registry import resolve_agent

    for agent in agents:
        try:
            resolve_agent(agent)
        except (ValueError, TypeError, ImportError) as error:
            raise ValueError(f"{where}: agent {agent!r}: {error}") from None


def _seeds(where: str, value: Any) -> None:
    from bco_gym.sweeps.sweep import MAX_SEED, MAX_SEEDS

    if not isinstance(value, tuple) or not value:
        raise ValueError(f"{where}: seeds={value!r}; expected a non-empty tuple of seeds")
    if len(value) > MAX_SEEDS:
        raise ValueError(f"{where}: {len(value):,} seeds; at most {MAX_SEEDS:,} (the CLI's limit)")
    for seed in value:
        public = isinstance(seed, int) and 0 <= seed <= MAX_SEED
        fresh = isinstance(seed, int) and 2**127 <= seed < 2**128  # bench --fresh-seeds's
        if isinstance(seed, bool) or not (public or fresh):
            raise ValueError(
                f"{where}: seed {seed!r}; expected an integer in [0, {MAX_SEED}] (or a "
                "fresh seed of bench --fresh-seeds, in [2^127, 2^128))"
            )
    if len(set(value)) != len(value):
        raise ValueError(f"{where}: seeds {list(value)} contain duplicates")


def _one_horizon(where: str, horizon: int | None, env_kwargs: Any) -> None:
    """T given once: ``env_kwargs.horizon`` only where it equals ``horizon`` (or stands
    for it, when ``horizon`` is not given), and within the CLI's limit either way."""
    if not isinstance(env_kwargs, Mapping) or "horizon" not in env_kwargs:
        return
    own = env_kwargs["horizon"]
    _horizon(where, "env_kwargs.horizon", own)
    if horizon is not None and own != horizon:
        raise ValueError(
            f"{where}: env_kwargs.horizon={own!r} disagrees with horizon={horizon!r}; give "
            "T once, as horizon (env_kwargs.horizon is allowed only when it equals horizon)"
        )


def _mapping(where: str, name: str, value: Any) -> None:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise ValueError(f"{where}: {name}={value!r}; expected a table with string keys")


#: The feedback a row may declare beyond its scenario's (:attr:`Scenario.agent_feedback`).
ROW_FEEDBACKS = ("two-point", "full")


def _row_feedback(where: str, scenario: Scenario) -> None:
    """Each declared row feedback is one of :data:`ROW_FEEDBACKS`, its agent's own, not
    the env's already, and not a tuned agent's (ValueError naming the row otherwise)."""
    from bco_gym.agents.registry import resolve_agent

    _mapping(where, "agent_feedback", scenario.agent_feedback)
    env = scenario.env_kwargs.get("feedback", "bandit")
    tuned = scenario.tuning.agents if isinstance(scenario.tuning, ScaleTuning) else ()
    for agent in scenario.agents:
        own = resolve_agent(agent).feedback
        if own not in ("bandit", env) and agent not in scenario.agent_feedback:
            raise ValueError(
                f"{where}: agent {agent!r} needs feedback={own!r} and the env gives {env!r}; "
                f'declare its row\'s feedback: agent_feedback = {{ {agent} = "{own}" }}'
            )
    for agent, feedback in scenario.agent_feedback.items():
        named = f"{where}: agent_feedback[{agent!r}]={feedback!r}"
        if feedback not in ROW_FEEDBACKS:
            raise ValueError(f"{named}; allowed: {', '.join(map(repr, ROW_FEEDBACKS))}")
        if feedback == env:
            raise ValueError(f"{named} is the scenario's own feedback already; drop it")
        if agent not in scenario.agents:
            continue  # named below, with the other per-agent tables
        own = resolve_agent(agent).feedback
        if own != feedback:
            raise ValueError(
                f"{named}, but {agent!r} declares feedback={own!r}: a row is given exactly "
                "what its agent is entitled to"
            )
        if agent in tuned:
            raise ValueError(
                f"{named}: {agent!r} is tuned, and its tuning plays the scenario's env; a "
                "row of its own feedback plays theory constants only"
            )


@dataclass(frozen=True)
class ScaleTuning:
    """How a scenario's agents are tuned (:func:`~bco_gym.sweeps.tuning.tune`).

    Attributes:
        agents: the agents tuned (each over its ``SCALE_PARAM``).
        grid: the values of the constant tried.
        seeds: the tuning seeds, disjoint from the scenario's evaluation seeds.
        horizon: the tuning runs' horizon.
        fixed: keyword arguments held fixed in the tuning and tuned runs, per agent.
        agent_horizons: a tuning horizon per agent where it differs from ``horizon``
            (an agent whose rounds are too costly to tune at ``horizon``).
    """

    agents: tuple[str, ...]
    grid: tuple[float, ...]
    seeds: tuple[int, ...]
    horizon: int
    fixed: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    agent_horizons: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        where = "tuning"
        _names(where, "agents", self.agents)
        if not isinstance(self.grid, tuple) or not self.grid:
            raise ValueError(f"{where}: grid={self.grid!r}; expected a non-empty tuple of numbers")
        for value in self.grid:
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ValueError(f"{where}: grid value {value!r}; expected a positive number")
            if not math.isfinite(value):
                raise ValueError(f"{where}: grid value {value!r}; expected a finite number")
        _seeds(where, self.seeds)
        _horizon(where, "horizon", self.horizon)
        _mapping(where, "fixed", self.fixed)
        for agent, kwargs in self.fixed.items():
            _mapping(where, f"fixed[{agent!r}]", kwargs)
        _mapping(where, "agent_horizons", self.agent_horizons)
        for agent, horizon in self.agent_horizons.items():
            _horizon(where, f"agent_horizons[{agent!r}]", horizon)
        unknown = sorted((set(self.fixed) | set(self.agent_horizons)) - set(self.agents))
        if unknown:
            raise ValueError(
                f"{where}: fixed/agent_horizons name {unknown}, which are not among the tuned "
                f"agents {list(self.agents)}"
            )

    def horizon_of(self, agent: str) -> int:
        """The horizon ``agent`` is tuned at."""
        return int(self.agent_horizons.get(agent, self.horizon))

    def quick(self) -> ScaleTuning:
        """Two grid values, one seed, a tiny horizon (smoke tests)."""
        return replace(
            self, grid=self.grid[::3][:2], seeds=self.seeds[:1], horizon=100, agent_horizons={}
        )


@dataclass(frozen=True)
class Scenario:
    """One scenario of a suite: ``agents`` x ``seeds`` on one env at one horizon.

    Attributes:
        name: a short slug, unique in its suite (the sweep's directory name).
        env_id: the registered id; ``env_kwargs`` its ``gym.make`` keyword arguments.
        horizon: T, or None for the env's own horizon (data sets: their number of days).
        seeds: the evaluation seeds (the same seed gives every agent the same losses).
        agents: the reference agents, always run.
        title, description: what the report shows as the heading and the text.
        references: the agents the report pairs every other agent with.
        quick_horizon: the horizon of the smoke-test version (:meth:`quick`).
        horizons: smaller horizons also played (the compute frontier), or ().
        agent_horizons: for an agent whose rounds cost too much to play ``horizons`` and
            ``horizon`` (FKM's projections at scale), the horizons it plays instead, on
            the same seeds (so the compute frontier still pairs it with the others by
            seed); its theory and tuned runs alike.
        tuning: how tuned constants are found (:class:`ScaleTuning`), or None; its seeds
            must be disjoint from ``seeds`` (ValueError otherwise).
        agent_kwargs: keyword arguments of an agent in every run of the scenario (its
            theory and tuned runs alike; labels unchanged), part of the scenario's
            definition: e.g. random's sampling law in standard-v2's scale scenarios.
        purpose: one line, what the scenario tests that no other scenario of its suite
            does (``standard-v2``: every scenario has one, all distinct).
        agent_feedback: the feedback of a reference row that learns from more than the
            scenario's env gives (``{"pbgd2": "two-point"}``): that row plays the same env
            with ``feedback`` set to it (:meth:`env_kwargs_of`), on the same seeds and
            losses, and is marked and ranked apart wherever rows are ranked
            (:func:`~bco_gym.stats.paired.feedback_of`). Each value must be the agent's
            own declared feedback ("two-point" or "full"), so the row is given exactly
            what its agent is entitled to (:mod:`bco_gym.engine.feedback`); a tuned agent
            may not have one (its tuning shares the scenario's env).
    """

    name: str
    env_id: str
    agents: tuple[str, ...]
    horizon: int | None
    seeds: tuple[int, ...]
    title: str = ""
    description: str = ""
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    references: tuple[str, ...] = ("random", "fkm")
    quick_horizon: int = 300
    horizons: tuple[int, ...] = ()
    tuning: ScaleTuning | None = None
    agent_horizons: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    agent_kwargs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    purpose: str = ""
    agent_feedback: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not SLUG.fullmatch(self.name):
            raise ValueError(
                f"scenario name {self.name!r}; expected a slug of letters, digits, '.', '_' "
                "and '-' (a directory name), at most 64 characters"
            )
        where = f"scenario {self.name!r}"
        _env_id(where, self.env_id)
        _names(where, "agents", self.agents)
        _agents_known(where, self.agents)
        if self.horizon is not None:
            _horizon(where, "horizon", self.horizon)
        _seeds(where, self.seeds)
        if len(self.seeds) < 2:
            raise ValueError(
                f"{where}: seeds={list(self.seeds)}; expected at least 2 (paired intervals)"
            )
        for name in ("title", "description", "purpose"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"{where}: {name}={getattr(self, name)!r}; expected a string")
        _mapping(where, "env_kwargs", self.env_kwargs)
        _one_horizon(where, self.horizon, self.env_kwargs)
        if not isinstance(self.references, tuple):
            raise ValueError(f"{where}: references={self.references!r}; expected a tuple")
        for reference in self.references:
            if not isinstance(reference, str):
                raise ValueError(f"{where}: reference {reference!r}; expected an agent name")
        _horizon(where, "quick_horizon", self.quick_horizon)
        if not isinstance(self.horizons, tuple):
            raise ValueError(f"{where}: horizons={self.horizons!r}; expected a tuple")
        for horizon in self.horizons:
            _horizon(where, "horizons", horizon)
        if self.tuning is not None and not isinstance(self.tuning, ScaleTuning):
            raise ValueError(f"{where}: tuning={self.tuning!r}; expected a ScaleTuning or None")
        _mapping(where, "agent_horizons", self.agent_horizons)
        for agent, own in self.agent_horizons.items():
            if not isinstance(own, tuple) or not own:
                raise ValueError(
                    f"{where}: agent_horizons[{agent!r}]={own!r}; expected a non-empty tuple"
                )
            for horizon in own:
                _horizon(where, f"agent_horizons[{agent!r}]", horizon)
        _mapping(where, "agent_kwargs", self.agent_kwargs)
        for agent, kwargs in self.agent_kwargs.items():
            _mapping(where, f"agent_kwargs[{agent!r}]", kwargs)
        _row_feedback(where, self)
        for what in ("agent_horizons", "agent_kwargs", "agent_feedback"):
            unknown = sorted(set(getattr(self, what)) - set(self.agents))
            if unknown:
                raise ValueError(
                    f"scenario {self.name!r}: {what} names {unknown}, which are not among "
                    f"its agents {list(self.agents)}"
                )
        if self.horizon is None and self.agent_horizons:
            raise ValueError(
                f"scenario {self.name!r}: agent_horizons needs a horizon (the env's own is used)"
            )
        if self.tuning is not None:
            shared = sorted(set(self.tuning.seeds) & set(self.seeds))
            if shared:
                raise ValueError(
                    f"scenario {self.name!r}: tuning seeds {list(self.tuning.seeds)} overlap "
                    f"the evaluation seeds at {shared}; they must be disjoint"
                )

    def env_kwargs_of(self, agent: str) -> dict[str, Any]:
        """The ``gym.make`` keyword arguments of ``agent``'s row: the scenario's, with
        ``feedback`` set to the row's own where :attr:`agent_feedback` declares one."""
        kwargs = dict(self.env_kwargs)
        if agent in self.agent_feedback:
            kwargs["feedback"] = self.agent_feedback[agent]
        return kwargs

    @property
    def all_horizons(self) -> list[int | None]:
        """Every horizon played: ``horizons`` and ``horizon``, in increasing order."""
        if self.horizon is None:
            return [None]
        return sorted({*self.horizons, self.horizon})

    def horizons_of(self, agent: str) -> list[int | None]:
        """The horizons ``agent`` plays: its ``agent_horizons`` or :attr:`all_horizons`."""
        if agent in self.agent_horizons:
            return sorted({int(h) for h in self.agent_horizons[agent]})
        return self.all_horizons

    def as_benched(self, agents: Sequence[str] | None = None) -> Scenario:
        """The scenario as ``bco-gym bench`` plays it, with ``agents`` (default its own):
        at its horizon only (no compute frontier), an agent with horizons of its own (FKM
        at scale) at the largest of them (computed, not scored at the horizon)."""
        chosen = tuple(self.agents if agents is None else agents)
        own = {a: (max(h),) for a, h in self.agent_horizons.items() if a in chosen}
        return replace(self, agents=chosen, horizons=(), agent_horizons=own)

    def quick(self) -> Scenario:
        """The same scenario at a tiny horizon and two seeds (smoke tests)."""
        tuning = None if self.tuning is None else self.tuning.quick()
        return replace(
            self,
            horizon=self.quick_horizon,
            seeds=self.seeds[:2],
            horizons=(),
            tuning=tuning,
            agent_horizons={},
        )


__all__ = ["SLUG", "ScaleTuning", "Scenario"]
