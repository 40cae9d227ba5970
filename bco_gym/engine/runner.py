"""One run: an agent against an environment for one horizon and one seed.

:func:`run` resets env and agent, plays T rounds, then asks the loss sequence for the
offline comparator once, at every checkpoint together, and returns a typed
:class:`~bco_gym.engine.result.RunResult`. The rounds are played by one of three
loops with the same outcome (``RunResult.loop`` says which ran; :mod:`.loops`):

* ``"gym"`` -- the reference semantics, the Gymnasium loop of DESIGN.md's public
  contract through a :class:`~bco_gym.wrappers.RegretRecorder`:

      obs, info = env.reset(seed=seed); agent.reset(seed=agent_seed)
      repeat T times: action = agent.act(obs); obs, ... = env.step(action)
                      agent.update(info["loss"], entitled_info(info, agent.feedback))

  where the agent's ``update`` gets only what its feedback entitles it to
  (:mod:`.feedback`: the loss and ``t``; the gradient for a full-information agent; both
  losses for a two-point agent), not the regret and comparator of the last ``info``;

* ``"block"`` -- agents whose plays within a block do not depend on that block's
  feedback (``agent.supports_blocks``: BBCG, BBCG2, random): whole blocks of plays (of
  pairs for two-point feedback), checked and evaluated vectorised;
* ``"lean"`` -- every other agent: round by round, computing what ``env.step``
  computes (feasibility, projection, loss, gradient) without Gymnasium's per-round API.

The block and lean loops are the batched loops of :func:`~bco_gym.engine.many.run_many`
played by a batch of one (the agent seen through :class:`~.rows.RowAgents`), so one run
and many runs are the same code. They do not step the env: afterwards
``env.unwrapped.round`` is 0 and the recorder holds no losses.

``fast=None`` (default) picks ``"block"`` where the agent supports it (and the env
raises on infeasible plays) and ``"lean"`` otherwise; both need an env whose only
wrappers are the RegretRecorder and those ``gym.make`` adds (order enforcing, the
passive checker), whose ``step`` is BanditConvexEnv's own and which does not render --
otherwise the Gymnasium loop runs. ``fast=False`` forces the Gymnasium loop;
``fast=True`` requires a runner loop (ValueError when only the Gymnasium loop applies).

Seeding. The adversary's stream is the env's ``np_random`` seeded by
``env.reset(seed=seed)`` (numpy's ``SeedSequence(seed)``). The agent gets
:func:`agent_seed_for` (seed): the first 64-bit word of ``SeedSequence([seed, 1])``, a
different entropy pool, so the two streams are independent. (Seeding both with
``seed`` itself would hand the agent the very bit stream the env uses.) A seed of 2^64
or more (a fresh seed of ``bco-gym bench --fresh-seeds``) gives the agent a SHA-256
digest of it instead, from which the env's seed cannot be recovered.

What is stored. The regret at the checkpoints (default: :func:`default_checkpoints`,
at most ``DEFAULT_CHECKPOINT_COUNT`` log-spaced prefix lengths, always ending at T),
with the comparator's certified gap there; the cumulative loss at each checkpoint,
each segment summed exactly and the segment sums added exactly (the final sum is the
correctly rounded sum of all rounds, as the RegretRecorder's); and the per-round losses
themselves while T <= ``ROUND_LOSSES_LIMIT`` (:mod:`.tally`).

Constants. ``RunResult.constants`` says where the agent's constants come from:
"theory" (the theorem's defaults), "default" (an agent without a free constant, such as
random or the sb3 agents: ``SCALE_PARAM is None``), "tuned" or "custom".
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import gymnasium as gym

from bco_gym.engine.isolation import SingleIsolated, played_elsewhere
from bco_gym.engine.loops import (
    Stage,
    play_block,
    play_gym,
    play_lean,
)
from bco_gym.engine.memory import check_planned_memory, check_run_memory
from bco_gym.engine.options import RunOptions
from bco_gym.engine.preparation import (
    _optional_float,
    _prepare_agent,
    _prepare_env,
    agent_seed_for,
    check_isolate,
    check_seed,
    constants_label,
    named_failure,
    prepare_isolated,
    want_progress,
)
from bco_gym.engine.result import (
    RunResult,
    computed_now,
    describe_problem,
    jsonable,
    scalar_stats,
    versions,
)
from bco_gym.engine.rows import RowAgents
from bco_gym.engine.tally import (
    LossTally,
    regret_curve,
    resolve_checkpoints,
)
from bco_gym.envs.feasibility import Feasibility
from bco_gym.losses.batch import LossBatch

LOOPS = ("block", "lean", "gym", "isolated", "isolated-gym")
__all__ = [
    "LOOPS",
    "PlayedRows",
    "recording_warnings",
    "row_result",
    "row_results",
    "run",
    "single_stage",
]
Result = TypeVar("Result")


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
    allow_large: bool = False,
    isolate: bool = False,
) -> RunResult:
    """Play one episode of ``agent`` on ``env`` and measure its regret.

    Args:
        env_id_or_env: a registered id (made with ``gym.make(id, horizon=horizon,
            **env_kwargs)``) or an env (wrapped in a RegretRecorder unless it has one).
        agent_name_or_agent: anything :func:`~bco_gym.agents.resolve_agent` takes (a
            built-in, registered or entry-point name, an import path
            ``"package.module:ClassName"``, an Agent subclass or factory), built with
            ``agent_kwargs`` as overrides; or an Agent already built for this env's problem.
        horizon: T; default: the env's own horizon. Must match a given env's.
        seed: the env's seed (a non-negative int); the agent's is :func:`agent_seed_for`.
        checkpoints: prefix lengths where the regret is reported (T is always added);
            default :func:`default_checkpoints` (T).
        env_kwargs: extra ``gym.make`` keyword arguments (only with an id).
        agent_kwargs: hyperparameter overrides for ``make_agent`` (only with a name).
        constants: label saying where the agent's constants come from: "theory",
            "default", "tuned" or "custom"; default "theory" without overrides ("default"
            for an agent without a free constant, which "theory" also becomes), else
            "custom".
        progress: show a tqdm bar over rounds (None: only on a terminal and T >= 10^5).
        fast: None (default) plays the fastest loop that applies: "block" for agents
            with ``supports_blocks``, else "lean"; False forces the Gymnasium loop; True
            requires a runner loop ("block" or "lean") and raises ValueError when only
            the Gymnasium loop applies (an env with other wrappers, its own ``step`` or a
            render mode). See the module docstring; every loop gives the same outcome.
        allow_large: False (default) refuses, before the agent is built, a run whose
            estimated memory exceeds the machine's (:mod:`~bco_gym.engine.memory`); True
            runs it anyway.
        isolate: True builds and plays the agent in its own process, which receives only
            what its feedback entitles it to and sends back only its plays; its oracle
            calls are counted by its set (:mod:`~bco_gym.engine.isolation`). The agent
            must be given by name, import path, class or factory (importable by path),
            not built. The outcome equals the in-process run's for an honest agent;
            ``RunResult.loop`` is "isolated" ("isolated-gym" with ``fast=False``).

    Returns:
        A :class:`RunResult`.

    Raises:
        ValueError: among others, a run too large for the machine's memory (naming the
            estimate and the limit) unless ``allow_large=True``.
    """
    seed = check_seed(seed)
    options = RunOptions(
        horizon=horizon,
        checkpoints=checkpoints,
        env_kwargs=env_kwargs,
        agent_kwargs=agent_kwargs,
        constants=constants,
        progress=progress,
        fast=fast,
        allow_large=allow_large,
        isolate=check_isolate(isolate),
    )
    wall_start = time.perf_counter()
    result, seen = recording_warnings(
        lambda: _run_recorded(env_id_or_env, agent_name_or_agent, seed, options)
    )
    return dataclasses.replace(result, warnings=seen, wall_seconds=time.perf_counter() - wall_start)


def recording_warnings(body: Callable[[], Result]) -> tuple[Result, list[str]]:
    """``body()`` and the distinct warnings it raised ("Category: message"), each shown
    once to the caller under its own filters afterwards."""
    distinct: dict[str, tuple[Warning | str, type[Warning]]] = {}

    def collect(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
        distinct.setdefault(f"{category.__name__}: {message}", (message, category))

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = collect
        result = body()
    for message, category in distinct.values():
        warnings.warn(message, category, stacklevel=3)
    return result, list(distinct)


def _run_recorded(
    env_id_or_env: str | gym.Env, agent_name_or_agent: Any, seed: int, options: RunOptions
) -> RunResult:
    """The body of :func:`run` (which records the warnings raised here)."""
    horizon, checkpoints = options.horizon, options.checkpoints
    env_kwargs, agent_kwargs = options.env_kwargs, options.agent_kwargs
    allow_large, isolate = options.allow_large, options.isolate
    if isinstance(env_id_or_env, str):
        planned = {**dict(env_kwargs or {}), **({} if horizon is None else {"horizon": horizon})}
        check_planned_memory(env_id_or_env, planned, 1, allow_large)
    env, env_id, owned = _prepare_env(env_id_or_env, horizon, env_kwargs)
    agent = None
    try:
        check_run_memory(env.unwrapped, 1, allow_large)
        base = env.unwrapped
        if isolate:
            agent, spec = prepare_isolated(agent_name_or_agent, base.problem, agent_kwargs, [seed])
        else:
            agent, spec = _prepare_agent(agent_name_or_agent, env, agent_kwargs)
        points = resolve_checkpoints(checkpoints, base.problem.horizon)
        built_here = agent is not agent_name_or_agent
        label = constants_label(options.constants, spec, built_here, agent_kwargs)
        loop = _select_loop(env, agent, options.fast, isolate)
        agent_seed = agent_seed_for(seed)
        observation, _ = env.reset(seed=seed)
        show = want_progress(options.progress, base.problem.horizon)
        try:
            agent.reset(seed=[agent_seed] if isolate else agent_seed)
            cpu_start = time.process_time()
            rows = agent if isolate else RowAgents([agent])
            if loop in ("gym", "isolated-gym"):
                player = SingleIsolated(agent) if isolate else agent
                played = play_gym(env, player, observation, checkpoints=points, progress=show)
            else:
                play = play_block if loop == "block" else play_lean
                played = play(single_stage(base), rows, checkpoints=points, progress=show)
        except Exception as error:  # name the agent, the seed and the round
            named = named_failure(error, spec.name, [seed], agent)
            if named is None:
                raise
            raise named from error
        cpu_seconds = time.process_time() - cpu_start + played_elsewhere(agent)
        played_rows = PlayedRows(played, rows, points, [seed], [base.losses], cpu_seconds)
        return row_results(played_rows, env_id, spec, label, options, base.problem, loop)[0]
    finally:
        if isolate and agent is not None:
            agent.close()
        if owned:
            env.close()


@dataclass(frozen=True)
class PlayedRows:
    """What a batch of runs (one run: a batch of one) played: the loop's record, the rows'
    agent (batched, or :class:`~.rows.RowAgents`), the checkpoints, each row's seed and
    loss sequence, and the CPU seconds the batch took."""

    played: Any
    rows: Any
    points: list[int]
    seeds: list[int]
    sequences: Sequence[Any]
    cpu_seconds: float


def row_results(
    batch: PlayedRows,
    env_id: str,
    spec: Any,
    label: str,
    options: RunOptions,
    problem: Any,
    loop: str,
) -> list[RunResult]:
    """One :class:`RunResult` per row of a played batch, by :func:`row_result`; the
    seconds of the batch are shared equally among its rows."""
    count = len(batch.seeds)
    played = batch.played
    shares = (played.agent_seconds / count, played.env_seconds / count)
    latency_us = played.latency.summary()
    results = []
    for row, (seed, sequence) in enumerate(zip(batch.seeds, batch.sequences, strict=True)):
        comparator_start = time.perf_counter()
        comparators = played.comparators[row] if played.comparators else None
        if comparators is None:
            comparators = sequence.comparator(batch.points)
        comparator_seconds = time.perf_counter() - comparator_start
        results.append(
            row_result(
                played.tallies[row],
                batch.points,
                comparators,
                env_id=env_id,
                spec=spec,
                seed=seed,
                stats=batch.rows.row_stats(row),
                agent_object=batch.rows,
                constants=label,
                env_kwargs=options.env_kwargs,
                agent_kwargs=options.agent_kwargs,
                losses=sequence,
                problem=problem,
                loop=loop,
                seconds=(*shares, comparator_seconds),
                latency_us=latency_us,
                cpu_seconds=batch.cpu_seconds / count,
            )
        )
    return results


def row_result(
    tally: LossTally,
    points: list[int],
    comparators: Sequence[Any],
    *,
    env_id: str,
    spec: Any,
    seed: int,
    stats: Mapping[str, Any],
    agent_object: Any,
    constants: str,
    env_kwargs: Mapping[str, Any] | None,
    agent_kwargs: Mapping[str, Any] | None,
    losses: Any,
    problem: Any,
    loop: str,
    seconds: tuple[float, float, float],
    latency_us: dict[str, float] | None = None,
    cpu_seconds: float | None = None,
) -> RunResult:
    """The result of one run (one row of a batch) from its tally and comparators.

    Everything the result says about the agent (name, scale parameter, import path,
    version, identity and code digest) comes from ``spec``, its AgentSpec, on every
    path; its ``agent_kwargs`` are the variant's bound keywords under ``agent_kwargs``.
    """
    agent_seconds, env_seconds, comparator_seconds = seconds
    bound = {**dict(getattr(spec, "kwargs", ())), **dict(agent_kwargs or {})}
    described = {**spec.describe(), "identity": spec.identity(agent_kwargs)}
    return RunResult(
        env_id=env_id,
        agent=spec.name,
        seed=seed,
        agent_seed=agent_seed_for(seed),
        horizon=problem.horizon,
        **regret_curve(tally, points, comparators),
        **(tally.changing.fields() if tally.changing is not None else {}),
        round_losses=tally.round_losses(),
        lmo_calls=int(stats.get("lmo_calls", 0)),
        projections=int(stats.get("projections", 0)),
        regret_bound=_optional_float(agent_object.regret_bound()),
        params=jsonable(dict(agent_object.params)),
        scale_param=spec.scale_param,
        constants=constants,
        env_kwargs=jsonable(dict(env_kwargs or {})),
        agent_kwargs=jsonable(bound),
        loss=jsonable({**losses.describe(), "digest": losses.digest()}),
        problem=describe_problem(problem),
        stats=scalar_stats(stats),
        loop=loop,
        agent_seconds=agent_seconds,
        env_seconds=env_seconds,
        comparator_seconds=comparator_seconds,
        wall_seconds=0.0,
        versions=versions(),
        latency_us=dict(latency_us or {}),
        agent_spec=jsonable(described),
        computed_at=computed_now(),
        cpu_seconds=cpu_seconds,
    )


def single_stage(base: Any) -> Stage:
    """The batch of one that plays ``base`` (a reset BanditConvexEnv) in the runner's loops."""
    return Stage(
        losses=LossBatch([base.losses]),
        feasibility=Feasibility(
            base.set, base.atol, project=base.on_infeasible == "project", name_rows=False
        ),
        horizon=base.problem.horizon,
        full_feedback=base.problem.feedback == "full",
        two_point=base.problem.feedback == "two-point",
    )


def _select_loop(env: gym.Env, agent: Any, fast: bool | None, isolate: bool = False) -> str:
    """The loop to play ("block", "lean" or "gym"; for an isolated agent "isolated", the
    lean loop's rounds, or "isolated-gym"): see the module docstring."""
    gym_loop = "isolated-gym" if isolate else "gym"
    if fast is False:
        return gym_loop
    obstacle = wrapper_obstacle(env)
    if obstacle is not None:
        if fast:
            raise ValueError(
                f"fast=True needs the runner's own loop, but {obstacle}; use fast=None "
                "(falls back to the Gymnasium loop) or fast=False"
            )
        return gym_loop
    if isolate:
        return "isolated"
    block = getattr(agent, "supports_blocks", False) and env.unwrapped.on_infeasible == "raise"
    return "block" if block else "lean"


def wrapper_obstacle(env: gym.Env) -> str | None:
    """Why the runner may not bypass ``env``'s step (None when it may)."""
    from gymnasium.wrappers.common import OrderEnforcing, PassiveEnvChecker

    from bco_gym.envs import BanditConvexEnv
    from bco_gym.wrappers import RegretRecorder

    transparent = (RegretRecorder, OrderEnforcing, PassiveEnvChecker)
    current = env
    while isinstance(current, gym.Wrapper):
        if type(current) not in transparent:
            return f"the env is wrapped in {type(current).__name__}, whose step must run"
        current = current.env
    if not isinstance(current, BanditConvexEnv):
        return f"{type(current).__name__} is not a BanditConvexEnv"
    if type(current).step is not BanditConvexEnv.step:
        return f"{type(current).__name__} overrides step, which must run"
    if current.render_mode is not None:
        return f"the env renders (render_mode={current.render_mode!r}), which needs its step"
    return None
