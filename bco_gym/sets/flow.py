"""Unit source-sink flows of a directed acyclic graph (online shortest paths).

For a DAG G = (N, E) with source s and sink t, points are edge-flow vectors x in R^E:

    K = {x >= 0 : sum_{e into v} x_e = sum_{e out of v} x_e  for v not in {s, t},
                  sum_{e out of s} x_e - sum_{e into s} x_e = 1}.

Its vertices are exactly the indicator vectors of the s-t paths, so K is their convex
hull and a linear function over K is minimised by a shortest path.

Edges on no s-t path ("dead" edges: their tail is unreachable from s or their head
cannot reach t) carry zero flow in every point of K. They keep their coordinates, so
the user's edge indexing is unchanged, but are fixed at 0: the LMO never uses them,
``tangent`` zeroes them and ``violation`` reports a flow on them. Edges on every s-t
path are likewise fixed at 1 (an affine consequence of conservation).

Geometry, precomputed once. On the live subgraph (n' nodes, m' edges, connected) the
affine hull is {x_dead = 0, B x = b} with B the node-edge incidence matrix (out minus
in) without t's row, which has full row rank n' - 1, so aff_dim = m' - n' + 1.
``tangent`` is the orthogonal projector onto V = {v_dead = 0, B v = 0},
v -> v - B^T (B B^T)^(-1) B v, applied with a sparse LU factorisation of the reduced
Laplacian B B^T: O(fill-in) per vector, O(m) on planar graphs up to a log factor.
The centre c is the Chebyshev centre of K within aff(K), one LP (HiGHS):
maximise r subject to c_e >= r ||P e_e|| for every non-fixed live edge, B c = b;
the inner radius is then recomputed exactly at c as r = min_e c_e / ||P e_e||, the
largest ball of V around c that keeps every x_e >= 0. The outer radius is exact: for
a path vertex x, ||x - c||^2 = ||c||^2 + sum_{e in path} (1 - 2 c_e), so the farthest
vertex is a longest path for the weights 1 - 2c_e, i.e. lmo(2c - 1).

Oracles. LMO = shortest s-t path for edge weights g by dynamic programming over the
nodes in topological order, negative weights allowed: the nodes are grouped in levels
(longest distance from s), and each level is relaxed in one vectorised step, O(m)
work in (number of levels) numpy calls. Weights whose path sums could overflow (max
|g_e| > 1e300/m) or that are subnormal are first divided by max |g_e|. Projection = a QP
solved by Clarabel (the optional ``qp`` extra, ``bco_gym.sets._qp``), polynomial, interior point.

Batches. ``lmo_many`` runs the dynamic programme on all rows at once: one pass over
the levels with (k, ...) arrays of distances and best in-edges, then all paths traced
back together; the same additions and tie-breaking as ``lmo``, so row i is ``lmo``'s
path exactly. ``project_many`` solves the QPs row by row.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np

from bco_gym import portable
from bco_gym.sets._qp import NonnegativeProjector, missing_solver_message, qp_available
from bco_gym.sets.base import ConvexSet
from bco_gym.sets.checks import DEFAULT_ATOL, SCREEN_SLACK, check_size, off_by
from bco_gym.sets.edges import check_node, normalise_edges

_SAMPLE_VERTICES = 5
# Weights beyond these magnitudes are rescaled before the dynamic programme (see lmo).
_SAFE_WEIGHT = 1e300
_TINY_WEIGHT = 1e-290


class FlowPolytope(ConvexSet):
    """The polytope of unit s-t flows of a DAG (convex hull of the s-t path indicators).

    Args:
        edges: a sequence of (tail, head) pairs of hashable nodes; coordinate e of a
            point is the flow on ``edges[e]``. Parallel edges are allowed.
        source, sink: the nodes s and t.

    Raises ValueError when the graph has a cycle (the message shows one), when s or t is
    not a node of an edge, when s = t, when no s-t path exists, or when there is only
    one s-t path (K is then a single point).

    ``sample`` returns sum_j w_j p_j with w ~ Dirichlet(1, ..., 1) over the centre and
    k = min(aff_dim, 5) path vertices p_j = lmo(z_j), z_j standard normal.

    Attributes:
        edges, nodes: tuples (nodes in order of first appearance in ``edges``).
        source, sink: s and t.
        on_path: read-only bool array, whether each edge lies on some s-t path.
        path_count: the number of s-t paths (an exact int).
    """

    projection_extra = "qp"  # the projection is a QP (Clarabel), the optional extra

    def __init__(self, edges: Iterable[Sequence[Hashable]], source: Hashable, sink: Hashable):
        self.edges = normalise_edges(edges)
        self.source = check_node(source, "source")
        self.sink = check_node(sink, "sink")
        self.nodes = tuple(dict.fromkeys(node for edge in self.edges for node in edge))
        self._grid_shape: tuple[int, int] | None = None
        index = {node: i for i, node in enumerate(self.nodes)}
        for name, node in (("source", self.source), ("sink", self.sink)):
            if node not in index:
                raise ValueError(f"FlowPolytope: {name} {node!r} is not an endpoint of any edge")
        if self.source == self.sink:
            raise ValueError(f"FlowPolytope: source and sink are the same node {self.source!r}")
        self.shape = (len(self.edges),)
        self._tails = np.array([index[tail] for tail, _ in self.edges], dtype=np.intp)
        self._heads = np.array([index[head] for _, head in self.edges], dtype=np.intp)
        self._s, self._t = index[self.source], index[self.sink]
        self._order = self._topological_order()
        self._find_live_and_fixed_edges()
        self._build_incidence()
        self._build_levels()
        self._center, self._inner_radius = self._chebyshev_center()
        self._center.flags.writeable = False
        farthest = self.lmo(2.0 * self._center - 1.0) - self._center
        self._outer_radius = math.sqrt(portable.dot(farthest, farthest))
        self._projector = NonnegativeProjector(
            self._reduced_incidence[:, self._live_index], self._reduced_rhs, "FlowPolytope"
        )

    @classmethod
    def grid(cls, rows: int, cols: int) -> FlowPolytope:
        """The DAG of a rows x cols grid, every edge pointing right or down.

        Nodes are (i, j) with 0 <= i < rows, 0 <= j < cols; source (0, 0), sink
        (rows - 1, cols - 1). Edge order: nodes in row-major order, and for each node
        its right edge (i, j) -> (i, j + 1) then its down edge (i, j) -> (i + 1, j),
        where they exist; 2*rows*cols - rows - cols edges in all. Every edge lies on an
        s-t path; there are C(rows + cols - 2, rows - 1) paths.
        """
        rows = check_size(rows, "rows", "FlowPolytope.grid", 2, " (a 1-wide grid has one path)")
        cols = check_size(cols, "cols", "FlowPolytope.grid", 2, " (a 1-wide grid has one path)")
        edges = []
        for i in range(rows):
            for j in range(cols):
                if j + 1 < cols:
                    edges.append(((i, j), (i, j + 1)))
                if i + 1 < rows:
                    edges.append(((i, j), (i + 1, j)))
        polytope = cls(edges, (0, 0), (rows - 1, cols - 1))
        polytope._grid_shape = (rows, cols)
        return polytope

    def __repr__(self) -> str:
        if self._grid_shape is not None:
            return f"FlowPolytope.grid({self._grid_shape[0]}, {self._grid_shape[1]})"
        return (
            f"FlowPolytope({len(self.edges)} edges, {len(self.nodes)} nodes, "
            f"source={self.source!r}, sink={self.sink!r})"
        )

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_laplacian_lu", None)  # SuperLU objects do not pickle; refactored on demand
        return state

    # -- construction -----------------------------------------------------------------------
    def _topological_order(self) -> np.ndarray:
        """Kahn's algorithm; a ValueError showing a cycle if the graph has one."""
        size = len(self.nodes)
        out_edges: list[list[int]] = [[] for _ in range(size)]
        in_degree = np.zeros(size, dtype=np.intp)
        for e, (tail, head) in enumerate(zip(self._tails, self._heads, strict=True)):
            out_edges[tail].append(e)
            in_degree[head] += 1
        ready = [v for v in range(size) if in_degree[v] == 0]
        order = []
        while ready:
            v = ready.pop()
            order.append(v)
            for e in out_edges[v]:
                head = self._heads[e]
                in_degree[head] -= 1
                if in_degree[head] == 0:
                    ready.append(int(head))
        if len(order) < size:
            raise ValueError(
                f"FlowPolytope: the graph is not a DAG; cycle {self._a_cycle(in_degree)}"
            )
        return np.array(order, dtype=np.intp)

    def _a_cycle(self, in_degree: np.ndarray) -> str:
        """A cycle among the nodes Kahn's algorithm could not order, as 'a -> b -> a'."""
        predecessor = {}
        for tail, head in zip(self._tails, self._heads, strict=True):
            if in_degree[tail] > 0 and in_degree[head] > 0:
                predecessor.setdefault(int(head), int(tail))
        node = next(iter(predecessor))
        seen: list[int] = []
        while node not in seen:
            seen.append(node)
            node = predecessor[node]
        cycle = seen[seen.index(node) :][::-1]
        return " -> ".join(repr(self.nodes[v]) for v in [*cycle, cycle[0]])

    def _find_live_and_fixed_edges(self) -> None:
        """Count s-t paths through every edge (exact integers) to find dead/fixed edges."""
        size = len(self.nodes)
        from_source = [0] * size  # number of s -> v paths
        to_sink = [0] * size  # number of v -> t paths
        from_source[self._s] = 1
        to_sink[self._t] = 1
        in_edges: list[list[int]] = [[] for _ in range(size)]
        out_edges: list[list[int]] = [[] for _ in range(size)]
        for e, (tail, head) in enumerate(zip(self._tails, self._heads, strict=True)):
            in_edges[head].append(e)
            out_edges[tail].append(e)
        for v in self._order:
            if v != self._s:
                from_source[v] = sum(from_source[self._tails[e]] for e in in_edges[v])
        for v in self._order[::-1]:
            if v != self._t:
                to_sink[v] = sum(to_sink[self._heads[e]] for e in out_edges[v])
        paths = from_source[self._t]
        if paths == 0:
            raise ValueError(
                f"FlowPolytope: no path from source {self.source!r} to sink {self.sink!r}"
            )
        if paths == 1:
            raise ValueError(
                f"FlowPolytope: only one path from {self.source!r} to {self.sink!r}; "
                "the flow polytope is then a single point"
            )
        through = [
            from_source[t] * to_sink[h] for t, h in zip(self._tails, self._heads, strict=True)
        ]
        self.path_count = paths
        self._path_counts = (from_source, to_sink)  # exact ints: s-v and v-t paths
        self.on_path = np.array([count > 0 for count in through])
        self.on_path.flags.writeable = False
        self._fixed = np.array([count == paths for count in through])
        self._free = self.on_path & ~self._fixed
        live_nodes = np.zeros(size, dtype=bool)
        live_nodes[self._tails[self.on_path]] = True
        live_nodes[self._heads[self.on_path]] = True
        self._live_nodes = live_nodes

    def _build_incidence(self) -> None:
        """Incidence matrices (out minus in) and the reduced Laplacian of the live graph."""
        import scipy.sparse as sp  # scipy is imported where used: `import bco_gym` stays light

        size, edge_count = len(self.nodes), len(self.edges)
        columns = np.arange(edge_count)
        data = np.concatenate([np.ones(edge_count), -np.ones(edge_count)])
        incidence = sp.csr_matrix(
            (data, (np.concatenate([self._tails, self._heads]), np.tile(columns, 2))),
            shape=(size, edge_count),
        )
        self._incidence = incidence
        rows = np.nonzero(self._live_nodes & (np.arange(size) != self._t))[0]
        self._reduced_rows = rows
        self._live_index = np.nonzero(self.on_path)[0]
        self._reduced_incidence = (incidence[rows] @ sp.diags(self.on_path.astype(float))).tocsr()
        self._reduced_incidence.eliminate_zeros()
        self._reduced_incidence_t = self._reduced_incidence.T.tocsr()
        self._reduced_rhs = (rows == self._s).astype(float)
        self._laplacian = (self._reduced_incidence @ self._reduced_incidence_t).tocsc()
        self._aff_dim = int(self.on_path.sum() - self._live_nodes.sum() + 1)

    @property
    def _lu(self) -> Any:
        if not hasattr(self, "_laplacian_lu"):
            from scipy.sparse.linalg import splu

            self._laplacian_lu = splu(self._laplacian, permc_spec="MMD_AT_PLUS_A")
        return self._laplacian_lu

    def _build_levels(self) -> None:
        """Group live nodes by longest distance from s; pad each level's in-edges."""
        size = len(self.nodes)
        live_edges = self._live_index
        level = np.zeros(size, dtype=np.intp)
        position = np.empty(size, dtype=np.intp)
        position[self._order] = np.arange(size)
        for e in live_edges[np.argsort(position[self._tails[live_edges]], kind="stable")]:
            level[self._heads[e]] = max(level[self._heads[e]], level[self._tails[e]] + 1)
        by_head: list[list[int]] = [[] for _ in range(size)]
        for e in live_edges:
            by_head[self._heads[e]].append(int(e))
        dummy_node, dummy_edge = size, len(self.edges)
        self._levels = []
        for k in range(1, int(level[self._live_nodes].max()) + 1):
            nodes = np.nonzero(self._live_nodes & (level == k))[0]
            incoming = [by_head[v] for v in nodes]
            width = max(len(edges) for edges in incoming)
            padded = np.full((len(nodes), width), dummy_edge, dtype=np.intp)
            for row, edges in enumerate(incoming):
                padded[row, : len(edges)] = edges
            tails = np.append(self._tails, dummy_node)[padded]
            self._levels.append((nodes, padded, tails, np.arange(len(nodes))))

    def _chebyshev_center(self) -> tuple[np.ndarray, float]:
        """The LP centre and its exact inner radius (see the module docstring)."""
        import scipy.sparse as sp
        from scipy.optimize import linprog

        edge_count = len(self.edges)
        weights = np.sqrt(np.clip(self._tangent_diagonal(), 0.0, None))
        weights[~self._free] = 0.0
        free = np.nonzero(self._free)[0]
        inequalities = sp.csr_matrix(
            (
                np.concatenate([-np.ones(free.size), weights[free]]),
                (
                    np.tile(np.arange(free.size), 2),
                    np.concatenate([free, np.full(free.size, edge_count)]),
                ),
            ),
            shape=(free.size, edge_count + 1),
        )
        equalities = sp.hstack(
            [self._reduced_incidence, sp.csr_matrix((self._laplacian.shape[0], 1))]
        )
        bounds = [(0.0, None if live else 0.0) for live in self.on_path] + [(0.0, None)]
        objective = np.zeros(edge_count + 1)
        objective[-1] = -1.0
        result = linprog(
            objective,
            A_ub=inequalities,
            b_ub=np.zeros(free.size),
            A_eq=equalities,
            b_eq=self._reduced_rhs,
            bounds=bounds,
            method="highs",
        )
        if not result.success:
            raise RuntimeError(f"FlowPolytope: the Chebyshev-centre LP failed: {result.message}")
        center = result.x[:edge_count]
        residual = self._reduced_incidence @ center - self._reduced_rhs
        correction = portable.matvec(self._laplacian_inverse, residual)
        center = center - self._reduced_incidence_t @ correction
        center[~self.on_path] = 0.0
        center[self._fixed] = 1.0
        return center, float(np.min(center[free] / weights[free]))

    def _tangent_diagonal(self) -> np.ndarray:
        """diag(P) = ||P e_e||^2 = 1 - (effective resistance of e), from L^(-1).

        With t grounded, b_e^T L^(-1) b_e = L^(-1)_aa + L^(-1)_bb - 2 L^(-1)_ab for the
        endpoints a, b of e (entries of t are 0). O(n'^2) memory for the dense inverse,
        taken by :func:`~bco_gym.portable.inverse_spd` (the same bits on every CPU, where
        a solve by the sparse LU factors goes through BLAS: the centre, both radii and
        so every step size depended on the CPU's OpenBLAS kernels).
        """
        size = self._laplacian.shape[0]
        self._laplacian_inverse = portable.inverse_spd(self._laplacian.toarray())
        inverse = np.zeros((size + 1, size + 1))  # the last row and column stand for t
        inverse[:size, :size] = self._laplacian_inverse
        position = np.full(len(self.nodes), size)
        position[self._reduced_rows] = np.arange(size)
        a, b = position[self._tails], position[self._heads]
        resistance = inverse[a, a] + inverse[b, b] - 2.0 * inverse[a, b]
        return np.where(self.on_path, 1.0 - resistance, 0.0)

    # -- geometry ---------------------------------------------------------------------------
    @property
    def aff_dim(self) -> int:
        return self._aff_dim

    @property
    def center(self) -> np.ndarray:
        return self._center

    @property
    def inner_radius(self) -> float:
        return self._inner_radius

    @property
    def outer_radius(self) -> float:
        return self._outer_radius

    def tangent(self, v: np.ndarray) -> np.ndarray:
        v = self._check_array(v, "vector")
        y = np.where(self.on_path, v, 0.0)
        y -= self._reduced_incidence_t @ self._lu.solve(self._reduced_incidence @ y)
        y[self._fixed] = 0.0
        return y

    def tangent_many(self, vectors: np.ndarray) -> np.ndarray:
        vectors = self._check_batch(vectors, "vectors")
        y = np.where(self.on_path, vectors, 0.0)
        correction = self._reduced_incidence_t @ self._lu.solve(self._reduced_incidence @ y.T)
        y -= correction.T
        y[:, self._fixed] = 0.0
        return y

    # -- oracles ----------------------------------------------------------------------------
    def lmo(self, direction: np.ndarray) -> np.ndarray:
        """The indicator of a shortest s-t path for edge weights ``direction``.

        The dynamic programme of :meth:`_lmo_rows` on one row, kept in its own lean
        form (a batch of one costs several times more here): the same additions in the
        same order and the same tie-breaking (the first best in-edge), so the same path.
        """
        g = self._check_array(direction, "direction")
        largest = np.max(np.abs(g))
        if self._unsafe_scale(largest):
            g = g / largest  # as in _safely_scaled
        weights = np.append(g, 0.0)
        distance = np.full(len(self.nodes) + 1, np.inf)
        distance[self._s] = 0.0
        best_edge = np.empty(len(self.nodes), dtype=np.intp)
        for nodes, in_edges, in_tails, rows in self._levels:
            candidates = distance[in_tails] + weights[in_edges]
            choice = candidates.argmin(axis=1)
            distance[nodes] = candidates[rows, choice]
            best_edge[nodes] = in_edges[rows, choice]
        vertex = np.zeros(len(self.edges))
        node = self._t
        while node != self._s:
            edge = best_edge[node]
            vertex[edge] = 1.0
            node = self._tails[edge]
        return vertex

    def _lmo_rows(self, directions: np.ndarray) -> np.ndarray:
        """Shortest s-t paths for every row of edge weights, in one pass over the levels.

        distance[i, v] is row i's shortest s-v distance; each level's nodes take the
        best in-edge (the first on ties) of every row at once, then every row's path
        is traced back from t. Rows whose weights could overflow a path's sum (or lose
        bits to underflow) are first divided by their largest |weight|, which changes
        no shortest path.
        """
        count = len(directions)
        weights = np.zeros((count, len(self.edges) + 1))  # the last: the padding edge
        weights[:, :-1] = self._safely_scaled(directions)
        distance = np.full((count, len(self.nodes) + 1), np.inf)  # the last: padding node
        distance[:, self._s] = 0.0
        best_edge = np.zeros((count, len(self.nodes)), dtype=np.intp)
        for nodes, in_edges, in_tails, rows in self._levels:
            candidates = distance[:, in_tails] + weights[:, in_edges]  # (count, nodes, width)
            choice = candidates.argmin(axis=2)
            distance[:, nodes] = candidates.min(axis=2)  # the value at choice, exactly
            best_edge[:, nodes] = in_edges[rows, choice]
        return self._trace_paths(best_edge)

    def _safely_scaled(self, directions: np.ndarray) -> np.ndarray:
        """The rows, those of an unsafe scale divided by their largest |weight|."""
        largest = np.abs(directions).max(axis=1)
        unsafe = self._unsafe_scale(largest)
        if not unsafe.any():
            return directions
        scaled = directions.copy()
        scaled[unsafe] /= largest[unsafe, np.newaxis]
        return scaled

    def _unsafe_scale(self, largest: Any) -> Any:
        """Whether weights of largest magnitude ``largest`` (a number or an array) could
        overflow a path's sum (above 1e300/m) or be subnormal (below 1e-290)."""
        return (largest > _SAFE_WEIGHT / len(self.edges)) | (
            (largest < _TINY_WEIGHT) & (largest > 0.0)
        )

    def _trace_paths(self, best_edge: np.ndarray) -> np.ndarray:
        """Path indicators from t back to s along each row's best in-edges."""
        vertices = np.zeros((len(best_edge), len(self.edges)))
        rows = np.arange(len(best_edge))
        node = np.full(len(best_edge), self._t)
        while len(rows):
            edge = best_edge[rows, node]
            vertices[rows, edge] = 1.0
            node = self._tails[edge]
            walking = node != self._s
            rows, node = rows[walking], node[walking]
        return vertices

    @property
    def has_projection(self) -> bool:
        return qp_available()

    def project(self, x: np.ndarray) -> np.ndarray:
        """Euclidean projection by the Clarabel QP solver (optional ``qp`` extra)."""
        y = self._check_array(x, "point")
        if not qp_available():
            raise NotImplementedError(missing_solver_message("FlowPolytope"))
        projection = np.zeros(len(self.edges))
        projection[self._live_index] = self._projector(y[self._live_index])
        return projection

    def violation(self, x: np.ndarray, atol: float = DEFAULT_ATOL) -> str | None:
        x = np.asarray(x)
        if x.shape != self.shape:
            return f"shape {x.shape}, expected {self.shape}"
        if not np.all(np.isfinite(x)):
            return "non-finite entries (NaN or inf)"
        e = int(np.argmin(x))
        if x[e] < -atol:
            return (
                f"edge {e} {self._edge_name(e)} carries {x[e]:.6g}, expected >= 0 within {atol:g}"
            )
        dead = np.nonzero(~self.on_path & (np.abs(x) > atol))[0]
        if dead.size:
            e = int(dead[0])
            return (
                f"edge {e} {self._edge_name(e)} lies on no source-sink path, so its flow must "
                f"be 0; it carries {x[e]:.6g}"
            )
        net = self._incidence @ x
        net[self._s] -= 1.0
        net[self._t] = 0.0
        v = int(np.argmax(np.abs(net)))
        if abs(net[v]) > atol:
            return self._conservation_message(x, v, atol)
        return None

    def violation_many(
        self, points: np.ndarray, atol: float = DEFAULT_ATOL
    ) -> tuple[int, str] | None:
        points = np.asarray(points)
        if points.ndim != 2 or points.shape[1:] != self.shape:
            return super().violation_many(points, atol)
        net = np.asarray(self._incidence @ points.T).T  # (k, nodes): out-flow minus in-flow
        net[:, self._s] -= 1.0
        net[:, self._t] = 0.0
        dead = np.abs(points[:, ~self.on_path]).max(axis=1, initial=0.0)
        # A nonnegative unit s-t flow of a DAG has entries <= 1, so the rounding of the
        # conservation sums is tiny next to SCREEN_SLACK wherever the other tests pass.
        clear = (dead <= atol) & (np.abs(net).max(axis=1, initial=0.0) <= atol - SCREEN_SLACK)
        if not points.min(initial=np.inf) >= -atol:  # row minima only when needed
            clear &= points.min(axis=1, initial=np.inf) >= -atol
        return self._screened(points, clear, atol)

    def _edge_name(self, e: int) -> str:
        tail, head = self.edges[e]
        return f"({tail!r} -> {head!r})"

    def _conservation_message(self, x: np.ndarray, v: int, atol: float) -> str:
        out_flow = float(x[self._tails == v].sum())
        in_flow = float(x[self._heads == v].sum())
        if v == self._s:
            return (
                f"net out-flow of the source {self.source!r} is "
                f"{off_by(out_flow - in_flow, 1.0)}, expected 1 within atol={atol:g}"
            )
        return (
            f"flow not conserved at node {self.nodes[v]!r}: in-flow {in_flow:.6g}, out-flow "
            f"{out_flow:.6g}, expected equal within {atol:g}"
        )

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """Dirichlet(1, ..., 1) weights on the centre and min(aff_dim, 5) random paths."""
        count = min(self.aff_dim, _SAMPLE_VERTICES)
        weights = rng.dirichlet(np.ones(count + 1))
        point = weights[0] * self._center
        for weight in weights[1:]:
            point = point + weight * self.lmo(rng.standard_normal(self.shape))
        return point

    def _path_shares(self) -> np.ndarray:
        """The share of s-t paths through each edge, N_s(tail) N(head) / N(s) (the mean of
        a uniformly random path's indicator; exact ratios of integers, rounded once)."""
        from_source, to_sink = self._path_counts
        return np.array(
            [
                from_source[tail] * to_sink[head] / self.path_count
                for tail, head in zip(self._tails, self._heads, strict=True)
            ]
        )

    def _walk_tables(self) -> tuple[np.ndarray, np.ndarray]:
        """Per node, its live out-edges (padded with -1) and their cumulative probabilities
        N(head)/N(v) of a uniform path's next edge (padded with 2.0; the last live one 1.0)."""
        if not hasattr(self, "_walk"):
            _, to_sink = self._path_counts
            out: list[list[int]] = [[] for _ in self.nodes]
            for e in self._live_index:
                out[self._tails[e]].append(int(e))
            width = max(len(edges) for edges in out)
            edges = np.full((len(self.nodes), width), -1, dtype=np.intp)
            cumulative = np.full((len(self.nodes), width), 2.0)
            for v, leaving in enumerate(out):
                if not leaving:
                    continue
                shares = [to_sink[self._heads[e]] / to_sink[v] for e in leaving]
                edges[v, : len(leaving)] = leaving
                cumulative[v, : len(leaving)] = np.cumsum(shares)
                cumulative[v, len(leaving) - 1] = 1.0
            self._walk = (edges, cumulative)
        return self._walk

    def _uniform_paths(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """``count`` indicators of i.i.d. uniformly random s-t paths, (count, edges).

        All walks start at s and step together: a walk at v draws u ~ U[0, 1) and takes
        its first live out-edge whose cumulative probability exceeds u, so edge (v, w)
        with probability N(w)/N(v); walks at t stop. A path is then uniform: the
        probabilities telescope to 1/N(s). One uniform per walk and step.
        """
        edges, cumulative = self._walk_tables()
        paths = np.zeros((count, len(self.edges)))
        rows = np.arange(count)
        node = np.full(count, self._s)
        while len(rows):
            keys = rng.random(len(rows))
            choice = (keys[:, np.newaxis] >= cumulative[node]).sum(axis=1)
            edge = edges[node, choice]
            paths[rows, edge] = 1.0
            node = self._heads[edge]
            walking = node != self._t
            rows, node = rows[walking], node[walking]
        return paths

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """x_e in [0, 1] on live edges ([1, 1] if on every path), [0, 0] on dead ones."""
        return self._fixed.astype(float), self.on_path.astype(float)
