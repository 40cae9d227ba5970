"""Conditional-gradient (Frank-Wolfe) routines on the regularised objective

    F(x) = <b, x> + ||x - x_1||^2,   grad F(x) = b + 2(x - x_1),

which is 2-smooth and 2-strongly convex. It is the Regularized-Follow-the-Leader
objective of the projection-free online methods: b = eta * (sum of the gradients or
gradient estimates so far) and x_1 the starting point.

* :func:`conditional_gradient` -- Algorithm 2 of Garber & Kretzu (2020): a do-while
  loop of Frank-Wolfe steps with exact line search, stopped once the Frank-Wolfe gap
  certifies the accuracy (used by BBCG once per block).
* :func:`online_frank_wolfe_step` -- one Frank-Wolfe step per round with a prescribed
  weight sigma_t (Hazan & Kale 2012; used by OFW and bandit Frank-Wolfe).

Both touch the set only through its linear minimization oracle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Oracle = Callable[[np.ndarray], np.ndarray]

#: Safety stop of :func:`conditional_gradient`: with an exact LMO the gap reaches any
#: tolerance > 0 long before this; reaching it signals an inexact or wrong oracle.
MAX_ITERATIONS = 1_000_000


@dataclass(frozen=True)
class ConditionalGradientResult:
    """Output of :func:`conditional_gradient`.

    Attributes:
        point: the certified point z with Frank-Wolfe gap <= tolerance, hence
            F(z) - min F <= gap and ||z - argmin F||^2 <= gap (2-strong convexity).
        gap: the certificate <grad F(z), z - v> at the returned point.
        iterations: the number of do-while iterations, i.e. of LMO calls (>= 1).
    """

    point: np.ndarray
    gap: float
    iterations: int


def conditional_gradient(
    lmo: Oracle,
    linear: np.ndarray,
    anchor: np.ndarray,
    start: np.ndarray,
    tolerance: float,
    max_iterations: int = MAX_ITERATIONS,
) -> ConditionalGradientResult:
    """Minimise F(x) = <linear, x> + ||x - anchor||^2 over a set given by ``lmo``.

    Algorithm 2 of Garber & Kretzu (2020), "Conditional Gradient with Stopping
    Condition": from z_1 = ``start`` repeat (do-while)

        v_tau = lmo(grad F(z_tau)),   gap_tau = <grad F(z_tau), z_tau - v_tau>,
        sigma_tau = argmin_{sigma in [0, 1]} F(z_tau + sigma (v_tau - z_tau))
                  = clip(gap_tau / (2 ||v_tau - z_tau||^2), 0, 1),
        z_{tau+1} = z_tau + sigma_tau (v_tau - z_tau),

    while gap_tau > ``tolerance``, and output the certified z_tau (the step computed in
    the last iteration is not needed, so it is skipped). Each iteration calls the
    oracle once. ``start`` must lie in the set; it is not modified.

    References: Garber & Kretzu, "Improved regret bounds for projection-free bandit
    convex optimization", AISTATS 2020, Algorithm 2 and Lemma 4.
    """
    z = np.array(start, dtype=float, copy=True)
    for iteration in range(1, max_iterations + 1):
        gradient = linear + 2.0 * (z - anchor)
        direction = lmo(gradient) - z
        gap = -float(np.vdot(gradient, direction))
        if gap <= tolerance:
            return ConditionalGradientResult(point=z, gap=gap, iterations=iteration)
        step = min(gap / (2.0 * float(np.vdot(direction, direction))), 1.0)
        z += step * direction
    raise RuntimeError(
        f"conditional_gradient: Frank-Wolfe gap {gap:.3g} still above the tolerance "
        f"{tolerance:.3g} after {max_iterations} LMO calls; the oracle is likely inexact"
    )


def online_frank_wolfe_step(
    point: np.ndarray,
    linear: np.ndarray,
    anchor: np.ndarray,
    weight: float,
    lmo: Oracle,
    gradient_buffer: np.ndarray,
) -> None:
    """One online Frank-Wolfe step on F(x) = <linear, x> + ||x - anchor||^2, in place.

        v = lmo(grad F(x)),   x <- x + sigma (v - x)   (sigma = ``weight``).

    ``gradient_buffer`` (shaped like x) holds grad F(x) afterwards; one LMO call.

    References: Hazan & Kale, "Projection-free online learning", ICML 2012, Algorithm 1;
    Hazan, "Introduction to Online Convex Optimization", 2016, Section 7.3.
    """
    np.subtract(point, anchor, out=gradient_buffer)
    gradient_buffer *= 2.0
    gradient_buffer += linear
    # Not in place on the oracle's answer: a user-defined oracle may return its own storage.
    point += weight * (lmo(gradient_buffer) - point)
