"""Family-specific behaviour: closed forms, warm starts, graph structure, pickling."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from set_cases import HAND_FIXED, HAND_LIVE, flow_paths, hand_dag

from bco_gym.sets import (
    BirkhoffPolytope,
    FlowPolytope,
    Hypercube,
    L1Ball,
    L2Ball,
    NuclearNormBall,
    Simplex,
    nuclear,
)


# -- simplex and balls ----------------------------------------------------------------------
def test_simplex_projection_known_values():
    simplex = Simplex(3)
    np.testing.assert_allclose(simplex.project(np.array([0.5, 0.5, 0.5])), np.full(3, 1 / 3))
    np.testing.assert_allclose(simplex.project(np.array([2.0, 0.0, 0.0])), [1.0, 0.0, 0.0])
    np.testing.assert_allclose(simplex.project(np.array([0.9, 0.5, -3.0])), [0.7, 0.3, 0.0])


def test_l1_ball_closed_forms():
    ball = L1Ball(3, radius=2.0)
    np.testing.assert_array_equal(ball.lmo(np.array([0.5, -3.0, 1.0])), [0.0, 2.0, 0.0])
    np.testing.assert_array_equal(ball.lmo(np.array([4.0, -4.0, 1.0])), [-2.0, 0.0, 0.0])
    np.testing.assert_array_equal(ball.lmo(np.zeros(3)), [2.0, 0.0, 0.0])
    np.testing.assert_allclose(ball.project(np.array([3.0, -1.0, 0.5])), [2.0, 0.0, 0.0])
    np.testing.assert_allclose(ball.project(np.array([2.0, -2.0, 0.0])), [1.0, -1.0, 0.0])
    inside = np.array([0.5, -0.5, 0.25])
    np.testing.assert_array_equal(ball.project(inside), inside)
    assert ball.inner_radius == pytest.approx(2.0 / math.sqrt(3))


def test_l2_ball_closed_forms():
    ball = L2Ball(2, radius=2.0)
    np.testing.assert_allclose(ball.lmo(np.array([3.0, 4.0])), [-1.2, -1.6])
    np.testing.assert_array_equal(ball.lmo(np.zeros(2)), [0.0, 0.0])
    np.testing.assert_allclose(ball.project(np.array([3.0, 4.0])), [1.2, 1.6])


def test_hypercube_construction_and_closed_forms():
    box = Hypercube(-1.0, 2.0, n=3)
    np.testing.assert_array_equal(box.lmo(np.array([1.0, -1.0, 0.0])), [-1.0, 2.0, -1.0])
    np.testing.assert_array_equal(box.project(np.array([5.0, -5.0, 0.5])), [2.0, -1.0, 0.5])
    assert box.inner_radius == 1.5 and box.outer_radius == pytest.approx(1.5 * math.sqrt(3))
    assert repr(box) == "Hypercube(low=-1, high=2, n=3)"
    mixed = Hypercube(0.0, np.array([1.0, 3.0]))
    np.testing.assert_array_equal(mixed.low, [0.0, 0.0])
    np.testing.assert_array_equal(mixed.center, [0.5, 1.5])
    assert mixed.inner_radius == 0.5 and Hypercube([0, 0], [1, 3], n=2).n == 2


# -- nuclear-norm ball ----------------------------------------------------------------------
@pytest.mark.parametrize("dense_max_side", [128, 2], ids=["dense", "lanczos"])
@pytest.mark.parametrize("shape", [(4, 3), (3, 7), (6, 6), (2, 5), (1, 4)])
def test_nuclear_lmo_is_the_top_singular_pair(shape, dense_max_side, rng, monkeypatch):
    """Both LMO paths (a dense SVD up to min side 128, ARPACK above: the threshold is
    lowered to reach ARPACK on small matrices)."""
    monkeypatch.setattr(nuclear, "_DENSE_MAX_SIDE", dense_max_side)
    ball = NuclearNormBall(*shape, radius=1.5)
    for _ in range(4):
        g = rng.standard_normal(shape)
        u, s, vt = np.linalg.svd(g)
        answer = ball.lmo(g)
        assert np.vdot(g, answer) == pytest.approx(-1.5 * s[0], rel=1e-10)
        if len(s) == 1 or s[0] - s[1] > 1e-3:
            np.testing.assert_allclose(answer, -1.5 * np.outer(u[:, 0], vt[0]), atol=1e-7)
        assert np.linalg.matrix_rank(answer, tol=1e-9) == 1


def test_nuclear_warm_start_does_not_change_answers(rng, monkeypatch):
    monkeypatch.setattr(nuclear, "_DENSE_MAX_SIDE", 2)  # ARPACK (min side > 128) on 8 x 5
    warm = NuclearNormBall(8, 5)
    for _ in range(6):
        g = rng.standard_normal((8, 5)) + 0.5 * rng.standard_normal((8, 1))
        cold = NuclearNormBall(8, 5, warm_start=False)
        np.testing.assert_allclose(warm.lmo(g), cold.lmo(g), atol=1e-8)
    assert not np.array_equal(warm._last_vector, warm._initial_vector)


def test_nuclear_lmo_is_deterministic_and_zero_direction(rng):
    g = rng.standard_normal((5, 4))
    np.testing.assert_array_equal(NuclearNormBall(5, 4).lmo(g), NuclearNormBall(5, 4).lmo(g))
    np.testing.assert_array_equal(NuclearNormBall(5, 4).lmo(np.zeros((5, 4))), np.zeros((5, 4)))


def test_nuclear_projection_shrinks_the_spectrum(rng):
    ball = NuclearNormBall(4, 3, radius=2.0)
    u, _ = np.linalg.qr(rng.standard_normal((4, 3)))
    v, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    x = (u * [3.0, 1.0, 0.5]) @ v.T
    np.testing.assert_allclose(ball.project(x), 2.0 * np.outer(u[:, 0], v[:, 0]), atol=1e-12)
    y = (u * [1.0, 0.8, 0.6]) @ v.T
    shift = 0.4 / 3  # sum 2.4 brought down to 2, no value reaching 0
    expected = (u * (np.array([1.0, 0.8, 0.6]) - shift)) @ v.T
    np.testing.assert_allclose(ball.project(y), expected, atol=1e-12)


# -- flow polytope ---------------------------------------------------------------------------
def test_grid_structure():
    grid = FlowPolytope.grid(3, 4)
    assert len(grid.edges) == 2 * 12 - 3 - 4 and len(grid.nodes) == 12
    assert grid.edges[:3] == (((0, 0), (0, 1)), ((0, 0), (1, 0)), ((0, 1), (0, 2)))
    assert grid.edges[-1] == ((2, 2), (2, 3))
    assert grid.source == (0, 0) and grid.sink == (2, 3)
    assert grid.path_count == math.comb(5, 2) == len(flow_paths(grid))
    assert grid.aff_dim == 17 - 12 + 1 and grid.on_path.all()
    assert repr(grid) == "FlowPolytope.grid(3, 4)"


def test_hand_dag_dead_and_fixed_edges(rng):
    dag = hand_dag()
    np.testing.assert_array_equal(dag.on_path, HAND_LIVE)
    assert dag.path_count == 5 and dag.aff_dim == 3
    low, high = dag.bounds()
    assert low[HAND_FIXED] == high[HAND_FIXED] == 1.0
    assert np.all(high[~dag.on_path] == 0.0)
    dead = ~dag.on_path
    for _ in range(5):
        g = rng.standard_normal(dag.shape)
        g[dead] = -100.0  # very attractive, yet on no s-t path
        vertex = dag.lmo(g)
        assert np.all(vertex[dead] == 0.0) and vertex[HAND_FIXED] == 1.0
        step = dag.tangent(g)
        assert np.all(step[dead] == 0.0) and step[HAND_FIXED] == 0.0
    assert dag.center[HAND_FIXED] == 1.0 and np.all(dag.center[dead] == 0.0)
    assert repr(dag) == "FlowPolytope(11 edges, 9 nodes, source='s', sink='t')"


def test_flow_lmo_with_negative_weights_is_a_shortest_path(rng):
    grid = FlowPolytope.grid(3, 3)
    paths = flow_paths(grid)
    for _ in range(10):
        g = rng.standard_normal(grid.shape) - 1.0  # mostly negative: longest-path-like
        assert g @ grid.lmo(g) == pytest.approx(np.min(paths @ g), abs=1e-12)


def test_flow_centre_beats_the_barycentre_of_the_paths():
    for polytope in (FlowPolytope.grid(3, 3), hand_dag()):
        barycentre = flow_paths(polytope).mean(axis=0)
        free = polytope.on_path & (polytope.bounds()[0] == 0.0)
        norms = [
            np.linalg.norm(polytope.tangent(np.eye(polytope.dim)[e])) for e in np.nonzero(free)[0]
        ]
        radius_at_barycentre = np.min(barycentre[free] / norms)
        assert polytope.inner_radius >= radius_at_barycentre - 1e-12


def test_flow_accepts_numpy_integer_nodes():
    polytope = FlowPolytope(np.array([[0, 1], [0, 2], [1, 3], [2, 3]]), np.int64(0), 3)
    assert polytope.nodes == (0, 1, 2, 3) and type(polytope.nodes[0]) is int
    np.testing.assert_allclose(polytope.center, [0.5, 0.5, 0.5, 0.5])
    assert polytope.inner_radius == pytest.approx(1.0)  # V is spanned by (1, -1, 1, -1)/2
    assert polytope.outer_radius == pytest.approx(1.0)


def test_flow_projection_of_a_vertex_and_of_dead_flow(rng):
    dag = hand_dag()
    for path in flow_paths(dag):
        np.testing.assert_allclose(dag.project(path), path, atol=1e-12)
    x = dag.center + rng.standard_normal(dag.shape)
    x[~dag.on_path] = 5.0
    projection = dag.project(x)
    assert np.all(projection[~dag.on_path] == 0.0) and dag.contains(projection, atol=1e-12)


# -- Birkhoff polytope -----------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 5])
def test_birkhoff_radii(n):
    polytope = BirkhoffPolytope(n)
    assert polytope.inner_radius == pytest.approx(1.0 / (n - 1))
    assert polytope.outer_radius == pytest.approx(math.sqrt(n - 1))
    assert polytope.aff_dim == (n - 1) ** 2


def test_birkhoff_projection_known_value():
    polytope = BirkhoffPolytope(2)
    # In B_2 = {[[a, 1-a], [1-a, a]]}, projecting [[p, q], [r, s]] sets
    # a = clip((p + s - q - r + 2) / 4, 0, 1).
    x = np.array([[0.9, 0.3], [0.2, 0.4]])
    a = (0.9 + 0.4 - 0.3 - 0.2 + 2) / 4
    np.testing.assert_allclose(polytope.project(x), [[a, 1 - a], [1 - a, a]], atol=1e-12)
    np.testing.assert_allclose(polytope.project(np.array([[5.0, 0], [0, 5.0]])), np.eye(2))


# -- shared ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make",
    [lambda: hand_dag(), lambda: BirkhoffPolytope(3), lambda: NuclearNormBall(4, 3)],
    ids=["flow", "birkhoff", "nuclear"],
)
def test_sets_pickle_after_use(make, rng):
    convex_set = make()
    x = convex_set.center + rng.standard_normal(convex_set.shape)
    g = rng.standard_normal(convex_set.shape)
    before = (convex_set.project(x), convex_set.lmo(g), convex_set.tangent(g))
    copy = pickle.loads(pickle.dumps(convex_set))
    after = (copy.project(x), copy.lmo(g), copy.tangent(g))
    for first, second in zip(before, after, strict=True):
        np.testing.assert_allclose(first, second, atol=1e-12)


@pytest.mark.parametrize("make", [hand_dag, lambda: BirkhoffPolytope(4)], ids=["flow", "birkhoff"])
def test_qp_projection_without_polishing_is_still_accurate(make, rng, monkeypatch):
    from bco_gym.sets._qp import NonnegativeProjector

    convex_set = make()
    points = [convex_set.center + rng.standard_normal(convex_set.shape) for _ in range(3)]
    polished = [convex_set.project(x) for x in points]
    monkeypatch.setattr(NonnegativeProjector, "_polish", lambda self, x, support: None)
    for x, exact in zip(points, polished, strict=True):
        p = convex_set.project(x)
        assert convex_set.contains(p, atol=1e-8), convex_set.violation(p, atol=1e-8)
        assert np.vdot(x - p, convex_set.lmo(p - x) - p) <= 1e-6
        np.testing.assert_allclose(p, exact, atol=1e-5)


def test_nuclear_low_rank_membership_is_certified_by_the_sketch_and_still_exact(monkeypatch):
    """On the 64x64 ball a mixture of rank-one vertices (random play's vertex-mixture law)
    is certified by the sketch test without the 64x64 SVD; a low-rank point just outside
    and a full-rank point are still judged by the exact nuclear norm."""
    ball = NuclearNormBall(64, 64)
    rng = np.random.default_rng(3)
    full_svds = []
    svd = np.linalg.svd

    def counting_svd(a, *args, **kwargs):
        if np.shape(a)[-2:] == (64, 64):
            full_svds.append(1)
        return svd(a, *args, **kwargs)

    def rank_one():
        u, v = rng.standard_normal(64), rng.standard_normal(64)
        return np.outer(u / np.linalg.norm(u), v / np.linalg.norm(v))

    monkeypatch.setattr(np.linalg, "svd", counting_svd)
    for rank in (1, 5, 8):
        weights = rng.dirichlet(np.ones(rank + 1))[1:]  # the centre 0 takes the rest
        inside = sum(w * rank_one() for w in weights)
        assert ball.violation(inside) is None
        assert ball.violation_many(np.stack([inside, inside / 2])) is None
    assert not full_svds  # certified by the 8 x 64 sketch's SVD alone
    monkeypatch.setattr(np.linalg, "svd", svd)
    low = sum(rank_one() for _ in range(5))
    low *= (1 + 1e-6) / svd(low, compute_uv=False).sum()
    assert "nuclear norm" in ball.violation(low)
    assert ball.violation(low * (1 - 1e-6) / (1 + 1e-6)) is None
    full = rng.standard_normal((64, 64))
    full /= svd(full, compute_uv=False).sum()
    assert not ball._sketch_clears(full, 1e-9)  # rank 64: the sketch bound is loose
    assert ball.violation(full * (1 - 1e-6)) is None
    assert "nuclear norm" in ball.violation(full * (1 + 1e-6))
    for rank in (1, 5, 9, 64):  # the bound never undercuts the norm, whatever the rank
        x = rng.standard_normal((64, rank)) @ rng.standard_normal((rank, 64))
        x /= svd(x, compute_uv=False).sum()
        assert ball._sketch_clears(x * (1 - 1e-6), 0.0) == (rank <= 8)
        assert not ball._sketch_clears(x * (1 + 1e-6), 0.0)
