"""The compiled lean loop: the per-round agents on linear losses, a window of rounds per call.

:func:`~bco_gym.engine.loops.play_lean` hands its rounds here when :func:`compiled_plan` finds a
kernel for them: an agent whose exact class declares one (``KERNEL``, a
:class:`~bco_gym.agents.kernels.compiled_rounds.CompiledRounds` beside the agent in its folder,
numba;
fkm, fkm2, bfw, ofw and ogd; freshly reset, under a feedback the kernel plays), on the ball, the
l1 ball, the box or the simplex (exact classes), against a linear family (``linear``,
``linear-switching``, ``linear-drift``, ``linear-adversarial``, ``from_array``: every
family evaluating with ``LinearLoss._evaluate`` or ``ArrayLoss._evaluate``), on an env that
refuses infeasible plays. Anything else plays the NumPy loop.

A window is at most one chunk of the agent's directions (up to 4096 rounds, drawn in the
order and with the values of the NumPy loop's 256-round chunks), within one chunk of
the losses and one checkpoint segment. Per window: the directions are taken from the
agent's own :class:`~bco_gym.agents.estimators.DirectionStream` (so the agent's generators
are read as the NumPy loop reads them; row first, as drawn, without the round-first copy
the NumPy loop reads), the losses' parameters from the S sequences'
own chunks (:class:`~bco_gym.losses.batch.LossBatch`), and one kernel call plays the
window for all S rows and writes the (S, k) losses, which go into the rows' tallies.
Afterwards the agent holds the state the NumPy loop leaves (iterate, sums, round and
counters).

One pass. For the families whose comparator is :func:`~bco_gym.losses.linear.linear_comparators`
of the summed vectors (linear and its subclasses), the rows' tallies sum theta_t while
they read the chunks for the interval regrets (:class:`~bco_gym.engine.metrics.ThetaSums`),
so the comparators are those of ``comparator(checkpoints)`` bit for bit without
generating the adversary a second time (as in the NumPy loops).

When. ``BCO_GYM_KERNELS``: "off" never, "on" whenever a kernel applies, "auto" (default)
when T * S >= :data:`MIN_RUN_ROUNDS` as well: short runs (and the test suite) stay on the
NumPy loop and never pay the kernels' compile or load time (docs/performance.md).
Without numba installed (the ``fast`` extra) the NumPy loop plays.

Only what a run needs is compiled. The agent's kernel is played by the rule above alone.
The auxiliary kernels (the interval-regret tracker, the exact and column sums, the
linear families' draws, the block check's anchors) give the NumPy code's bits exactly,
so where they run changes no result: "auto" uses them when numba's cache holds them
already, or when the run is large enough (T * S >= :data:`AUXILIARY_MIN_RUN_ROUNDS`)
that compiling them pays. Their compile (about 20 CPU seconds) would otherwise double a
first run's wait for ~0.1 s per 10^6 run-rounds saved. A process that is about to
compile says so once on stderr ("compiling kernels for fkm, once per machine: ~N s";
:func:`announce_compile`).

Equality. The kernels' arithmetic is the NumPy code's, in its order, the ball's Euclidean
norm included (:mod:`bco_gym.agents.kernels`): plays, losses and regret are the NumPy
loops' bit for bit on every set (tests/engine/test_compiled.py).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# the switch lives with the kernels (saha-tewari's solve and so-bgd's steps read it too),
# re-exported here
from bco_gym.agents.kernels import MODES as MODES
from bco_gym.agents.kernels import SWITCH as SWITCH
from bco_gym.agents.kernels import (
    builtin_kind,
    decided_rounds,
    is_cached,
    kernel_mode,
    numba_available,
    read_only,
)
from bco_gym.agents.kernels.compiled_rounds import CompiledRounds
from bco_gym.engine.latency import LatencyHistogram
from bco_gym.engine.tally import LossTally, one_pass_comparators

#: Run-rounds (T * S) from which "auto" plays a kernel: below, the NumPy loop (20 µs per
#: round of a single run, 2 s at this size) costs about what importing numba and loading
#: the kernels from its cache costs once per process (about 1 s).
MIN_RUN_ROUNDS = 100_000
#: Run-rounds from which "auto" compiles the auxiliary kernels when numba's cache does not
#: hold them yet: their ~20 CPU seconds of compile against ~0.1 s of NumPy per 10^6
#: run-rounds (fkm, 10 seeds at T = 10^5: 0.6 against 0.5 CPU s per run_many).
AUXILIARY_MIN_RUN_ROUNDS = 200_000_000
#: CPU seconds numba takes here to compile the auxiliary kernels together with an empty
#: cache (benchmarks/bench_cold_start.py; an agent's own: its ``KERNEL.compile_seconds``).
AUXILIARY_COMPILE_SECONDS = 20
#: Rounds per window when the agent draws no directions (ofw, ogd): as the directions'
#: longest chunks (fewer calls; a window's rounds are played one after another anyway).
WINDOW = 4096
#: Floats of directions an agent draws at a time in a compiled run (all rows): its
#: ``DirectionStream`` draws chunks of up to 4096 rounds instead of 256, fewer NumPy
#: calls for the same normals in the same order (the directions are the same bits).
DIRECTION_FLOATS = 1 << 20
#: Rounds of losses handed to the tallies at a time (their interval-regret trackers cost a
#: few NumPy calls per span, whatever its length), as the NumPy lean loop's buffer.
SPAN = 4096


@dataclass
class KernelPlan:
    """What a kernel needs to play a run: the agent, its oracle, the env's check."""

    agent: Any  # the BatchAgent (a single agent is its batch of one)
    kernel: CompiledRounds  # what the agent's class declares (KERNEL)
    oracle: tuple[Any, ...]  # the agent's set (K or K_delta) for kernels.project/lmo
    check: tuple[Any, ...]  # the env's K and atol for kernels.inside
    sign: float  # -1: <theta, x> - offset (generated families); +1: from_array
    weights: Callable[[int, int], np.ndarray] | None = field(default=None)


def compiled_plan(stage: Any, agent: Any) -> KernelPlan | None:
    """A kernel plan for this stage and (batched) agent, or None (the NumPy loop plays)."""
    mode = kernel_mode()
    rounds = decided_rounds(stage.horizon * stage.rows)
    if mode == "off" or (mode == "auto" and rounds < MIN_RUN_ROUNDS):
        return None
    agent = _batch_agent(agent)
    if agent is None or stage.feasibility.project or not numba_available():
        return None
    kernel = _agent_kernel(agent, stage)
    check = _set_check(stage.feasibility.set, stage.feasibility.atol)
    sign = _loss_sign(stage)
    if kernel is None or check is None or sign is None or agent.set.shape != check[2].shape:
        return None
    oracle = _oracle(_agent_set(agent, kernel))
    if oracle is None:
        return None
    weights = None
    if kernel.weight_exponent is not None:
        weights = _weights(kernel.weight_exponent)
    return KernelPlan(agent, kernel, oracle, check, sign, weights)


def tracker_rounds(stage: Any) -> Callable[..., None] | None:
    """The compiled interval-regret update for the rows' trackers when the auxiliary
    kernels run (:func:`auxiliary_wanted`) and K is a set they know
    (:func:`interval_rounds_for`), else None."""
    if not auxiliary_wanted(stage):
        return None
    return interval_rounds_for(stage.losses.sequences[0].set)


def tally_kernels(stage: Any) -> dict[str, Any]:
    """The compiled parts of the rows' :class:`~bco_gym.engine.tally.LossTally` when the
    auxiliary kernels run (:func:`auxiliary_wanted`): ``rounds`` (:func:`tracker_rounds`),
    ``exact_add`` (:func:`bco_gym.agents.kernels.sums.exact_add`, the exact segment sums in
    one pass;
    the same sums, being exact) and ``column_sums`` (the comparators' sums of theta_t,
    :func:`bco_gym.agents.kernels.sums.column_sums`, the same floats), else None each."""
    if not auxiliary_wanted(stage):
        return {"rounds": None, "exact_add": None, "column_sums": None}
    from bco_gym.agents.kernels.sums import column_sums, exact_add

    rounds = tracker_rounds(stage)
    return {"rounds": rounds, "exact_add": exact_add, "column_sums": column_sums}


def install_loss_kernels(stage: Any) -> None:
    """Let the rows' linear loss sequences draw their chunks with the compiled
    :func:`~bco_gym.agents.kernels.losses.linear_thetas` and evaluate spans with
    :func:`~bco_gym.agents.kernels.losses.linear_values` (the same bits;
    :meth:`~bco_gym.losses.linear.LinearLoss.use_kernel`), and the env's block check take
    its anchor certificate's distances compiled
    (:func:`~bco_gym.agents.kernels.checks.near_anchors`), when the auxiliary kernels run
    (:func:`auxiliary_wanted`)."""
    if not auxiliary_wanted(stage):
        return
    from bco_gym.agents.kernels.checks import near_anchors
    from bco_gym.agents.kernels.losses import linear_thetas, linear_values
    from bco_gym.losses.linear import LinearLoss

    if stage.feasibility.uses_anchors:
        stage.feasibility.use_kernel(near_anchors)

    for sequence in stage.losses.sequences:
        kind = type(sequence)
        if isinstance(sequence, LinearLoss) and kind._draw_chunk is LinearLoss._draw_chunk:
            evaluate = kind._evaluate is LinearLoss._evaluate
            sequence.use_kernel(linear_thetas, linear_values if evaluate else None)


def auxiliary_wanted(stage: Any) -> bool:
    """Whether the auxiliary kernels run for this stage (module docstring): "on", or
    "auto" from MIN_RUN_ROUNDS when numba's cache holds them or from
    AUXILIARY_MIN_RUN_ROUNDS; never without numba."""
    mode = kernel_mode()
    rounds = decided_rounds(stage.horizon * stage.rows)
    if mode == "off" or (mode == "auto" and rounds < MIN_RUN_ROUNDS) or not numba_available():
        return False
    return mode == "on" or rounds >= AUXILIARY_MIN_RUN_ROUNDS or auxiliary_cached()


def auxiliary_cached() -> bool:
    """Whether numba's cache holds the auxiliary kernels (the tracker, compiled with them,
    stands for all)."""
    from bco_gym.agents.kernels.intervals import interval_rounds

    return is_cached(interval_rounds)


_ANNOUNCED: set[str] = set()


def announce_compile(kernel: CompiledRounds, stage: Any) -> None:
    """Say once per process, on stderr, that kernels are about to be compiled for an
    agent's ``kernel`` (its rounds, and the auxiliary ones when they run and are not
    cached), with the CPU seconds measured here (``kernel.compile_seconds``)."""
    name = kernel.name
    seconds = 0
    if not is_cached(kernel.function(kernel.rounds)):
        seconds += kernel.compile_seconds
    if auxiliary_wanted(stage) and not auxiliary_cached():
        seconds += AUXILIARY_COMPILE_SECONDS
    if seconds and name not in _ANNOUNCED:
        _ANNOUNCED.add(name)
        print(
            f"compiling kernels for {name}, once per machine: ~{seconds} s",
            file=sys.stderr,
            flush=True,
        )


def interval_rounds_for(convex_set: Any) -> Callable[..., None] | None:
    """The compiled interval-regret update bound to K's oracle (the ball, l1 ball, box or
    simplex), for :meth:`~bco_gym.losses.intervals.IntervalRegret.use_rounds`; else None."""
    found = _base_kind(convex_set)
    if found is None:
        return None
    from bco_gym.agents.kernels.intervals import IntervalSpans

    kind, radius, low, high = found
    return IntervalSpans(kind, radius, low, high, convex_set.shape[0])


@dataclass
class CompiledPlay:
    """What :func:`play_compiled` hands back (the loops wrap it as ``Played``)."""

    tallies: list[LossTally]
    agent_seconds: float
    env_seconds: float
    latency: LatencyHistogram  # each round of a window at the window's time / its rounds
    comparators: list[list[Any]] | None  # per row, when summed in the same pass


def play_compiled(
    stage: Any,
    plan: KernelPlan,
    *,
    checkpoints: Sequence[int],
    advance: Callable[[int], None] | None = None,
) -> CompiledPlay:
    """Play all T rounds of the S rows with the plan's kernel (module docstring)."""
    announce_compile(plan.kernel, stage)
    runner = KernelRunner(stage, plan)
    horizon, chunk_size = stage.horizon, stage.losses.chunk_size
    stops = list(checkpoints)
    install_loss_kernels(stage)
    parts = tally_kernels(stage)  # compiled where the auxiliary kernels run
    tallies = [LossTally(horizon, stops, sequence=s, **parts) for s in stage.losses.sequences]
    agent_seconds = env_seconds = 0.0
    latency = LatencyHistogram()
    stop_index, t = 0, 0
    buffer, filled = np.empty((stage.rows, min(horizon, SPAN))), 0
    while t < horizon:
        while stops[stop_index] <= t:
            stop_index += 1
        index, offset = divmod(t, chunk_size)
        room = min(stops[stop_index], (index + 1) * chunk_size, t + buffer.shape[1] - filled) - t
        tick = time.perf_counter()
        params = stage.losses.row_chunk(index)  # the S sequences' chunk, stacked (S, rounds, ...)
        drawn = time.perf_counter()
        count = runner.window(t, params, offset, room, buffer, filled)
        played = time.perf_counter()
        filled += count
        if filled == buffer.shape[1] or t + count == horizon:
            for tally, row_values in zip(tallies, buffer[:, :filled], strict=True):
                tally.add(row_values)
            # a new buffer: the interval-regret trackers may keep views of what they got
            buffer, filled = np.empty((stage.rows, min(horizon - t - count, SPAN) or 1)), 0
        done = time.perf_counter()
        agent_seconds += played - drawn
        env_seconds += (drawn - tick) + (done - played)
        latency.add((done - tick) * 1e6 / (count * stage.rows), weight=count)
        if advance is not None:
            advance(count)
        t += count
    runner.finish()
    return CompiledPlay(tallies, agent_seconds, env_seconds, latency, one_pass_comparators(tallies))


class KernelRunner:
    """The agent's arrays and one kernel call per window (rounds t, ..., t + k - 1): what
    an agent's kernel module's ``window`` function reads (``points``, ``plays``,
    ``work``, ``saved``, ``residual``, ``previous``, ``agent``, ``plan``)."""

    def __init__(self, stage: Any, plan: KernelPlan):
        self.stage, self.plan = stage, plan
        agent, kernel = plan.agent, plan.kernel
        self.agent = agent
        self.call = kernel.function(kernel.window)
        self.points = np.array(agent._points, dtype=float, order="C")
        rows, dim = self.points.shape
        self.work = np.empty((6, dim))  # rows 0-3 the oracles', 4-5 the rounds'
        self.saved = np.empty((5, rows, dim))  # the rows' state at a block's start (rounds.py)
        self.two_point = kernel.plays == "two-point"
        self.plays = np.empty((rows, 2, dim) if self.two_point else (rows, dim))
        self.residual = agent.params.get("estimator") == "residual"
        self.previous = (
            agent._residuals.previous if hasattr(agent, "_residuals") else np.zeros(rows)
        )
        stream = getattr(agent, "_directions", None)
        if stream is not None:
            if not stream.drawn:
                rounds = DIRECTION_FLOATS // (rows * dim)
                stream.chunk_size = int(min(4096, max(stream.chunk_size, rounds)))
            stream.serve_rows()  # the kernels read the chunks as drawn, row first

    def window(
        self,
        t: int,
        params: dict[str, np.ndarray],
        offset: int,
        room: int,
        losses: np.ndarray,
        column: int,
    ) -> int:
        """Play rounds t, ..., t + k - 1 (k <= ``room``, within the agent's directions),
        their losses into losses[:, column : column + k]; returns k."""
        plan, agent = self.plan, self.agent
        directions, start = None, 0
        if plan.kernel.plays != "points":
            directions, start, count = agent._directions.take_rows(room)
            directions = read_only(directions)  # one array type: one compile
        else:
            count = min(room, WINDOW)
        # whole arrays and origins: a view's layout would make numba compile another kernel
        theta, shifts = params["theta"], params["offset"]
        window = (offset, column, count)
        weights = plan.weights(t, count) if plan.weights is not None else None
        first, trusted = 0, -1
        while first < count:
            first = self.call(
                self, directions, start, theta, shifts, weights, losses, window, first, trusted
            )
            if first < count:
                self._env_check(t + first)
                trusted = first
        return count

    def _env_check(self, t: int) -> None:
        """A play the kernel would not accept: the env's own check decides (and raises)."""
        stage = self.stage
        if self.two_point:
            from bco_gym.envs.vector import pair_round

            feasibility = stage.feasibility
            pair_round(
                feasibility.set,
                stage.losses,
                self.plays.copy(),
                t,
                feasibility.atol,
                feasibility.on_infeasible,
                feasibility.name_rows,
            )
        else:
            plays = self.plays if self.plan.kernel.plays == "one-point" else self.points
            stage.feasibility.round(plays.copy(), t)

    def finish(self) -> None:
        """Leave the agent as the NumPy loop leaves it after T rounds."""
        agent, horizon = self.agent, self.stage.horizon
        agent._points = self.points
        agent._round += horizon
        counter = self.plan.kernel.counter
        agent._counters[counter] = agent._counters[counter] + horizon


# -- eligibility ------------------------------------------------------------------------------
def _batch_agent(agent: Any) -> Any:
    """The BatchAgent behind the loops' agent (a RowAgents of one is its single agent)."""
    from bco_gym.agents.batch import BatchAgent
    from bco_gym.engine.rows import RowAgents

    if isinstance(agent, RowAgents):
        agent = agent.agents[0] if len(agent.agents) == 1 else None
    if not isinstance(agent, BatchAgent) or agent._round != 0:
        return None
    return agent


def _agent_kernel(agent: Any, stage: Any) -> CompiledRounds | None:
    """The kernel the agent's exact class declares (``KERNEL``), if it plays this
    feedback, or None (a subclass plays the NumPy loop: it may change the update)."""
    kernel = type(agent).__dict__.get("KERNEL")
    if kernel is None:
        return None
    feedback = "full" if stage.full_feedback else "two-point" if stage.two_point else "bandit"
    return kernel if feedback in kernel.feedback else None


def _agent_set(agent: Any, kernel: CompiledRounds) -> Any:
    """The set whose oracle the agent's kernel calls: K_delta (``shrunk``) or K."""
    if kernel.shrunk:
        return agent.set.shrink(agent.params["smoothing_radius"])
    return agent.set


def _base_kind(convex_set: Any) -> tuple[int, float, np.ndarray, np.ndarray] | None:
    """(kind, radius, low, high) of a built-in set the kernels know, or None."""
    return builtin_kind(convex_set)


def _oracle(convex_set: Any) -> tuple[Any, ...] | None:
    """The kernels' oracle tuple: (kind, radius, low, high, scale, centre, centred, shrunk)."""
    from bco_gym.sets.base import ShrunkSet

    shrunk = type(convex_set) is ShrunkSet
    base = convex_set.base if shrunk else convex_set
    found = _base_kind(base)
    if found is None:
        return None
    center = read_only(np.ascontiguousarray(base.center, dtype=float))
    scale = float(convex_set.scale) if shrunk else 1.0
    return (*found, scale, center, not np.any(center), shrunk)


def _set_check(convex_set: Any, atol: float) -> tuple[Any, ...] | None:
    """The kernels' check tuple of the env's set: (kind, radius, low, high, atol)."""
    found = _base_kind(convex_set)
    return None if found is None else (*found, float(atol))


def _loss_sign(stage: Any) -> float | None:
    """-1.0 for families evaluating <theta, x> - offset, +1.0 for arrays, else None."""
    from bco_gym.losses.arrays import ArrayLoss
    from bco_gym.losses.linear import LinearLoss

    losses = stage.losses
    kind = type(losses.sequences[0])
    if not losses.stacked:
        return None
    if stage.full_feedback and kind._gradient not in (LinearLoss._gradient, ArrayLoss._gradient):
        return None
    if kind._evaluate is LinearLoss._evaluate:
        return -1.0
    if kind._evaluate is ArrayLoss._evaluate:
        return 1.0
    return None


def _weights(exponent: float) -> Callable[[int, int], np.ndarray]:
    """sigma_t = min(1, 2 t^(-exponent)) of the rounds t+1, ..., t+k, as the agents take it
    (``decaying_step``: the compiled power is the C library's, as Python's ``**``)."""
    from bco_gym.agents.kernels.oracles import decaying_steps

    def weights(t: int, count: int) -> np.ndarray:
        out = np.empty(count)
        decaying_steps(t + 1, 2.0, exponent, out)
        return out

    return weights
