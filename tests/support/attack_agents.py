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
        self.last_play: np.ndarray | None = None

    def _act(self) -> np.ndarray:
        if self.sequence is None and self.first is not None:
            self.sequence = self._search()
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
    """Recovers the env's seed from its own (over the public seeds 0-999) and plays the
    comparator of the env rebuilt from it; honest when no public seed matches.

    Args:
        env_id, env_kwargs: the scenario it expects (public: the suite says them);
            ``env_kwargs`` a JSON object, whose ``n`` defaults to the set's dimension.
    """

    name = "seed-inverter"
    OPTIONS = ("env_id", "env_kwargs")
    SEARCHED = range(1000)

    def __init__(self, problem: Any, env_id: str = "BCO-Ball-v0", env_kwargs: str = "{}"):
        super().__init__(problem)
        self.env_id = env_id
        self.env_kwargs = {"n": int(self.set.dim), **json.loads(env_kwargs)}
        self.params = {"env_id": env_id, "env_kwargs": env_kwargs}
        self.target: np.ndarray | None = None

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.target = None if seed is None else self._comparator_of(seed)

    def _comparator_of(self, agent_seed: int) -> np.ndarray | None:
        import gymnasium as gym

        from bco_gym.engine import agent_seed_for

        found = next((s for s in self.SEARCHED if agent_seed_for(s) == agent_seed), None)
        if found is None:
            return None
        env = gym.make(self.env_id, horizon=self.horizon, **self.env_kwargs)
        env.reset(seed=found)
        point = env.unwrapped.losses.comparator([self.horizon])[0].point
        env.close()
        return np.asarray(point, dtype=float)

    def _act(self) -> np.ndarray:
        return super()._act() if self.target is None else self.target.copy()


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
