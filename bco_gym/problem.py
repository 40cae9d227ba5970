"""The description of a BCO problem that environments publish and agents read."""

from __future__ import annotations

import math
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
