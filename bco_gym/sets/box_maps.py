"""Maps from the action cube [-1, 1]^shape onto a feasible set K.

Reinforcement-learning libraries (stable-baselines3 in particular) act in a box
``Box(-1, 1, shape)``. A :class:`BoxMap` turns such an action ``a`` into a point of K,
so a general-purpose RL agent can play a BCO problem. Every map here is continuous,
its image lies in K (a point it returns passes ``K.contains``), and it is onto K or
onto K's relative interior, so the best fixed point in hindsight is reachable (exactly
or to within a stated tolerance):

* simplex: a softmax with inverse temperature beta (:class:`SoftmaxMap`), smooth,
  onto the relative interior; beta is set so every vertex is reached within a chosen
  tolerance;
* L2 / L1 / nuclear-norm balls: the radial gauge map (:class:`GaugeMap`), a
  homeomorphism of the cube onto the ball;
* boxes: the affine map (:class:`AffineMap`), a bijection;
* any other set with a Euclidean projection: the affine map onto the bounding box of
  K followed by the projection onto K (:class:`ProjectedAffineMap`), onto K.

A set with none of these (no projection and no closed-form map) raises a
``ValueError`` from :func:`box_map`. The maps depend only on the set, so both the
env-side wrapper (``bco_gym.wrappers.BoxActionAdapter``) and the agent-side
``bco_gym.agents.SB3Agent`` use them without agents importing envs.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable
from typing import ClassVar

import numpy as np

from bco_gym.sets.balls import L1Ball, L2Ball
from bco_gym.sets.base import ConvexSet
from bco_gym.sets.box import Hypercube
from bco_gym.sets.nuclear import NuclearNormBall
from bco_gym.sets.simplex import Simplex

DEFAULT_VERTEX_TOLERANCE = 1e-3


class MappedPoint(np.ndarray):
    """A point of K that a box map already produced from a box action.

    ``SB3Agent.act`` returns its plays as this (a view; otherwise a plain float64
    array), so :class:`bco_gym.wrappers.BoxActionAdapter` can tell when it is handed
    a point instead of a box action (the map would then apply twice) and warn.
    """


class BoxMap(abc.ABC):
    """A continuous map from the cube [-1, 1]^shape into a convex set K.

    Calling the map validates the action once (shape, finiteness), clips it to the
    cube (a policy's Gaussian sample may leave it; SB3 clips too) and delegates to
    :meth:`_map`, which returns a new float64 array of ``convex_set.shape``.

    Attributes:
        convex_set: the set K.
        shape: the shape of both an action and a point.
        uses_projection: whether each call projects onto K once (for agents' stats).
    """

    name: ClassVar[str] = "box map"
    uses_projection: ClassVar[bool] = False

    def __init__(self, convex_set: ConvexSet):
        if not isinstance(convex_set, ConvexSet):
            raise TypeError(f"{type(self).__name__} needs a ConvexSet, got {convex_set!r}")
        self.convex_set = convex_set
        self.shape = convex_set.shape

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.convex_set!r})"

    def __call__(self, action: np.ndarray) -> np.ndarray:
        """The point of K that the cube action ``action`` stands for."""
        array = np.asarray(action)
        if array.dtype.kind not in "iuf":
            raise ValueError(
                f"{type(self).__name__}: action {action!r} has dtype {array.dtype}; expected "
                "real numbers (an integer or floating dtype; never bool, complex, strings or "
                "objects) in the box [-1, 1]"
            )
        array = array.astype(float, copy=False)
        if array.shape != self.shape:
            raise ValueError(
                f"{type(self).__name__}: action of shape {array.shape}, expected {self.shape} "
                f"(the shape of {self.convex_set!r})"
            )
        if not np.all(np.isfinite(array)):
            raise ValueError(
                f"{type(self).__name__}: action has non-finite entries: {array}; expected "
                "finite numbers (clipped to the box [-1, 1])"
            )
        return self._map(np.clip(array, -1.0, 1.0))

    @abc.abstractmethod
    def _map(self, action: np.ndarray) -> np.ndarray:
        """The image of a validated action of the cube (a new float64 array)."""


class SoftmaxMap(BoxMap):
    """Simplex: x = softmax(beta * a), i.e. x_i = exp(beta a_i) / sum_j exp(beta a_j).

    Smooth and onto the relative interior of the simplex (the log-ratios
    beta(a_i - a_j) range over [-2 beta, 2 beta]). The inverse temperature beta is
    chosen so every vertex is within ``vertex_tolerance`` (tol) of the image: at the
    corner a = 2 e_i - 1 the weight of i is 1 / (1 + (n - 1) e^{-2 beta}), so with

        beta = (log((n - 1) / tol) + 1) / 2,   i.e. (n - 1) e^{-2 beta} = tol / e,

    the distance to e_i is at most 2 tol / e < 0.74 tol in the L1 norm and
    sqrt(2) tol / e < 0.53 tol in the L2 norm. A linear loss with gradients bounded by
    G thus costs at most G * tol per round over the vertex it cannot hit exactly. A
    larger beta reaches closer but makes the map steeper (more sensitive to the
    policy's noise).
    """

    name = "softmax"

    def __init__(self, convex_set: Simplex, vertex_tolerance: float = DEFAULT_VERTEX_TOLERANCE):
        super().__init__(convex_set)
        if not isinstance(convex_set, Simplex):
            raise TypeError(f"SoftmaxMap needs a Simplex, got {convex_set!r}")
        _check_vertex_tolerance(vertex_tolerance)
        self.vertex_tolerance = float(vertex_tolerance)
        self.inverse_temperature = (math.log((convex_set.dim - 1) / vertex_tolerance) + 1.0) / 2.0

    def _map(self, action: np.ndarray) -> np.ndarray:
        logits = self.inverse_temperature * (action - action.max())
        weights = np.exp(logits)
        return weights / weights.sum()


class GaugeMap(BoxMap):
    """Full-dimensional body K around its centre c: the radial gauge map

        x = c + a * ||a||_inf / gamma(a)   (x = c at a = 0),

    where gamma is the gauge (Minkowski functional) of K - c, so K = {c + v :
    gamma(v) <= 1}. It sends the cube's level set {||a||_inf = s} onto the level set
    {gamma(x - c) = s}, ray by ray: hence gamma(x - c) = ||a||_inf <= 1 (x in K), the
    cube's boundary lands on K's boundary, and y = c + v is hit by
    a = v * gamma(v) / ||v||_inf, so the map is onto (a homeomorphism of the cube onto K).
    Continuous at 0 since ||x - c|| <= R ||a||_inf.

    Gauges used: L2 ball ||v||_2 / rho (x = rho a ||a||_inf / ||a||_2, every corner of
    the cube lands on the sphere); L1 ball ||v||_1 / rho (a = +-e_i gives the vertex
    +-rho e_i); nuclear-norm ball ||V||_* / rho (one singular value decomposition per
    call, O(rows cols min(rows, cols))).
    """

    name = "gauge"

    def __init__(self, convex_set: ConvexSet, gauge: Callable[[np.ndarray], float]):
        super().__init__(convex_set)
        self.gauge = gauge

    def _map(self, action: np.ndarray) -> np.ndarray:
        level = float(np.max(np.abs(action)))
        center = self.convex_set.center
        if level == 0.0:
            return np.array(center, dtype=float, copy=True)
        return center + (level / self.gauge(action)) * action


class AffineMap(BoxMap):
    """Box K = [low, high] (entrywise): the affine bijection x = c + a * (high - low) / 2.

    With c = (low + high) / 2 the cube's corners are K's corners; exact and O(dim).
    """

    name = "affine"

    def __init__(self, convex_set: ConvexSet):
        super().__init__(convex_set)
        low, high = convex_set.bounds()
        self._low = np.asarray(low, dtype=float)
        self._high = np.asarray(high, dtype=float)
        self._middle = (self._low + self._high) / 2.0
        self._half_width = (self._high - self._low) / 2.0

    def _map(self, action: np.ndarray) -> np.ndarray:
        # the clip only removes rounding beyond [low, high] at the cube's faces
        return np.clip(self._middle + self._half_width * action, self._low, self._high)


class ProjectedAffineMap(AffineMap):
    """Any set with a Euclidean projection: x = Pi_K(m + a * w) where [m - w, m + w] is
    K's bounding box (``convex_set.bounds()``).

    Continuous (projections are 1-Lipschitz) and onto K: each point of K lies in its
    bounding box and is its own projection. Not smooth, and flat along the normal cone
    of each boundary point; one projection per call, at the set's projection cost
    (a QP for the flow and Birkhoff polytopes).
    """

    name = "projected affine"
    uses_projection = True

    def __init__(self, convex_set: ConvexSet):
        if not convex_set.has_projection:
            raise ValueError(f"ProjectedAffineMap: {convex_set!r} has no Euclidean projection")
        super().__init__(convex_set)

    def _map(self, action: np.ndarray) -> np.ndarray:
        return self.convex_set.project(self._middle + self._half_width * action)


def _l2_gauge(radius: float) -> Callable[[np.ndarray], float]:
    return lambda v: float(np.linalg.norm(v)) / radius


def _l1_gauge(radius: float) -> Callable[[np.ndarray], float]:
    return lambda v: float(np.abs(v).sum()) / radius


def _nuclear_gauge(radius: float) -> Callable[[np.ndarray], float]:
    return lambda v: float(np.linalg.svd(v, compute_uv=False).sum()) / radius


def _check_vertex_tolerance(vertex_tolerance: object) -> None:
    if (
        isinstance(vertex_tolerance, bool)
        or not isinstance(vertex_tolerance, int | float | np.floating)
        or not (math.isfinite(vertex_tolerance) and 0.0 < vertex_tolerance < 1.0)
    ):
        raise ValueError(
            f"vertex_tolerance={vertex_tolerance!r} is not allowed; expected a real number in "
            "(0, 1)"
        )


def box_map(convex_set: ConvexSet, vertex_tolerance: float = DEFAULT_VERTEX_TOLERANCE) -> BoxMap:
    """The map from [-1, 1]^shape onto ``convex_set`` used by the RL adapters.

    Simplex -> :class:`SoftmaxMap` (with ``vertex_tolerance``); L2, L1 and nuclear-norm
    balls -> :class:`GaugeMap`; Hypercube -> :class:`AffineMap`; any other set with a
    projection -> :class:`ProjectedAffineMap`. Raises ``ValueError`` for a set with
    neither. ``vertex_tolerance`` is checked (a real number in (0, 1)) for every set.
    """
    _check_vertex_tolerance(vertex_tolerance)
    if isinstance(convex_set, Simplex):
        return SoftmaxMap(convex_set, vertex_tolerance)
    if isinstance(convex_set, L2Ball):
        return GaugeMap(convex_set, _l2_gauge(convex_set.radius))
    if isinstance(convex_set, L1Ball):
        return GaugeMap(convex_set, _l1_gauge(convex_set.radius))
    if isinstance(convex_set, NuclearNormBall):
        return GaugeMap(convex_set, _nuclear_gauge(convex_set.radius))
    if isinstance(convex_set, Hypercube):
        return AffineMap(convex_set)
    if convex_set.has_projection:
        return ProjectedAffineMap(convex_set)
    raise ValueError(
        f"no map from the action box [-1, 1]^{convex_set.shape} onto {convex_set!r}: it has no "
        "Euclidean projection and no closed-form map (those exist for Simplex, L2Ball, L1Ball, "
        "NuclearNormBall and Hypercube). Implement project() for the set to use the generic "
        "map (affine onto the bounding box, then project)."
    )
