"""Test cases for the feasible sets, described independently of their implementation.

(A uniquely named helper module, imported by conftest.py and the test modules.)

Each case builds a set and, where it is a polytope, states it the way a textbook would:
an LP over the flattened point (for ``scipy.optimize.linprog``), the equalities of its
affine hull, and the list of its vertices (small sizes only). Tests compare the sets'
closed-form oracles and geometry with these descriptions.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from bco_gym.sets import (
    BirkhoffPolytope,
    ConvexSet,
    FlowPolytope,
    Hypercube,
    L1Ball,
    L2Ball,
    NuclearNormBall,
    Simplex,
)

# A hand-made DAG: 5 s-t paths over the live edges 0..6 (two of them parallel), edge 6
# on every path (fixed at 1), and four dead edges: out of a node unreachable from s (7),
# into a node that cannot reach t (8), into s (9) and out of t (10).
HAND_EDGES = [
    ("s", "a"),
    ("s", "b"),
    ("a", "b"),
    ("a", "m"),
    ("b", "m"),
    ("b", "m"),
    ("m", "t"),
    ("d", "a"),
    ("m", "e"),
    ("x", "s"),
    ("t", "f"),
]
HAND_LIVE = [True] * 7 + [False] * 4
HAND_FIXED = 6


def hand_dag() -> FlowPolytope:
    return FlowPolytope(HAND_EDGES, "s", "t")


# -- independent descriptions -------------------------------------------------------------
def flow_equalities(polytope: FlowPolytope) -> tuple[np.ndarray, np.ndarray]:
    """Conservation at every node but s and t, and net out-flow 1 at s (dense)."""
    rows, rhs = [], []
    for node in polytope.nodes:
        if node == polytope.sink:
            continue
        row = [(tail == node) - (head == node) for tail, head in polytope.edges]
        rows.append(np.array(row, dtype=float))
        rhs.append(1.0 if node == polytope.source else 0.0)
    return np.array(rows), np.array(rhs)


def flow_paths(polytope: FlowPolytope) -> np.ndarray:
    """Indicator vectors of every s-t path, by depth-first enumeration."""
    paths = []

    def extend(node, used):
        if node == polytope.sink:
            vector = np.zeros(len(polytope.edges))
            vector[used] = 1.0
            paths.append(vector)
            return
        for e, (tail, head) in enumerate(polytope.edges):
            if tail == node:
                extend(head, [*used, e])

    extend(polytope.source, [])
    return np.array(paths)


def birkhoff_equalities(n: int) -> tuple[np.ndarray, np.ndarray]:
    rows = [np.kron(np.eye(n)[i], np.ones(n)) for i in range(n)]
    columns = [np.kron(np.ones(n), np.eye(n)[j]) for j in range(n)]
    return np.array(rows + columns), np.ones(2 * n)


def permutation_matrices(n: int) -> np.ndarray:
    return np.array([np.eye(n)[list(p)] for p in itertools.permutations(range(n))])


def lp_minimum(
    g: np.ndarray,
    *,
    a_eq: np.ndarray | None = None,
    b_eq: np.ndarray | None = None,
    bounds=(0, None),
) -> float:
    result = linprog(g.ravel(), A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs")
    assert result.success, result.message
    return float(result.fun)


def l1_lp_minimum(g: np.ndarray, radius: float) -> float:
    """min <g, p - q> subject to sum(p + q) <= radius, p, q >= 0."""
    n = g.size
    result = linprog(
        np.concatenate([g, -g]),
        A_ub=np.ones((1, 2 * n)),
        b_ub=[radius],
        bounds=(0, None),
        method="highs",
    )
    assert result.success
    return float(result.fun)


@dataclass
class Case:
    """A set at a small size with its independent description.

    lp: g -> min over K of <g, x> by linprog (polytopes only).
    equalities: (E, b) with aff(K) contained in {E x = b}, flattened (None: full-dim).
    vertices: every vertex of K (a polytope at a small size), flattened.
    tight_direction: a unit vector u of V with c + r(1 + eps)u outside K.
    exact_radii: whether r and R are exact (else only safe bounds are checked).
    """

    name: str
    make: Callable[[], ConvexSet]
    lp: Callable[[ConvexSet, np.ndarray], float] | None = None
    equalities: Callable[[ConvexSet], tuple[np.ndarray, np.ndarray]] | None = None
    vertices: Callable[[ConvexSet], np.ndarray] | None = None
    tight_direction: Callable[[ConvexSet], np.ndarray] | None = None
    exact_radii: bool = True
    qp: bool = False

    def __repr__(self) -> str:
        return self.name


def nonnegativity_tight_direction(convex_set: ConvexSet) -> np.ndarray:
    """For K = {x >= 0} cap aff(K): -P e_i/||P e_i|| for the coordinate i that binds."""
    c = convex_set.center.ravel()
    columns = np.eye(c.size)
    norms = np.array(
        [np.linalg.norm(convex_set.tangent(e.reshape(convex_set.shape))) for e in columns]
    )
    ratios = np.where(norms > 1e-12, c / np.maximum(norms, 1e-300), np.inf)
    i = int(np.argmin(ratios))
    return -convex_set.tangent(columns[i].reshape(convex_set.shape)) / norms[i]


def _simplex_case(n: int) -> Case:
    return Case(
        f"simplex{n}",
        lambda: Simplex(n),
        lp=lambda K, g: lp_minimum(g, a_eq=np.ones((1, K.n)), b_eq=[1.0]),
        equalities=lambda K: (np.ones((1, K.n)), np.ones(1)),
        vertices=lambda K: np.eye(K.n),
        tight_direction=nonnegativity_tight_direction,
    )


def _l1_vertices(K: L1Ball) -> np.ndarray:
    return np.concatenate([K.radius * np.eye(K.n), -K.radius * np.eye(K.n)])


def _box_vertices(K: Hypercube) -> np.ndarray:
    return np.array(
        [np.where(bits, K.high, K.low) for bits in itertools.product([0, 1], repeat=K.n)]
    )


def _box_tight(K: Hypercube) -> np.ndarray:
    u = np.zeros(K.n)
    u[np.argmin(K.high - K.low)] = 1.0
    return u


def _nuclear_tight(K: NuclearNormBall) -> np.ndarray:
    m = min(K.rows, K.cols)
    u = np.zeros(K.shape)
    u[np.arange(m), np.arange(m)] = 1.0
    return u / np.sqrt(m)


def _flow_case(name: str, make: Callable[[], FlowPolytope]) -> Case:
    return Case(
        name,
        make,
        lp=lambda K, g: lp_minimum(g, a_eq=flow_equalities(K)[0], b_eq=flow_equalities(K)[1]),
        equalities=flow_equalities,
        vertices=flow_paths,
        tight_direction=nonnegativity_tight_direction,
        qp=True,
    )


def _birkhoff_case(n: int) -> Case:
    return Case(
        f"birkhoff{n}",
        lambda: BirkhoffPolytope(n),
        lp=lambda K, g: lp_minimum(
            g, a_eq=birkhoff_equalities(K.n)[0], b_eq=birkhoff_equalities(K.n)[1]
        ),
        equalities=lambda K: birkhoff_equalities(K.n),
        vertices=lambda K: permutation_matrices(K.n).reshape(-1, K.n * K.n),
        tight_direction=nonnegativity_tight_direction,
        qp=True,
    )


CASES = [
    _simplex_case(2),
    _simplex_case(5),
    Case("l2ball", lambda: L2Ball(3, radius=2.0), tight_direction=lambda K: np.eye(K.n)[0]),
    Case(
        "l1ball",
        lambda: L1Ball(4, radius=1.5),
        lp=lambda K, g: l1_lp_minimum(g, K.radius),
        vertices=_l1_vertices,
        tight_direction=lambda K: np.ones(K.n) / np.sqrt(K.n),
    ),
    Case(
        "box",
        lambda: Hypercube(np.array([-1.0, 0.0, 2.0]), np.array([1.0, 0.5, 5.0])),
        lp=lambda K, g: lp_minimum(g, bounds=list(zip(K.low, K.high, strict=True))),
        vertices=_box_vertices,
        tight_direction=_box_tight,
    ),
    Case("nuclear4x3", lambda: NuclearNormBall(4, 3, radius=2.0), tight_direction=_nuclear_tight),
    Case("nuclear6x6", lambda: NuclearNormBall(6, 6), tight_direction=_nuclear_tight),
    Case("nuclear2x5", lambda: NuclearNormBall(2, 5, radius=0.5), tight_direction=_nuclear_tight),
    _flow_case("grid3x3", lambda: FlowPolytope.grid(3, 3)),
    _flow_case("grid2x4", lambda: FlowPolytope.grid(2, 4)),
    _flow_case("hand_dag", hand_dag),
    _birkhoff_case(3),
    _birkhoff_case(4),
]

SHRUNK = ["simplex5", "l2ball", "l1ball", "box", "nuclear4x3", "grid3x3", "hand_dag", "birkhoff3"]
SHRINK_FRACTION = 0.3


POLYTOPES = [c for c in CASES if c.vertices is not None]
QP_CASES = [c for c in CASES if c.qp]


def unit_tangent(convex_set: ConvexSet, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random unit vector of V."""
    u = convex_set.tangent(rng.standard_normal(convex_set.shape))
    return u / np.linalg.norm(u)


def far_point(convex_set: ConvexSet, rng: np.random.Generator, scale: float = 3.0) -> np.ndarray:
    """A point well outside K in general (random ambient direction, length ~ scale*R)."""
    g = rng.standard_normal(convex_set.shape)
    return convex_set.center + scale * convex_set.outer_radius * g / np.linalg.norm(g)
