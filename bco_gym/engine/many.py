"""Many runs at once: S seeds of one env, agent and horizon played in lockstep.

:func:`run_many` plays S runs together without Gymnasium's per-round API: a
:class:`~bco_gym.envs.BanditConvexVectorEnv` provides the S loss sequences and the
feasibility rules, a batched agent (``make_agent(name, vec_env, batch_size=S)``) plays
(S, *shape) actions, and the runner's batched loops (:mod:`.loops`) check and evaluate
them in a few NumPy calls per round (per block for block agents). Each row keeps its own
loss tally and comparator, so result i is ``same_outcome`` as ``run(env_id, agent,
seed=seeds[i])``: the same losses, regret, counters, parameters and metadata, bit for
bit (tests/experiment/test_run_many.py); only the timings and ``loop`` differ.

Seeding. Row i's env is seeded like :func:`~bco_gym.engine.runner.run`'s env with
``seeds[i]`` and its agent with ``agent_seed_for(seeds[i])``.

An agent without a batched implementation (the sb3 agents, an agent a user wrote) is
played as S single agents (:class:`~.rows.RowAgents`): still exact, at S Python calls
per round.

Timings. Every row reports the batch's agent and env time divided by S (its share),
and its own comparator time.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym

from bco_gym.engine.isolation import played_elsewhere
from bco_gym.engine.loops import Stage, play_block, play_lean
from bco_gym.engine.memory import NO_OVERRIDE, check_planned_memory, check_run_memory
from bco_gym.engine.options import RunOptions, cell_options
from bco_gym.engine.preparation import (
    agent_seed_for,
    check_env_id,
    check_isolate,
    check_seed,
    constants_label,
    named_failure,
    prepare_isolated,
    resolve_spec,
    want_progress,
)
from bco_gym.engine.result import RunResult
from bco_gym.engine.rows import RowAgents
from bco_gym.engine.runner import PlayedRows, recording_warnings, row_results, run
from bco_gym.engine.tally import check_horizon, resolve_checkpoints

BATCHED_LOOPS = ("batched-block", "batched-lean", "batched-isolated")
#: Memory a batch of runs may hold in its per-row buffers (see :func:`batch_size_for`).
BATCH_BUDGET_BYTES = 256 * 2**20
#: The most seeds :func:`batch_size_for` puts in one batch when none is asked for.
MAX_AUTOMATIC_BATCH_SIZE = 64


def run_many(
    env_id_or_env: str | Any,
    agent: Any,
    seeds: Sequence[int],
    *,
    horizon: int | None = None,
    checkpoints: Sequence[int] | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    agent_kwargs: Mapping[str, Any] | None = None,
    constants: str | None = None,
    progress: bool | None = False,
    fast: bool | None = None,
    allow_large: bool = False,
    isolate: bool = False,
) -> list[RunResult]:
    """Play one run per seed, all in lockstep; result i as ``run(..., seed=seeds[i])``.

    Args:
        env_id_or_env: a registered id (the vector env is made with ``gym.make_vec(id,
            num_envs=len(seeds), vectorization_mode="vector_entry_point", horizon=horizon,
            **env_kwargs)``), a :class:`~bco_gym.envs.BanditConvexEnv` (a user's own, or one
            from ``gym.make`` with no wrapper whose ``step`` must run; vectorised here into
            ``len(seeds)`` copies, row i as ``run(env, ..., seed=seeds[i])``), or a
            :class:`~bco_gym.envs.BanditConvexVectorEnv` with ``num_envs == len(seeds)``.
        agent: anything :func:`~bco_gym.agents.resolve_agent` takes (a name, import path,
            Agent subclass or factory; built with ``agent_kwargs``: batched when it has a
            batched implementation, else one single agent per seed), or a batched agent
            built for this problem with ``batch_size == len(seeds)``.
        seeds: one non-negative int per run (repeats allowed).
        horizon, checkpoints, env_kwargs, agent_kwargs, constants, progress: as for
            :func:`~bco_gym.engine.runner.run`.
        fast: None or True plays the batched loops ("batched-block" for agents with
            ``supports_blocks`` on an env that raises on infeasible plays, else
            "batched-lean"); False plays each seed through ``run(..., fast=False)``, the
            Gymnasium reference loop (an id only).
        allow_large: False (default) refuses, before the agent is built, a batch whose
            estimated memory exceeds the machine's (ValueError naming the estimate;
            :mod:`~bco_gym.engine.memory`); True runs it anyway.
        isolate: True plays the agents (one per seed) in one process of their own, one
            message per round for all the seeds (:mod:`~bco_gym.engine.isolation`); as for
            :func:`~bco_gym.engine.runner.run`. ``RunResult.loop`` is "batched-isolated".

    Returns:
        One :class:`~bco_gym.engine.result.RunResult` per seed, in order.
    """
    seeds = _check_seeds(seeds)
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
    if fast is False:
        return _reference_runs(env_id_or_env, agent, seeds, options)
    wall_start = time.perf_counter()
    results, seen = recording_warnings(lambda: _run_batch(env_id_or_env, agent, seeds, options))
    wall = (time.perf_counter() - wall_start) / len(seeds)
    return [dataclasses.replace(r, warnings=list(seen), wall_seconds=wall) for r in results]


def batch_size_for(
    env_id: str,
    env_kwargs: Mapping[str, Any] | None = None,
    budget_bytes: int = BATCH_BUDGET_BYTES,
) -> int:
    """How many seeds of ``env_id`` to play in one batch: at most ``MAX_AUTOMATIC_BATCH_SIZE``, and
    few enough that the per-row buffers fit ``budget_bytes``.

    Per row a batch holds two copies of a loss chunk (the sequence's own and its row of
    the stacked chunk, ``chunk_size`` rounds of parameters), a slice of a block
    (``BLOCK_BUDGET_FLOATS`` floats at most) and a few points of K: an estimate, in
    float64, from one env made with ``env_kwargs``. ValueError, before that env is built,
    when a run of even one seed would not fit the machine
    (:func:`~bco_gym.engine.memory.check_planned_memory`; a sweep has no override).
    """
    from bco_gym.agents import BLOCK_BUDGET_FLOATS

    check_planned_memory(env_id, dict(env_kwargs or {}), 1, False, NO_OVERRIDE)
    env = gym.make(env_id, **dict(env_kwargs or {}))
    try:
        base = env.unwrapped
        dim = int(base.set.dim)
        chunk = base.losses.chunk_size * max(1, int(base.losses._floats_per_round()))
    finally:
        env.close()
    per_row = 8 * (2 * chunk + min(BLOCK_BUDGET_FLOATS, 1024 * dim) + 16 * dim)
    return int(max(1, min(MAX_AUTOMATIC_BATCH_SIZE, budget_bytes // per_row)))


def run_seed_batch(cells: Sequence[Any], progress: Any = False) -> list[RunResult]:
    """The results of sweep cells that differ only by seed, as one batch.

    ``progress`` as for :func:`run_many`; a callable is called with the rounds the batch
    advances, counted once per row (a batch of S runs advancing k rounds: S * k).

    ``cells`` are :class:`~bco_gym.sweeps.cell.Cell` values (or anything with the
    same fields); every field but ``seed`` must be equal (ValueError naming the first
    that differs). Result i equals ``cells[i].run()``.
    """
    if not cells:
        return []
    first = cells[0]
    fields = (
        "env_id",
        "agent",
        "horizon",
        "env_kwargs",
        "agent_kwargs",
        "constants",
        "checkpoints",
        "fast",
        "label",
        "isolate",
    )
    for index, cell in enumerate(cells):
        for name in fields:
            if getattr(cell, name, None) != getattr(first, name, None):
                raise ValueError(
                    f"run_seed_batch: cell {index} differs from cell 0 in {name} "
                    f"({getattr(cell, name)!r} != {getattr(first, name)!r}); a batch may "
                    "differ only by seed"
                )
    if callable(progress):
        rows, advance = len(cells), progress
        progress = lambda count: advance(rows * count)  # noqa: E731
    label = getattr(first, "label", None)
    agent = resolve_spec(first.agent, "run_seed_batch()")
    return run_many(
        first.env_id,
        agent if label is None else agent.with_label(label),
        [cell.seed for cell in cells],
        **cell_options(first, progress).keywords(),
    )


#: Rounds of the short untimed run that warms a batch's kernels (:func:`warm_kernels`):
#: a few of the compiled loops' windows and of the losses' chunks.
WARM_HORIZON = 600
_WARMED: set[str] = set()


def warm_kernels(cells: Sequence[Any]) -> float:
    """Load (or compile) the kernels the batch ``cells`` will call, before it is timed.

    A short untimed run of its first cell (:data:`WARM_HORIZON` rounds, one seed) plays
    with every kernel switch deciding as for the whole batch (its horizon times its
    seeds; ``bco_gym.agents.kernels.planned_run_rounds``), so numba's compile or
    cache load, once per process, is paid here rather than inside the first timed cell:
    ``cpu_seconds``, the latencies and rounds per second then mean the same on every
    backend and every worker. Once per process and kind of batch (env, agent, keywords);
    nothing when the batch plays no kernel (numba absent, ``BCO_GYM_KERNELS=off``, or
    "auto" below its threshold). Returns the seconds spent (0 when nothing was warmed).
    A warm-up that fails is ignored: the timed run reports its own error.
    """
    from bco_gym.agents.kernels import kernel_mode, numba_available, planned_run_rounds
    from bco_gym.engine.compiled import AUXILIARY_MIN_RUN_ROUNDS, MIN_RUN_ROUNDS

    if not cells:
        return 0.0
    first = cells[0]
    horizon = getattr(first, "horizon", None)
    mode = kernel_mode()
    if horizon is None or mode == "off" or not numba_available():
        return 0.0
    rounds = int(horizon) * len(cells)
    if mode == "auto" and rounds < MIN_RUN_ROUNDS:
        return 0.0
    fields = [first.env_id, first.env_kwargs, first.agent, first.agent_kwargs, first.fast]
    key = repr([*fields, rounds >= AUXILIARY_MIN_RUN_ROUNDS])
    if key in _WARMED:
        return 0.0
    _WARMED.add(key)
    start = time.perf_counter()
    try:
        with planned_run_rounds(rounds), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run_many(
                first.env_id,
                resolve_spec(first.agent, "warm_kernels()"),
                [first.seed],
                horizon=min(int(horizon), WARM_HORIZON),
                env_kwargs=first.env_kwargs,
                agent_kwargs=first.agent_kwargs,
                constants=first.constants,
                progress=False,
                fast=first.fast,
            )
    except Exception:  # the timed run reports its own error
        pass
    return time.perf_counter() - start


def _run_batch(
    env_id_or_env: Any, agent_name_or_agent: Any, seeds: list[int], options: RunOptions
) -> list[RunResult]:
    """The body of :func:`run_many`'s batched path (warnings recorded by the caller)."""
    horizon, checkpoints = options.horizon, options.checkpoints
    env_kwargs, agent_kwargs = options.env_kwargs, options.agent_kwargs
    allow_large, isolate = options.allow_large, options.isolate
    if isinstance(env_id_or_env, str):
        planned = {**dict(env_kwargs or {}), **({} if horizon is None else {"horizon": horizon})}
        check_planned_memory(env_id_or_env, planned, len(seeds), allow_large)
    envs, env_id, owned = _prepare_vector_env(
        env_id_or_env, len(seeds), horizon, env_kwargs, allow_large
    )
    agent = None
    try:
        check_run_memory(envs, len(seeds), allow_large)
        if isolate:
            agent, spec = prepare_isolated(agent_name_or_agent, envs.problem, agent_kwargs, seeds)
            built_here = True
        else:
            agent, spec, built_here = _prepare_batched_agent(
                agent_name_or_agent, envs, agent_kwargs
            )
        points = resolve_checkpoints(checkpoints, envs.horizon)
        label = constants_label(options.constants, spec, built_here, agent_kwargs)
        envs.reset(seed=seeds)
        block = getattr(agent, "supports_blocks", False) and envs.on_infeasible == "raise"
        play, loop = (play_block, "batched-block") if block else (play_lean, "batched-lean")
        if isolate:
            loop = "batched-isolated"
        stage = Stage(
            envs.losses,
            envs.feasibility,
            envs.horizon,
            envs.feedback == "full",
            two_point=envs.feedback == "two-point",
        )
        show = want_progress(options.progress, envs.horizon)
        try:
            agent.reset(seed=[agent_seed_for(seed) for seed in seeds])
            cpu_start = time.process_time()
            played = play(stage, agent, checkpoints=points, progress=show)
        except Exception as error:  # name the agent, the seed and the round
            named = named_failure(error, spec.name, seeds, agent)
            if named is None:
                raise
            raise named from error
        cpu_seconds = time.process_time() - cpu_start + played_elsewhere(agent)
        sequences = envs.losses.sequences
        batch = PlayedRows(played, agent, points, seeds, sequences, cpu_seconds)
        return row_results(batch, env_id, spec, label, options, envs.problem, loop)
    finally:
        if isolate and agent is not None:
            agent.close()
        if owned:
            envs.close()


def _prepare_vector_env(
    env_id_or_env: Any,
    rows: int,
    horizon: int | None,
    env_kwargs: Mapping[str, Any] | None,
    allow_large: bool = False,
) -> tuple[Any, str, bool]:
    """(the vector env, its id, whether this call made it)."""
    from bco_gym.envs import BanditConvexVectorEnv

    if isinstance(env_id_or_env, str):
        check_env_id(env_id_or_env)
        kwargs = dict(env_kwargs or {})
        if horizon is not None:
            kwargs["horizon"] = check_horizon(horizon)
        if allow_large:  # the vector entry point's own check lets it through too
            kwargs["allow_large"] = True
        envs = gym.make_vec(
            env_id_or_env, num_envs=rows, vectorization_mode="vector_entry_point", **kwargs
        )
        if not isinstance(envs, BanditConvexVectorEnv):
            envs.close()
            raise ValueError(
                f"{env_id_or_env!r} is not a bco_gym env id (its vector env is "
                f"{type(envs).__name__}, not a BanditConvexVectorEnv)"
            )
        return envs, env_id_or_env, True
    if env_kwargs:
        raise ValueError("env_kwargs apply only when run_many() makes the env from an id")
    if isinstance(env_id_or_env, gym.Env):
        envs, env_id = _vectorise(env_id_or_env, rows), _single_env_id(env_id_or_env)
        owned = True
    elif isinstance(env_id_or_env, BanditConvexVectorEnv):
        envs, owned = env_id_or_env, False
        spec = env_id_or_env.spec
        env_id = spec.id if spec is not None else "BanditConvexVectorEnv"
    else:
        raise TypeError(
            "run_many() needs an env id (str), a BanditConvexEnv (made by gym.make or "
            "directly; it is vectorised here) or a BanditConvexVectorEnv, got "
            f"{type(env_id_or_env).__name__}"
        )
    if envs.num_envs != rows:
        raise ValueError(
            f"the vector env has num_envs={envs.num_envs}, but {rows} seeds were given"
        )
    if horizon is not None and check_horizon(horizon) != envs.horizon:
        raise ValueError(f"horizon={horizon} differs from the given env's horizon {envs.horizon}")
    return envs, env_id, owned


def _vectorise(env: gym.Env, rows: int) -> Any:
    """S copies of a user's BanditConvexEnv (refused when a wrapper's step must run)."""
    from bco_gym.engine.runner import wrapper_obstacle
    from bco_gym.envs import BanditConvexVectorEnv

    obstacle = wrapper_obstacle(env)
    if obstacle is not None:
        raise ValueError(
            f"run_many() plays a single env as one copy per seed ({rows}), but {obstacle}; "
            "play it seed by seed with run(env, agent, seed=s)"
        )
    return BanditConvexVectorEnv(env.unwrapped, rows)


def _single_env_id(env: gym.Env) -> str:
    """The ``env_id`` :func:`run` records for a given env (its spec's id, else its class)."""
    spec = env.unwrapped.spec or getattr(env, "spec", None)
    return spec.id if spec is not None else type(env.unwrapped).__name__


def _prepare_batched_agent(
    agent: Any, envs: Any, agent_kwargs: Mapping[str, Any] | None
) -> tuple[Any, Any, bool]:
    """(a batched agent of batch_size S for the env's problem, its AgentSpec, whether it
    was built here). An agent with a batched implementation is built batched; any other
    is played as S single agents (:class:`~.rows.RowAgents`), row i exactly ``run``'s."""
    from bco_gym.agents import make_agent
    from bco_gym.agents.base import Agent
    from bco_gym.agents.registry import spec_of_instance

    rows = envs.num_envs
    if not isinstance(agent, Agent):
        spec = resolve_spec(agent, "run_many()")
        overrides = dict(agent_kwargs or {})
        if spec.batched:
            return make_agent(spec, envs, batch_size=rows, **overrides), spec, True
        singles = [make_agent(spec, envs.problem, **overrides) for _ in range(rows)]
        return RowAgents(singles), spec.labelled(singles[0]), True
    if agent_kwargs:
        raise ValueError("agent_kwargs apply only when run_many() builds the agent itself")
    if getattr(agent, "batch_size", None) != rows:
        raise ValueError(
            f"run_many() got a built {type(agent).__name__} with batch_size="
            f"{getattr(agent, 'batch_size', None)!r}; it needs batch_size={rows} (one row per "
            "seed), or pass the agent's class, name or import path and run_many builds one "
            "per seed"
        )
    if agent.horizon != envs.horizon:
        raise ValueError(
            f"the agent was built for horizon {agent.horizon}, the env has {envs.horizon}"
        )
    return agent, spec_of_instance(agent), False


def _reference_runs(
    env_id: Any, agent: Any, seeds: list[int], options: RunOptions
) -> list[RunResult]:
    """``fast=False``: each seed through the Gymnasium loop of ``run``."""
    from bco_gym.agents.base import Agent

    if not isinstance(env_id, str) or isinstance(agent, Agent):
        raise ValueError(
            "run_many(fast=False) needs an env id and an agent it can build (a name, import "
            "path, Agent subclass or factory), not a built agent"
        )
    agent = resolve_spec(agent, "run_many()")
    keywords = options.but(fast=False).keywords()
    return [run(env_id, agent, seed=seed, **keywords) for seed in seeds]


def _check_seeds(seeds: Any) -> list[int]:
    if isinstance(seeds, int | str) or not isinstance(seeds, Sequence) or not len(seeds):
        raise ValueError(f"seeds={seeds!r} must be a non-empty sequence of non-negative integers")
    return [check_seed(seed) for seed in seeds]
