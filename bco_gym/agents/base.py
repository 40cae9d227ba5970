"""The agent interface: a policy that plays points of K and learns from scalar losses.

:class:`Agent` follows the template-method shape of stable-baselines3's ``predict``:
the public ``reset``/``act``/``update`` validate once and keep the books (round
counter, ``stats``), then delegate to the private hooks ``_reset``/``_act``/``_update``
that each algorithm implements.
"""

from __future__ import annotations

import abc
import math
from typing import Any, ClassVar

import numpy as np

from bco_gym.problem import Problem


class Agent(abc.ABC):
    """An online learner for a :class:`~bco_gym.problem.Problem`.

    Class attributes:
        name: the ``make_agent`` name.
        feedback: "bandit" (needs only f_t(x_t)) or "full" (needs ``info["gradient"]``).
        requires_projection: whether the algorithm calls ``set.project``.

    Attributes:
        problem: the problem the agent was built for.
        params: the resolved hyperparameters (a dict of floats/ints), after overrides.
        stats: counters, at least ``rounds``, ``lmo_calls`` and ``projections``.
    """

    name: ClassVar[str] = "agent"
    feedback: ClassVar[str] = "bandit"
    requires_projection: ClassVar[bool] = False

    def __init__(self, problem: Problem):
        if not isinstance(problem, Problem):
            raise TypeError(f"{type(self).__name__} needs a Problem, got {type(problem).__name__}")
        if self.feedback == "full" and problem.feedback != "full":
            raise ValueError(
                f"{type(self).__name__} ('{self.name}') is a full-information agent and needs "
                f"feedback='full'; this problem has feedback={problem.feedback!r}. Make the env "
                "with feedback='full' or pick a bandit agent ('bbcg', 'fkm', 'bfw', 'random')."
            )
        if self.requires_projection and not problem.set.has_projection:
            raise ValueError(
                f"{type(self).__name__} ('{self.name}') needs a Euclidean projection, which "
                f"{problem.set!r} does not provide; use a projection-free agent "
                "('bbcg', 'bfw', 'ofw')."
            )
        self.problem = problem
        self.set = problem.set
        self.horizon = problem.horizon
        self.params: dict[str, Any] = {}
        self.stats: dict[str, Any] = {}
        self.rng = np.random.default_rng()
        self._round = 0
        self._awaiting_update = False
        self._was_reset = False

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in self.params.items()
        )
        return f"{type(self).__name__}({shown})"

    # -- public template methods --------------------------------------------------------
    def reset(self, seed: int | None = None) -> None:
        """Start a new episode; all the agent's randomness comes from ``seed``."""
        self.rng = np.random.default_rng(seed)
        self._round = 0
        self._awaiting_update = False
        self._was_reset = True
        self.stats = {"rounds": 0, "lmo_calls": 0, "projections": 0}
        self._reset()

    def act(self, observation: Any = None) -> np.ndarray:
        """The point of K to play this round (a new array of shape ``set.shape``)."""
        if not self._was_reset:
            raise RuntimeError(f"{type(self).__name__}: call reset() before act()")
        if self._awaiting_update:
            raise RuntimeError(
                f"{type(self).__name__}: act() called twice in round {self._round}; "
                "call update(loss) with the loss of the previous action first"
            )
        if self._round >= self.horizon:
            raise RuntimeError(
                f"{type(self).__name__}: all {self.horizon} rounds of the horizon were played; "
                "build the agent with a larger horizon or reset() it"
            )
        self._awaiting_update = True
        return self._act()

    def update(self, loss: float, info: dict[str, Any] | None = None) -> None:
        """Learn from the loss f_t(x_t) of the last action (and ``info["gradient"]`` if full)."""
        if not self._awaiting_update:
            raise RuntimeError(f"{type(self).__name__}: update() called before act()")
        loss = float(loss)
        if not math.isfinite(loss):
            raise ValueError(f"{type(self).__name__}: loss={loss!r} must be finite")
        if self.feedback == "full" and (info is None or "gradient" not in info):
            raise ValueError(
                f"{type(self).__name__} is a full-information agent: update(loss, info) needs "
                "info['gradient'] (make the env with feedback='full')"
            )
        self._update(loss, info)
        self._awaiting_update = False
        self._round += 1
        self.stats["rounds"] = self._round

    def regret_bound(self) -> float | None:
        """The expected-regret bound of the agent's theorem for this problem (None if none)."""
        return None

    # -- hooks ----------------------------------------------------------------------------
    @abc.abstractmethod
    def _reset(self) -> None:
        """Reset the algorithm's state (``self.rng`` is freshly seeded)."""

    @abc.abstractmethod
    def _act(self) -> np.ndarray:
        """The point to play in round ``self._round``."""

    @abc.abstractmethod
    def _update(self, loss: float, info: dict[str, Any] | None) -> None:
        """Absorb the loss of round ``self._round``."""
