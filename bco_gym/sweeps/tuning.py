"""Grid search over each agent's free constant, on tuning seeds only.

Every agent exposes one scale constant, ``SCALE_PARAM`` (BBCG's c, the others' knob),
which ``make_agent`` takes as an override. :func:`tune` runs, for each agent, a
log-spaced grid of absolute values of that constant on the tuning seeds (a sweep
through any backend), scores each value by the mean final regret over those seeds,
and keeps the minimiser. The chosen constants, with the tuning seeds, go to a JSON
file that evaluation reads back with :func:`load_tuned`; evaluating on seeds that
overlap the tuning seeds would report an optimistically biased regret, so
:func:`check_disjoint` refuses it.

A failing agent does not stop the tuning (``failures="record"``, the default, as for
:func:`~bco_gym.sweeps.sweep.sweep`): each (value, seed) cell whose run raised, returned
NaN or the wrong shape, or played outside K is recorded as a
:class:`~bco_gym.sweeps.failures.CellFailure` (in ``out/failures/`` and in
``Tuning.failures``); a value with a failed cell has no score (nan; listed in
``TunedConstant.excluded``), and the tuned value is the best of the values whose cells
all finished. An agent with no such value raises :class:`TuningFailedError` naming it
and its failures, once every cell has run.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bco_gym.agents.moved import current_identity
from bco_gym.agents.registry import current_agent_name, resolve_agent
from bco_gym.engine.tally import check_horizon
from bco_gym.io import write_json
from bco_gym.sweeps.failures import CellFailure, load_failures
from bco_gym.sweeps.results import read_json
from bco_gym.sweeps.sweep import FAILURE_MODES, Cell, run_cells

TUNED_FORMAT = "bco_gym-tuned-constants/1"
#: The agent names a tuned file uses: 2 since the old "so-bgd" was renamed
#: "fejer-bgd" (a file without the key is older: its names are read through
#: :func:`~bco_gym.agents.moved.current_agent_name`).
AGENT_NAMES = 2


@dataclass(frozen=True)
class TunedConstant:
    """The constant chosen for one agent: its name, value, and the grid's scores (nan for
    a value left out because one of its cells failed; those values in ``excluded``)."""

    param: str
    value: float
    mean_regret: float
    theory_value: float | None
    grid: tuple[float, ...]
    scores: tuple[float, ...]
    excluded: tuple[float, ...] = ()


class TuningFailedError(RuntimeError):
    """No value of an agent's grid had all its cells finish: nothing to choose from.

    Attributes:
        failures: agent -> its :class:`~bco_gym.sweeps.failures.CellFailure` records
            (the agents that got no value only).
        tuning: the :class:`Tuning` of the other agents (their constants were chosen).
    """

    def __init__(self, failures: dict[str, list[CellFailure]], tuning: Tuning, out: Any):
        self.failures, self.tuning = failures, tuning
        parts = []
        for agent, found in failures.items():
            parts.append(
                f"{agent!r}: every grid value has a failed cell ({len(found)} failed, e.g. "
                f"{found[0].describe()})"
            )
        super().__init__(
            "tune: no tuned value for " + "; ".join(parts) + f"; recorded in {out}/failures"
        )


class AgentKeyed(dict):
    """A dict keyed by agent identities that finds an agent by any of its spellings:
    ``tuning.constants["fkm"]`` reads the entry keyed ``"bco_gym.agents.fkm.agent:FlaxmanAgent"``,
    and an older file's entry keyed ``"fkm"`` is found by the import path too."""

    def _find(self, key: Any) -> Any:
        if not isinstance(key, str) or dict.__contains__(self, key):
            return key
        from bco_gym.agents import find_agent

        spec = find_agent(key)
        if spec is None:
            return key
        identity = spec.identity()
        if dict.__contains__(self, identity):
            return identity
        for stored in self:
            other = find_agent(stored)
            if other is not None and other.identity() == identity:
                return stored
        return key

    def __getitem__(self, key: Any) -> Any:
        return super().__getitem__(self._find(key))

    def __contains__(self, key: object) -> bool:
        return super().__contains__(self._find(key))

    def get(self, key: Any, default: Any = None) -> Any:
        return super().get(self._find(key), default)


@dataclass(frozen=True)
class Tuning:
    """The outcome of :func:`tune` (what the tuned-constants JSON holds).

    ``constants``, ``skipped``, ``fixed`` and ``labels`` are keyed by the agents'
    identities (:class:`AgentKeyed`: any spelling of an agent finds its entry);
    ``labels`` says what each is called.
    """

    env_id: str
    env_kwargs: dict[str, Any]
    horizon: int
    tune_seeds: tuple[int, ...]
    constants: dict[str, TunedConstant] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    fixed: dict[str, dict[str, Any]] = field(default_factory=dict)
    failures: tuple[CellFailure, ...] = ()
    labels: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("constants", "skipped", "fixed", "labels"):
            object.__setattr__(self, name, AgentKeyed(getattr(self, name)))

    def label(self, agent: str) -> str:
        """What to call the agent keyed ``agent`` (an identity) when printing."""
        return self.labels.get(agent, agent)

    def overrides(self) -> AgentKeyed:
        """``{agent: {param: value, **fixed}}`` for ``sweep(agent_kwargs=...)``: the tuned
        constant and the keyword arguments held fixed while tuning it."""
        return AgentKeyed(
            (agent, {**self.fixed.get(agent, {}), c.param: c.value})
            for agent, c in self.constants.items()
        )


def log_grid(low: float, high: float, points: int) -> list[float]:
    """``points`` log-spaced values from ``low`` to ``high`` (both > 0), rounded to 4 digits."""
    if not (0 < low < high) or not np.isfinite(high):
        raise ValueError(f"grid {low:g}:{high:g} must satisfy 0 < low < high")
    if points < 2:
        raise ValueError(f"a grid needs at least 2 points, got {points}")
    return [float(f"{value:.4g}") for value in np.geomspace(low, high, points)]


def scale_param_of(agent: str) -> str | None:
    """The agent's free constant (``SCALE_PARAM``, a user agent's too), or None."""
    from bco_gym.agents import resolve_agent

    return resolve_agent(agent).scale_param


def theory_value(env_id: str, env_kwargs: Mapping[str, Any], horizon: int, agent: str) -> Any:
    """The theory default of the agent's constant on this problem."""
    import gymnasium as gym

    from bco_gym.agents import make_agent

    env = gym.make(env_id, horizon=horizon, **dict(env_kwargs))
    try:
        with warnings.catch_warnings():  # the runs record theirs; this is only a lookup
            warnings.simplefilter("ignore")
            built = make_agent(agent, env)
        return built.params.get(getattr(built, "SCALE_PARAM", None) or "")
    finally:
        env.close()


def tune(
    env_id: str,
    agents: Sequence[str],
    horizon: int,
    tune_seeds: Sequence[int],
    grid: Sequence[float],
    *,
    out: str | os.PathLike,
    backend: str = "serial",
    env_kwargs: Mapping[str, Any] | None = None,
    progress: bool | str | None = None,
    ray_address: str | None = None,
    batch_size: int | None = None,
    agent_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
    failures: str = "record",
    reuse_stale: bool = False,
) -> Tuning:
    """Pick each agent's constant from ``grid`` by mean final regret on ``tune_seeds``.

    ``out`` is the sweep directory of the tuning runs (resumable like any sweep);
    ``progress`` and ``batch_size`` as in :func:`~bco_gym.sweeps.sweep.run_cells`.
    ``agent_kwargs`` (``{agent: {name: value}}``) holds other keyword arguments fixed
    in every tuning run of that agent (e.g. a smoothing radius below the set's inner
    radius); they are kept in ``Tuning.fixed`` and in :meth:`Tuning.overrides`.
    Agents without a free constant are listed in ``Tuning.skipped``.

    ``failures``: "record" (default) records failed cells and chooses among the values
    whose cells all finished (module docstring); "raise" stops at the first failure.
    ``reuse_stale``: as for :func:`~bco_gym.sweeps.sweep.run_cells`.

    The returned :class:`Tuning` (and the file :func:`save_tuned` writes) keys every
    agent by its identity (:meth:`~bco_gym.agents.registry.AgentSpec.identity`), so the
    constants apply to every spelling of the agent; ``Tuning.labels`` keeps its label.

    Raises:
        TuningFailedError: (with ``failures="record"``) some agent has no value whose
            cells all finished; it names the agents and their failures.
    """
    if failures not in FAILURE_MODES:
        raise ValueError(f"failures={failures!r}; allowed: {', '.join(FAILURE_MODES)}")
    horizon = check_horizon(horizon)
    env_kwargs = dict(env_kwargs or {})
    seeds = [int(s) for s in tune_seeds]
    if not seeds:
        raise ValueError("tune needs at least one tuning seed")
    values = [float(v) for v in grid]
    if not values or any(not (np.isfinite(v) and v > 0) for v in values):
        raise ValueError(f"grid {values} must hold positive finite values")
    params = {agent: scale_param_of(agent) for agent in agents}
    fixed = {str(a): dict(kw) for a, kw in (agent_kwargs or {}).items() if a in params}
    for agent, kwargs in fixed.items():
        if params[agent] is not None and params[agent] in kwargs:
            raise ValueError(
                f"agent_kwargs of {agent!r} fix {params[agent]!r}, the constant being tuned"
            )
    skipped = {a: "no free constant (SCALE_PARAM is None)" for a, p in params.items() if p is None}
    tuned = [a for a in agents if params[a] is not None]
    specs = {agent: resolve_agent(agent) for agent in agents}
    grid_cells = []
    for agent in tuned:
        for value in values:
            kwargs = {**fixed.get(agent, {}), params[agent]: value}
            for seed in seeds:
                grid_cells.append(
                    Cell(
                        env_id,
                        agent,
                        horizon,
                        seed,
                        env_kwargs,
                        kwargs,
                        "custom",
                        label=specs[agent].name,
                        identity=specs[agent].identity(kwargs),
                    )
                )
    results = run_cells(
        grid_cells,
        out=out,
        backend=backend,
        progress=progress,
        ray_address=ray_address,
        batch_size=batch_size,
        failures=failures,
        reuse_stale=reuse_stale,
    )
    order = {cell.key: index for index, cell in enumerate(grid_cells)}  # agent, value, seed
    failed = sorted(
        (failure for failure in load_failures(out) if failure.key in order),
        key=lambda failure: order[failure.key],
    )
    finished = [cell for cell in grid_cells if cell.key not in {f.key for f in failed}]
    regret = {
        (cell.agent, cell.agent_kwargs[params[cell.agent]], cell.seed): result.final_regret
        for cell, result in zip(finished, results, strict=True)
    }
    chosen, hopeless = {}, {}
    for agent in tuned:
        scores = [_mean_score(regret, agent, value, seeds) for value in values]
        if all(np.isnan(scores)):
            hopeless[agent] = [f for f in failed if f.agent == agent]
            continue
        best = int(np.nanargmin(scores))
        chosen[agent] = TunedConstant(
            param=params[agent],
            value=values[best],
            mean_regret=scores[best],
            theory_value=_float_or_none(theory_value(env_id, env_kwargs, horizon, agent)),
            grid=tuple(values),
            scores=tuple(scores),
            excluded=tuple(v for v, score in zip(values, scores, strict=True) if np.isnan(score)),
        )
    kept = {agent: kwargs for agent, kwargs in fixed.items() if agent in chosen}
    key = {agent: spec.identity() for agent, spec in specs.items()}  # files keyed by identity
    tuning = Tuning(
        env_id,
        env_kwargs,
        horizon,
        tuple(seeds),
        {key[a]: c for a, c in chosen.items()},
        {key[a]: why for a, why in skipped.items()},
        {key[a]: kwargs for a, kwargs in kept.items()},
        tuple(failed),
        labels={key[a]: spec.name for a, spec in specs.items()},
    )
    if hopeless:
        raise TuningFailedError(hopeless, tuning, out)
    return tuning


def _mean_score(
    regret: Mapping[tuple[str, float, int], float], agent: str, value: float, seeds: Sequence[int]
) -> float:
    """Mean final regret of ``agent`` with ``value`` over ``seeds``; nan if a cell failed."""
    found = [regret.get((agent, value, seed)) for seed in seeds]
    if any(r is None for r in found):
        return float("nan")
    return float(np.mean(found))


def _float_or_none(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def save_tuned(path: str | os.PathLike, tuning: Tuning) -> Path:
    """Write the tuned constants (and the seeds they were tuned on, the failed cells) as
    JSON, atomically; a grid value without a score (a failed cell) is written as null."""
    document = {"format": TUNED_FORMAT, "agent_names": AGENT_NAMES, **asdict(tuning)}
    for entry in document["constants"].values():
        entry["scores"] = [None if np.isnan(score) else score for score in entry["scores"]]
    write_json(path, document)
    return Path(path)


def load_tuned(path: str | os.PathLike) -> Tuning:
    """Read a file written by :func:`save_tuned`; ValueError naming what is wrong if it
    is not one (a regular file of at most 16 MB, no symlink)."""
    try:
        document = read_json(path)
    except (OSError, ValueError) as error:
        raise ValueError(f"cannot read tuned constants from {str(path)!r}: {error}") from None
    if not isinstance(document, dict) or document.get("format") != TUNED_FORMAT:
        raise ValueError(f"{str(path)!r} is not a tuned-constants file ({TUNED_FORMAT})")
    try:
        return _tuning_from(document)
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(
            f"{str(path)!r} is a malformed tuned-constants file: {type(error).__name__} {error}"
        ) from None


def _tuning_from(document: dict[str, Any]) -> Tuning:
    constants = {}
    renaming = document.get("agent_names", 1) != AGENT_NAMES

    def current(agent: Any) -> str:  # its current name, or identity (current_identity)
        return str(current_identity(current_agent_name(str(agent)) if renaming else agent))

    for agent, entry in _typed(document["constants"], dict, "constants").items():
        raw = entry["value"]
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            raise ValueError(
                f"constant of {agent!r} is {raw!r} ({type(raw).__name__}), not a number"
            )
        value = float(raw)
        if not (np.isfinite(value) and value > 0):
            raise ValueError(f"constant of {agent!r} is {value!r}, not a positive number")
        constants[current(agent)] = TunedConstant(
            param=_typed(entry["param"], str, "param"),
            value=value,
            mean_regret=float(entry["mean_regret"]),
            theory_value=_float_or_none(entry.get("theory_value")),
            grid=tuple(float(v) for v in _typed(entry["grid"], list, "grid")),
            scores=tuple(
                float("nan") if v is None else float(v)
                for v in _typed(entry["scores"], list, "scores")
            ),
            excluded=tuple(float(v) for v in _typed(entry.get("excluded", []), list, "excluded")),
        )
    seeds = _typed(document["tune_seeds"], list, "tune_seeds")
    if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds):
        raise ValueError(f"tune_seeds {seeds!r} are not non-negative integers")
    return Tuning(
        env_id=_typed(document["env_id"], str, "env_id"),
        env_kwargs=_typed(document["env_kwargs"], dict, "env_kwargs"),
        horizon=check_horizon(document["horizon"]),
        tune_seeds=tuple(seeds),
        constants=constants,
        skipped={
            current(k): v for k, v in _typed(document.get("skipped", {}), dict, "skipped").items()
        },
        fixed={current(k): v for k, v in _typed(document.get("fixed", {}), dict, "fixed").items()},
        failures=tuple(
            CellFailure.from_dict(_typed(entry, dict, "failure"))
            for entry in _typed(document.get("failures", []), list, "failures")
        ),
        labels={
            current(k): v for k, v in _typed(document.get("labels", {}), dict, "labels").items()
        },
    )


def _typed(value: Any, kind: type, name: str) -> Any:
    if not isinstance(value, kind):
        raise TypeError(f"{name} is {type(value).__name__}, expected {kind.__name__}")
    return value


def check_disjoint(tuning: Tuning, evaluation_seeds: Sequence[int]) -> None:
    """ValueError when evaluation seeds overlap the seeds the constants were tuned on."""
    shared = sorted(set(tuning.tune_seeds) & {int(s) for s in evaluation_seeds})
    if shared:
        raise ValueError(
            f"the tuned constants were tuned on seeds {list(tuning.tune_seeds)}, which overlap "
            f"the evaluation seeds at {shared}; evaluating on tuning seeds biases the regret "
            "downwards. Tune on disjoint seeds (e.g. --tune-seeds 100:105) or evaluate on others"
        )
