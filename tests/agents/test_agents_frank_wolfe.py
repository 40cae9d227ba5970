"""The conditional-gradient routines against exact solutions of the quadratic problem.

argmin over K_delta of F(x) = <b, x> + ||x - x_1||^2 is the projection
Pi_{K_delta}(x_1 - b/2) (complete the square), computed here independently with the
sets' projections. Since F is 2-strongly convex, F(z) - min F >= ||z - x*||^2, and the
Frank-Wolfe gap bounds F(z) - min F: so the routine's output must satisfy
||z - x*||^2 <= gap <= tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest
from agent_helpers import FrobeniusBall

from bco_gym.agents.frank_wolfe import (
    conditional_gradient,
    conditional_gradient_rows,
    online_frank_wolfe_step,
)
from bco_gym.sets import L2Ball, Simplex


def _instance(convex_set, rng, scale):
    shrunk = convex_set.shrink(0.3 * convex_set.inner_radius)
    linear = scale * convex_set.tangent(rng.standard_normal(convex_set.shape))
    anchor = np.array(convex_set.center, dtype=float)
    exact = shrunk.project(anchor - linear / 2)
    return shrunk, linear, anchor, exact


def _objective(z, linear, anchor):
    return float(np.vdot(linear, z) + np.vdot(z - anchor, z - anchor))


@pytest.mark.parametrize("convex_set", [Simplex(7), L2Ball(5), FrobeniusBall(2, 3)], ids=repr)
@pytest.mark.parametrize("scale", [0.3, 3.0])
@pytest.mark.parametrize("tolerance", [1e-2, 1e-4])
def test_routine_output_is_certified_and_near_the_exact_minimiser(
    convex_set, scale, tolerance, rng
):
    shrunk, linear, anchor, exact = _instance(convex_set, rng, scale)
    start = shrunk.lmo(rng.standard_normal(convex_set.shape))  # a vertex of K_delta
    result = conditional_gradient(shrunk.lmo, linear, anchor, start, tolerance)
    z = result.point
    assert shrunk.contains(z, atol=1e-9)
    assert 0.0 <= result.gap <= tolerance
    # The certificate is what it says: recompute the gap with the set's own oracle.
    gradient = linear + 2 * (z - anchor)
    assert np.vdot(gradient, z - shrunk.lmo(gradient)) == pytest.approx(result.gap, abs=1e-12)
    # Strong convexity: distance and value error bounded by the gap.
    assert np.sum((z - exact) ** 2) <= result.gap + 1e-12
    value_error = _objective(z, linear, anchor) - _objective(exact, linear, anchor)
    assert -1e-12 <= value_error <= result.gap + 1e-12


def test_routine_is_a_do_while_loop_with_exact_line_search():
    """Hand-checked run on the segment-like simplex Delta_2 (no shrinking).

    F(x) = <b, x> + ||x - c||^2 with c = (1/2, 1/2), b = (1, 0): the minimiser over
    Delta_2 is (1/4, 3/4). From z_1 = (1, 0): grad = b + 2(z - c) = (2, -1), v = (0, 1),
    gap = <(2, -1), (1, -1)> = 3, sigma = 3 / (2 * 2) = 3/4, z_2 = (1/4, 3/4), where the
    gradient (1/2, 1/2) is orthogonal to the simplex: gap 0, stop after 2 LMO calls.
    """
    simplex = Simplex(2)
    result = conditional_gradient(
        simplex.lmo, np.array([1.0, 0.0]), simplex.center, np.array([1.0, 0.0]), 1e-9
    )
    np.testing.assert_allclose(result.point, [0.25, 0.75], atol=1e-15)
    assert result.iterations == 2
    assert result.gap == pytest.approx(0.0, abs=1e-15)
    # Do-while: a start that is already optimal still costs one (certifying) LMO call.
    again = conditional_gradient(
        simplex.lmo, np.array([1.0, 0.0]), simplex.center, result.point, 1e-9
    )
    assert again.iterations == 1
    np.testing.assert_array_equal(again.point, result.point)


def test_routine_does_not_modify_its_start_and_stops_at_the_iteration_cap():
    simplex = Simplex(3)
    start = np.array([1.0, 0.0, 0.0])
    conditional_gradient(simplex.lmo, np.array([1.0, 0.0, -1.0]), simplex.center, start, 1e-6)
    np.testing.assert_array_equal(start, [1.0, 0.0, 0.0])
    with pytest.raises(RuntimeError, match=r"still above the tolerance .* after 1 LMO calls"):
        conditional_gradient(
            simplex.lmo, np.array([1.0, 0.0, -1.0]), simplex.center, start, 1e-6, 1
        )


def test_online_step_moves_towards_the_oracle_answer():
    simplex = Simplex(3)
    point = np.array(simplex.center)
    linear = np.array([0.0, 1.0, 2.0])
    buffer = np.empty(3)
    online_frank_wolfe_step(point, linear, simplex.center, 0.25, simplex.lmo, buffer)
    # grad F(c) = linear + 0 -> vertex e_0; x <- c + 0.25 (e_0 - c)
    np.testing.assert_allclose(point, [0.5, 0.25, 0.25])
    np.testing.assert_allclose(buffer, linear)


@pytest.mark.parametrize("convex_set", [Simplex(7), L2Ball(5), FrobeniusBall(2, 3)], ids=repr)
@pytest.mark.parametrize("per_row_anchor", [False, True])
def test_rows_are_each_the_routine_run_alone(convex_set, per_row_anchor, rng):
    """S problems at once: row i's point, gap and LMO calls are the single routine's on
    row i, bit for bit, while the rows stop after different numbers of iterations."""
    shrunk = convex_set.shrink(0.3 * convex_set.inner_radius)
    rows = 6
    scales = np.geomspace(0.01, 30.0, rows).reshape((rows,) + (1,) * len(convex_set.shape))
    linear = scales * convex_set.tangent_many(rng.standard_normal((rows, *convex_set.shape)))
    start = shrunk.lmo_many(rng.standard_normal((rows, *convex_set.shape)))
    center = np.array(convex_set.center, dtype=float)
    anchor = shrunk.project_many(center + 0.1 * linear) if per_row_anchor else center
    result = conditional_gradient_rows(shrunk.lmo_many, linear, anchor, start, 1e-3)
    assert len(set(result.iterations.tolist())) > 1  # the rows stop at different calls
    for row in range(rows):
        alone = conditional_gradient(
            shrunk.lmo, linear[row], anchor[row] if per_row_anchor else anchor, start[row], 1e-3
        )
        assert np.array_equal(result.points[row], alone.point)
        assert result.gaps[row] == alone.gap and result.iterations[row] == alone.iterations
