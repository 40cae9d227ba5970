"""Two-point feedback: the action space of pairs of points of K, and the round's losses.

With ``feedback="two-point"`` (Agarwal, Dekel & Xiao 2010) the learner plays two points
x_t^0, x_t^1 of K in round t and observes f_t at both. :class:`PairSpace` is the action
space: a :class:`gymnasium.spaces.Box` of shape (2, *K.shape) over K's bounding box
whose membership and sampling use K itself (each of the two points in K within atol):

    a in space  <=>  a has shape (2, *K.shape), a real dtype, and a[0], a[1] are in K
    space.sample() = (K.sample(rng), K.sample(rng))

Its batch for vector envs (:func:`gymnasium.vector.utils.batch_space`) is the space of
(S, 2, *K.shape) stacked pairs. The round's loss is the mean of the two
(:func:`pair_mean`), the convention of Agarwal et al. under which regret is counted.

References: A. Agarwal, O. Dekel and L. Xiao, "Optimal algorithms for online convex
optimization with multi-point bandit feedback", COLT 2010.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

import numpy as np
from gymnasium import error, spaces
from gymnasium.vector.utils import batch_space

from bco_gym.envs.actions import feasible_pairs
from bco_gym.errors import InfeasibleActionError
from bco_gym.sets.base import ConvexSet
from bco_gym.sets.checks import DEFAULT_ATOL


def pair_mean(first: Any, second: Any) -> Any:
    """(f(x^0) + f(x^1)) / 2, the loss a two-point round counts (floats or arrays)."""
    return (first + second) / 2


class PairSpace(spaces.Box):
    """Pairs of points of a convex set K (float64), shape (2, *K.shape).

    Args:
        convex_set: the feasible set K.
        atol: the tolerance of membership (each point's ``K.violation``).
        seed: seed (or generator) of the space's own sampler.
        batch: None for one pair; an integer S for S pairs stacked along axis 0.

    >>> from bco_gym.sets import Simplex
    >>> space = PairSpace(Simplex(3), seed=0)
    >>> space.shape
    (2, 3)
    >>> space.contains(np.array([[1.0, 0.0, 0.0], [0.0, 0.5, 0.5]]))
    True
    >>> space.contains(np.array([[1.0, 0.0, 0.0], [0.0, 0.5, 0.6]]))
    False
    """

    def __init__(
        self,
        convex_set: ConvexSet,
        atol: float = DEFAULT_ATOL,
        seed: int | np.random.Generator | None = None,
        batch: int | None = None,
    ):
        if not isinstance(convex_set, ConvexSet):
            raise TypeError(f"PairSpace needs a ConvexSet, got {type(convex_set).__name__}")
        if isinstance(atol, bool) or not isinstance(atol, int | float | np.integer | np.floating):
            raise ValueError(f"PairSpace: atol={atol!r} must be finite and >= 0")
        if not (np.isfinite(atol) and atol >= 0):
            raise ValueError(f"PairSpace: atol={atol!r} must be finite and >= 0")
        if batch is not None and (
            isinstance(batch, bool) or not isinstance(batch, int | np.integer) or batch < 1
        ):
            raise ValueError(f"PairSpace: batch={batch!r} must be None or an integer >= 1")
        low, high = convex_set.bounds()
        lead = (2,) if batch is None else (int(batch), 2)
        super().__init__(
            low=np.broadcast_to(low, (*lead, *low.shape)),
            high=np.broadcast_to(high, (*lead, *high.shape)),
            dtype=np.float64,
            seed=seed,
        )
        self.set = convex_set
        self.atol = float(atol)
        self.batch = None if batch is None else int(batch)

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is a pair (a batch of pairs) of points of K within ``atol``."""
        try:
            feasible_pairs(
                self.set, x, atol=self.atol, round_index=0, batched=self.batch is not None
            )
        except InfeasibleActionError:
            return False
        return self.batch is None or np.shape(x)[0] == self.batch

    def sample(self, mask: None = None, probability: None = None) -> np.ndarray:
        """Two random points of K (``batch`` pairs when batched), from ``self.np_random``."""
        if mask is not None or probability is not None:
            raise error.Error(
                f"PairSpace.sample: masks are not supported, got mask={mask!r}, "
                f"probability={probability!r}; expected None for both"
            )
        count = 2 if self.batch is None else 2 * self.batch
        points = np.stack([self.set.sample(self.np_random) for _ in range(count)])
        return points.astype(np.float64, copy=False).reshape(self.shape)

    def __repr__(self) -> str:
        batch = "" if self.batch is None else f", batch={self.batch}"
        return f"PairSpace({self.set!r}, atol={self.atol:g}{batch})"

    def __eq__(self, other: object, /) -> bool:
        return (
            isinstance(other, PairSpace)
            and type(self.set) is type(other.set)
            and repr(self.set) == repr(other.set)
            and self.atol == other.atol
            and self.batch == other.batch
            and super().__eq__(other)
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, like Box


@batch_space.register(PairSpace)
def _batch_pair_space(space: PairSpace, n: int = 1) -> PairSpace:
    """n pairs stacked, for vector environments."""
    if space.batch is not None:
        raise ValueError(f"cannot batch {space!r} again; it is already a batch space")
    return PairSpace(space.set, atol=space.atol, seed=deepcopy(space.np_random), batch=n)
