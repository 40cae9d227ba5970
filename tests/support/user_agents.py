"""Agents written as a user would, outside the library (tests import them by path)."""

from __future__ import annotations

from typing import Any

import numpy as np

from bco_gym.agents import Agent, BlockBanditCG


class Jitter(Agent):
    """Plays the set's centre plus a uniform draw from a ball of radius ``spread * r``."""

    name = "jitter"
    SCALE_PARAM = "spread"
    regret_exponent = 1.0

    def __init__(self, problem: Any, spread: float = 0.5):
        super().__init__(problem)
        if not 0 < spread <= 1:
            raise ValueError(f"spread={spread!r} must be in (0, 1]")
        self.params = {"spread": float(spread)}

    def _reset(self) -> None:
        self.last_loss = np.nan

    def _act(self) -> np.ndarray:
        direction = self.rng.standard_normal(self.set.shape)
        direction /= np.linalg.norm(direction)
        radius = self.params["spread"] * self.set.inner_radius * self.rng.uniform() ** 0.5
        return self.set.center + radius * direction

    def _update(self, loss: float, info: Any) -> None:
        self.last_loss = loss


class Unnamed(Jitter):
    """Jitter without a name of its own (labelled by its qualified name)."""

    name = Agent.name
    SCALE_PARAM = None
    regret_exponent = None


def jitter_factory(problem: Any, **kwargs: Any) -> Jitter:
    """A factory (not a class) building a Jitter."""
    return Jitter(problem, **kwargs)


class Faulty(Jitter):
    """Jitter that misbehaves from round ``at`` on: "raise", "nan", "shape" or "outside"."""

    name = "faulty"
    OPTIONS = ("spread", "fault", "at")

    def __init__(self, problem: Any, spread: float = 0.5, fault: str = "raise", at: int = 3):
        super().__init__(problem, spread)
        self.fault, self.at = fault, int(at)
        self.params.update(fault=fault, at=self.at)

    def _act(self) -> np.ndarray:
        point = super()._act()
        if self._round < self.at:
            return point
        if self.fault == "raise":
            raise RuntimeError(f"faulty agent gives up in round {self._round}")
        if self.fault == "nan":
            return np.full(self.set.shape, np.nan)
        if self.fault == "shape":
            return np.zeros(self.set.dim + 1)
        return self.set.center + 10 * self.set.outer_radius * np.ones(self.set.shape)


class Fragile(Jitter):
    """Jitter whose run raises in round 2 when its spread is above ``limit``, and when reset
    with seed ``bad_seed`` and its spread is above ``limit / 2`` (a value failing on one
    seed; the engine resets an agent with ``agent_seed_for(cell seed)``)."""

    name = "fragile"
    OPTIONS = ("spread", "limit", "bad_seed")

    def __init__(
        self, problem: Any, spread: float = 0.5, limit: float = 0.5, bad_seed: int | None = None
    ):
        super().__init__(problem, spread)
        self.limit, self.bad_seed = float(limit), bad_seed
        self.params.update(limit=self.limit, bad_seed=bad_seed)

    def reset(self, seed: int | None = None) -> None:
        self.seed = seed
        super().reset(seed)

    def _act(self) -> np.ndarray:
        spread = self.params["spread"]
        unlucky = self.seed == self.bad_seed and spread > self.limit / 2
        if self._round >= 2 and (spread > self.limit or unlucky):
            raise RuntimeError(f"fragile agent breaks with spread={spread:g} on seed {self.seed}")
        return super()._act()


class NotAnAgent:
    """A class that is not an Agent."""


class HalfBBCG(BlockBanditCG):
    """A user's BBCG with c = 1 by default: it inherits ``name = "bbcg"``, yet its results
    must not read as the built-in's (they are labelled by its import path)."""

    def __init__(self, problem: Any, c: float = 1.0, **kwargs: Any):
        super().__init__(problem, c=c, **kwargs)


class GradientJitter(Jitter):
    """Jitter on full information: it keeps the last gradient it was shown."""

    name = "gradient-jitter"
    feedback = "full"
    regret_exponent = 0.5

    def _update(self, loss: float, info: Any) -> None:
        self.last_gradient = np.array(info["gradient"])


def gradient_jitter_factory(problem: Any, **kwargs: Any) -> GradientJitter:
    """A factory (declaring nothing) of a full-information agent."""
    return GradientJitter(problem, **kwargs)


class GuessedJitter(Jitter):
    """Jitter whose default spread is a guess, not a theorem's (``THEORY_DEFAULTS``)."""

    name = "guessed-jitter"
    THEORY_DEFAULTS = False


class Centre(Jitter):
    """Plays the set's centre every round (an honest agent to compare cheaters with)."""

    name = "centre"

    def _act(self) -> np.ndarray:
        return self.set.center.copy()


class Shrinker(Centre):
    """Cheats: shrinks its set to radius 1e-9 (a comparator near 0, were it the env's)."""

    name = "shrinker"

    def __init__(self, problem: Any, spread: float = 0.5):
        super().__init__(problem, spread)
        self.set.radius = 1e-9


class Widener(Centre):
    """Cheats: widens its set to radius 50, then plays a point of norm 1.5."""

    name = "widener"

    def __init__(self, problem: Any, spread: float = 0.5):
        super().__init__(problem, spread)
        self.set.radius = 50.0

    def _act(self) -> np.ndarray:
        point = np.zeros(self.set.shape)
        point[0] = 1.5
        return point
