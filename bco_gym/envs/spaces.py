"""The action space of a BCO environment: the points of a convex set K.

:class:`ConvexSetSpace` is a :class:`gymnasium.spaces.Box` whose ``low``/``high`` are
K's bounding box (``set.bounds()``), so Gymnasium's checkers, flattening and vector
environments treat it as a box, while membership and sampling use K itself:

    x in space  <=>  x has K's shape, a real (integer or float) dtype, and is in K within atol
    space.sample() = K.sample(space.np_random)

Vector environments batch it into the space of ``batch`` points of K stacked along a
leading axis (registered with :func:`gymnasium.vector.utils.batch_space`), so a
vector env's ``action_space.sample()`` is a batch of feasible actions.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

import numpy as np
from gymnasium import error, spaces
from gymnasium.vector.utils import batch_space

from bco_gym.envs.actions import feasible_points
from bco_gym.errors import InfeasibleActionError
from bco_gym.sets.base import ConvexSet
from bco_gym.sets.checks import DEFAULT_ATOL


class ConvexSetSpace(spaces.Box):
    """The points of a convex set K (float64), as a Box over K's bounding box.

    Args:
        convex_set: the feasible set K.
        atol: the tolerance of membership, passed to ``K.contains``.
        seed: seed (or generator) of the space's own sampler, as for any Gymnasium space.
        batch: None for one point; an integer k for k points stacked along axis 0.

    Equality compares the set by type and ``repr`` (sets are plain values), the bounds,
    ``atol`` and ``batch``, so copies made by pickling (async vector envs) compare equal.

    >>> from bco_gym.sets import Simplex
    >>> space = ConvexSetSpace(Simplex(3), seed=0)
    >>> space.low, space.high
    (array([0., 0., 0.]), array([1., 1., 1.]))
    >>> space.contains(np.array([0.5, 0.5, 0.0])), space.contains(np.array([0.5, 0.5, 0.5]))
    (True, False)
    >>> bool(abs(space.sample().sum() - 1.0) < 1e-12)
    True
    """

    def __init__(
        self,
        convex_set: ConvexSet,
        atol: float = DEFAULT_ATOL,
        seed: int | np.random.Generator | None = None,
        batch: int | None = None,
    ):
        if not isinstance(convex_set, ConvexSet):
            raise TypeError(f"ConvexSetSpace needs a ConvexSet, got {type(convex_set).__name__}")
        if (
            isinstance(atol, bool)
            or not isinstance(atol, int | float | np.integer | np.floating)
            or not (np.isfinite(atol) and atol >= 0)
        ):
            raise ValueError(f"ConvexSetSpace: atol={atol!r} must be finite and >= 0")
        if batch is not None and (
            isinstance(batch, bool) or not isinstance(batch, int | np.integer) or batch < 1
        ):
            raise ValueError(f"ConvexSetSpace: batch={batch!r} must be None or an integer >= 1")
        low, high = convex_set.bounds()
        if batch is not None:
            low = np.broadcast_to(low, (int(batch), *low.shape))
            high = np.broadcast_to(high, (int(batch), *high.shape))
        super().__init__(low=low, high=high, dtype=np.float64, seed=seed)
        self.set = convex_set
        self.atol = float(atol)
        self.batch = None if batch is None else int(batch)

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is a point (or a batch of points) of K within ``atol``.

        Exactly the actions ``env.step`` accepts without projecting: real numbers
        (integer or floating dtype; never bool, complex, strings or objects) of the
        space's shape, in K.
        """
        try:
            feasible_points(
                self.set, x, atol=self.atol, round_index=0, batched=self.batch is not None
            )
        except InfeasibleActionError:
            return False
        return self.batch is None or np.shape(x)[0] == self.batch

    def sample(self, mask: None = None, probability: None = None) -> np.ndarray:
        """A random point of K (``batch`` of them when batched), from ``self.np_random``."""
        if mask is not None or probability is not None:
            raise error.Error(
                f"ConvexSetSpace.sample: masks are not supported, got mask={mask!r}, "
                f"probability={probability!r}; expected None for both"
            )
        if self.batch is None:
            return np.asarray(self.set.sample(self.np_random), dtype=np.float64)
        return np.stack([self.set.sample(self.np_random) for _ in range(self.batch)]).astype(
            np.float64, copy=False
        )

    def __repr__(self) -> str:
        batch = "" if self.batch is None else f", batch={self.batch}"
        return f"ConvexSetSpace({self.set!r}, atol={self.atol:g}{batch})"

    def __eq__(self, other: object, /) -> bool:
        return (
            isinstance(other, ConvexSetSpace)
            and type(self.set) is type(other.set)
            and repr(self.set) == repr(other.set)
            and self.atol == other.atol
            and self.batch == other.batch
            and super().__eq__(other)
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, like Box


@batch_space.register(ConvexSetSpace)
def _batch_convex_set_space(space: ConvexSetSpace, n: int = 1) -> ConvexSetSpace:
    """n copies of a point space, for vector environments (a space of n stacked points)."""
    if space.batch is not None:
        raise ValueError(f"cannot batch {space!r} again; it is already a batch space")
    return ConvexSetSpace(space.set, atol=space.atol, seed=deepcopy(space.np_random), batch=n)
