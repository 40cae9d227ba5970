"""Agents that try to fake a score, as a determined user might (tests import them by path).

Each plays honestly (the centre plus a uniform jitter, as ``user_agents:Jitter``) until its
trick finds what it is after, then plays what the trick gives:

* :class:`StackWalker` walks up the call stack (``sys._getframe``) to the engine's loss
  sequences (``stage.losses.sequences[row]`` of the batched loops, the env of the
  Gymnasium loop) and plays each round's minimiser;
* :class:`GcSearcher` searches the garbage collector's objects (``gc.get_objects()``) for
  loss sequences, picks its own by the first loss it was shown, and plays each round's
  minimiser from then on;
* :class:`SeedInverter` inverts ``agent_seed_for`` over the public seeds 0-999 in
  ``reset(seed)``, rebuilds the env for the seed found and plays the comparator;
* :class:`InfoHoarder` keeps every ``info`` key it is handed, across runs, and plays a
  ``comparator_point`` it was once shown when it meets the same agent seed again;
* :class:`GradientSpy` declares bandit feedback and records every key of ``info`` it sees.

A round's minimiser is the LMO of the loss's gradient at the centre: exact for the linear
families (f_t(x) = <theta_t, x - c>), which the tests use.
"""

from __future__ import annotations

import gc
import json
import sys
from typing import Any, ClassVar

import numpy as np

from bco_gym.agents import Agent


class _Honest(Agent):
    """The centre plus a uniform draw from the ball of radius r/2 (every attacker's fallback)."""

    name = "honest-jitter"
    regret_exponent = 1.0

    def __init__(self, problem: Any):
        super().__init__(problem)
        self.params = {}

    def _reset(self) -> None:
        return None

    def _act(self) -> np.ndarray:
        direction = self.rng.standard_normal(self.set.shape)
        direction /= np.linalg.norm(direction)
        radius = 0.5 * self.set.inner_radius * self.rng.uniform() ** 0.5
        return self.set.center + radius * direction

    def _update(self, loss: float, info: Any) -> None:
        return None

    def _minimiser(self, sequence: Any, t: int) -> np.ndarray:
        """argmin over K of f_t (linear losses): the LMO of the gradient at the centre."""
        return np.asarray(self.set.lmo(sequence.gradient(t, self.set.center)), dtype=float)


def _is_loss_sequence(candidate: Any) -> bool:
    from bco_gym.losses.base import LossSequence

    try:
        return isinstance(candidate, LossSequence) and candidate._seed is not None
    except Exception:  # an object that refuses isinstance or attributes
        return False


class StackWalker(_Honest):
    """Reads its loss sequence from the engine's frames and plays each round's minimiser."""

    name = "stack-walker"

    def _act(self) -> np.ndarray:
        sequence = self._find_sequence()
        if sequence is None:
            return super()._act()
        return self._minimiser(sequence, self._round)

    def _find_sequence(self) -> Any:
        frame = sys._getframe(1)
        row = 0
        while frame is not None:
            found = frame.f_locals
            rows = found.get("self")
            if hasattr(rows, "agents") and isinstance(getattr(rows, "agents", None), list):
                for index, agent in enumerate(rows.agents):
                    if agent is self:
                        row = index
            stage = found.get("stage")
            sequences = getattr(getattr(stage, "losses", None), "sequences", None)
            if sequences is not None:
                return sequences[row]
            env = found.get("env")
            losses = getattr(getattr(env, "unwrapped", None), "losses", None)
            if _is_loss_sequence(losses):
                return losses
            frame = frame.f_back
        return None


class GcSearcher(_Honest):
    """Finds its loss sequence among the garbage collector's objects by its first loss."""

    name = "gc-searcher"

    def _reset(self) -> None:
        self.first: tuple[np.ndarray, float] | None = None
        self.sequence: Any = None
        self.searched = False
        self.last_play: np.ndarray | None = None

    def _act(self) -> np.ndarray:
        if not self.searched and self.first is not None:  # one search, after the first loss
            self.sequence, self.searched = self._search(), True
        if self.sequence is None:
            self.last_play = super()._act()
            return self.last_play
        return self._minimiser(self.sequence, self._round)

    def _update(self, loss: float, info: Any) -> None:
        if self.first is None and self.last_play is not None:
            self.first = (self.last_play, loss)

    def _search(self) -> Any:
        assert self.first is not None
        point, loss = self.first
        for candidate in gc.get_objects():
            if not _is_loss_sequence(candidate) or candidate.set.shape != self.set.shape:
                continue
            try:
                if candidate.loss(0, point) == loss:
                    return candidate
            except Exception:  # a sequence of another horizon or set
                continue
        return None


class SeedInverter(_Honest):
    """Recovers the env's seed from its own (over the public seeds 0-999), rebuilds the
    env and plays its comparator; honest when no public seed matches.

    Which env: ``env_id`` and ``env_kwargs`` when given; otherwise every scenario of the
    built-in suites (public) whose horizon and set are the agent's, told apart by the losses of its
    first :data:`PROBES` rounds (played honestly; two families can share a first round).
    ``n`` of ``env_kwargs`` defaults to the set's dimension.

    Args:
        env_id, env_kwargs: the scenario it expects (``env_kwargs`` a JSON object), or ""
            to search the suites.
    """

    name = "seed-inverter"
    OPTIONS = ("env_id", "env_kwargs")
    SEARCHED = range(1000)
    PROBES = 3

    def __init__(self, problem: Any, env_id: str = "", env_kwargs: str = "{}"):
        super().__init__(problem)
        self.params = {"env_id": env_id, "env_kwargs": env_kwargs}
        self.candidates = (
            [(env_id, {"n": int(self.set.dim), **json.loads(env_kwargs)})]
            if env_id
            else _suite_scenarios(self.horizon)
        )
        self.target: np.ndarray | None = None
        self.env_seed: int | None = None

    def reset(self, seed: int | None = None) -> None:
        from bco_gym.engine import agent_seed_for

        super().reset(seed)
        self.target, self.seen = None, []
        self.env_seed = next((s for s in self.SEARCHED if agent_seed_for(s) == seed), None)
        if self.env_seed is not None and len(self.candidates) == 1:
            self.target = self._comparator(*self.candidates[0], None)

    def _act(self) -> np.ndarray:
        if self.target is not None:
            return self.target.copy()
        self.last = super()._act()
        return self.last

    def _update(self, loss: float, info: Any) -> None:
        if self.env_seed is None or self.target is not None:
            return
        self.seen.append((self.last, loss))
        if len(self.seen) < self.PROBES:
            return
        for env_id, kwargs in self.candidates:
            self.target = self._comparator(env_id, kwargs, self.seen)
            if self.target is not None:
                return
        self.env_seed = None  # no candidate: honest from here on

    def _comparator(self, env_id: str, kwargs: dict, seen: Any) -> Any:
        """The comparator of ``env_id`` rebuilt with the env's seed, if its losses at the
        plays ``seen`` ((point, loss) of the first rounds; any, when None) are the ones
        shown."""
        import gymnasium as gym

        try:
            env = gym.make(env_id, horizon=self.horizon, **kwargs)
            env.reset(seed=self.env_seed)
            if repr(env.unwrapped.problem.set) != repr(self.set):
                return None  # the same losses on another set (the ball's and the box's)
            losses = env.unwrapped.losses
            for t, (point, loss) in enumerate(seen or ()):
                if not np.isclose(losses.loss(t, point), loss, rtol=1e-12, atol=1e-12):
                    return None
            return np.asarray(losses.comparator([self.horizon])[0].point, dtype=float)
        except Exception:  # a candidate on another set
            return None


def _suite_scenarios(horizon: int) -> list[tuple[str, dict]]:
    """(env id, env kwargs) of every built-in scenario played at ``horizon``."""
    from bco_gym.reports.suites import SUITES

    found = []
    for scenarios in SUITES.values():
        for scenario in scenarios:
            if scenario.horizon == horizon:
                pair = (scenario.env_id, dict(scenario.env_kwargs))
                if pair not in found:
                    found.append(pair)
    return found


class InfoHoarder(_Honest):
    """Keeps (in class state) every info key it was handed; plays a ``comparator_point``
    it was shown in an earlier run with the same agent seed."""

    name = "info-hoarder"
    SEEN: ClassVar[set[str]] = set()
    POINTS: ClassVar[dict[int, np.ndarray]] = {}

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.agent_seed = seed

    def _act(self) -> np.ndarray:
        point = InfoHoarder.POINTS.get(self.agent_seed)  # type: ignore[arg-type]
        return super()._act() if point is None else point.copy()

    def _update(self, loss: float, info: Any) -> None:
        InfoHoarder.SEEN.update(info or {})
        if info and "comparator_point" in info and self.agent_seed is not None:
            InfoHoarder.POINTS[self.agent_seed] = np.array(info["comparator_point"], dtype=float)


class GradientSpy(_Honest):
    """A bandit agent that records every key of ``info`` it is handed (class state)."""

    name = "gradient-spy"
    SEEN: ClassVar[set[str]] = set()

    def _update(self, loss: float, info: Any) -> None:
        GradientSpy.SEEN.update(info or {})


class QuietOracle(_Honest):
    """Calls its set's LMO ``calls`` times a round and reports none of them in ``stats``."""

    name = "quiet-oracle"
    OPTIONS = ("calls",)

    def __init__(self, problem: Any, calls: int = 8):
        super().__init__(problem)
        self.params = {"calls": int(calls)}

    def _act(self) -> np.ndarray:
        for _ in range(self.params["calls"]):
            self.set.lmo(self.rng.standard_normal(self.set.shape))
        return super()._act()


class Misbehaver(_Honest):
    """Misbehaves in its own process from round ``at`` on: "exit" (os._exit), "kill"
    (SIGKILL to itself), "hang" (sleeps for an hour), "raise" (a RuntimeError), "value" (a
    ValueError), "shape" (a play of the wrong shape), "nan" (a NaN play) or "junk" (writes
    bytes that are not the protocol to every pipe it holds)."""

    name = "misbehaver"
    OPTIONS = ("fault", "at")

    def __init__(self, problem: Any, fault: str = "raise", at: int = 3):
        super().__init__(problem)
        self.fault, self.at = fault, int(at)
        self.params = {"fault": fault, "at": self.at}

    def _act(self) -> np.ndarray:
        point = super()._act()
        if self._round < self.at:
            return point
        import os
        import signal
        import stat
        import time

        if self.fault == "exit":
            os._exit(3)
        if self.fault == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if self.fault == "hang":
            time.sleep(3600)
        if self.fault == "raise":
            raise RuntimeError(f"misbehaver gives up in round {self._round}")
        if self.fault == "value":
            raise ValueError(f"misbehaver refuses round {self._round}")
        if self.fault == "shape":
            return np.zeros(self.set.dim + 1)
        if self.fault == "nan":
            return np.full(self.set.shape, np.nan)
        for fd in range(3, 64):  # "junk"
            try:
                if stat.S_ISFIFO(os.fstat(fd).st_mode):
                    os.write(fd, b"JUNK" + bytes(8))
            except OSError:
                continue
        return point


class Entitled(_Honest):
    """Raises if its ``update`` is handed anything but the loss and ``t`` (a bandit agent's
    feedback), wherever it plays: in-process or in its own process."""

    name = "entitled"

    def _update(self, loss: float, info: Any) -> None:
        if set(info or {}) != {"loss", "t"}:
            raise ValueError(f"update() was handed {sorted(info or {})}")
