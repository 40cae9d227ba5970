"""Suites: versioned, named lists of scenarios that agents are scored on.

A :class:`Scenario` is one setting (an env id and its ``gym.make`` keyword arguments, a
horizon, the evaluation seeds) with the reference agents that are always run on it.
A suite is a tuple of scenarios under a versioned name in :data:`SUITES`; a version,
once published, is never changed (a new one is added instead), so scores computed on
``standard-v1`` stay comparable.

* ``quick-v1``: a few small scenarios, under a minute here (smoke tests, first tries);
* ``standard-v1``: the main job's scenarios (``make demo``), with three at scale (sets of
  dimension >= 1,000: a 64x64 nuclear-norm ball, a 23x23 grid's flow polytope, the 32x32
  Birkhoff polytope), each played at several horizons for the compute frontier and with
  theory constants beside constants tuned on seeds disjoint from the evaluation seeds
  (:class:`ScaleTuning`).

The changes to a suite while it was still open are in CHANGELOG.md.

``bco-gym bench --agents A,B --suite NAME`` runs every given agent beside the reference
agents of each scenario on the same seeds; ``bco-gym demo`` runs ``standard-v1`` with the
built-in agents.
"""

from __future__ import annotations

import json
import math
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

BANDIT = ("bbcg", "fkm", "bfw", "random")
#: The bandit agents whose free constant the scale scenarios tune.
TUNED = ("bbcg", "fkm", "bfw")


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
        for what in ("agent_horizons", "agent_kwargs"):
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


SCALE_DESCRIPTION = (
    " Theorem 1's smoothing radius c T^(-1/4) exceeds the inner radius r at every "
    "reachable T, so with theory constants delta is capped at r and K_delta = {c}: "
    "the agents play the centre plus exploration. The tuned rows hold delta = r/2 and "
    "the residual estimator (Zhang et al. 2022) fixed and tune c on seeds from 100 on "
    "(disjoint from the evaluation seeds); the tuning grid, seeds and scores are below."
)
FKM_HORIZONS = (
    " FKM projects by a quadratic programme most rounds (milliseconds each, 50-150 times "
    "BBCG's round), so it plays shorter horizons on the same seeds: the compute frontier "
    "and the budget table pair it by seed; the tables at the largest horizon do not list it."
)
GRID = (10.0, 100.0, 1_000.0, 10_000.0)
TUNING_SEEDS = (100, 101)


def _scale_tuning(
    inner_radius: float,
    horizon: int,
    fkm_horizon: int | None = None,
    seeds: tuple[int, ...] = TUNING_SEEDS,
) -> ScaleTuning:
    """Tune c of BBCG, FKM and BFW with delta = r/2 and the residual estimator."""
    fixed = {"smoothing_radius": inner_radius / 2, "estimator": "residual"}
    own = {} if fkm_horizon is None else {"fkm": fkm_horizon}
    return ScaleTuning(TUNED, GRID, seeds, horizon, {a: fixed for a in TUNED}, own)


#: Sets of dimension >= 1,000 where a projection costs far more than an LMO.
SCALE_V1: tuple[Scenario, ...] = (
    Scenario(
        name="scale-birkhoff-32",
        title="Birkhoff polytope 32x32, i.i.d. assignment costs (at scale)",
        env_id="BCO-Birkhoff-v0",
        agents=BANDIT,
        horizon=100_000,
        horizons=(10_000, 30_000),
        agent_horizons={"fkm": (500, 1_000, 2_000)},
        seeds=tuple(range(20)),
        env_kwargs={"n": 32},
        references=("random",),
        description=(
            "Doubly stochastic 32x32 matrices (dimension 1,024, affine dimension 961, "
            "r = 1/31, R = 5.57); f_t(X) = <C_t, X> with costs in [0, 1]. The LMO is "
            "an assignment problem (Hungarian method), the projection a quadratic "
            "programme." + SCALE_DESCRIPTION + FKM_HORIZONS
        ),
        tuning=_scale_tuning(1 / 31, 100_000, fkm_horizon=1_000, seeds=(100, 101, 102, 103)),
        quick_horizon=100,
    ),
    Scenario(
        name="scale-flow-23",
        title="Flow polytope, 23x23 grid DAG, i.i.d. edge costs (at scale)",
        env_id="BCO-ShortestPath-v0",
        agents=BANDIT,
        horizon=10_000,
        horizons=(2_500, 5_000),
        agent_horizons={"fkm": (250, 500, 1_000)},
        seeds=tuple(range(8)),
        env_kwargs={"grid": 23},
        references=("random",),
        description=(
            "Unit s-t flows on the 23x23 grid DAG (1,012 edges, affine dimension 484, "
            "r = 0.0327, R = 6.93); f_t(x) = <w_t, x>. The LMO is a DAG shortest path, "
            "the projection a quadratic programme. Random play costs five LMO calls a "
            "round." + SCALE_DESCRIPTION + FKM_HORIZONS
        ),
        tuning=_scale_tuning(0.032723999474885475, 5_000, fkm_horizon=500),
        quick_horizon=100,
    ),
    Scenario(
        name="scale-nuclear-64",
        title="Nuclear-norm ball 64x64, matrix completion (at scale)",
        env_id="BCO-NuclearBall-v0",
        agents=BANDIT,
        horizon=4_000,
        horizons=(1_000, 2_000),
        seeds=tuple(range(8)),
        env_kwargs={"rows": 64, "cols": 64},
        references=("random",),
        description=(
            "64x64 matrices of nuclear norm <= 1 (dimension 4,096, r = 1/8, R = 1); "
            "each round reveals one noisy entry of a rank-2 target, f_t(X) = "
            "(X_ij - y_t)^2/2. The LMO is a top singular pair, the projection a full "
            "SVD." + SCALE_DESCRIPTION + " Measured here: no agent learns at a reachable "
            "horizon. One entry of 4,096 per round leaves the mean loss's gradient at the "
            "centre, ||Y||_F/d = 1.4e-4 (seed 0), 6e4 times below one round's estimate "
            "(d/delta) rms(f_t - f_(t-1)) = 8.8 (tuned BBCG, T = 1,000): about 4e9 rounds "
            "for the sum to rise above its noise. The tuned rows beat random and the theory "
            "rows because delta = r/2 explores less (a quadratic loss charges delta^2/2d a "
            "round), not by moving: tuned BBCG and FKM have the same regret to five digits."
        ),
        tuning=_scale_tuning(0.125, 2_000),
        quick_horizon=100,
    ),
)

#: The agents of standard-v2's scale scenarios, and those tuned (BFW's LMO call a round
#: costs 1-15 times BBCG's whole round at these sizes; left out).
SCALE_V2_AGENTS = ("bbcg", "fkm", "random")
SCALE_V2_TUNED = ("bbcg", "fkm")
#: Random play in standard-v2's scale scenarios: the vertex-mixture law
#: (:mod:`bco_gym.sets.mixtures`), no LMO call and no SVD a round.
RANDOM_V2 = {"random": {"law": "vertex-mixture"}}
#: Nonnegative costs with a wide mean range and little noise (mean_low = noise).
LOW_NOISE_COSTS = {"mean_low": 0.05, "mean_high": 0.95, "noise": 0.05}
SCALE_V2_LEARNABLE = (
    " T_dir = E||g_t||^2 / (d ||grad F(c)||^2), the rounds before the summed residual "
    "estimates point down the mean gradient (delta = r/2; bco_gym.reports.signal, "
    "`python benchmarks/bench_scale.py signal`), is {t_dir} here, at most a tenth of the "
    "largest horizon, and T* = d T_dir = {t_star} rounds estimate the whole gradient."
)
SCALE_V2_TUNING = (
    " Theory constants cap delta at r (K_delta = {c}: the centre plus exploration). The "
    "tuned rows hold delta = r/2 and the residual estimator fixed and tune c on seeds "
    "100-101, disjoint from the evaluation seeds 0-7. Random plays the vertex-mixture law "
    "(Dirichlet weights on the centre and k random vertices). FKM projects by a quadratic "
    "programme or a full SVD every round, so it plays its own shorter horizons on the same "
    "seeds (the compute frontier pairs it by seed)."
)


def _scale_v2_tuning(inner_radius: float, horizon: int, fkm_horizon: int) -> ScaleTuning:
    """Tune c of BBCG and FKM with delta = r/2 and the residual estimator."""
    fixed = {"smoothing_radius": inner_radius / 2, "estimator": "residual"}
    return ScaleTuning(
        SCALE_V2_TUNED,
        GRID,
        TUNING_SEEDS,
        horizon,
        {a: fixed for a in SCALE_V2_TUNED},
        {"fkm": fkm_horizon},
    )


#: standard-v2's scenarios at scale: the three families of standard-v1's
#: (dimension >= 1,000), each with a loss sequence learnable from one-point feedback
#: within the horizon (T_dir <= T/10), cheap random play and every seed's tuning
#: disjoint from the evaluation seeds.
SCALE_V2: tuple[Scenario, ...] = (
    Scenario(
        name="scale-birkhoff-32-lownoise",
        title="Birkhoff polytope 32x32, low-noise assignment costs (at scale)",
        env_id="BCO-Birkhoff-v0",
        agents=SCALE_V2_AGENTS,
        horizon=100_000,
        horizons=(10_000, 30_000),
        agent_horizons={"fkm": (250, 500, 1_000)},
        seeds=tuple(range(8)),
        env_kwargs={"n": 32, "loss": "assignment", "loss_kwargs": LOW_NOISE_COSTS},
        agent_kwargs=RANDOM_V2,
        references=("random",),
        description=(
            "Doubly stochastic 32x32 matrices (dimension 1,024, affine dimension 961, "
            "r = 1/31, R = 5.57); f_t(X) = <C_t, X>, mean costs uniform in [0.05, 0.95] "
            "per cell, noise uniform in [-0.05, 0.05]. Why it is learnable: the one-point "
            "residual carries the round-to-round change of the cost at the centre, "
            "<C_t - C_(t-1), J/n>, of variance 2 s^2/3 for noise s; with s = 0.05 instead "
            "of standard-v1's 0.25 and a mean range of 0.9 instead of 0.5 that noise is "
            "75 times smaller against the gradient."
            + SCALE_V2_LEARNABLE.format(t_dir="95", t_star="9.5e4")
            + SCALE_V2_TUNING
        ),
        tuning=_scale_v2_tuning(1 / 31, 30_000, fkm_horizon=500),
        quick_horizon=100,
    ),
    Scenario(
        name="scale-flow-23-lownoise",
        title="Flow polytope, 23x23 grid DAG, low-noise edge costs (at scale)",
        env_id="BCO-ShortestPath-v0",
        agents=SCALE_V2_AGENTS,
        horizon=100_000,
        horizons=(10_000, 30_000),
        agent_horizons={"fkm": (100, 200, 400)},
        seeds=tuple(range(8)),
        env_kwargs={"grid": 23, "loss": "edge-costs", "loss_kwargs": LOW_NOISE_COSTS},
        agent_kwargs=RANDOM_V2,
        references=("random",),
        description=(
            "Unit s-t flows on the 23x23 grid DAG (1,012 edges, affine dimension 484, "
            "r = 0.0327, R = 6.93); f_t(x) = <w_t, x>, mean edge costs uniform in "
            "[0.05, 0.95], noise uniform in [-0.05, 0.05]. Why it is learnable: the "
            "residual's noise is the change of the centre's cost <w_t - w_(t-1), c>, of "
            "variance 2 s^2 ||c||^2/3 (||c||^2 = 8.0); s = 0.05 and the mean range 0.9 make "
            "it 80 times smaller against the gradient than standard-v1's edge costs."
            + SCALE_V2_LEARNABLE.format(t_dir="710", t_star="3.5e5")
            + SCALE_V2_TUNING
        ),
        tuning=_scale_v2_tuning(0.032723999474885475, 30_000, fkm_horizon=200),
        quick_horizon=100,
    ),
    Scenario(
        name="scale-nuclear-64-lowrank",
        title="Nuclear-norm ball 64x64, linear losses with a rank-one mean (at scale)",
        env_id="BCO-NuclearBall-v0",
        agents=SCALE_V2_AGENTS,
        horizon=30_000,
        horizons=(3_000, 10_000),
        agent_horizons={"fkm": (250, 500, 1_000)},
        seeds=tuple(range(8)),
        env_kwargs={
            "rows": 64,
            "cols": 64,
            "loss": "linear-low-rank",
            "loss_kwargs": {"mean_norm": 0.5, "noise": 1.0, "rank": 1},
        },
        agent_kwargs=RANDOM_V2,
        references=("random",),
        description=(
            "64x64 matrices of nuclear norm <= 1 (dimension 4,096, r = 1/8, R = 1); "
            "f_t(X) = <M + a_t b_t^T, X> with M of rank one and ||M||_F = 0.5, and noise a "
            "random rank-one matrix of Frobenius norm 1. The LMO is a top singular pair, "
            "the projection a full SVD. Why it is learnable, where standard-v1's matrix "
            "completion was not: every round's loss carries the whole mean gradient M "
            "(completion observed one entry of 4,096, a mean gradient of 1.4e-4), and "
            "f_t(0) = 0, so the residual has no noise but the played direction's: T_dir = "
            "2(||M||^2 + s^2)/||M||^2 whatever the dimension. The best point is -u v^T for "
            "M's singular pair, worth -0.5 a round against 0 at the centre."
            + SCALE_V2_LEARNABLE.format(t_dir="10", t_star="4.1e4")
            + SCALE_V2_TUNING
        ),
        tuning=_scale_v2_tuning(0.125, 10_000, fkm_horizon=500),
        quick_horizon=100,
    ),
)

STANDARD_V1: tuple[Scenario, ...] = (
    Scenario(
        name="ball-iid",
        title="10-ball, i.i.d. linear losses",
        env_id="BCO-Ball-v0",
        agents=(*BANDIT, "ofw"),
        horizon=100_000,
        seeds=tuple(range(8)),
        env_kwargs={"feedback": "full"},
        description=(
            "Theorem 1's setting with a well-rounded set (r = R = 1). Every bandit agent "
            "learns; BBCG makes about one LMO call per thousand rounds and no projection, "
            "FKM one projection per round, BFW one LMO call per round. OFW sees full "
            "gradients (a lower reference, not a competitor)."
        ),
    ),
    Scenario(
        name="simplex-iid",
        title="10-simplex, i.i.d. linear losses",
        env_id="BCO-Simplex-v0",
        agents=BANDIT,
        horizon=100_000,
        seeds=tuple(range(8)),
        description=(
            "The same losses on a thin set (r = 0.105 against R = 0.95). Theorem 1's "
            "smoothing radius c T^(-1/4) is capped at r until T ~ 6,600 and the shrunk "
            "set K_delta is still half of K at T = 10^5: the theorem's parameters are "
            "cautious here, and the gaps to random open late."
        ),
    ),
    Scenario(
        name="ball-drift",
        title="10-ball, drifting mean (linear-drift)",
        env_id="BCO-Ball-v0",
        agents=BANDIT,
        horizon=100_000,
        seeds=tuple(range(8)),
        env_kwargs={"loss": "linear-drift", "loss_kwargs": {"rate": 1e-5}},
        description=(
            "The mean loss direction turns slowly (1e-5 rad per round, a sixth of a turn "
            "over the run) in a random plane: an oblivious, non-stationary adversary. The "
            "best fixed point is the direction of the summed losses."
        ),
    ),
    Scenario(
        name="ball-switching",
        title="10-ball, switching mean (linear-switching, 5 segments)",
        env_id="BCO-Ball-v0",
        agents=(*BANDIT, "fejer-bgd"),
        horizon=100_000,
        seeds=tuple(range(8)),
        env_kwargs={"loss": "linear-switching", "loss_kwargs": {"segments": 5}},
        description=(
            "The mean loss direction jumps to a fresh random direction at the start of "
            "each of 5 equal segments (every 20,000 rounds). The best fixed point is the "
            "wrong yardstick here: the adaptive regret (the largest regret over the dyadic "
            "intervals and the whole run, each against its own best point), the switching regret "
            "(against the best point of each segment) and the dynamic regret (against "
            "each round's minimiser, noise included) say how well an agent follows the "
            "change. fejer-bgd (formerly named so-bgd) is bandit gradient descent "
            "with separation-oracle steps "
            "instead of projections, whose regret bound holds on every interval."
        ),
    ),
    Scenario(
        name="ball-adversarial",
        title="10-ball, follow-the-leader trap (linear-adversarial)",
        env_id="BCO-Ball-v0",
        agents=(*BANDIT, "ogd"),
        horizon=100_000,
        seeds=tuple(range(8)),
        env_kwargs={"loss": "linear-adversarial", "feedback": "full"},
        description=(
            "Signs alternate every round around a small bias: chasing the last losses is "
            "punished, the comparator is the bias direction. OGD (full information, "
            "O(sqrt T) regret against any sequence) is the lower reference."
        ),
    ),
    Scenario(
        name="portfolio-nyse",
        title="Online portfolio selection, NYSE (O) 1962-1984 (real data)",
        env_id="BCO-Portfolio-v0",
        agents=(*BANDIT, "ofw", "ogd"),
        horizon=None,
        seeds=tuple(range(8)),
        env_kwargs={"dataset": "nyse_o", "feedback": "full"},
        description=(
            "f_t(x) = -log <r_t, x> on 36 stocks over 5,651 trading days; the comparator "
            "is the best constantly rebalanced portfolio (wealth 250.6). Regret is the "
            "log of the ratio of its final wealth to the agent's. Only the agents' "
            "randomness differs across seeds (the data are fixed)."
        ),
    ),
    Scenario(
        name="shortest-paths",
        title="Shortest paths, 6x6 grid DAG (projection >> LMO)",
        env_id="BCO-ShortestPath-v0",
        agents=BANDIT,
        horizon=3_000,
        seeds=tuple(range(4)),
        env_kwargs={"grid": 6},
        description=(
            "Unit s-t flows on a 6x6 grid (60 edges): the LMO is a DAG shortest path, "
            "the projection a quadratic programme. Compare the microseconds per round: "
            "FKM pays a projection every round, BBCG an LMO call every few hundred."
        ),
        quick_horizon=100,
    ),
    Scenario(
        name="rl-ball-iid",
        title="RL baselines, 10-ball, i.i.d. linear losses",
        env_id="BCO-Ball-v0",
        agents=("sb3-ppo", "sb3-td3", "bbcg", "fkm", "random"),
        horizon=2_000,
        seeds=tuple(range(3)),
        description=(
            "PPO and TD3 (stable-baselines3, learning online, actions mapped onto the "
            "ball by a radial map) against BBCG and FKM at a horizon an RL agent can "
            "afford: RL exploits the stationarity of the losses."
        ),
        quick_horizon=64,
    ),
    Scenario(
        name="rl-ball-adversarial",
        title="RL baselines, 10-ball, follow-the-leader trap",
        env_id="BCO-Ball-v0",
        agents=("sb3-ppo", "sb3-td3", "bbcg", "fkm", "random"),
        horizon=2_000,
        seeds=tuple(range(3)),
        env_kwargs={"loss": "linear-adversarial"},
        description="The same agents against the alternating sequence.",
        quick_horizon=64,
    ),
    *SCALE_V1,
)


#: A few small scenarios, under a minute on two cores: the quick version of the ball,
#: simplex and drift scenarios of ``standard-v1``.
QUICK_V1: tuple[Scenario, ...] = tuple(
    replace(scenario.quick(), horizon=2_000, seeds=(0, 1, 2))
    for scenario in STANDARD_V1
    if scenario.name in ("ball-iid", "simplex-iid", "ball-drift")
)

QUICK_SEEDS = (0, 1, 2, 3)
QUICK_HORIZON = 2_000
SMOKE = "A smoke test (T = 2,000, 4 seeds): the verdicts are not evidence. "

#: A smoke test under a minute (every agent's cells, from scratch): six scenarios of
#: distinct purpose, none degenerate: at T = 2,000 no reference agent's theory constants
#: cap its smoothing radius at r (checked by the tests), and the drift turns the mean by
#: a full radian.
QUICK_V2: tuple[Scenario, ...] = (
    Scenario(
        name="ball-iid",
        title="10-ball, i.i.d. linear losses (smoke test)",
        env_id="BCO-Ball-v0",
        agents=BANDIT,
        horizon=QUICK_HORIZON,
        seeds=QUICK_SEEDS,
        description=SMOKE + "Theorem 1's setting on a well-rounded set (r = R = 1).",
    ),
    Scenario(
        name="ball-quadratic",
        title="10-ball, smooth strongly convex losses (smoke test)",
        env_id="BCO-Ball-v0",
        agents=BANDIT,
        horizon=QUICK_HORIZON,
        seeds=QUICK_SEEDS,
        env_kwargs={"loss": "quadratic"},
        description=SMOKE + "Curvature: f_t(x) = ||x - z_t||^2/2 with noisy targets.",
    ),
    Scenario(
        name="ball-drift",
        title="10-ball, drifting mean, 1 rad over the run (smoke test)",
        env_id="BCO-Ball-v0",
        agents=BANDIT,
        horizon=QUICK_HORIZON,
        seeds=QUICK_SEEDS,
        env_kwargs={"loss": "linear-drift", "loss_kwargs": {"rate": 5e-4}},
        description=SMOKE + "A slowly turning mean: 5e-4 rad per round, 1 rad over 2,000 "
        "rounds (quick-v1's drift turned 0.02 rad).",
    ),
    Scenario(
        name="ball-switching",
        title="10-ball, switching mean, 4 segments (smoke test)",
        env_id="BCO-Ball-v0",
        agents=(*BANDIT, "fejer-bgd"),
        horizon=QUICK_HORIZON,
        seeds=QUICK_SEEDS,
        env_kwargs={"loss": "linear-switching", "loss_kwargs": {"segments": 4}},
        description=SMOKE + "Abrupt changes: the mean jumps every 500 rounds; adaptive and "
        "dynamic regrets beside the static one.",
    ),
    Scenario(
        name="ball-trap",
        title="10-ball, follow-the-leader trap (smoke test)",
        env_id="BCO-Ball-v0",
        agents=BANDIT,
        horizon=QUICK_HORIZON,
        seeds=QUICK_SEEDS,
        env_kwargs={"loss": "linear-adversarial"},
        description=SMOKE + "Signs alternating around a small bias: punishes chasing the "
        "last losses.",
    ),
    Scenario(
        name="box-iid",
        title="10-box [-1, 1]^10, i.i.d. linear losses (smoke test)",
        env_id="BCO-Hypercube-v0",
        agents=("bbcg", "fkm", "random"),
        horizon=QUICK_HORIZON,
        seeds=QUICK_SEEDS,
        description=SMOKE + "A polytope with R/r = sqrt(10): the minimiser is a vertex. BFW "
        "is left out: at T = 2,000 its theory radius is capped at r (it would play the "
        "centre).",
    ),
)
SMOKE_TEST_NOTE = "smoke test: verdicts at T <= 2,000 are not evidence"

V2_SEEDS = tuple(range(8))
V2_TUNING_SEEDS = (100, 101)
#: The reference agents of standard-v2: the paper's and its two baselines, and random.
V2_AGENTS = BANDIT
#: Agents a scenario of standard-v2 adds where they apply (the switching and drifting
#: scenarios: the interval-regret methods; a smooth-loss scenario: Saha & Tewari). An
#: agent not registered in this version of the library is left out (see ``_available``).
V2_TRACKING = ("loo-bbgd", "so-bgd")
V2_SMOOTH = ("saha-tewari",)
V2_TUNED_NOTE = (
    " Theory rows use each theorem's constants; tuned rows hold delta = r/2 and the "
    "residual estimator fixed and tune c over 10, 100, 1,000, 10,000 on seeds 100-101 "
    "(disjoint from the evaluation seeds 0-7) at the scenario's horizon."
)


def _available(agents: Sequence[str]) -> tuple[str, ...]:
    """The agents registered here, in order (an agent of a later landing is left out)."""
    from bco_gym.agents.registry import available_agents

    known = available_agents()
    return tuple(agent for agent in agents if agent in known)


def _v2(
    name: str,
    purpose: str,
    title: str,
    env_id: str,
    inner_radius: float,
    horizon: int | None,
    env_kwargs: Mapping[str, Any] | None = None,
    extra: Sequence[str] = (),
    description: str = "",
    tuning_horizon: int | None = None,
) -> Scenario:
    """A standard-v2 scenario: theory and tuned reference agents on seeds 0-7."""
    tuned_at = tuning_horizon or horizon
    assert tuned_at is not None
    return Scenario(
        name=name,
        purpose=purpose,
        title=title,
        env_id=env_id,
        agents=(*V2_AGENTS, *_available(extra)),
        horizon=horizon,
        seeds=V2_SEEDS,
        env_kwargs=dict(env_kwargs or {}),
        references=("random",),
        description=(description + " " + purpose + "." + V2_TUNED_NOTE).strip(),
        tuning=_scale_tuning(inner_radius, tuned_at, seeds=V2_TUNING_SEEDS),
        quick_horizon=200,
    )


#: The one-line purposes of standard-v2's scenarios at scale (:data:`SCALE_V2`).
SCALE_V2_PURPOSES = {
    "scale-birkhoff-32-lownoise": "Dimension 1,024: assignments at scale, LMO cheap, "
    "projection a quadratic programme",
    "scale-flow-23-lownoise": "Dimension 1,012: shortest paths at scale, five LMO calls per "
    "random round",
    "scale-nuclear-64-lowrank": "Dimension 4,096: the nuclear-norm ball with a rank-one "
    "mean, LMO a top singular pair, projection a full SVD",
}

#: ball-trap-10's block: longer than an early window of T^(2/3) = 737 rounds at T = 20,000
#: (such a window sees the first block's half swing, not the bias), short against T so the
#: comparator is the bias direction (T bias = 2,000 against block swing / 2 = 450).
TRAP_BLOCK = 1_000
TRAP_DESCRIPTION = (
    "f_t(x) = <theta_t, x>, theta_t = 0.1 mu + 0.9 s_t v (mu, v orthonormal): s_t = 1/2 for "
    "the first 1,000 rounds, then -1, +1, ... in blocks of 1,000. The block is the reaction "
    "time of the learners it traps: any window of the first 1,000 rounds (an explore-then-"
    "commit schedule's T^(2/3) = 737 rounds among them) sees the swing 0.45 v over the bias "
    "0.1 mu and points to the side of v that the later blocks alternately punish, so an agent "
    "that acts on it and stops adapting pays about random's regret or more. Over the run the "
    "swings cancel but for half a block: the comparator is the bias direction (T bias = "
    "2,000 against block swing / 2 = 450), which a learner of the whole past finds."
)
#: simplex-portfolio-10's market (:class:`~bco_gym.losses.portfolio.PortfolioLoss`).
PORTFOLIO_MARKET = {
    "drift": 0.01,
    "volatility": 0.01,
    "correlation": 0.3,
    "r_min": 0.9,
    "r_max": 1.1,
}
PORTFOLIO_DESCRIPTION = (
    "f_t(x) = -log <r_t, x> (1-exp-concave) on 10 assets: log r_(t,i) = mu_i + 0.01 "
    "(sqrt(0.3) m_t + sqrt(0.7) e_(t,i)), drifts mu_i uniform in [-0.01, 0.01], r_t clipped "
    "to [0.9, 1.1] (G = 3.9, M = 0.105). The comparator is the best constantly rebalanced "
    "portfolio. Why synthetic: on the six shipped price series the mean gradient is not "
    "told from its noise within the data's length (T_dir = 4.2e8 rounds on NYSE (O)'s "
    "5,651 days, inf on the others; docs/benchmark.md), so no one-point method can separate "
    "there. Here a drift as large as the daily volatility makes T_dir = 460 to 1,010 "
    "rounds on seeds 0-7 (delta = r/2, bco_gym.reports.signal), at most a tenth of T."
)

#: The designed grid (docs/benchmark.md): sets x loss curvature x adversaries x dimension.
STANDARD_V2_GRID: tuple[Scenario, ...] = (
    _v2(
        "ball-iid-10",
        "Theorem 1's home ground: a well-rounded set (r = R) and stationary linear losses",
        "10-ball, i.i.d. linear losses",
        "BCO-Ball-v0",
        1.0,
        20_000,
    ),
    _v2(
        "ball-quadratic-10",
        "Curvature: smooth, strongly convex losses (squared distance to noisy targets)",
        "10-ball, smooth strongly convex (quadratic) losses",
        "BCO-Ball-v0",
        1.0,
        20_000,
        {"loss": "quadratic"},
        extra=V2_SMOOTH,
    ),
    _v2(
        "ball-drift-10",
        "A slowly moving optimum: the mean turns 4 rad over the run",
        "10-ball, drifting mean (2e-4 rad per round)",
        "BCO-Ball-v0",
        1.0,
        20_000,
        {"loss": "linear-drift", "loss_kwargs": {"rate": 2e-4}},
        extra=V2_TRACKING,
    ),
    _v2(
        "ball-switching-10",
        "Abrupt changes: the mean jumps to a fresh direction 5 times (adaptive regret)",
        "10-ball, switching mean (5 segments)",
        "BCO-Ball-v0",
        1.0,
        20_000,
        {"loss": "linear-switching", "loss_kwargs": {"segments": 5}},
        extra=V2_TRACKING,
    ),
    _v2(
        "ball-trap-10",
        "A trap for acting on an early window, then not adapting: the swing flips every "
        "1,000 rounds",
        "10-ball, follow-the-leader trap in blocks of 1,000 rounds",
        "BCO-Ball-v0",
        1.0,
        20_000,
        {"loss": "linear-adversarial", "loss_kwargs": {"block": TRAP_BLOCK}},
        description=TRAP_DESCRIPTION,
    ),
    _v2(
        "simplex-iid-10",
        "A thin set (r/R = 0.11) where theory constants make the agents play the centre",
        "10-simplex, i.i.d. linear losses",
        "BCO-Simplex-v0",
        0.10540925533894598,
        20_000,
    ),
    _v2(
        "simplex-portfolio-10",
        "Exp-concave losses: portfolio selection, -log <r_t, x>, in a synthetic trending market",
        "10-simplex, portfolio selection (synthetic market)",
        "BCO-Simplex-v0",
        0.10540925533894598,
        20_000,
        {"loss": "portfolio", "loss_kwargs": PORTFOLIO_MARKET},
        description=PORTFOLIO_DESCRIPTION,
    ),
    _v2(
        "l1-absolute-10",
        "Non-smooth Lipschitz losses (robust regression with outliers) on the l1 ball",
        "10-dim l1 ball, absolute-residual losses",
        "BCO-L1Ball-v0",
        0.31622776601683794,
        20_000,
        {"loss": "absolute"},
    ),
    _v2(
        "box-iid-10",
        "A box (R/r = sqrt(d)) whose minimiser is a vertex",
        "10-box [-1, 1]^10, i.i.d. linear losses",
        "BCO-Hypercube-v0",
        1.0,
        20_000,
    ),
    _v2(
        "flow-6",
        "A polytope known only by its LMO (shortest paths) at small size",
        "Flow polytope, 6x6 grid DAG, i.i.d. edge costs",
        "BCO-ShortestPath-v0",
        0.15243820749215914,
        10_000,
        {"grid": 6},
    ),
    _v2(
        "birkhoff-6",
        "Another LMO-only polytope: assignments (Hungarian method) at small size",
        "Birkhoff polytope 6x6, i.i.d. assignment costs",
        "BCO-Birkhoff-v0",
        0.2,
        10_000,
        {"n": 6},
    ),
    _v2(
        "nuclear-10",
        "The nuclear-norm ball at dimension 100 (matrix completion, one entry a round)",
        "Nuclear-norm ball 10x10, matrix completion",
        "BCO-NuclearBall-v0",
        0.31622776601683794,
        10_000,
        {"rows": 10, "cols": 10},
    ),
    _v2(
        "ball-iid-100",
        "Dimension ~100 on the ball: the d/delta variance of one-point estimates",
        "100-ball, i.i.d. linear losses",
        "BCO-Ball-v0",
        1.0,
        20_000,
        {"n": 100},
    ),
    _v2(
        "box-quadratic-100",
        "Curvature at dimension 100 on a box (R/r = 10)",
        "100-box, smooth strongly convex (quadratic) losses",
        "BCO-Hypercube-v0",
        1.0,
        20_000,
        {"n": 100, "loss": "quadratic"},
    ),
    _v2(
        "l1-iid-100",
        "A cross-polytope at dimension 100 (r/R = 0.1, 200 vertices)",
        "100-dim l1 ball, i.i.d. linear losses",
        "BCO-L1Ball-v0",
        0.1,
        20_000,
        {"n": 100},
    ),
)

#: Suite name -> its scenarios.
SUITES: dict[str, tuple[Scenario, ...]] = {
    "quick-v1": QUICK_V1,
    "standard-v1": STANDARD_V1,
    "quick-v2": QUICK_V2,
    "standard-v2": (
        *STANDARD_V2_GRID,
        *(replace(scenario, purpose=SCALE_V2_PURPOSES[scenario.name]) for scenario in SCALE_V2),
    ),
}


# -- suites from files, choosing scenarios, degenerate rows ---------------------------------------
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
    field, a value :class:`Scenario` refuses, or two scenarios of one name.
    """
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    path = Path(path)
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
    if name in SUITES:
        raise ValueError(
            f"suite file {str(path)!r}: name={name!r} is a built-in suite's; choose another"
        )
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
    for scenario in scenarios:
        check_scenario(scenario, where, scenario.agents)
    return name, tuple(scenarios)


def check_scenario(
    scenario: Scenario,
    where: str,
    agents: Sequence[str] = (),
    agent_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """Build ``scenario``'s env once and, on it, each of ``agents`` with its keyword
    arguments (the scenario's ``agent_kwargs``, its tuning's ``fixed``, then
    ``agent_kwargs``); nothing is played.

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
    try:
        tuning = scenario.tuning
        for agent in agents:
            kwargs = {**scenario.agent_kwargs.get(agent, {}), **(agent_kwargs or {}).get(agent, {})}
            _check_agent(named, agent, env, kwargs)
            if tuning is not None and agent in tuning.fixed:
                _check_agent(f"{named} (tuning)", agent, env, {**kwargs, **tuning.fixed[agent]})
    finally:
        env.close()


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

    kwargs = dict(scenario.env_kwargs)
    horizon = horizon or scenario.horizon
    if horizon is not None:
        kwargs["horizon"] = horizon
    env = gym.make(scenario.env_id, **kwargs)
    try:
        problem = env.unwrapped.problem
        inner = float(problem.set.inner_radius)
        capped = {}
        for agent in scenario.agents:
            if agent == "random" or agent.startswith("sb3-"):
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                built = make_agent(agent, problem, **scenario.agent_kwargs.get(agent, {}))
            delta = getattr(built, "params", {}).get("smoothing_radius")
            if delta is not None and float(delta) >= inner * (1 - 1e-12):
                capped[agent] = float(delta) / inner
        return capped
    finally:
        env.close()
