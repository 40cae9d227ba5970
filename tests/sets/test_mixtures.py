"""The vertex-mixture law (bco_gym.sets.mixtures) as a distribution: its support lies in
K, its mean is c/(k+1) + k/(k+1) E V, and each set's vertex law is the documented one
(uniform permutations, uniform s-t paths, rank-one matrices rho u v^T)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from bco_gym.sets import BirkhoffPolytope, FlowPolytope, L1Ball, NuclearNormBall, Simplex
from bco_gym.sets.mixtures import mixture_size, random_vertices, vertex_mean, vertex_mixture

SETS = {
    "birkhoff": BirkhoffPolytope(4),
    "flow": FlowPolytope.grid(3, 4),
    "nuclear": NuclearNormBall(3, 5, radius=2.0),
    "simplex": Simplex(6),  # no vertex law of its own: lmo of a Gaussian direction
}


@pytest.mark.parametrize("name", list(SETS))
def test_every_point_lies_in_k_and_has_the_shape(name):
    convex_set = SETS[name]
    points = vertex_mixture(convex_set, np.random.default_rng(1), 500)
    assert points.shape == (500, *convex_set.shape)
    assert convex_set.violation_many(points, atol=1e-9) is None


@pytest.mark.parametrize("name", ["birkhoff", "flow", "nuclear"])
def test_the_mean_is_the_documented_one(name):
    """Empirical mean within 5 standard errors of c/(k+1) + k/(k+1) E V, entry by entry."""
    convex_set = SETS[name]
    count = 20_000
    points = vertex_mixture(convex_set, np.random.default_rng(2), count).reshape(count, -1)
    k = mixture_size(convex_set)
    centre = np.asarray(convex_set.center, dtype=float).ravel()
    expected = centre / (k + 1) + k / (k + 1) * vertex_mean(convex_set).ravel()
    error = np.abs(points.mean(axis=0) - expected)
    standard = points.std(axis=0) / math.sqrt(count)
    assert np.all(error <= 5 * standard + 1e-12)
    # not the trivial answer: a mixture has spread in every live coordinate
    assert standard.max() > 0


def test_mixture_sizes():
    assert mixture_size(SETS["birkhoff"]) == 4  # n, as BirkhoffPolytope.sample
    assert mixture_size(SETS["flow"]) == min(SETS["flow"].aff_dim, 5)
    assert mixture_size(NuclearNormBall(1, 3)) == 3  # min(aff_dim, 5)
    assert mixture_size(L1Ball(2)) == 2


def test_birkhoff_vertices_are_uniform_permutations():
    n, count = 3, 12_000
    vertices = random_vertices(BirkhoffPolytope(n), np.random.default_rng(3), count)
    assert np.all(vertices.sum(axis=1) == 1) and np.all(vertices.sum(axis=2) == 1)
    columns = vertices.argmax(axis=2)
    index = {p: i for i, p in enumerate(itertools.permutations(range(n)))}
    counts = np.bincount([index[tuple(row)] for row in columns], minlength=len(index))
    expected = count / len(index)
    chi_square = float(((counts - expected) ** 2 / expected).sum())
    assert chi_square < 25.7  # chi-square, 5 degrees of freedom: p = 1e-4


def test_flow_vertices_are_uniform_paths():
    """On a DAG with paths of different lengths (and a dead edge), every s-t path is
    drawn with probability 1/N."""
    edges = [("s", "a"), ("s", "b"), ("a", "b"), ("a", "t"), ("b", "t"), ("s", "t"), ("x", "a")]
    flow = FlowPolytope(edges, "s", "t")
    assert flow.path_count == 4  # s-t, s-a-t, s-b-t, s-a-b-t
    count = 10_000
    vertices = random_vertices(flow, np.random.default_rng(4), count)
    assert flow.violation_many(vertices) is None
    assert set(np.unique(vertices)) <= {0.0, 1.0}
    patterns, counts = np.unique(vertices, axis=0, return_counts=True)
    assert len(patterns) == 4
    expected = count / 4
    assert float(((counts - expected) ** 2 / expected).sum()) < 21.1  # 3 dof: p = 1e-4
    np.testing.assert_allclose(flow._path_shares(), patterns.mean(axis=0))


def test_nuclear_vertices_are_rank_one_of_nuclear_norm_rho():
    ball = NuclearNormBall(3, 5, radius=2.0)
    vertices = random_vertices(ball, np.random.default_rng(5), 200)
    singular = np.linalg.svd(vertices, compute_uv=False)
    np.testing.assert_allclose(singular[:, 0], 2.0)
    np.testing.assert_allclose(singular[:, 1:], 0.0, atol=1e-12)
    # symmetric law: u v^T and -u v^T equally likely, so the mean is 0
    assert np.abs(vertices.mean(axis=0)).max() < 5 * 2.0 / math.sqrt(200)


def test_the_stream_is_fixed_by_the_generator():
    flow = SETS["flow"]
    first = vertex_mixture(flow, np.random.default_rng(7), 30)
    np.testing.assert_array_equal(first, vertex_mixture(flow, np.random.default_rng(7), 30))
