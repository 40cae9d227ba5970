"""Property-based tests (hypothesis) for the simplex, the l1 ball and flow polytopes.

Directions and points come from hypothesis; the reference answers are brute force
(the minimum over all vertices) and the variational-inequality certificate of a
projection p of x: max over K of <x - p, y - p>, attained at y = lmo(p - x), is <= 0.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from set_cases import flow_paths, hand_dag

from bco_gym.sets import FlowPolytope, L1Ball, Simplex

PROPERTY_SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None)
FLOW_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None)
FLOWS = {"grid3x3": FlowPolytope.grid(3, 3), "hand_dag": hand_dag()}
FLOW_PATHS = {name: flow_paths(polytope) for name, polytope in FLOWS.items()}

reals = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@st.composite
def vector_and_size(draw, low=2, high=8):
    n = draw(st.integers(low, high))
    return draw(arrays(np.float64, n, elements=reals))


def assert_projection_properties(convex_set, x: np.ndarray, tolerance: float) -> None:
    p = convex_set.project(x)
    assert convex_set.contains(p, atol=1e-9), convex_set.violation(p)
    certificate = float(np.vdot(x - p, convex_set.lmo(p - x) - p))
    assert certificate <= tolerance * (1.0 + float(np.vdot(x - p, x - p)))
    assert np.linalg.norm(convex_set.project(p) - p) <= tolerance * (1.0 + np.linalg.norm(p))


@PROPERTY_SETTINGS
@given(vector_and_size())
def test_simplex_lmo_is_the_best_vertex(g):
    simplex = Simplex(g.size)
    value = g @ simplex.lmo(g)
    assert value == g.min()
    assert simplex.contains(simplex.lmo(g))


@PROPERTY_SETTINGS
@given(vector_and_size())
def test_simplex_projection(x):
    assert_projection_properties(Simplex(x.size), x, 1e-9)


@PROPERTY_SETTINGS
@given(vector_and_size(1, 8), st.floats(0.1, 10.0))
def test_l1_lmo_is_the_best_vertex(g, radius):
    ball = L1Ball(g.size, radius)
    vertex = ball.lmo(g)
    assert g @ vertex == -radius * np.abs(g).max()
    assert np.abs(vertex).sum() == radius and np.count_nonzero(vertex) == 1


@PROPERTY_SETTINGS
@given(vector_and_size(1, 8), st.floats(0.1, 10.0))
def test_l1_projection(x, radius):
    ball = L1Ball(x.size, radius)
    assert_projection_properties(ball, x, 1e-9)
    if np.abs(x).sum() <= radius:
        np.testing.assert_array_equal(ball.project(x), x)


@FLOW_SETTINGS
@given(st.sampled_from(sorted(FLOWS)), st.data())
def test_flow_lmo_is_a_shortest_path(name, data):
    polytope = FLOWS[name]
    g = data.draw(arrays(np.float64, polytope.shape, elements=reals))
    vertex = polytope.lmo(g)
    assert any(np.array_equal(vertex, path) for path in FLOW_PATHS[name])
    assert g @ vertex <= np.min(FLOW_PATHS[name] @ g) + 1e-9 * (1.0 + np.abs(g).sum())


@FLOW_SETTINGS
@given(st.sampled_from(sorted(FLOWS)), st.data())
def test_flow_projection(name, data):
    polytope = FLOWS[name]
    x = data.draw(arrays(np.float64, polytope.shape, elements=st.floats(-10.0, 10.0)))
    assert_projection_properties(polytope, x, 1e-9)


@FLOW_SETTINGS
@given(st.sampled_from(sorted(FLOWS)), st.data())
def test_flow_tangent_is_idempotent_and_orthogonal(name, data):
    polytope = FLOWS[name]
    v = data.draw(arrays(np.float64, polytope.shape, elements=reals))
    w = data.draw(arrays(np.float64, polytope.shape, elements=reals))
    pv = polytope.tangent(v)
    scale = 1.0 + np.linalg.norm(v) * (1.0 + np.linalg.norm(w))
    np.testing.assert_allclose(polytope.tangent(pv), pv, atol=1e-12 * scale)
    assert abs(np.vdot(pv, w) - np.vdot(v, polytope.tangent(w))) <= 1e-12 * scale
