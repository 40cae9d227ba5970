"""Certified solvers for the offline comparator: min over K of a smooth convex function.

Every answer comes with the Frank-Wolfe (duality) gap at the returned point x in K,

    gap(x) = max_{v in K} <grad f(x), x - v> = <grad f(x), x - lmo(grad f(x))>,

which bounds f(x) - min_K f by convexity (f(v) >= f(x) + <grad f(x), v - x>). So a
comparator is certified whatever method produced its point.

* :func:`frank_wolfe`: the away-step Frank-Wolfe method (Guelat & Marcotte 1986;
  Lacoste-Julien & Jaggi 2015, Algorithm 1). It touches K only through ``lmo`` and keeps
  the iterate as a convex combination of the oracle's answers (the active set). Each
  iteration takes the better of the Frank-Wolfe direction v - x (v = lmo(grad)) and the
  away direction x - s (s the active atom most aligned with the gradient), with the
  step chosen by the objective's line search (exact for quadratics). Linear
  convergence on polytopes for quadratics; sublinear O(1/k) in general.
* :func:`projected_gradient`: accelerated projected gradient (FISTA, Beck & Teboulle
  2009) with gradient-based adaptive restart (O'Donoghue & Candes 2015), for quadratics
  on sets with a Euclidean projection.
* :func:`minimize_quadratic`: picks one (projection when K has one, Frank-Wolfe
  otherwise), falls back to the other when the first stops short of the tolerance.

Points are handled flattened (vectors of length K.dim); oracles see K's shape.

References: Lacoste-Julien & Jaggi, "On the global linear convergence of Frank-Wolfe
optimization variants", NeurIPS 2015; Jaggi, "Revisiting Frank-Wolfe", ICML 2013.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from bco_gym import portable
from bco_gym.losses.base import Comparator
from bco_gym.sets.base import ConvexSet

MAX_ATOMS = 2000
FEASIBILITY_ATOL = 1e-9


class SmoothObjective(Protocol):
    """What :func:`frank_wolfe` needs from f (flattened points)."""

    def value(self, x: np.ndarray) -> float: ...

    def gradient(self, x: np.ndarray) -> np.ndarray: ...

    def line_search(
        self, x: np.ndarray, gradient: np.ndarray, direction: np.ndarray, max_step: float
    ) -> float:
        """A step in [0, max_step] along ``direction`` that does not increase f."""
        ...


@dataclass(frozen=True)
class Quadratic:
    """q(x) = 1/2 <u, H u> + <p, u> + constant with u = x - origin (flattened points).

    Attributes:
        hessian: H, a symmetric positive semidefinite (dim, dim) matrix, or its
            diagonal as a (dim,) vector.
        linear: p, the gradient at ``origin``.
        constant: q(origin).
        origin: the expansion point (keeps values accurate far from 0); default 0.
    """

    hessian: np.ndarray
    linear: np.ndarray
    constant: float = 0.0
    origin: np.ndarray | None = field(default=None)

    def _shift(self, x: np.ndarray) -> np.ndarray:
        return x if self.origin is None else x - self.origin

    def apply(self, v: np.ndarray) -> np.ndarray:
        """H v."""
        return self.hessian * v if self.hessian.ndim == 1 else portable.matvec(self.hessian, v)

    def value(self, x: np.ndarray) -> float:
        u = self._shift(x)
        return 0.5 * portable.dot(u, self.apply(u)) + portable.dot(self.linear, u) + self.constant

    def gradient(self, x: np.ndarray) -> np.ndarray:
        return self.apply(self._shift(x)) + self.linear

    def line_search(
        self, x: np.ndarray, gradient: np.ndarray, direction: np.ndarray, max_step: float
    ) -> float:
        """Exact: argmin over [0, max_step] of q(x + s d) = clip(-<g, d>/<d, H d>)."""
        slope = portable.dot(gradient, direction)
        curvature = portable.dot(direction, self.apply(direction))
        if slope >= 0.0:
            return 0.0
        if curvature <= 0.0:
            return max_step
        return min(max_step, -slope / curvature)

    def largest_eigenvalue(self) -> float:
        """lambda_max(H) (the smoothness constant L)."""
        if self.hessian.ndim == 1:
            return float(np.max(self.hessian, initial=0.0))
        return float(np.linalg.eigvalsh(self.hessian)[-1])


@dataclass(frozen=True)
class SolverResult:
    """A certified approximate minimiser.

    Attributes:
        point: x in K (K's shape).
        value: f(x).
        gap: the Frank-Wolfe gap at x, >= f(x) - min_K f.
        iterations: iterations taken.
        converged: whether ``gap <= tolerance``.
    """

    point: np.ndarray
    value: float
    gap: float
    iterations: int
    converged: bool


def frank_wolfe_gap(
    convex_set: ConvexSet, gradient: np.ndarray, x: np.ndarray
) -> tuple[float, np.ndarray]:
    """(gap, v) with v = lmo(g): the Frank-Wolfe gap at x (flattened), never clipped.

    gap is the computed <g, x - v> plus a bound on its rounding error,
    (dim + 2) * eps * sum_i |g_i (x_i - v_i)| (the bound for a dot product of dim terms,
    with the subtraction's rounding), plus eps * sum_i |g_i| (|x_i| + |v_i|) for x and v
    being points of K only to one rounding per coordinate (an LMO answer on a curved
    boundary is computed, not exact); so it bounds the exact gap of the exact points. By
    convexity f(x) - min_K f <= <g, x - v> for any x where f is defined; for x in K
    the gap is >= 0. A negative gap says x lies outside K (by rounding, e.g. off the
    affine hull) on a side where f is below its minimum over K: as a stopping test it
    means "done"; as a certificate it is refused by :func:`certified_gap` unless it is
    within the rounding allowance of a computed point of K.
    """
    vertex = np.asarray(convex_set.lmo(gradient.reshape(convex_set.shape)), dtype=float).ravel()
    difference = x - vertex
    eps = np.finfo(float).eps
    dot_error = (len(difference) + 2) * eps * float(np.abs(gradient * difference).sum())
    point_error = eps * portable.dot(np.abs(gradient), np.abs(x) + np.abs(vertex))
    allowance = dot_error + point_error
    return portable.dot(gradient, difference) + allowance, vertex


def certified_gap(
    convex_set: ConvexSet, gradient: np.ndarray, x: np.ndarray
) -> tuple[float, np.ndarray]:
    """:func:`frank_wolfe_gap` for a point returned as a certified answer.

    A computed point of K is K's only to its rounding: a projection's polished answer
    holds K's equations to a relative 1e-12 (``bco_gym.sets._qp``), an answer computed on
    another CPU is the same to ``portable.RELATIVE_TOLERANCE`` = 1e-12. So x is taken as a
    point of K to within the distance tau = 1e-12 (||c|| + R) (:func:`membership_distance`,
    c and R K's centre and outer radius, so ||c|| + R bounds the norm of K's points).

    The allowance. For y in K, <g, y - v> >= 0 (v minimises <g, .> over K); if
    ||x - y|| <= tau then gap(x) = <g, y - v> + <g, x - y> >= -||g|| tau. So a gap below
    -||g|| tau proves x farther than tau from K, and is refused. A gap in
    [-||g|| tau, 0) is x's rounding off K seen through a large gradient (the flow
    polytope's conservation, 1e-14 off, under a gradient of norm 158: -8.8e-13); the
    certificate returned is then 0, a true bound: f(x) - min_K f <= gap < 0 by
    convexity, whether or not x lies in K. A nonnegative gap is returned as it stands.

    Raises:
        ArithmeticError: the gap is below -||g|| tau, so x is not in K (by more than
            rounding) and its value lies below min_K f: a bug at the source of x (fix
            the point, e.g. renormalise it onto K), never a number to clip to 0.
    """
    gap, vertex = frank_wolfe_gap(convex_set, gradient, x)
    if gap >= 0.0:
        return gap, vertex
    allowance = math.sqrt(portable.dot(gradient, gradient)) * membership_distance(convex_set)
    if not gap >= -allowance:
        raise ArithmeticError(
            f"negative Frank-Wolfe gap {gap!r} at a point returned as certified on "
            f"{convex_set!r}, below the rounding allowance -{allowance!r} (the gradient's "
            "norm times the distance within which a computed point counts as K's): the "
            "point is not in the set (its value is below the minimum)"
        )
    return 0.0, vertex


def membership_distance(convex_set: ConvexSet) -> float:
    """tau = 1e-12 (||c|| + R): the distance within which a computed point counts as K's.

    ``portable.RELATIVE_TOLERANCE`` of a bound on the norm of K's points (c the centre,
    R the outer radius): the resolution to which results travel between CPUs, and the
    relative accuracy of a polished projection's equations. See :func:`certified_gap`.
    """
    center = np.asarray(convex_set.center, dtype=float).ravel()
    scale = math.sqrt(portable.dot(center, center)) + float(convex_set.outer_radius)
    return portable.RELATIVE_TOLERANCE * scale


def _result(
    convex_set: ConvexSet,
    objective: SmoothObjective,
    x: np.ndarray,
    iterations: int,
    tolerance: float,
) -> SolverResult:
    gap, _ = certified_gap(convex_set, objective.gradient(x), x)
    return SolverResult(
        point=x.reshape(convex_set.shape).copy(),
        value=objective.value(x),
        gap=gap,
        iterations=iterations,
        converged=gap <= tolerance,
    )


class _ActiveSet:
    """x = sum_i weights_i atoms_i with atoms in K and weights on the simplex."""

    def __init__(self, start: np.ndarray):
        self.atoms = start[np.newaxis].copy()
        self.weights = np.ones(1)

    def point(self) -> np.ndarray:
        return portable.vecmat(self.weights, self.atoms)

    def index_of(self, atom: np.ndarray) -> int:
        matches = np.flatnonzero(np.all(self.atoms == atom, axis=1))
        return int(matches[0]) if matches.size else -1

    def frank_wolfe_step(self, vertex: np.ndarray, step: float) -> None:
        if step >= 1.0:
            self.atoms, self.weights = vertex[np.newaxis].copy(), np.ones(1)
            return
        self.weights *= 1.0 - step
        index = self.index_of(vertex)
        if index >= 0:
            self.weights[index] += step
        else:
            self.atoms = np.vstack([self.atoms, vertex])
            self.weights = np.append(self.weights, step)
        if len(self.weights) > MAX_ATOMS:
            self.collapse()

    def away_step(self, index: int, step: float, max_step: float) -> None:
        self.weights *= 1.0 + step
        self.weights[index] -= step
        if step >= max_step:
            self.weights[index] = 0.0
        keep = self.weights > 0.0
        self.atoms, self.weights = self.atoms[keep], self.weights[keep]

    def collapse(self) -> None:
        """Forget the decomposition: the current point (in K) becomes the only atom."""
        self.atoms, self.weights = self.point()[np.newaxis], np.ones(1)


def frank_wolfe(
    convex_set: ConvexSet,
    objective: SmoothObjective,
    *,
    tolerance: float,
    start: np.ndarray | None = None,
    max_iterations: int = 20_000,
) -> SolverResult:
    """Away-step Frank-Wolfe until the Frank-Wolfe gap is <= ``tolerance``.

    Iteration (g = grad f(x), v = lmo(g), s = argmax over active atoms of <g, s>):
    if <g, x - v> >= <g, s - x> step along d = v - x with step <= 1, else along
    d = x - s with step <= w_s/(1 - w_s); the step is ``objective.line_search``'s.

    Args:
        convex_set: K (only ``lmo`` and ``center`` are used).
        objective: f, with ``value``, ``gradient`` and ``line_search`` on flattened points.
        tolerance: stop once the gap is at most this.
        start: a point of K (default: K's centre); it is the first atom.
        max_iterations: stop there even if the gap is larger (the result says so).
    """
    x = np.asarray(convex_set.center if start is None else start, dtype=float).ravel().copy()
    active = _ActiveSet(x)
    iteration = 0
    for iteration in range(max_iterations):
        gradient = objective.gradient(x)
        gap, vertex = frank_wolfe_gap(convex_set, gradient, x)
        if gap <= tolerance:
            return _result(convex_set, objective, x, iteration, tolerance)
        scores = portable.matvec(active.atoms, gradient)
        away = int(np.argmax(scores))
        away_gap = float(scores[away] - portable.dot(gradient, x))
        if gap >= away_gap or len(active.weights) == 1:
            direction, max_step = vertex - x, 1.0
            step = objective.line_search(x, gradient, direction, max_step)
            active.frank_wolfe_step(vertex, step)
        else:
            weight = active.weights[away]
            direction, max_step = x - active.atoms[away], weight / (1.0 - weight)
            step = objective.line_search(x, gradient, direction, max_step)
            active.away_step(away, step, max_step)
        if step == 0.0:  # no descent along the chosen direction: numerically converged
            break
        x = active.point() if iteration % 64 == 63 else x + step * direction
    else:
        iteration = max_iterations
    return _result(convex_set, objective, x, iteration, tolerance)


def tangent_part(convex_set: ConvexSet, vector: np.ndarray) -> np.ndarray:
    """The projection of a flattened vector onto V = aff(K) - c (itself if K is full)."""
    if convex_set.aff_dim == convex_set.dim:
        return vector
    return np.asarray(convex_set.tangent(vector.reshape(convex_set.shape)), dtype=float).ravel()


def tangent_smoothness(convex_set: ConvexSet, quadratic: Quadratic) -> float:
    """lambda_max(P H P), P the projector onto V = aff(K) - c: the smoothness along K.

    Curvature across aff(K) never matters (feasible steps lie in V, and projecting onto K
    ignores a gradient's component orthogonal to V), and it can dwarf the rest: the
    portfolio Hessian has a large 1 1^T part orthogonal to the simplex.
    """
    dim = convex_set.dim
    if convex_set.aff_dim == dim or (quadratic.hessian.ndim == 1 and dim > 2000):
        return quadratic.largest_eigenvalue()
    dense = np.diag(quadratic.hessian) if quadratic.hessian.ndim == 1 else quadratic.hessian
    rows = convex_set.tangent_many(dense.reshape(dim, *convex_set.shape)).reshape(dim, dim)
    both = convex_set.tangent_many(rows.T.reshape(dim, *convex_set.shape)).reshape(dim, dim)
    return float(np.linalg.eigvalsh(0.5 * (both + both.T))[-1])


def projected_gradient(
    convex_set: ConvexSet,
    quadratic: Quadratic,
    *,
    tolerance: float,
    start: np.ndarray | None = None,
    max_iterations: int = 20_000,
    check_every: int = 10,
) -> SolverResult:
    """Accelerated projected gradient on a quadratic, stopping on the Frank-Wolfe gap.

    x_{k+1} = Pi_K(y_k - P grad q(y_k)/L), L = lambda_max(P H P), P the projector onto
    V = aff(K) - c (Pi_K(z) = Pi_K(c + P(z - c)), so P changes nothing but the rounding);
    y_{k+1} = x_{k+1} + ((s_k - 1)/s_{k+1})(x_{k+1} - x_k), s_{k+1} = (1 + sqrt(1 + 4 s_k^2))/2,
    restarting (s = 1, y = x) when <grad q(y_k), x_{k+1} - x_k> > 0. The gap is checked
    every ``check_every`` iterations (one LMO call each).
    """
    shape = convex_set.shape
    begin = convex_set.center if start is None else np.reshape(start, shape)
    x = np.asarray(convex_set.project(begin), dtype=float).ravel()
    smoothness = tangent_smoothness(convex_set, quadratic)
    if smoothness <= 0.0:
        return frank_wolfe(convex_set, quadratic, tolerance=tolerance, start=x)
    y, momentum = x.copy(), 1.0
    for iteration in range(max_iterations):
        if iteration % check_every == 0:
            gap, _ = frank_wolfe_gap(convex_set, quadratic.gradient(x), x)
            if gap <= tolerance:
                return _result(convex_set, quadratic, x, iteration, tolerance)
        gradient = quadratic.gradient(y)
        # Pi_K ignores the step's part normal to aff(K), so leave it out: it can be huge
        # (the portfolio Hessian's 1 1^T part) and would cost the projection its accuracy.
        along = tangent_part(convex_set, gradient)
        step_point = (y - along / smoothness).reshape(shape)
        x_next = np.asarray(convex_set.project(step_point), dtype=float).ravel()
        if portable.dot(gradient, x_next - x) > 0.0:
            momentum, y = 1.0, x_next.copy()
        else:
            next_momentum = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * momentum**2))
            y = x_next + ((momentum - 1.0) / next_momentum) * (x_next - x)
            momentum = next_momentum
        x = x_next
    return _result(convex_set, quadratic, x, max_iterations, tolerance)


def minimize_quadratic(
    convex_set: ConvexSet,
    quadratic: Quadratic,
    *,
    tolerance: float,
    start: np.ndarray | None = None,
    method: str = "auto",
    max_iterations: int = 20_000,
) -> SolverResult:
    """min over K of a convex quadratic, certified by the Frank-Wolfe gap.

    Args:
        method: "frank-wolfe", "projected-gradient", or "auto" (projected gradient when
            K has a projection, else Frank-Wolfe). If the chosen method stops short of
            ``tolerance``, the other one (when available) continues from its point and the
            better-certified answer is returned. A projected-gradient point outside K
            (its certificate refused by :func:`certified_gap`) is dropped for Frank-Wolfe.
    """
    methods = ("auto", "frank-wolfe", "projected-gradient")
    if method not in methods:
        raise ValueError(f"method={method!r}; allowed: {', '.join(methods)}")
    can_project = convex_set.has_projection
    if method == "auto":
        method = "projected-gradient" if can_project else "frank-wolfe"
    order = [method] + [m for m in methods[1:] if m != method]
    best: SolverResult | None = None
    for name in order:
        if name == "projected-gradient" and not can_project:
            continue
        begin = start if best is None else best.point
        if name == "frank-wolfe":
            result = frank_wolfe(
                convex_set,
                quadratic,
                tolerance=tolerance,
                start=begin,
                max_iterations=max_iterations,
            )
        else:
            try:
                result = projected_gradient(
                    convex_set,
                    quadratic,
                    tolerance=tolerance,
                    start=begin,
                    max_iterations=max_iterations,
                )
            except (ImportError, NotImplementedError):  # e.g. the optional QP solver is absent
                continue
            except ArithmeticError:
                # An iterative projection (a QP solver) left the last point outside K on
                # the side where q is below its minimum: Frank-Wolfe, whose iterates are
                # combinations of LMO answers, takes over from the start instead.
                continue
        if best is None or result.gap < best.gap:
            best = result
        if best.converged:
            break
    assert best is not None
    return best


def try_project(convex_set: ConvexSet, x: np.ndarray) -> np.ndarray | None:
    """Pi_K(x) if K has a usable projection (in K within FEASIBILITY_ATOL), else None."""
    if not convex_set.has_projection:
        return None
    try:
        projected = np.asarray(convex_set.project(x), dtype=float)
    except (ImportError, NotImplementedError):
        return None
    # Iterative projections (a QP solver) can land a hair outside K: then it is no start.
    return projected if convex_set.contains(projected, atol=FEASIBILITY_ATOL) else None


def quadratic_comparators(
    convex_set: ConvexSet,
    stops: list[int],
    quadratics: list[Quadratic],
    tolerances: list[float],
    *,
    start: np.ndarray | None = None,
    method: str = "auto",
) -> list[Comparator]:
    """One certified :class:`Comparator` per prefix, each warm-started at the previous one."""
    results = []
    for stop, quadratic, tolerance in zip(stops, quadratics, tolerances, strict=True):
        solved = minimize_quadratic(
            convex_set, quadratic, tolerance=tolerance, start=start, method=method
        )
        results.append(Comparator(stop, solved.point, solved.value, solved.gap))
        start = solved.point
    return results
