"""The loops that play a run's T rounds: S runs in lockstep, and the Gymnasium reference.

* :func:`play_block` -- agents whose plays within a block do not depend on that block's
  feedback (``supports_blocks``: BBCG, random). Per block: ``agent.block_actions()``
  ((S, k, *shape) plays), the feasibility check of the whole block
  (:meth:`~bco_gym.envs.feasibility.Feasibility.block`), the (S, k) losses in one
  :meth:`~bco_gym.losses.batch.LossBatch.block` call, ``agent.update_block``; the
  losses reach the tallies gathered over blocks, at the loss chunks' ends.
* :func:`play_lean` -- every other agent, round by round without Gymnasium's per-round
  API: ``agent.act(obs)`` ((S, *shape)), the round's feasibility check (projection if
  the env projects), the (S,) losses (and gradients with full information),
  ``agent.update(losses, info)``.
  With two-point feedback (``Stage.two_point``) the plays are pairs (S, 2, *shape):
  both points are checked and evaluated, the agent gets ``info["losses"]`` (S, 2), and
  the tallied loss is their mean, as the env's ``info["loss"]``.
* :func:`play_gym` -- the reference semantics, one env and one single agent through the
  Gymnasium loop of DESIGN.md's public contract and its RegretRecorder.

Every loop hands the agent's ``update`` only what its feedback model entitles it to
(:mod:`.feedback`): the loss and ``t``, the gradient for a full-information agent, both
losses for a two-point agent; never the regret or the comparator the recorder adds to
the last round's ``info``, nor a full-feedback env's gradient to a bandit agent.

The two batched loops compute what ``env.step`` computes for each row -- same points,
same losses, same ``info["loss"]``/``info["gradient"]``/``info["t"]`` given to the agent --
so their outcome equals the Gymnasium loop's bit for bit (tests/experiment/test_fast_path.py
and test_run_many.py). A :class:`Stage` is what they need of the env(s): the set, the S
loss sequences, the feasibility rules and the feedback. Each row's losses go into its own
:class:`~bco_gym.engine.tally.LossTally` (exact sums, memory flat in T).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from bco_gym.engine.compiled import (
    compiled_plan,
    install_loss_kernels,
    play_compiled,
    tally_kernels,
)
from bco_gym.engine.feedback import entitled_info, feedback_of, sees_gradients
from bco_gym.engine.latency import LatencyHistogram
from bco_gym.engine.preparation import find_wrapper
from bco_gym.engine.tally import LossTally, one_pass_comparators
from bco_gym.envs.feasibility import Feasibility
from bco_gym.envs.pairs import pair_mean
from bco_gym.envs.vector import pair_round
from bco_gym.losses.batch import LossBatch
from bco_gym.wrappers import RegretRecorder

# Rounds of losses the lean loop buffers before tallying them (memory flat in T).
LEAN_BUFFER = 4096


@dataclass
class Stage:
    """What the batched loops need of the env(s): S rows of one problem.

    Attributes:
        losses: the S rows' loss sequences, reset (seeded) already.
        feasibility: the env's feasibility rules (tolerance, projection).
        horizon: T.
        full_feedback: give ``info["gradient"]`` to the agent.
        two_point: plays are pairs of points (feedback="two-point").
    """

    losses: LossBatch
    feasibility: Feasibility
    horizon: int
    full_feedback: bool
    two_point: bool = False

    @property
    def rows(self) -> int:
        return len(self.losses)


@dataclass
class Played:
    """What a loop hands back: each row's tallied losses and where the time went, and
    each row's comparators when the loop summed them while playing (else None).

    ``latency`` holds the per-round times (agent plus env, µs) of one row: a batch's
    round time divided by its S rows, as ``agent_seconds`` and ``env_seconds`` are
    shared among the rows; in the block loop each round of a slice is counted at the
    slice's time divided by its rounds (they are computed together), and so in a
    compiled loop each round of a window.
    """

    tallies: list[LossTally]
    agent_seconds: float
    env_seconds: float
    latency: LatencyHistogram = field(default_factory=LatencyHistogram)
    comparators: list[list[Any]] | None = None


def observations(stage: Stage, t: int) -> np.ndarray:
    """The (S, 1) float32 observation t/T of every row (a fresh array)."""
    return np.full((stage.rows, 1), t / stage.horizon, dtype=np.float32)


def play_lean(
    stage: Stage, agent: Any, *, checkpoints: Sequence[int], progress: bool = False
) -> Played:
    """Round by round for all S rows; agent and losses freshly reset. A compiled kernel
    plays the rounds instead where one applies (:mod:`.compiled`)."""
    plan = compiled_plan(stage, agent)
    if plan is not None:
        bar = progress_bar(stage.horizon, progress)
        done = play_compiled(
            stage, plan, checkpoints=checkpoints, advance=lambda k: _advance(bar, k)
        )
        _close(bar)
        return Played(
            done.tallies, done.agent_seconds, done.env_seconds, done.latency, done.comparators
        )
    horizon, rows = stage.horizon, stage.rows
    compiled = tally_kernels(stage)  # the tallies' compiled updates, or None
    install_loss_kernels(stage)  # the linear families' compiled draw, when kernels are on
    tallies = [
        LossTally(horizon, checkpoints, sequence=s, **compiled) for s in stage.losses.sequences
    ]
    buffer = np.empty((rows, min(horizon, LEAN_BUFFER)))
    durations, latency = np.empty(buffer.shape[1]), LatencyHistogram()
    check, evaluate, gradients = stage.feasibility.round, stage.losses.losses, None
    info: dict[str, Any]
    if stage.full_feedback and sees_gradients(agent):  # a bandit agent plays as one
        gradients = stage.losses.gradients
    agent_seconds = env_seconds = 0.0
    bar = progress_bar(horizon, progress)
    played = 0
    observation = observations(stage, 0)
    tick = time.perf_counter()
    while played < horizon:
        count = min(horizon - played, buffer.shape[1])
        for index in range(count):
            t = played + index
            actions = agent.act(observation)
            acted = time.perf_counter()
            if stage.two_point:
                info = two_point_info(stage, actions, t)
                values = info["loss"]
            else:
                points, _ = check(actions, t)
                values = evaluate(t, points)
                info = {"loss": values, "t": t + 1}
            if gradients is not None:
                info["gradient"] = gradients(t, points)
            observation = np.full((rows, 1), (t + 1) / horizon, dtype=np.float32)
            stepped = time.perf_counter()
            agent.update(values, info)
            done = time.perf_counter()
            buffer[:, index] = values
            durations[index] = done - tick
            agent_seconds += (acted - tick) + (done - stepped)
            env_seconds += stepped - acted
            tick = done
        for tally, row_values in zip(tallies, buffer[:, :count], strict=True):
            tally.add(row_values)
        latency.add(durations[:count] * (1e6 / rows))
        _advance(bar, count)
        played += count
    _close(bar)
    return Played(tallies, agent_seconds, env_seconds, latency, one_pass_comparators(tallies))


def two_point_info(stage: Stage, actions: Any, t: int) -> dict[str, Any]:
    """A two-point round's info for the agent: ``"losses"`` (S, 2), ``"loss"`` their mean."""
    feasibility = stage.feasibility
    _, _, losses = pair_round(
        feasibility.set,
        stage.losses,
        actions,
        t,
        feasibility.atol,
        feasibility.on_infeasible,
        feasibility.name_rows,
    )
    return {"loss": pair_mean(losses[:, 0], losses[:, 1]), "losses": losses, "t": t + 1}


def play_block(
    stage: Stage, agent: Any, *, checkpoints: Sequence[int], progress: bool = False
) -> Played:
    """Block by block for all S rows; agent and losses freshly reset."""
    horizon = stage.horizon
    compiled = tally_kernels(stage)  # the tallies' compiled updates, or None
    install_loss_kernels(stage)  # the linear families' compiled draw, when kernels are on
    tallies = [
        LossTally(horizon, checkpoints, sequence=s, **compiled) for s in stage.losses.sequences
    ]
    check, evaluate = stage.feasibility.block, stage.losses.block
    uses_anchors = stage.feasibility.uses_anchors
    agent_seconds = env_seconds = 0.0
    feed = _BlockFeed(tallies, horizon, stage.losses.chunk_size)
    bar = progress_bar(horizon, progress)
    played = 0
    tick = time.perf_counter()
    while played < horizon:
        plays = agent.block_actions()
        acted = time.perf_counter()
        anchor = agent.block_anchor() if uses_anchors else None
        if stage.two_point:  # pairs (S, k, 2, *shape): the pair losses, their means tallied
            feedback = _pair_block(stage, plays, played, anchor)
            values = pair_mean(feedback[:, :, 0], feedback[:, :, 1])
        else:
            values = feedback = evaluate(played, check(plays, played, anchor))
        stepped = time.perf_counter()
        agent.update_block(feedback)
        done = time.perf_counter()
        agent_seconds += (acted - tick) + (done - stepped)
        env_seconds += stepped - acted
        feed.add(values, (done - tick) * 1e6 / (values.shape[1] * stage.rows))
        played += values.shape[1]
        _advance(bar, values.shape[1])
        tick = time.perf_counter()
    _close(bar)
    return Played(tallies, agent_seconds, env_seconds, feed.latency, one_pass_comparators(tallies))


class _BlockFeed:
    """The block loop's losses and round times on their way to the tallies and the
    latency histogram, gathered over blocks (a Python call per row per block costs more
    than the block's own tally work): up to a chunk and ``LEAN_BUFFER`` rounds, handed
    over whenever a block ends in a later chunk of the loss sequences than it began (so
    the tallies read each completed chunk while the sequences still keep it: they keep
    the last two read) and at the horizon. The tallies' sums are exact and their
    trackers cut spans at chunk ends themselves, so how the rounds are grouped changes
    no float (the lean loop hands them ``LEAN_BUFFER`` rounds at a time)."""

    def __init__(self, tallies: list[LossTally], horizon: int, chunk_size: int):
        self.tallies, self.horizon, self.chunk_size = tallies, horizon, chunk_size
        self.latency = LatencyHistogram()
        # a chunk and a block fit (no hand-over before a chunk's end when blocks are short)
        self._buffer = np.empty((len(tallies), min(horizon, chunk_size + LEAN_BUFFER)))
        self._buffered = 0
        self._played = 0
        self._times: list[float] = []  # µs per row-round of each block gathered
        self._rounds: list[int] = []

    def add(self, values: np.ndarray, time_us: float) -> None:
        """The (S, k) losses of the next block and its time per row-round."""
        rounds = values.shape[1]
        if self._buffered + rounds > self._buffer.shape[1]:
            self.flush()
        if rounds > self._buffer.shape[1]:
            self._hand_over(values)
        else:
            self._buffer[:, self._buffered : self._buffered + rounds] = values
            self._buffered += rounds
        self._times.append(time_us)
        self._rounds.append(rounds)
        first, self._played = self._played, self._played + rounds
        if self._played == self.horizon or (
            self._played // self.chunk_size > first // self.chunk_size
        ):
            self.flush()

    def flush(self) -> None:
        if self._buffered:
            self._hand_over(self._buffer[:, : self._buffered])
            self._buffered = 0
        if self._times:
            self.latency.add(np.array(self._times), weight=np.array(self._rounds))
            self._times.clear()
            self._rounds.clear()

    def _hand_over(self, values: np.ndarray) -> None:
        for tally, row_values in zip(self.tallies, values, strict=True):
            tally.add(row_values)


def _pair_block(stage: Stage, plays: Any, start: int, anchor: Any) -> np.ndarray:
    """The losses (S, k, 2) of a block of pairs (S, k, 2, *shape), rounds start, ...: both
    points of every pair evaluated as the lean loop evaluates them (``LossBatch.block``
    is ``losses`` row by row, bit for bit). When the agent's anchor does not certify both
    halves, each round is checked and evaluated as the lean loop does (its errors)."""
    plays = np.asarray(plays, dtype=np.float64)
    halves = [plays[:, :, 0], plays[:, :, 1]]
    if all(stage.feasibility.certifies(half, anchor) for half in halves):
        return np.stack([stage.losses.block(start, half) for half in halves], axis=2)
    rounds = [
        two_point_info(stage, plays[:, j], start + j)["losses"] for j in range(plays.shape[1])
    ]
    return np.stack(rounds, axis=1)


def play_gym(
    env: gym.Env,
    agent: Any,
    observation: Any,
    *,
    checkpoints: Sequence[int],
    progress: bool = False,
) -> Played:
    """The reference loop: act / step / update through the RegretRecorder, T rounds.

    ``env`` (wrapped in a RegretRecorder) and the single ``agent`` are freshly reset;
    ``observation`` is what reset returned. Timing takes three ``perf_counter`` reads per
    round (the end of one round is the start of the next).
    """
    recorder = find_wrapper(env, RegretRecorder)
    horizon = env.unwrapped.problem.horizon
    feedback = feedback_of(agent)
    agent_seconds = env_seconds = 0.0
    bar = progress_bar(horizon, progress)
    step = min(max(1, horizon // 200), LEAN_BUFFER)
    durations, latency = np.empty(step), LatencyHistogram()
    played = 0
    tick = time.perf_counter()
    while played < horizon:
        stop = min(horizon, played + step)
        for index in range(stop - played):
            action = agent.act(observation)
            acted = time.perf_counter()
            observation, _, _, _, info = env.step(action)
            stepped = time.perf_counter()
            agent.update(info["loss"], entitled_info(info, feedback))
            done = time.perf_counter()
            durations[index] = done - tick
            agent_seconds += (acted - tick) + (done - stepped)
            env_seconds += stepped - acted
            tick = done
        latency.add(durations[: stop - played] * 1e6)
        _advance(bar, stop - played)
        played = stop
    _close(bar)
    losses = np.array(recorder.round_losses, dtype=np.float64)
    tallies = [LossTally(horizon, checkpoints, losses, sequence=env.unwrapped.losses)]
    return Played(tallies, agent_seconds, env_seconds, latency, one_pass_comparators(tallies))


def progress_bar(total: int, enabled: Any) -> Any:
    """A tqdm bar over ``total`` rounds when ``enabled`` is True; a callable ``enabled``
    is called instead with the count of rounds each step advances (every row of a batch
    advances together), so a caller such as a sweep counts rounds in its own bar."""
    if callable(enabled):
        return _Callback(enabled)
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="round", unit_scale=True, leave=False, desc="rounds")


class _Callback:
    """A progress "bar" that hands each advance to a function."""

    def __init__(self, function: Any):
        self.update = function

    def close(self) -> None:
        return None


def _advance(bar: Any, count: int) -> None:
    if bar is not None:
        bar.update(count)


def _close(bar: Any) -> None:
    if bar is not None:
        bar.close()
