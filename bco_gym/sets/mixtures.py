"""The vertex-mixture law: a cheap random point of K, for random play at scale.

    X = w_0 c + sum_{j=1..k} w_j V_j,   w ~ Dirichlet(1, ..., 1) (k + 1 weights),

c the set's centre and V_1, ..., V_k i.i.d. extreme points of K from the set's vertex
law. X is a convex combination of points of K, so X is in K; its mean is

    E X = c / (k + 1) + (k / (k + 1)) E V.

The vertex laws and k, per set:

* BirkhoffPolytope(n): V uniform over the n! permutation matrices (a row of uniform
  keys argsorted), k = n; E V = J/n = c, so E X = c. This is the law of
  ``BirkhoffPolytope.sample``; only the stream of draws differs (one vectorised draw
  for every round, where ``sample`` draws round by round).
* FlowPolytope: V the indicator of a uniformly random s-t path (a walk from s that
  leaves node v by edge e = (v, w) with probability N(w)/N(v), N(v) the number of v-t
  paths, exact integers), k = min(aff_dim, 5); E V_e = N_s(tail e) N(head e) / N(s),
  the share of s-t paths through e (N_s(v) the number of s-v paths).
* NuclearNormBall(rho): V = rho u v^T with u, v independent and uniform on the unit
  spheres, k = min(aff_dim, 5); E V = 0 = c.
* Any other set: V = lmo(z), z standard Gaussian (the LMO's vertex for a random
  direction), k = min(aff_dim, 5).

Cost per point: k vertex draws and the weighted sum; no LMO call on the three sets
above (``FlowPolytope.sample`` makes 5 shortest-path calls a point, the Birkhoff
``sample`` n calls of ``rng.permutation``, the nuclear-norm ``sample`` an SVD).
"""

from __future__ import annotations

import numpy as np

from bco_gym.sets.base import ConvexSet
from bco_gym.sets.birkhoff import BirkhoffPolytope
from bco_gym.sets.flow import FlowPolytope
from bco_gym.sets.nuclear import NuclearNormBall

#: k for the sets whose vertex law does not fix it: min(aff_dim, MIXTURE_VERTICES).
MIXTURE_VERTICES = 5


def mixture_size(convex_set: ConvexSet) -> int:
    """k, the number of vertices mixed (see the module docstring)."""
    if isinstance(convex_set, BirkhoffPolytope):
        return convex_set.n
    return max(1, min(convex_set.aff_dim, MIXTURE_VERTICES))


def random_vertices(convex_set: ConvexSet, rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` i.i.d. extreme points from the set's vertex law, (count, *shape)."""
    if isinstance(convex_set, BirkhoffPolytope):
        return _permutation_matrices(convex_set.n, rng, count)
    if isinstance(convex_set, FlowPolytope):
        return convex_set._uniform_paths(rng, count)
    if isinstance(convex_set, NuclearNormBall):
        rows, cols = convex_set.shape
        left = _unit_rows(rng.standard_normal((count, rows)))
        right = _unit_rows(rng.standard_normal((count, cols)))
        return convex_set.radius * left[:, :, np.newaxis] * right[:, np.newaxis, :]
    directions = rng.standard_normal((count, *convex_set.shape))
    return convex_set.lmo_many(directions)


def vertex_mean(convex_set: ConvexSet) -> np.ndarray | None:
    """E V of the vertex law where it is known in closed form (None for other sets)."""
    if isinstance(convex_set, BirkhoffPolytope | NuclearNormBall):
        return np.asarray(convex_set.center, dtype=float).copy()
    if isinstance(convex_set, FlowPolytope):
        return convex_set._path_shares()
    return None


def vertex_mixture(convex_set: ConvexSet, rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` i.i.d. points of the vertex-mixture law (module docstring), (count, *shape).

    Draws, in order: the (count, k + 1) Dirichlet weights, then point by point its k
    vertices (on the nuclear-norm ball: all the u's, then all the v's).
    """
    k = mixture_size(convex_set)
    weights = rng.dirichlet(np.ones(k + 1), size=count)
    centre = np.asarray(convex_set.center, dtype=float)
    if isinstance(convex_set, BirkhoffPolytope):
        mixed = _permutation_mixture(convex_set.n, rng, weights)
    elif isinstance(convex_set, NuclearNormBall):
        mixed = _rank_one_mixture(convex_set, rng, weights)
    else:
        vertices = random_vertices(convex_set, rng, count * k).reshape(count, k, -1)
        # sum_j w_j v_j per point, the vertices added one after another (no BLAS product)
        mixed = np.add.reduce(weights[:, 1:, np.newaxis] * vertices, axis=1)
        mixed = mixed.reshape(count, *convex_set.shape)
    return mixed + weights[:, 0].reshape(count, *(1,) * centre.ndim) * centre


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)


def _rank_one_mixture(
    convex_set: NuclearNormBall, rng: np.random.Generator, weights: np.ndarray
) -> np.ndarray:
    """sum_j w_j rho u_j v_j^T for each point, as one product (rows x k) @ (k x cols)."""
    count, k = weights.shape[0], weights.shape[1] - 1
    rows, cols = convex_set.shape
    left = _unit_rows(rng.standard_normal((count, k, rows)))
    right = _unit_rows(rng.standard_normal((count, k, cols)))
    left *= convex_set.radius * weights[:, 1:, np.newaxis]
    return np.matmul(left.transpose(0, 2, 1), right)


def _permutations(n: int, rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` uniform permutations of 0..n-1, (count, n): uniform keys argsorted."""
    return np.argsort(rng.random((count, n)), axis=1)


def _permutation_matrices(n: int, rng: np.random.Generator, count: int) -> np.ndarray:
    sigma = _permutations(n, rng, count)
    matrices = np.zeros((count, n, n))
    matrices[np.arange(count)[:, np.newaxis], np.arange(n), sigma] = 1.0
    return matrices


def _permutation_mixture(n: int, rng: np.random.Generator, weights: np.ndarray) -> np.ndarray:
    """sum_j w_j P_j for each point, without forming the P_j: one weighted bincount."""
    count, k = weights.shape[0], weights.shape[1] - 1
    sigma = _permutations(n, rng, count * k).reshape(count, k, n)
    cells = (np.arange(count)[:, np.newaxis, np.newaxis] * n + np.arange(n)) * n + sigma
    shares = np.broadcast_to(weights[:, 1:, np.newaxis], cells.shape)
    total = np.bincount(cells.ravel(), weights=shares.ravel(), minlength=count * n * n)
    return total.reshape(count, n, n)
