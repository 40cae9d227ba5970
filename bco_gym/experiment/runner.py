"""One run: an agent against an environment for one horizon and one seed.

:func:`run` resets env and agent, plays T rounds, then asks the loss sequence for the
offline comparator once, at every checkpoint together, and returns a typed
:class:`RunResult`. The rounds are played by one of three loops with the same outcome
(``RunResult.loop`` says which ran):

* ``"gym"`` -- the reference semantics, the Gymnasium loop of DESIGN.md's public
  contract through a :class:`~bco_gym.wrappers.RegretRecorder`:

      obs, info = env.reset(seed=seed); agent.reset(seed=agent_seed)
      repeat T times: action = agent.act(obs); obs, ... = env.step(action)
                      agent.update(info["loss"], info)

* ``"block"`` -- the fast path, for agents whose plays within a block do not depend on
  that block's feedback (``agent.supports_blocks``: BBCG, random). Per block:
  ``plays = agent.block_actions()`` (k rounds at once); the block's feasibility is
  checked vectorised (:class:`_BlockChecker`); ``losses.losses(t, plays)`` evaluates the
  k losses in one call; ``agent.update_block(losses)``. Actions and losses are those of
  the Gymnasium loop bit for bit (tests/experiment/test_fast_path.py). The env is not
  stepped: afterwards ``env.unwrapped.round`` is 0 and the recorder holds no losses.
* ``"lean"`` -- every other agent: the Gymnasium loop on ``env.unwrapped`` itself,
  without the wrappers' per-round calls (the runner records the losses), so the env's
  own semantics (feasibility, projection, gradients, rendering) are untouched.

``fast=None`` (default) picks ``"block"`` where the agent supports it and ``"lean"``
otherwise; both need an env whose only wrappers are the RegretRecorder and those
``gym.make`` adds (order enforcing, the passive checker), and ``"block"`` also an env
with ``on_infeasible="raise"`` and no render mode -- otherwise the Gymnasium loop runs.
``fast=False`` forces the Gymnasium loop; ``fast=True`` requires a runner loop.

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
stays small whatever T is). The block and lean loops do not keep the losses above that
limit either: each segment's sum is kept exactly as it streams in (:class:`_LossTally`),
so memory stays flat in T and the sums equal the stored-losses ones bit for bit.
"""

from __future__ import annotations

import dataclasses
import itertools
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
LOOPS = ("block", "lean", "gym")
# Floats per slice of a block in the anchor certificate (a cache-sized temporary).
CERTIFICATE_FLOATS = 1 << 16
# Rounds of losses the lean loop buffers before tallying them (memory flat in T).
LEAN_BUFFER = 4096
# Rounds of losses a streaming tally buffers before adding them to its exact sum.
TALLY_BUFFER = 1 << 16
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

    ``loop`` names the loop that played the rounds: "block", "lean" or "gym" (see the
    module docstring); the outcome does not depend on it.

    Times are wall-clock seconds: ``agent_seconds`` inside ``act``/``update`` (or
    ``block_actions``/``update_block``), ``env_seconds`` inside ``env.step`` (which in
    the Gymnasium loop includes the recorder's end-of-episode comparator; in the block
    loop: the feasibility check and the batched loss evaluation),
    ``comparator_seconds`` for the checkpoint comparator, ``wall_seconds`` for the whole
    call. ``warnings`` lists the distinct warnings raised during the run
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
        fast: None (default) plays the fastest loop that applies: "block" for agents
            with ``supports_blocks``, else "lean"; False forces the Gymnasium loop; True
            requires a runner loop ("block" or "lean") and raises ValueError when only
            the Gymnasium loop applies (an env with other wrappers). See the module
            docstring; every loop gives the same outcome.

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
        play, loop = _select_loop(env, agent, fast)
        agent_seed = agent_seed_for(seed)
        observation, _ = env.reset(seed=seed)
        agent.reset(seed=agent_seed)
        played = play(
            env,
            agent,
            observation,
            checkpoints=points,
            progress=_want_progress(progress, problem.horizon),
        )
        comparator_start = time.perf_counter()
        comparators = env.unwrapped.losses.comparator(points)
        comparator_seconds = time.perf_counter() - comparator_start
        curve = _regret_curve(played.tally, points, comparators)
        return RunResult(
            env_id=env_id,
            agent=agent_name,
            seed=seed,
            agent_seed=agent_seed,
            horizon=problem.horizon,
            **curve,
            round_losses=played.tally.round_losses(),
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
    """What a loop hands back: the tallied per-round losses and where the time went."""

    tally: _LossTally
    agent_seconds: float
    env_seconds: float


class _LossTally:
    """The per-round losses of a run, summed per checkpoint segment.

    While T <= ``ROUND_LOSSES_LIMIT`` the losses themselves are kept (they go into the
    result). Beyond, each segment keeps only its exact sum (:class:`_ExactSum`, O(1)
    memory; the losses pass through a buffer of ``TALLY_BUFFER`` rounds), so memory is
    flat in T and the correctly rounded segment sums and total equal those of the
    stored losses bit for bit.
    """

    def __init__(self, horizon: int, checkpoints: Sequence[int], losses: np.ndarray | None = None):
        self._stops = list(checkpoints)
        keep = losses is not None or horizon <= ROUND_LOSSES_LIMIT
        self._values = losses if losses is not None else (np.empty(horizon) if keep else None)
        self._filled = 0 if losses is None else len(losses)
        self._buffer = np.empty(0 if keep else min(horizon, TALLY_BUFFER))
        self._buffered = 0  # rounds in the buffer, all of the current segment
        self._segment = _ExactSum()
        self._segments: list[int] = []  # exact sums of the finished segments (scaled ints)

    def add(self, values: np.ndarray) -> None:
        """Append the losses of the next ``len(values)`` rounds."""
        if self._values is not None:
            self._values[self._filled : self._filled + len(values)] = values
            self._filled += len(values)
            return
        while len(values):
            stop = self._stops[len(self._segments)]
            room = min(stop - self._filled, len(self._buffer) - self._buffered)
            piece, values = values[:room], values[room:]
            self._buffer[self._buffered : self._buffered + len(piece)] = piece
            self._buffered += len(piece)
            self._filled += len(piece)
            if self._filled == stop or self._buffered == len(self._buffer):
                self._segment.add(self._buffer[: self._buffered])
                self._buffered = 0
            if self._filled == stop:
                self._segments.append(self._segment.scaled())
                self._segment = _ExactSum()

    def round_losses(self) -> np.ndarray | None:
        """The stored losses when T <= ROUND_LOSSES_LIMIT, else None."""
        if self._values is None or len(self._values) > ROUND_LOSSES_LIMIT:
            return None
        return self._values

    def segment_sums(self) -> list[float]:
        """The correctly rounded sum of the losses of each checkpoint segment."""
        if self._values is not None:
            from bco_gym.wrappers.regret import exact_sum

            bounds = itertools.pairwise([0, *self._stops])
            return [exact_sum(self._values[start:stop]) for start, stop in bounds]
        return [_ExactSum.rounded(scaled) for scaled in self._segments]

    def total(self) -> float:
        """The correctly rounded sum of all the losses."""
        if self._values is not None:
            from bco_gym.wrappers.regret import exact_sum

            return exact_sum(self._values)
        return _ExactSum.rounded(sum(self._segments))


class _ExactSum:
    """The exact sum of a stream of finite floats in O(1) memory (a superaccumulator).

    Every float is v = m 2^(e - 53) with m an integer of at most 53 bits (``np.frexp``).
    Split m = h 2^27 + l (0 <= l < 2^27); per exponent e, the h's and the l's are summed
    as integers: exactly, as float64 ``bincount`` sums of fewer than 2^26 terms stay
    below 2^53, and the int64 totals below 2^63 for fewer than 2^36 terms in all. The
    total is then sum_e (H_e 2^27 + L_e) 2^(e - 53), an exact Python integer times
    2^-(1074 + 53), rounded once by integer true division: the correctly rounded sum,
    the value ``math.fsum`` gives, at a few numpy calls per batch.
    """

    OFFSET = 1074  # np.frexp exponents of finite float64 lie in [-1073, 1024]
    SIZE = OFFSET + 1025
    SPLIT = 27
    BATCH = 1 << 26  # terms per bincount

    def __init__(self) -> None:
        self._high = np.zeros(self.SIZE, dtype=np.int64)
        self._low = np.zeros(self.SIZE, dtype=np.int64)

    def add(self, values: np.ndarray) -> None:
        if len(values) >= self.BATCH:  # keep each bincount's float64 sums exact
            for start in range(0, len(values), self.BATCH - 1):
                self.add(values[start : start + self.BATCH - 1])
            return
        with np.errstate(over="ignore", invalid="ignore"):
            total = np.add.reduce(values, initial=0.0)
        if not math.isfinite(total) and not np.isfinite(values).all():
            raise ValueError("exact sum: the losses must be finite")
        mantissas, exponents = np.frexp(values)
        integers = np.ldexp(mantissas, 53).astype(np.int64)  # exact: m < 2^53
        buckets = exponents + self.OFFSET
        for accumulator, part in (
            (self._high, integers >> self.SPLIT),  # h, |h| < 2^26 (an arithmetic shift)
            (self._low, integers & ((1 << self.SPLIT) - 1)),  # l = m - h 2^27 in [0, 2^27)
        ):
            counts = np.bincount(buckets, weights=part, minlength=self.SIZE)
            accumulator += counts.astype(np.int64)

    def scaled(self) -> int:
        """The exact sum times 2^(1074 + 53), a Python integer."""
        scaled = 0
        for index in np.flatnonzero(self._high | self._low).tolist():
            scaled += ((int(self._high[index]) << self.SPLIT) + int(self._low[index])) << index
        return scaled

    @classmethod
    def rounded(cls, scaled: int) -> float:
        """``scaled`` / 2^(1074 + 53), correctly rounded (Python's int true division)."""
        return scaled / (1 << (cls.OFFSET + 53))


def _play_gym_loop(
    env: gym.Env,
    agent: Any,
    observation: Any,
    *,
    checkpoints: Sequence[int],
    progress: bool = False,
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
    losses = np.array(recorder.round_losses, dtype=np.float64)
    return _Played(_LossTally(horizon, checkpoints, losses), agent_seconds, env_seconds)


def _play_lean_loop(
    env: gym.Env,
    agent: Any,
    observation: Any,
    *,
    checkpoints: Sequence[int],
    progress: bool = False,
) -> _Played:
    """The Gymnasium loop on ``env.unwrapped``: the env's own step, no wrapper calls.

    The losses are buffered ``LEAN_BUFFER`` rounds at a time and tallied by the runner
    (the RegretRecorder is not stepped), so memory stays flat in T.
    """
    base = env.unwrapped
    horizon = base.problem.horizon
    tally = _LossTally(horizon, checkpoints)
    buffer = np.empty(min(horizon, LEAN_BUFFER))
    env_step, act, update = base.step, agent.act, agent.update
    agent_seconds = env_seconds = 0.0
    bar = _progress_bar(horizon, progress)
    played = 0
    tick = time.perf_counter()
    while played < horizon:
        count = min(horizon - played, len(buffer))
        for index in range(count):
            action = act(observation)
            acted = time.perf_counter()
            observation, _, _, _, info = env_step(action)
            stepped = time.perf_counter()
            loss = info["loss"]
            update(loss, info)
            done = time.perf_counter()
            buffer[index] = loss
            agent_seconds += (acted - tick) + (done - stepped)
            env_seconds += stepped - acted
            tick = done
        tally.add(buffer[:count])
        if bar is not None:
            bar.update(count)
        played += count
    if bar is not None:
        bar.close()
    return _Played(tally, agent_seconds, env_seconds)


def _play_block_loop(
    env: gym.Env,
    agent: Any,
    observation: Any,
    *,
    checkpoints: Sequence[int],
    progress: bool = False,
) -> _Played:
    """The fast path: whole blocks of plays, checked and evaluated vectorised.

    Per block: ``agent.block_actions()`` (k plays), the feasibility check of
    :class:`_BlockChecker` (what ``env.step`` checks, for all k at once), the k losses
    by ``losses.losses(t, plays)`` and ``agent.update_block``. ``observation`` is not
    needed (a block agent's plays ignore it).
    """
    base = env.unwrapped
    horizon = base.problem.horizon
    losses = base.losses
    checker = _BlockChecker(base.set, base.atol)
    tally = _LossTally(horizon, checkpoints)
    agent_seconds = env_seconds = 0.0
    bar = _progress_bar(horizon, progress)
    played = 0
    tick = time.perf_counter()
    while played < horizon:
        plays = agent.block_actions()
        acted = time.perf_counter()
        plays = checker.check(plays, played, agent.block_anchor() if checker.uses_anchors else None)
        values = losses.losses(played, plays)
        stepped = time.perf_counter()
        agent.update_block(values)
        done = time.perf_counter()
        tally.add(values)
        agent_seconds += (acted - tick) + (done - stepped)
        env_seconds += stepped - acted
        played += len(values)
        if bar is not None:
            bar.update(len(values))
        tick = time.perf_counter()
    if bar is not None:
        bar.close()
    return _Played(tally, agent_seconds, env_seconds)


class _BlockChecker:
    """The feasibility check of a block of plays: what ``env.step`` checks, vectorised.

    A play of the wrong shape, non-finite or outside K (within the env's ``atol``)
    raises :class:`~bco_gym.InfeasibleActionError` with the env's message for that
    round. Two ways to accept a block:

    * exact: ``set.violation_many(plays, atol)`` -- the verdict of ``set.violation`` on
      every play, with a vectorised screen (O(k * dim) for the built-in polytopes and
      balls; the nuclear-norm ball needs an SVD for each play the screen cannot clear);
    * an anchor certificate, for full-dimensional sets, when the agent names one
      (``agent.block_anchor()`` = (a, delta), e.g. BBCG's x_{m-1} and its smoothing
      radius): a lies in the shrunk set K_delta (one exact test, tolerance atol/2) and
      every play is within delta + atol*r/(4R) of a (r, R: K's inner/outer radii). As
      x + delta*u is in K for x in K_delta and ||u|| <= 1 (DESIGN.md, shrunk set), the
      block is in K up to the tolerance, at O(k * dim) plus one exact test per block.

    The certificate only ever accepts; a block it does not certify gets the exact check
    (which alone rejects), so a block is refused exactly when the env would refuse a
    play, up to the rounding of the tolerances.
    """

    def __init__(self, convex_set: Any, atol: float):
        self.set = convex_set
        self.atol = float(atol)
        #: Whether an agent's anchor can certify a block (full-dimensional sets only).
        self.uses_anchors = convex_set.aff_dim == convex_set.dim
        self._shrunk: dict[float, Any] = {}

    def check(
        self, plays: np.ndarray, start: int, anchor: tuple[np.ndarray, float] | None
    ) -> np.ndarray:
        """The block as a float64 array once its plays (rounds start, ...) pass the check."""
        from bco_gym.envs.actions import feasible_points
        from bco_gym.errors import InfeasibleActionError

        shape = self.set.shape
        plays = np.asarray(plays, dtype=np.float64)
        if plays.ndim == 0 or plays.shape[1:] != shape:
            raise InfeasibleActionError(
                f"round {start}: action has shape {plays.shape[1:]}, expected {shape} "
                f"(a point of {self.set!r})"
            )
        if anchor is not None and self._certified(plays, *anchor):
            return plays
        found = self.set.violation_many(plays, self.atol)
        if found is not None:  # env.step's own refusal, message included
            index, reason = found
            feasible_points(self.set, plays[index], atol=self.atol, round_index=start + index)
            raise InfeasibleActionError(
                f"round {start + index}: action not in {self.set!r}: {reason}"
            )
        return plays

    def _certified(self, plays: np.ndarray, anchor: np.ndarray, radius: float) -> bool:
        """Whether the anchor certificate (class docstring) holds for this block."""
        convex_set = self.set
        if not self.uses_anchors or not 0.0 <= radius <= convex_set.inner_radius:
            return False
        if radius not in self._shrunk:
            self._shrunk[radius] = convex_set.shrink(radius)
        if self._shrunk[radius].violation(anchor, self.atol / 2) is not None:
            return False
        slack = self.atol * convex_set.inner_radius / (4.0 * convex_set.outer_radius)
        limit = (radius + slack) ** 2
        rows = max(1, CERTIFICATE_FLOATS // max(1, anchor.size))  # temporaries stay in cache
        for start in range(0, len(plays), rows):
            offsets = (plays[start : start + rows] - anchor).reshape(-1, anchor.size)
            if not np.all(np.einsum("ij,ij->i", offsets, offsets) <= limit):
                return False
        return True


def _select_loop(env: gym.Env, agent: Any, fast: bool | None) -> tuple[Callable[..., _Played], str]:
    """The loop to play, (function, name): see the module docstring for the rules.

    A loop is called as ``loop(env, agent, observation, checkpoints=..., progress=...)``
    on a freshly reset env (wrapped in a RegretRecorder) and agent, plays all T rounds
    and returns a :class:`_Played`; the runner does the rest (comparator, curve, metadata).
    """
    if fast is False:
        return _play_gym_loop, "gym"
    obstacle = _wrapper_obstacle(env)
    if obstacle is not None:
        if fast:
            raise ValueError(
                f"fast=True needs the runner's own loop, but {obstacle}; use fast=None "
                "(falls back to the Gymnasium loop) or fast=False"
            )
        return _play_gym_loop, "gym"
    if getattr(agent, "supports_blocks", False) and _block_ready(env.unwrapped):
        return _play_block_loop, "block"
    return _play_lean_loop, "lean"


def _wrapper_obstacle(env: gym.Env) -> str | None:
    """Why the runner may not bypass ``env``'s wrappers (None when it may)."""
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
    return None


def _block_ready(base: Any) -> bool:
    """Whether the block loop reproduces ``base.step``: the stock step, raising on
    infeasible plays (no projection to replay) and not rendering."""
    from bco_gym.envs import BanditConvexEnv

    return (
        type(base).step is BanditConvexEnv.step
        and base.on_infeasible == "raise"
        and base.render_mode is None
    )


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
    tally: _LossTally, points: list[int], comparators: Sequence[Any]
) -> dict[str, Any]:
    """Cumulative loss, comparator value and gap, and regret at each checkpoint."""
    if [c.horizon for c in comparators] != points:
        raise RuntimeError(
            f"the comparator answered for prefixes {[c.horizon for c in comparators]}, "
            f"asked {points}"
        )
    segment_sums = tally.segment_sums()
    cumulative = np.array([math.fsum(segment_sums[: k + 1]) for k in range(len(points))])
    cumulative[-1] = tally.total()
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
