"""Conditional-gradient (Frank-Wolfe) routines on the regularised objective

    F(x) = <b, x> + ||x - x_1||^2,   grad F(x) = b + 2(x - x_1),

which is 2-smooth and 2-strongly convex. It is the Regularized-Follow-the-Leader
objective of the projection-free online methods: b = eta * (sum of the gradients or
gradient estimates so far) and x_1 the starting point.

* :func:`conditional_gradient_rows` -- Algorithm 2 of Garber & Kretzu (2020): a do-while
  loop of Frank-Wolfe steps with exact line search, stopped once the Frank-Wolfe gap
  certifies the accuracy (used by BBCG once per block), on S problems at once;
  :func:`conditional_gradient` is its batch of one.
* :func:`online_frank_wolfe_step` -- one Frank-Wolfe step per round with a prescribed
  weight sigma_t (Hazan & Kale 2012; used by OFW and bandit Frank-Wolfe), on S rows.

Both touch the set only through its linear minimization oracle, and every reduction is
row-independent (:func:`~bco_gym.portable.row_dot`), so row i of a batch is bit for bit
the routine run on row i alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bco_gym.portable import row_dot as row_dot  # re-exported for the routines

Oracle = Callable[[np.ndarray], np.ndarray]
#: An oracle over a leading batch axis (``lmo_many``): row i is the answer to row i.
BatchOracle = Callable[[np.ndarray], np.ndarray]

#: Safety stop of :func:`conditional_gradient`: with an exact LMO the gap reaches any
#: tolerance > 0 long before this; reaching it signals an inexact or wrong oracle.
MAX_ITERATIONS = 1_000_000


@dataclass(frozen=True)
class ConditionalGradientResult:
    """Output of :func:`conditional_gradient` (one run).

    Attributes:
        point: the certified point z with Frank-Wolfe gap <= tolerance, hence
            F(z) - min F <= gap and ||z - argmin F||^2 <= gap (2-strong convexity).
        gap: the certificate <grad F(z), z - v> at the returned point.
        iterations: the number of do-while iterations, i.e. of LMO calls (>= 1).
    """

    point: np.ndarray
    gap: float
    iterations: int


@dataclass(frozen=True)
class ConditionalGradientRows:
    """Output of :func:`conditional_gradient_rows`: one certified run per row.

    Attributes:
        points: (S, *shape), row i the certified point of row i's problem.
        gaps: (S,) the certificates.
        iterations: (S,) int64, the LMO calls of each row (>= 1).
    """

    points: np.ndarray
    gaps: np.ndarray
    iterations: np.ndarray

    def row(self, index: int) -> ConditionalGradientResult:
        """Row ``index`` as a single run's result."""
        return ConditionalGradientResult(
            point=self.points[index],
            gap=float(self.gaps[index]),
            iterations=int(self.iterations[index]),
        )


def conditional_gradient_rows(
    lmo_many: BatchOracle,
    linear: np.ndarray,
    anchor: np.ndarray,
    start: np.ndarray,
    tolerance: float,
    max_iterations: int = MAX_ITERATIONS,
) -> ConditionalGradientRows:
    """Algorithm 2 of Garber & Kretzu (2020) on S problems at once, row by row exact.

    Row i minimises F_i(x) = <linear_i, x> + ||x - anchor_i||^2 from z_1 = start_i by the
    do-while loop

        v_tau = lmo(grad F_i(z_tau)),   gap_tau = <grad F_i(z_tau), z_tau - v_tau>,
        sigma_tau = argmin_{sigma in [0, 1]} F_i(z_tau + sigma (v_tau - z_tau))
                  = min(gap_tau / (2 ||v_tau - z_tau||^2), 1),
        z_{tau+1} = z_tau + sigma_tau (v_tau - z_tau),

    while gap_tau > ``tolerance``, and outputs the certified z_tau (the last step is
    not needed, so it is skipped). Rows stop after different numbers of iterations:
    each iteration acts on the rows still running only (one ``lmo_many`` call on them),
    so row i's iterates, gap and count are those of the routine run on row i alone.
    ``anchor`` is (*shape) or (S, *shape); ``start`` (S, *shape) is not modified.

    References: Garber & Kretzu, "Improved regret bounds for projection-free bandit
    convex optimization", AISTATS 2020, Algorithm 2 and Lemma 4.
    """
    points = np.array(start, dtype=float, copy=True)
    rows = len(points)
    anchor = np.asarray(anchor, dtype=float)
    per_row = anchor.ndim == points.ndim  # (S, *shape) anchors, else one for all rows
    gaps = np.zeros(rows)
    iterations = np.zeros(rows, dtype=np.int64)
    active = np.arange(rows)
    for iteration in range(1, max_iterations + 1):
        if len(active) == rows:  # every row still running: the arrays, no gathered copies
            z, gradient = points, linear + 2.0 * (points - anchor)
        else:
            z = points[active]
            gradient = linear[active] + 2.0 * (z - (anchor[active] if per_row else anchor))
        direction = lmo_many(gradient) - z
        gap = -row_dot(gradient, direction)
        done = gap <= tolerance
        gaps[active[done]] = gap[done]
        iterations[active[done]] = iteration
        running = ~done
        if not running.any():
            return ConditionalGradientRows(points, gaps, iterations)
        active, gap, direction, z = active[running], gap[running], direction[running], z[running]
        step = np.minimum(gap / (2.0 * row_dot(direction, direction)), 1.0)
        points[active] = z + step.reshape((len(active),) + (1,) * (z.ndim - 1)) * direction
    raise RuntimeError(
        f"conditional_gradient: the Frank-Wolfe gap of rows {active.tolist()} is still above "
        f"the tolerance {tolerance:.3g} (largest {gap.max():.3g}) after {max_iterations} "
        "LMO calls; the oracle is likely inexact"
    )


def conditional_gradient(
    lmo: Oracle,
    linear: np.ndarray,
    anchor: np.ndarray,
    start: np.ndarray,
    tolerance: float,
    max_iterations: int = MAX_ITERATIONS,
) -> ConditionalGradientResult:
    """Minimise F(x) = <linear, x> + ||x - anchor||^2 over a set given by ``lmo``.

    :func:`conditional_gradient_rows` on a batch of one (see there for the routine,
    Algorithm 2 of Garber & Kretzu 2020). Each iteration calls the oracle once.
    ``start`` must lie in the set; it is not modified.
    """
    linear = np.asarray(linear, dtype=float)
    start = np.asarray(start, dtype=float)

    def lmo_rows(directions: np.ndarray) -> np.ndarray:
        return np.asarray(lmo(directions[0]), dtype=float)[np.newaxis]

    rows = conditional_gradient_rows(
        lmo_rows, linear[np.newaxis], anchor, start[np.newaxis], tolerance, max_iterations
    )
    return rows.row(0)


def online_frank_wolfe_step(
    points: np.ndarray,
    linear: np.ndarray,
    anchor: np.ndarray,
    weight: float,
    lmo_many: BatchOracle,
    gradient_buffer: np.ndarray,
) -> None:
    """One online Frank-Wolfe step on F_i(x) = <linear_i, x> + ||x - anchor||^2 per row, in place.

        v_i = lmo(grad F_i(x_i)),   x_i <- x_i + sigma (v_i - x_i)   (sigma = ``weight``),

    for every row i of ``points`` (S, *shape); ``gradient_buffer`` (same shape) holds the
    gradients afterwards; one ``lmo_many`` call (S LMO answers).

    References: Hazan & Kale, "Projection-free online learning", ICML 2012, Algorithm 1;
    Hazan, "Introduction to Online Convex Optimization", 2016, Section 7.3.
    """
    np.subtract(points, anchor, out=gradient_buffer)
    gradient_buffer *= 2.0
    gradient_buffer += linear
    # Not in place on the oracle's answer: a user-defined oracle may return its own storage.
    points += weight * (lmo_many(gradient_buffer) - points)
