"""The certified solvers: Frank-Wolfe with away steps and accelerated projected gradient."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from bco_gym.losses.solvers import (
    Quadratic,
    certified_gap,
    frank_wolfe,
    frank_wolfe_gap,
    membership_distance,
    minimize_quadratic,
    projected_gradient,
    tangent_smoothness,
)
from bco_gym.sets import BirkhoffPolytope, FlowPolytope, L2Ball, Simplex


def random_quadratic(rng: np.random.Generator, dim: int, rank: int) -> Quadratic:
    factor = rng.standard_normal((rank, dim))
    return Quadratic(factor.T @ factor, rng.standard_normal(dim) * 3, 1.5, rng.standard_normal(dim))


def simplex_minimum(quadratic: Quadratic, n: int) -> float:
    solution = minimize(
        quadratic.value,
        np.full(n, 1.0 / n),
        jac=quadratic.gradient,
        method="SLSQP",
        bounds=[(0, 1)] * n,
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1.0}],
        options={"ftol": 1e-14, "maxiter": 1000},
    )
    return float(solution.fun)


@pytest.mark.parametrize("rank", [2, 8])
@pytest.mark.parametrize("solver", [frank_wolfe, projected_gradient])
def test_solvers_reach_the_minimum_with_an_honest_gap(solver, rank: int):
    rng = np.random.default_rng(rank)
    simplex = Simplex(8)
    quadratic = random_quadratic(rng, 8, rank)
    best = simplex_minimum(quadratic, 8)
    result = solver(simplex, quadratic, tolerance=1e-10)
    assert result.converged and result.gap <= 1e-10
    assert simplex.contains(result.point)
    assert result.value == pytest.approx(quadratic.value(result.point))
    assert result.value - best <= result.gap + 1e-9  # the gap bounds the suboptimality
    assert result.value >= best - 1e-7  # SLSQP's own accuracy


def test_frank_wolfe_gap_bounds_suboptimality_when_stopped_early():
    rng = np.random.default_rng(0)
    simplex = Simplex(8)
    target = np.full(8, 1.0 / 8) + 0.01 * rng.standard_normal(8)  # interior minimiser
    quadratic = Quadratic(np.ones(8), -target)
    best = quadratic.value(simplex.project(target))
    result = frank_wolfe(simplex, quadratic, tolerance=0.0, start=np.eye(8)[0], max_iterations=3)
    assert not result.converged and result.iterations == 3
    assert 0.0 < result.value - best <= result.gap


def test_away_steps_converge_linearly_on_a_polytope_face():
    """The minimiser lies on a face (vanilla Frank-Wolfe would zig-zag for ever)."""
    simplex = Simplex(10)
    target = np.array([0.6, 0.5, -0.1, 0.2] + [-1.0] * 6)
    quadratic = Quadratic(np.ones(10), -target)  # ||x - target||^2 / 2 + const
    result = frank_wolfe(simplex, quadratic, tolerance=1e-12)
    assert result.converged and result.iterations < 200
    np.testing.assert_allclose(result.point, simplex.project(target), atol=1e-6)


def test_frank_wolfe_on_a_ball_with_an_interior_minimiser():
    ball = L2Ball(5, radius=2.0)
    quadratic = Quadratic(np.arange(1.0, 6.0), -np.arange(1.0, 6.0) * 0.3)  # minimiser 0.3 * 1
    result = frank_wolfe(ball, quadratic, tolerance=1e-10)
    assert result.converged
    np.testing.assert_allclose(result.point, np.full(5, 0.3), atol=1e-4)


def test_minimize_quadratic_falls_back_and_validates_its_method():
    rng = np.random.default_rng(1)
    quadratic = random_quadratic(rng, 9, 4)
    birkhoff = BirkhoffPolytope(3)  # vectors of length 9 reshaped to 3 x 3 by the solvers
    result = minimize_quadratic(birkhoff, quadratic, tolerance=1e-9, method="frank-wolfe")
    assert result.converged and result.point.shape == (3, 3)
    with pytest.raises(ValueError, match="allowed: auto, frank-wolfe, projected-gradient"):
        minimize_quadratic(birkhoff, quadratic, tolerance=1e-9, method="newton")


def test_tangent_smoothness_ignores_curvature_across_the_affine_hull():
    simplex = Simplex(6)
    hessian = 50.0 * np.ones((6, 6)) + np.diag(np.arange(1.0, 7.0))
    quadratic = Quadratic(hessian, np.zeros(6))
    assert quadratic.largest_eigenvalue() > 300
    smoothness = tangent_smoothness(simplex, quadratic)
    # P H P = P diag(1..6) P on V = {sum v = 0}: between 5 and 6 (interlacing)
    assert 5.0 <= smoothness <= 6.0
    assert tangent_smoothness(L2Ball(6), quadratic) == pytest.approx(quadratic.largest_eigenvalue())


def test_quadratic_line_search_is_exact_and_clipped():
    quadratic = Quadratic(np.array([2.0, 2.0]), np.array([-2.0, 0.0]))  # (x0 - 1)^2 + x1^2 + const
    x = np.zeros(2)
    gradient = quadratic.gradient(x)
    assert quadratic.line_search(x, gradient, np.array([4.0, 0.0]), 1.0) == pytest.approx(0.25)
    assert quadratic.line_search(x, gradient, np.array([4.0, 0.0]), 0.1) == pytest.approx(0.1)
    assert quadratic.line_search(x, gradient, np.array([-1.0, 0.0]), 1.0) == 0.0


class LeakySimplex(Simplex):
    """A simplex whose projection lands 1e-6 outside, beyond the best vertex (as an
    inexact QP projection might): projected gradient's certificate must be refused."""

    def project(self, x):
        point = np.asarray(super().project(x), dtype=float)
        point[0] += 1e-6
        return point


def test_a_projection_outside_k_falls_back_to_frank_wolfe():
    quadratic = Quadratic(np.eye(3) * 1e-3, np.array([-1.0, 0.0, 0.0]))  # minimiser e_1
    leaky = LeakySimplex(3)
    with pytest.raises(ArithmeticError, match="negative Frank-Wolfe gap"):
        projected_gradient(leaky, quadratic, tolerance=1e-12)
    result = minimize_quadratic(leaky, quadratic, tolerance=1e-12, method="projected-gradient")
    np.testing.assert_array_equal(result.point, [1.0, 0.0, 0.0])
    assert result.gap >= 0.0 and result.converged
    assert result.value == pytest.approx(quadratic.value(np.array([1.0, 0.0, 0.0])))


def _flow_normal(flow: FlowPolytope, norm: float) -> np.ndarray:
    """A gradient normal to aff(K): edge (a, b) gets p_a - p_b for node potentials p (p_t = 0),
    so <g, y> = p_s for every unit flow y: every point of K minimises it, the gap is 0."""
    index = {node: i for i, node in enumerate(flow.nodes)}
    potential = np.random.default_rng(4).uniform(0.0, 60.0, len(flow.nodes))
    potential[index[flow.sink]] = 0.0
    normal = np.array([potential[index[a]] - potential[index[b]] for a, b in flow.edges])
    return normal * (norm / np.linalg.norm(normal))


def test_a_point_off_the_flow_polytope_by_rounding_is_certified_with_gap_zero():
    """What OpenBLAS's generic kernels gave on FlowPolytope.grid(3, 3) (issue 44): a polished
    projection 1e-14 off the conservation equations, a gradient of norm 158 with a large part
    normal to aff(K), and a Frank-Wolfe gap of -8.8e-13 that was refused as a certificate."""
    flow = FlowPolytope.grid(3, 3)
    gradient = _flow_normal(flow, 158.4)
    center = np.asarray(flow.center)
    x = center - 1.1e-14 * gradient / np.linalg.norm(gradient)  # 1.1e-14 off aff(K)
    raw, _ = frank_wolfe_gap(flow, gradient, x)
    assert -2e-12 < raw < -5e-13  # the situation: negative, by the rounding of x
    assert not flow.contains(x, atol=0.0) and flow.contains(x, atol=1e-13)
    tau = membership_distance(flow)
    assert 1e-12 < tau < 1e-11  # 1e-12 (||c|| + R) for ||c|| + R = 2.8
    assert raw >= -np.linalg.norm(gradient) * tau  # within the allowance, so
    gap, vertex = certified_gap(flow, gradient, x)
    assert gap == 0.0  # a true bound: f(x) - min_K f <= raw < 0
    assert flow.contains(vertex, atol=0.0)
    inside_gap, _ = certified_gap(flow, gradient, center)  # the same gradient, x in K
    assert 0.0 <= inside_gap <= 1e-12  # a nonnegative gap is returned as it stands
    assert inside_gap == frank_wolfe_gap(flow, gradient, center)[0]


@pytest.mark.parametrize("where", ["off the hull", "past a face"])
def test_a_point_outside_the_flow_polytope_by_more_than_rounding_is_refused(where: str):
    flow = FlowPolytope.grid(3, 3)
    if where == "off the hull":  # conservation broken by 1e-9 along a normal gradient
        gradient = _flow_normal(flow, 158.4)
        x = np.asarray(flow.center) - 1e-9 * gradient / np.linalg.norm(gradient)
    else:  # on aff(K), but 1e-9 beyond the path vertex p, away from another path q
        p = flow.lmo(np.arange(12.0))
        q = flow.lmo(-np.arange(12.0))
        gradient = 50.0 * (1.0 - p)  # p is the unique minimiser, at cost 0
        x = p + 1e-9 * (p - q)  # negative flow on q's edges off p
        assert x.min() < -5e-10
    raw, _ = frank_wolfe_gap(flow, gradient, x)
    allowance = np.linalg.norm(gradient) * membership_distance(flow)
    assert raw < -100.0 * allowance  # far below any rounding
    with pytest.raises(
        ArithmeticError, match=r"negative Frank-Wolfe gap .* below the rounding allowance"
    ):
        certified_gap(flow, gradient, x)
