"""The focus region of the Regularized Bandit Newton method, in coordinates of aff(K).

F_1 = X_xi = xi x_1 + (1 - xi) X, and each focus-region update intersects it with an
ellipsoid B_{alpha, M}(x) = {y : (y - x)^T M (y - x) <= alpha^2} (Algorithm 1, lines 4
and 22). Everything here acts on coordinates w of V = aff(K) - c (x = c + Q w, as
:mod:`~bco_gym.agents.barriers` writes them), where X is

* a Euclidean ball (``ball``: centre and radius), or
* a polyhedron {w : G w <= h} (the box: G = [I; -I]; the sets {x >= 0} within aff(K):
  G = -Q[free rows], h = c[free rows]).

:class:`FocusRegion` holds F_t: membership, the log-barrier of its constraints, uniform
samples drawn by hit-and-run (Smith 1984; Lovasz & Vempala 2006), and
:func:`minimize_over` minimises a smooth convex function over F_t by a barrier method
(Nesterov 2004, Section 4.2) -- the "IPM" of the paper's Section 7.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from bco_gym.agents.barriers import BallBarrier, Barrier, BoxBarrier, NonnegativeBarrier

#: (value, gradient, Hessian) of a function of w; value inf outside its domain.
Derivatives = tuple[float, np.ndarray, np.ndarray]


@dataclass
class Domain:
    """X in coordinates: a ball ||w - centre|| <= radius, or {w : G w <= h}."""

    ball: tuple[np.ndarray, float] | None = None
    rows: np.ndarray | None = None  # G
    limits: np.ndarray | None = None  # h

    @classmethod
    def of(cls, barrier: Barrier) -> Domain:
        """The constraints of the set whose barrier ``barrier`` is."""
        d = barrier.dimension
        if isinstance(barrier, BallBarrier):
            return cls(ball=(np.zeros(d), barrier.radius))
        if isinstance(barrier, BoxBarrier):
            rows = np.vstack([np.eye(d), -np.eye(d)])
            limits = np.concatenate([barrier.high - barrier.center, barrier.center - barrier.low])
            return cls(rows=rows, limits=limits)
        if isinstance(barrier, NonnegativeBarrier):
            free = barrier._rows
            basis = barrier.basis if barrier.basis is not None else np.eye(d)
            return cls(rows=-basis[free], limits=barrier.center[free].copy())
        raise TypeError(f"no constraint form for {type(barrier).__name__}")  # pragma: no cover

    def scaled(self, pole: np.ndarray, xi: float) -> Domain:
        """X_xi = xi pole + (1 - xi) X (the image of X under z -> xi pole + (1 - xi) z)."""
        if self.ball is not None:
            centre, radius = self.ball
            return Domain(ball=(xi * pole + (1 - xi) * centre, (1 - xi) * radius))
        assert self.rows is not None and self.limits is not None
        return Domain(rows=self.rows, limits=(1 - xi) * self.limits + xi * (self.rows @ pole))

    @property
    def parameter(self) -> int:
        """The barrier parameter of the log-barrier of these constraints."""
        return 1 if self.ball is not None else len(self.limits)  # type: ignore[arg-type]


@dataclass
class FocusRegion:
    """F_t = X_xi intersected with the ellipsoids added so far (lines 4 and 22)."""

    domain: Domain
    radius: float  # alpha
    centres: list[np.ndarray] = field(default_factory=list)
    shapes: list[np.ndarray] = field(default_factory=list)  # the M of each ellipsoid

    def add(self, centre: np.ndarray, shape: np.ndarray) -> None:
        """F_(t+1) = F_t intersected with B_{alpha, shape}(centre)."""
        self.centres.append(centre.copy())
        self.shapes.append(shape.copy())

    @property
    def parameter(self) -> int:
        """The parameter of :meth:`barrier` (one per ellipsoid, X_xi's)."""
        return self.domain.parameter + len(self.centres)

    # -- membership -------------------------------------------------------------------------
    def slacks(self, point: np.ndarray) -> np.ndarray:
        """The slack of every constraint at ``point`` (all > 0 inside int F)."""
        parts = []
        domain = self.domain
        if domain.ball is not None:
            offset = point - domain.ball[0]
            parts.append(np.array([domain.ball[1] ** 2 - offset @ offset]))
        else:
            parts.append(domain.limits - domain.rows @ point)  # type: ignore[operator]
        for centre, shape in zip(self.centres, self.shapes, strict=True):
            offset = point - centre
            parts.append(np.array([self.radius**2 - offset @ shape @ offset]))
        return np.concatenate(parts)

    def contains(self, point: np.ndarray) -> bool:
        """Whether ``point`` is in the interior of F_t."""
        return bool(np.all(self.slacks(point) > 0.0))

    def fraction_inside(self, samples: np.ndarray, centre: np.ndarray, shape: np.ndarray) -> float:
        """The fraction of ``samples`` (N, d) in B_{alpha, shape}(centre): the estimate of
        Vol(F_t intersected with B)/Vol(F_t) when the samples are uniform on F_t."""
        offsets = samples - centre
        values = np.einsum("ij,ij->i", offsets @ shape, offsets)
        return float(np.count_nonzero(values <= self.radius**2)) / len(samples)

    # -- the log-barrier of F_t -------------------------------------------------------------
    def barrier(self, point: np.ndarray) -> Derivatives:
        """B(w) = -sum log(slack) over the constraints, with its gradient and Hessian."""
        d = len(point)
        value, gradient, hessian = 0.0, np.zeros(d), np.zeros((d, d))
        domain = self.domain
        if domain.ball is not None:
            offset = point - domain.ball[0]
            slack = domain.ball[1] ** 2 - offset @ offset
            if not slack > 0.0:
                return math.inf, gradient, hessian
            value -= math.log(slack)
            gradient += 2 * offset / slack
            hessian += 2 * np.eye(d) / slack + 4 * np.outer(offset, offset) / slack**2
        else:
            slack = domain.limits - domain.rows @ point  # type: ignore[operator]
            if not np.all(slack > 0.0):
                return math.inf, gradient, hessian
            value -= float(np.sum(np.log(slack)))
            gradient += domain.rows.T @ (1 / slack)  # type: ignore[union-attr]
            hessian += (domain.rows.T / slack**2) @ domain.rows  # type: ignore[union-attr]
        for centre, shape in zip(self.centres, self.shapes, strict=True):
            offset = point - centre
            pulled = shape @ offset
            slack = self.radius**2 - offset @ pulled
            if not slack > 0.0:
                return math.inf, gradient, hessian
            value -= math.log(slack)
            gradient += 2 * pulled / slack
            hessian += 2 * shape / slack + 4 * np.outer(pulled, pulled) / slack**2
        return value, gradient, hessian

    # -- uniform samples by hit-and-run -----------------------------------------------------
    def walk(self, starts: np.ndarray, steps: int, rng: np.random.Generator) -> np.ndarray:
        """Run hit-and-run chains from ``starts`` (N, d), each inside F_t, for ``steps``
        steps: a uniform direction, the chord of F_t through the point along it, a
        uniform point of the chord. The uniform law on F_t is invariant, so a chain
        started from a uniform point stays uniform (the warm start of the paper's
        Section 7: samples of F_t inside the new ellipsoid are uniform on F_(t+1))."""
        points = np.array(starts, dtype=float, copy=True)
        count, d = points.shape
        for _ in range(steps):
            directions = rng.standard_normal((count, d))
            directions /= np.linalg.norm(directions, axis=1, keepdims=True)
            low, high = self._chords(points, directions)
            fraction = rng.random(count)
            usable = high > low
            step = np.where(usable, low + fraction * (high - low), 0.0)
            points += step[:, np.newaxis] * directions
        return points

    def _chords(self, points: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """[low, high]: the steps s with points + s directions in F_t, row by row."""
        count = len(points)
        low, high = np.full(count, -np.inf), np.full(count, np.inf)
        domain = self.domain
        if domain.ball is not None:
            centre, radius = domain.ball
            _intersect_quadratic(
                low,
                high,
                np.ones(count),
                np.einsum("ij,ij->i", points - centre, directions),
                np.einsum("ij,ij->i", points - centre, points - centre) - radius**2,
            )
        else:
            speeds = directions @ domain.rows.T  # type: ignore[union-attr]
            slacks = domain.limits - points @ domain.rows.T  # type: ignore[operator]
            with np.errstate(divide="ignore", invalid="ignore"):
                ratios = slacks / speeds
            high = np.minimum(high, np.min(np.where(speeds > 0, ratios, np.inf), axis=1))
            low = np.maximum(low, np.max(np.where(speeds < 0, ratios, -np.inf), axis=1))
        for centre, shape in zip(self.centres, self.shapes, strict=True):
            offsets = points - centre
            pulled = directions @ shape
            _intersect_quadratic(
                low,
                high,
                np.einsum("ij,ij->i", pulled, directions),
                np.einsum("ij,ij->i", pulled, offsets),
                np.einsum("ij,ij->i", offsets @ shape, offsets) - self.radius**2,
            )
        return low, high


def positive_definite(matrix: np.ndarray) -> bool:
    """Whether the symmetric ``matrix`` is positive definite (its Cholesky factor exists)."""
    try:
        np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:
        return False
    return True


def _intersect_quadratic(
    low: np.ndarray, high: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray
) -> None:
    """Intersect [low, high] in place with {s : a s^2 + 2 b s + c <= 0} (a > 0, c <= 0)."""
    root = np.sqrt(np.maximum(b * b - a * c, 0.0))
    np.maximum(low, (-b - root) / a, out=low)
    np.minimum(high, (-b + root) / a, out=high)


# -- minimisation ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Solve:
    """A minimiser and the work it took."""

    point: np.ndarray
    steps: int
    converged: bool


def newton(
    function: Callable[[np.ndarray], Derivatives],
    start: np.ndarray,
    tolerance: float,
    max_steps: int,
    first: Derivatives | None = None,
) -> Solve:
    """Damped Newton from ``start`` on a strictly convex ``function`` (inf outside its
    domain): step -H^(-1) g / (1 + lambda) while the decrement lambda >= 1/4, the full
    step below (Nesterov 2004, Section 4.1.5), halved while it leaves the domain or
    raises the value; at least one step, then until lambda <= ``tolerance``. ``first``:
    the function's derivatives at ``start`` when the caller has them."""
    point = np.array(start, dtype=float, copy=True)
    value, gradient, hessian = function(point) if first is None else first
    for step in range(max_steps):
        if not positive_definite(hessian):
            return Solve(point, step, False)  # not convex here
        direction = -np.linalg.solve(hessian, gradient)
        decrement = math.sqrt(max(float(-gradient @ direction), 0.0))
        if step > 0 and decrement <= tolerance:
            return Solve(point, step, True)
        if decrement >= 0.25:
            direction /= 1.0 + decrement
        for _ in range(60):
            trial = function(point + direction)
            if math.isfinite(trial[0]) and trial[0] <= value + 1e-12 * max(1.0, abs(value)):
                break
            direction /= 2.0
        else:
            return Solve(point, step, decrement <= tolerance)
        point = point + direction
        value, gradient, hessian = trial
        if decrement <= tolerance:
            return Solve(point, step + 1, True)
    return Solve(point, max_steps, False)


def minimize_over(
    function: Callable[[np.ndarray], Derivatives],
    region: FocusRegion,
    start: np.ndarray,
    tolerance: float,
    max_steps: int,
) -> Solve:
    """min of ``function`` (convex) over F_t by the barrier method from the interior point
    ``start``: w_mu = argmin function + mu B for mu = 1, 1/8, 1/64, ... (damped Newton
    from the previous w_mu), until mu theta <= tolerance max(1, |function|), theta the
    barrier's parameter: then function(w_mu) - min <= mu theta (Nesterov 2004, Section
    4.2.3). The result is in int F_t."""
    point, total, mu = np.array(start, dtype=float), 0, 1.0
    theta = region.parameter
    while True:

        def penalised(w: np.ndarray, mu: float = mu) -> Derivatives:
            value, gradient, hessian = function(w)
            b_value, b_gradient, b_hessian = region.barrier(w)
            return value + mu * b_value, gradient + mu * b_gradient, hessian + mu * b_hessian

        solve = newton(penalised, point, tolerance, max_steps)
        point, total = solve.point, total + solve.steps
        if not solve.converged:
            return Solve(point, total, False)
        if mu * theta <= tolerance * max(1.0, abs(function(point)[0])):
            return Solve(point, total, True)
        mu /= 8.0
