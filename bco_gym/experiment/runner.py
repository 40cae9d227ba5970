"""One run: an agent against an environment for one horizon and one seed.

:func:`run` plays the Gymnasium loop of DESIGN.md's public contract through a
:class:`~bco_gym.wrappers.RegretRecorder` (the reference semantics),

    obs, info = env.reset(seed=seed); agent.reset(seed=agent_seed)
    repeat T times: action = agent.act(obs); obs, ... = env.step(action); agent.update(loss, info)

then asks the loss sequence for the offline comparator once, at every checkpoint
together, and returns a typed :class:`RunResult`.

Seeding. The adversary's stream is the env's ``np_random`` seeded by
``env.reset(seed=seed)`` (numpy's ``SeedSequence(seed)``). The agent gets
:func:`agent_seed_for` (seed): the first 64-bit word of ``SeedSequence([seed, 1])``, a
different entropy pool, so the two streams are independent. (Seeding both with
``seed`` itself would hand the agent the very bit stream the env uses.)

What is stored. The regret at the checkpoints (default: :func:`default_checkpoints`,
at most ``DEFAULT_CHECKPOINT_COUNT`` log-spaced prefix lengths, always ending at T),
with the comparator's certified gap there; the cumulative loss at each checkpoint,
each segment between checkpoints summed exactly (:func:`math.fsum`) and the segment
sums added with ``fsum`` again (the final sum is the correctly rounded sum of all
rounds, as the RegretRecorder's); and the per-round losses themselves while
T <= ``ROUND_LOSSES_LIMIT`` (above it only the checkpoint curve is kept, so a result
stays small whatever T is).
"""

from __future__ import annotations

import dataclasses
import math
import platform
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import gymnasium as gym
import numpy as np

ROUND_LOSSES_LIMIT = 100_000
DEFAULT_CHECKPOINT_COUNT = 40
AGENT_STREAM = 1
CONSTANTS_LABELS = ("theory", "tuned", "custom")

# Regret exponents of each agent's theorem (R_T = O(T^alpha)); random plays have linear regret.
THEORY_EXPONENTS: dict[str, float] = {
    "bbcg": 3 / 4,
    "fkm": 3 / 4,
    "ofw": 3 / 4,
    "bfw": 4 / 5,
    "ogd": 1 / 2,
    "random": 1.0,
}


@dataclass(frozen=True, eq=False)
class RunResult:
    """The outcome of one run (one env, one agent, one horizon, one seed).

    Arrays (``checkpoints`` and the four curves) have one entry per checkpoint, a
    prefix length T' in 1..T, sorted, the last equal to T. ``regret[k]`` is
    ``cumulative_loss[k] - comparator_loss[k]``; the true regret lies within
    ``comparator_gap[k]`` above it. ``round_losses`` holds every f_t(y_t) when
    T <= ROUND_LOSSES_LIMIT, else None.

    Times are wall-clock seconds: ``agent_seconds`` inside ``act``/``update``,
    ``env_seconds`` inside ``env.step`` (which includes the recorder's end-of-episode
    comparator), ``comparator_seconds`` for the checkpoint comparator, ``wall_seconds``
    for the whole call. ``warnings`` lists the distinct warnings raised during the run
    (e.g. a theory parameter capped at tiny T), as "Category: message".
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

    ARRAY_FIELDS = (
        "checkpoints",
        "cumulative_loss",
        "comparator_loss",
        "comparator_gap",
        "regret",
        "round_losses",
    )
    TIMING_FIELDS = ("agent_seconds", "env_seconds", "comparator_seconds", "wall_seconds")

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
        """Every field but the timings and versions: what a seed determines exactly."""
        skipped = {*self.TIMING_FIELDS, "versions"}
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skipped}

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


# -- the run --------------------------------------------------------------------------------------
def run(
    env_id_or_env: str | gym.Env,
    agent_name_or_agent: Any,
    *,
    horizon: int | None = None,
    seed: int = 0,
    checkpoints: Sequence[int] | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    agent_kwargs: Mapping[str, Any] | None = None,
    constants: str | None = None,
    progress: bool | None = False,
    fast: bool | None = None,
) -> RunResult:
    """Play one episode of ``agent`` on ``env`` and measure its regret.

    Args:
        env_id_or_env: a registered id (made with ``gym.make(id, horizon=horizon,
            **env_kwargs)``) or an env (wrapped in a RegretRecorder unless it has one).
        agent_name_or_agent: a ``make_agent`` name (built with ``agent_kwargs`` as
            overrides) or an Agent already built for this env's problem.
        horizon: T; default: the env's own horizon. Must match a given env's.
        seed: the env's seed (a non-negative int); the agent's is :func:`agent_seed_for`.
        checkpoints: prefix lengths where the regret is reported (T is always added);
            default :func:`default_checkpoints` (T).
        env_kwargs: extra ``gym.make`` keyword arguments (only with an id).
        agent_kwargs: hyperparameter overrides for ``make_agent`` (only with a name).
        constants: label saying where the agent's constants come from: "theory",
            "tuned" or "custom"; default "theory" without overrides, else "custom".
        progress: show a tqdm bar over rounds (None: only on a terminal and T >= 10^5).
        fast: reserved for the vectorised fast path (issue 7). None picks the fastest
            available loop, False forces the Gymnasium loop, True requires the fast path.

    Returns:
        A :class:`RunResult`.
    """
    seed = _check_seed(seed)
    wall_start = time.perf_counter()
    distinct: dict[str, tuple[Warning | str, type[Warning]]] = {}

    def collect(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
        distinct.setdefault(f"{category.__name__}: {message}", (message, category))

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = collect
        result = _run_recorded(
            env_id_or_env,
            agent_name_or_agent,
            horizon=horizon,
            seed=seed,
            checkpoints=checkpoints,
            env_kwargs=env_kwargs,
            agent_kwargs=agent_kwargs,
            constants=constants,
            progress=progress,
            fast=fast,
        )
    for message, category in distinct.values():  # shown to the caller under its filters
        warnings.warn(message, category, stacklevel=2)
    return dataclasses.replace(
        result, warnings=list(distinct), wall_seconds=time.perf_counter() - wall_start
    )


def _run_recorded(
    env_id_or_env: str | gym.Env,
    agent_name_or_agent: Any,
    *,
    horizon: int | None,
    seed: int,
    checkpoints: Sequence[int] | None,
    env_kwargs: Mapping[str, Any] | None,
    agent_kwargs: Mapping[str, Any] | None,
    constants: str | None,
    progress: bool | None,
    fast: bool | None,
) -> RunResult:
    """The body of :func:`run` (which records the warnings raised here)."""
    env, env_id, owned = _prepare_env(env_id_or_env, horizon, env_kwargs)
    try:
        agent, agent_name = _prepare_agent(agent_name_or_agent, env, agent_kwargs)
        problem = env.unwrapped.problem
        points = resolve_checkpoints(checkpoints, problem.horizon)
        label = _constants_label(constants, agent_name_or_agent, agent_kwargs)
        play, loop = _select_loop(agent, fast)
        agent_seed = agent_seed_for(seed)
        observation, _ = env.reset(seed=seed)
        agent.reset(seed=agent_seed)
        played = play(env, agent, observation, progress=_want_progress(progress, problem.horizon))
        comparator_start = time.perf_counter()
        comparators = env.unwrapped.losses.comparator(points)
        comparator_seconds = time.perf_counter() - comparator_start
        curve = _regret_curve(played.round_losses, points, comparators)
        return RunResult(
            env_id=env_id,
            agent=agent_name,
            seed=seed,
            agent_seed=agent_seed,
            horizon=problem.horizon,
            **curve,
            round_losses=(played.round_losses if problem.horizon <= ROUND_LOSSES_LIMIT else None),
            lmo_calls=int(agent.stats.get("lmo_calls", 0)),
            projections=int(agent.stats.get("projections", 0)),
            regret_bound=_optional_float(agent.regret_bound()),
            params=jsonable(dict(agent.params)),
            scale_param=getattr(agent, "SCALE_PARAM", None),
            constants=label,
            env_kwargs=jsonable(dict(env_kwargs or {})),
            agent_kwargs=jsonable(dict(agent_kwargs or {})),
            loss=jsonable(env.unwrapped.losses.describe()),
            problem=describe_problem(problem),
            stats=scalar_stats(agent.stats),
            loop=loop,
            agent_seconds=played.agent_seconds,
            env_seconds=played.env_seconds,
            comparator_seconds=comparator_seconds,
            wall_seconds=0.0,
            versions=versions(),
        )
    finally:
        if owned:
            env.close()


@dataclass
class _Played:
    """What a loop hands back: the per-round losses and where the time went."""

    round_losses: np.ndarray
    agent_seconds: float
    env_seconds: float


def _play_gym_loop(
    env: gym.Env, agent: Any, observation: Any, *, progress: bool = False
) -> _Played:
    """The reference loop: act / step / update through the RegretRecorder, T rounds.

    ``env`` and ``agent`` are freshly reset; ``observation`` is what reset returned.
    Timing takes three ``perf_counter`` reads per round (the end of one round is the
    start of the next).
    """
    from bco_gym.wrappers import RegretRecorder

    recorder = find_wrapper(env, RegretRecorder)
    horizon = env.unwrapped.problem.horizon
    agent_seconds = env_seconds = 0.0
    bar = _progress_bar(horizon, progress)
    step = max(1, horizon // 200)
    played = 0
    tick = time.perf_counter()
    while played < horizon:
        stop = min(horizon, played + step)
        for _ in range(stop - played):
            action = agent.act(observation)
            acted = time.perf_counter()
            observation, _, _, _, info = env.step(action)
            stepped = time.perf_counter()
            agent.update(info["loss"], info)
            done = time.perf_counter()
            agent_seconds += (acted - tick) + (done - stepped)
            env_seconds += stepped - acted
            tick = done
        if bar is not None:
            bar.update(stop - played)
        played = stop
    if bar is not None:
        bar.close()
    return _Played(np.array(recorder.round_losses, dtype=np.float64), agent_seconds, env_seconds)


def _select_loop(agent: Any, fast: bool | None) -> tuple[Callable[..., _Played], str]:
    """The loop to play: (function, name). The fast path of issue 7 plugs in here.

    A loop is called as ``loop(env, agent, observation, progress=...)`` on a freshly
    reset env (wrapped in a RegretRecorder) and agent, plays all T rounds and returns
    a :class:`_Played`; the runner does the rest (comparator, curve, metadata).
    """
    if fast:
        raise NotImplementedError(
            "fast=True asks for the vectorised fast path, which is not available yet; "
            "use fast=None (auto) or fast=False (the Gymnasium loop)"
        )
    return _play_gym_loop, "gym"


# -- preparing env and agent ----------------------------------------------------------------------
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
    agent_name_or_agent: Any, env: gym.Env, agent_kwargs: Mapping[str, Any] | None
) -> tuple[Any, str]:
    """(agent for env's problem, its name)."""
    from bco_gym.agents import make_agent
    from bco_gym.agents.base import Agent

    if isinstance(agent_name_or_agent, str):
        agent = make_agent(agent_name_or_agent, env, **dict(agent_kwargs or {}))
        return agent, agent_name_or_agent
    if not isinstance(agent_name_or_agent, Agent):
        raise TypeError(
            "run() needs an agent name (str) or a bco_gym Agent, got "
            f"{type(agent_name_or_agent).__name__}"
        )
    if agent_kwargs:
        raise ValueError("agent_kwargs apply only when run() builds the agent from a name")
    env_horizon = env.unwrapped.problem.horizon
    if agent_name_or_agent.horizon != env_horizon:
        raise ValueError(
            f"the agent was built for horizon {agent_name_or_agent.horizon}, "
            f"the env has {env_horizon}"
        )
    return agent_name_or_agent, agent_name_or_agent.name


def _constants_label(
    constants: str | None, agent_name_or_agent: Any, agent_kwargs: Mapping[str, Any] | None
) -> str:
    if constants is None:
        return "theory" if isinstance(agent_name_or_agent, str) and not agent_kwargs else "custom"
    if constants not in CONSTANTS_LABELS:
        raise ValueError(f"constants={constants!r}; allowed: {', '.join(CONSTANTS_LABELS)}")
    return constants


def find_wrapper(env: gym.Env, kind: type) -> Any:
    """The outermost wrapper of type ``kind`` around ``env`` (or None)."""
    current = env
    while True:
        if isinstance(current, kind):
            return current
        if not isinstance(current, gym.Wrapper):
            return None
        current = current.env


# -- checkpoints and the regret curve -------------------------------------------------------------
def default_checkpoints(horizon: int, count: int = DEFAULT_CHECKPOINT_COUNT) -> list[int]:
    """At most ``count`` log-spaced prefix lengths in [1, T], rounded, T included."""
    horizon = check_horizon(horizon)
    raw = np.geomspace(1, horizon, num=count)
    return sorted({*np.rint(raw).astype(int).tolist(), horizon})


def resolve_checkpoints(checkpoints: Sequence[int] | None, horizon: int) -> list[int]:
    """Sorted unique prefix lengths in [1, T] with T added; ValueError naming a bad one."""
    if checkpoints is None:
        return default_checkpoints(horizon)
    values = set()
    for value in checkpoints:
        if isinstance(value, bool) or int(value) != value or not 1 <= value <= horizon:
            raise ValueError(f"checkpoint {value!r} must be an integer in [1, T={horizon}]")
        values.add(int(value))
    return sorted(values | {horizon})


def _regret_curve(
    round_losses: np.ndarray, points: list[int], comparators: Sequence[Any]
) -> dict[str, Any]:
    """Cumulative loss, comparator value and gap, and regret at each checkpoint."""
    if [c.horizon for c in comparators] != points:
        raise RuntimeError(
            f"the comparator answered for prefixes {[c.horizon for c in comparators]}, "
            f"asked {points}"
        )
    from bco_gym.wrappers.regret import exact_sum

    segment_sums, start = [], 0
    for stop in points:
        segment_sums.append(exact_sum(round_losses[start:stop]))
        start = stop
    cumulative = np.array([math.fsum(segment_sums[: k + 1]) for k in range(len(points))])
    cumulative[-1] = exact_sum(round_losses)
    comparator_loss = np.array([float(c.value) for c in comparators])
    gap = np.array([float(c.gap) for c in comparators])
    regret = cumulative - comparator_loss
    return {
        "checkpoints": np.array(points, dtype=np.int64),
        "cumulative_loss": cumulative,
        "comparator_loss": comparator_loss,
        "comparator_gap": gap,
        "regret": regret,
        "final_regret": float(regret[-1]),
        "final_gap": float(gap[-1]),
    }


# -- small helpers --------------------------------------------------------------------------------
def agent_seed_for(seed: int) -> int:
    """The agent's seed for env seed ``seed``: word 0 of SeedSequence([seed, 1]) (uint64)."""
    state = np.random.SeedSequence([_check_seed(seed), AGENT_STREAM]).generate_state(1, np.uint64)
    return int(state[0])


def check_env_id(env_id: str) -> str:
    """``env_id`` if gymnasium knows it; ValueError listing bco_gym's ids otherwise."""
    from bco_gym.envs import ENV_IDS

    name = env_id.split(":", 1)[-1]
    if env_id not in gym.registry and name not in gym.registry:
        raise ValueError(f"unknown env id {env_id!r}; valid ids: {', '.join(ENV_IDS)}")
    return env_id


def check_horizon(horizon: Any) -> int:
    if isinstance(horizon, bool) or not isinstance(horizon, int | np.integer) or horizon < 1:
        raise ValueError(f"horizon={horizon!r} must be a positive integer")
    return int(horizon)


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed={seed!r} must be a non-negative integer")
    return int(seed)


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _want_progress(progress: bool | None, horizon: int) -> bool:
    if progress is None:
        import sys

        return horizon >= 100_000 and sys.stderr.isatty()
    return bool(progress)


def _progress_bar(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="round", unit_scale=True, leave=False, desc="rounds")


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
    """``value`` with numpy scalars/arrays and tuples turned into plain JSON types."""
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
