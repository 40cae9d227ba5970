"""The outcome of a run: :class:`RunResult` and the JSON views of its metadata.

A result is a frozen value. :meth:`RunResult.same_outcome` compares what a seed
determines (losses, regrets, counters, parameters, metadata) and ignores how the rounds
were played: the timings, the versions and the name of the loop.
"""

from __future__ import annotations

import math
import platform
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import gymnasium as gym
import numpy as np

# Regret exponents of each agent's theorem (R_T = O(T^alpha)); random plays have linear regret.
THEORY_EXPONENTS: dict[str, float] = {
    "bbcg": 3 / 4,
    "fkm": 3 / 4,
    "ofw": 3 / 4,
    "bfw": 4 / 5,
    "ogd": 1 / 2,
    "random": 1.0,
    "fkm2": 1 / 2,
    "bbcg2": 3 / 4,
    "so-bgd": 3 / 4,
    "loo-bbgd": 3 / 4,
    "saha-tewari": 2 / 3,
    "fejer-bgd": 3 / 4,
    "pbgd": 3 / 4,
    "pbgd2": 1 / 2,
    "bandit-newton": 1 / 2,
}


@dataclass(frozen=True, eq=False)
class RunResult:
    """The outcome of one run (one env, one agent, one horizon, one seed).

    Arrays (``checkpoints`` and the four curves) have one entry per checkpoint, a
    prefix length T' in 1..T, sorted, the last equal to T. ``regret[k]`` is
    ``cumulative_loss[k] - comparator_loss[k]``; the true regret lies within
    ``comparator_gap[k]`` above it. ``round_losses`` holds every f_t(y_t) when
    T <= ROUND_LOSSES_LIMIT, else None.

    ``loop`` names the loop that played the rounds ("block", "lean" or "gym" for
    :func:`~bco_gym.engine.runner.run`, "batched-block" or "batched-lean" for
    :func:`~bco_gym.engine.many.run_many`); it is not part of the outcome.

    Times are wall-clock seconds: ``agent_seconds`` inside ``act``/``update`` (or
    ``block_actions``/``update_block``), ``env_seconds`` inside ``env.step`` (which in
    the Gymnasium loop includes the recorder's end-of-episode comparator; in the block
    loop: the feasibility check and the batched loss evaluation),
    ``comparator_seconds`` for the checkpoint comparator, ``wall_seconds`` for the whole
    call. ``cpu_seconds`` is the process CPU time (``time.process_time``: every thread
    of the process, so BBCG's background routine too) spent in the loop that played the
    rounds, i.e. agent plus env with the checkpoint comparator excluded (the Gymnasium
    loop's recorder computes its comparator inside the loop, as for ``env_seconds``);
    unlike the wall-clock seconds it does not count waiting for a core on a loaded
    machine; None for results saved before it existed. ``latency_us`` is the
    distribution of one round's time (agent plus env, the comparator excluded) in µs:
    ``{"p50", "p90", "p99", "max"}``, read from a fixed log-bucket histogram
    (:mod:`~bco_gym.engine.latency`; memory flat in T, quantiles at most 2.2 % above
    the true ones). In a batch of S rows a round's time is the
    batch's divided by S (as the seconds above are shared), so S rows report the same
    distribution; in the block loops the rounds of a slice share its time equally, which
    spreads a block-end routine over the slice: the Gymnasium loop (``fast=False``) times
    each round alone. Empty for results saved before it existed. ``warnings`` lists the
    distinct warnings raised during the run (e.g. a theory parameter capped at tiny T),
    as "Category: message".

    Changing environments (:mod:`bco_gym.losses.intervals`): ``adaptive_regret`` is the
    largest regret over the dyadic intervals and the whole run (the dyadic cover
    {[s, s + 2^k)} and [0, T), each interval against its own best fixed point: never below
    the static regret), ``dynamic_regret`` sum_t f_t(y_t) - sum_t min_K f_t; both exact
    for linear losses, else None with the reason in ``interval_regret["reason"]``.
    ``interval_regret`` holds the maximum per interval length (``lengths``,
    ``max_interval_regret``), the ``worst_interval`` (start, length), the
    ``whole_run_regret`` R([0, T)), and for
    ``linear-switching`` the ``segments`` and the ``switching_regret`` (against the
    best point of each segment). Results saved before these fields read back as None.

    ``agent`` is the agent's label (for people). ``agent_spec`` records where the agent
    came from (``name``, ``import_path``, the ``version`` of its distribution,
    ``source``), what it declares (``feedback``, ``regret_exponent``), its ``identity``
    (import path and keyword arguments, the same for every spelling) and the ``digest``
    of its code: see :class:`~bco_gym.agents.registry.AgentSpec`. ``computed_at`` is
    when the run finished (UTC, ISO 8601; None for results saved before it existed).
    ``loss["digest"]`` identifies the
    loss sequence (:meth:`~bco_gym.losses.base.LossSequence.digest`): results pair
    only when their digests agree.
    """

    env_id: str
    agent: str
    seed: int
    agent_seed: int
    horizon: int
    checkpoints: np.ndarray
    cumulative_loss: np.ndarray
    comparator_loss: np.ndarray
    comparator_gap: np.ndarray
    regret: np.ndarray
    round_losses: np.ndarray | None
    final_regret: float
    final_gap: float
    lmo_calls: int
    projections: int
    regret_bound: float | None
    params: dict[str, Any]
    scale_param: str | None
    constants: str
    env_kwargs: dict[str, Any]
    agent_kwargs: dict[str, Any]
    loss: dict[str, Any]
    problem: dict[str, Any]
    stats: dict[str, Any]
    loop: str
    agent_seconds: float
    env_seconds: float
    comparator_seconds: float
    wall_seconds: float
    versions: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    latency_us: dict[str, float] = field(default_factory=dict)
    adaptive_regret: float | None = None
    dynamic_regret: float | None = None
    interval_regret: dict[str, Any] = field(default_factory=dict)
    agent_spec: dict[str, Any] = field(default_factory=dict)
    cpu_seconds: float | None = None
    computed_at: str | None = None

    ARRAY_FIELDS = (
        "checkpoints",
        "cumulative_loss",
        "comparator_loss",
        "comparator_gap",
        "regret",
        "round_losses",
    )
    TIMING_FIELDS = (
        "agent_seconds",
        "env_seconds",
        "comparator_seconds",
        "wall_seconds",
        "latency_us",
        "cpu_seconds",
    )

    @property
    def rounds_per_second(self) -> float:
        """Rounds played per second of agent + env time."""
        spent = self.agent_seconds + self.env_seconds
        return self.horizon / spent if spent > 0 else math.inf

    @property
    def scale_value(self) -> Any:
        """The value of the agent's free constant (``params[scale_param]``), if any."""
        return self.params.get(self.scale_param) if self.scale_param else None

    def outcome(self) -> dict[str, Any]:
        """Every field but the timings, versions, loop and date: what a seed determines
        exactly. The agent is its identity and code digest (``agent_spec``), not its
        label nor how it was spelled (a name, an import path, a class)."""
        skipped = {*self.TIMING_FIELDS, "versions", "loop", "computed_at"}
        found = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skipped}
        identity = self.agent_spec.get("identity")
        if identity is not None:  # results since identities: the label is for people
            found["agent"] = identity  # the keyword arguments too, written canonically
            del found["agent_kwargs"]
            found["agent_spec"] = {
                key: self.agent_spec.get(key) for key in ("identity", "digest", "feedback")
            }
        return found

    def same_outcome(self, other: RunResult) -> bool:
        """Whether ``other`` holds bit-identical losses, regrets, counters and metadata."""
        return _values_equal(self.outcome(), other.outcome())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RunResult):
            return NotImplemented
        return all(
            _values_equal(getattr(self, f.name), getattr(other, f.name)) for f in fields(self)
        )

    __hash__ = None  # type: ignore[assignment]


def _values_equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and np.array_equal(a, b)
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_values_equal(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(type(a) is type(b) and a == b)


def computed_now() -> str:
    """The present moment, UTC, to the second (``RunResult.computed_at``)."""
    import datetime

    now = datetime.datetime.now(datetime.timezone.utc)
    return now.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def describe_problem(problem: Any) -> dict[str, Any]:
    """The problem as JSON: the set, its geometry, the loss constants and the feedback."""
    convex_set = problem.set
    return {
        "set": repr(convex_set),
        "shape": list(convex_set.shape),
        "dim": int(convex_set.dim),
        "aff_dim": int(convex_set.aff_dim),
        "inner_radius": float(convex_set.inner_radius),
        "outer_radius": float(convex_set.outer_radius),
        "lipschitz": float(problem.lipschitz),
        "bound": float(problem.bound),
        "feedback": problem.feedback,
    }


def scalar_stats(stats: Mapping[str, Any]) -> dict[str, Any]:
    """The scalar entries of an agent's stats (lists such as per-block counts are dropped)."""
    kept = {}
    for key, value in stats.items():
        if isinstance(value, bool | int | float | str | np.integer | np.floating | np.bool_):
            kept[str(key)] = jsonable(value)
    return kept


def jsonable(value: Any) -> Any:
    """``value`` with numpy scalars/arrays and tuples turned into plain JSON types;
    functions and classes as ``"module:qualname"``, anything else as its repr."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if callable(value) and hasattr(value, "__qualname__"):
        # a function or class parameter: its import path, not a repr with a memory address
        # that would differ between two runs of the same agent
        return f"{getattr(value, '__module__', None) or '?'}:{value.__qualname__}"
    return repr(value)


def versions() -> dict[str, str]:
    """Versions of bco_gym, numpy, scipy, gymnasium and Python."""
    import scipy

    import bco_gym

    return {
        "bco_gym": bco_gym.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "gymnasium": gym.__version__,
        "python": platform.python_version(),
    }
