"""The description of a BCO problem that environments publish and agents read."""

from __future__ import annotations

import copy
import dataclasses
import math
import warnings
from dataclasses import dataclass

from bco_gym.sets.base import ConvexSet

FEEDBACKS = ("bandit", "full", "two-point")


@dataclass(frozen=True)
class Problem:
    """A bandit convex optimization problem, as an agent is allowed to know it.

    Attributes:
        set: the feasible set K.
        horizon: the number of rounds T (known in advance, as in the paper).
        lipschitz: G, a bound on the (sub)gradient norms of every f_t over K.
        bound: M, a bound on |f_t(x)| over K.
        feedback: "bandit" (only f_t(x_t) is revealed), "full" (the gradient too) or
            "two-point" (the learner plays two points of K and sees f_t at both;
            Agarwal, Dekel & Xiao 2010).
    """

    set: ConvexSet
    horizon: int
    lipschitz: float
    bound: float
    feedback: str = "bandit"

    def __post_init__(self) -> None:
        if not isinstance(self.set, ConvexSet):
            raise TypeError(f"Problem.set must be a ConvexSet, got {type(self.set).__name__}")
        if isinstance(self.horizon, bool) or int(self.horizon) != self.horizon or self.horizon < 1:
            raise ValueError(f"Problem.horizon={self.horizon!r} must be a positive integer")
        object.__setattr__(self, "horizon", int(self.horizon))
        for name in ("lipschitz", "bound"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ValueError(f"Problem.{name}={value!r} must be a finite number > 0")
            object.__setattr__(self, name, float(value))
        if self.feedback not in FEEDBACKS:
            raise ValueError(f"Problem.feedback={self.feedback!r}; allowed: {', '.join(FEEDBACKS)}")


def own_copy(problem: Problem) -> Problem:
    """``problem`` with a deep copy of its set: what an env publishes and each agent gets.

    An agent cannot change the problem it is scored on: the env checks plays and computes
    the comparator on its own set, and an agent that writes to its set (``set.radius =
    50``) changes only its own copy. The copy is made once, when the env or the agent is
    built; a set that cannot be deep-copied is shared, with a warning saying so.
    """
    try:
        private = copy.deepcopy(problem.set)
    except Exception as error:  # a user's set holding an object that does not copy
        warnings.warn(
            f"{problem.set!r} could not be copied ({type(error).__name__}: {error}); the agent "
            "shares the env's set object, so an agent that changes it changes the env's",
            UserWarning,
            stacklevel=3,
        )
        return problem
    return dataclasses.replace(problem, set=private)
