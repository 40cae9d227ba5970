"""Linear descriptions of the polytopes, for the LP-based comparators.

A :class:`LinearDescription` writes K as the projection onto x of

    {(x, w) : A_ub [x; w] <= b_ub,  A_eq [x; w] = b_eq,  low <= [x; w] <= high}

(x flattened, w ``extra`` auxiliary variables), the form ``scipy.optimize.linprog``
takes. Built in: the simplex, the L1 ball (|x_i| <= w_i, sum w_i <= rho), the box, the
flow polytope (conservation at every node, x >= 0) and the Birkhoff polytope (row and
column sums 1, X >= 0). A user-defined polytope opts in by defining a method
``linear_description()`` that returns one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # scipy is imported where used: `import bco_gym` stays light
    from scipy import sparse

from bco_gym.sets import BirkhoffPolytope, FlowPolytope, Hypercube, L1Ball, Simplex
from bco_gym.sets.base import ConvexSet


@dataclass(frozen=True)
class LinearDescription:
    """K = {x : exists w with A_ub z <= b_ub, A_eq z = b_eq, low <= z <= high}, z = [x; w]."""

    extra: int
    a_ub: sparse.csr_matrix | None
    b_ub: np.ndarray | None
    a_eq: sparse.csr_matrix | None
    b_eq: np.ndarray | None
    low: np.ndarray
    high: np.ndarray

    @property
    def variables(self) -> int:
        return len(self.low)


def linear_description(convex_set: ConvexSet) -> LinearDescription | None:
    """K's linear description, or None when K is not a polytope this module knows."""
    custom = getattr(convex_set, "linear_description", None)
    if callable(custom):
        return custom()
    for kind, build in _BUILDERS.items():
        if isinstance(convex_set, kind):
            return build(convex_set)
    return None


def _simplex(convex_set: Simplex) -> LinearDescription:
    from scipy import sparse

    n = convex_set.dim
    return LinearDescription(
        extra=0,
        a_ub=None,
        b_ub=None,
        a_eq=sparse.csr_matrix(np.ones((1, n))),
        b_eq=np.ones(1),
        low=np.zeros(n),
        high=np.full(n, np.inf),
    )


def _l1_ball(convex_set: L1Ball) -> LinearDescription:
    from scipy import sparse

    n = convex_set.dim
    identity = sparse.identity(n, format="csr")
    a_ub = sparse.vstack(
        [
            sparse.hstack([identity, -identity]),
            sparse.hstack([-identity, -identity]),
            sparse.hstack([sparse.csr_matrix((1, n)), sparse.csr_matrix(np.ones((1, n)))]),
        ],
        format="csr",
    )
    b_ub = np.concatenate([np.zeros(2 * n), [convex_set.radius]])
    low = np.concatenate([np.full(n, -np.inf), np.zeros(n)])
    return LinearDescription(n, a_ub, b_ub, None, None, low, np.full(2 * n, np.inf))


def _box(convex_set: Hypercube) -> LinearDescription:
    low, high = (np.asarray(v, dtype=float).ravel() for v in convex_set.bounds())
    return LinearDescription(0, None, None, None, None, low, high)


def _flow(convex_set: FlowPolytope) -> LinearDescription:
    from scipy import sparse

    # Conservation (out minus in) at every node; on a DAG with x >= 0 this is exactly
    # the convex hull of the s-t paths (edges on no s-t path are forced to 0).
    index = {node: i for i, node in enumerate(convex_set.nodes)}
    n = len(convex_set.edges)
    tails = [index[tail] for tail, _ in convex_set.edges]
    heads = [index[head] for _, head in convex_set.edges]
    incidence = sparse.coo_matrix(
        (np.concatenate([np.ones(n), -np.ones(n)]), (tails + heads, list(range(n)) * 2)),
        shape=(len(index), n),
    )
    supply = np.zeros(len(index))
    supply[index[convex_set.source]] = 1.0
    supply[index[convex_set.sink]] = -1.0
    return LinearDescription(
        0, None, None, incidence.tocsr(), supply, np.zeros(n), np.full(n, np.inf)
    )


def _birkhoff(convex_set: BirkhoffPolytope) -> LinearDescription:
    from scipy import sparse

    n = convex_set.shape[0]
    rows = sparse.kron(sparse.identity(n), np.ones((1, n)))
    cols = sparse.kron(np.ones((1, n)), sparse.identity(n))
    a_eq = sparse.vstack([rows, cols], format="csr")
    size = n * n
    return LinearDescription(
        0, None, None, a_eq, np.ones(2 * n), np.zeros(size), np.full(size, np.inf)
    )


_BUILDERS: dict[type, Callable[[Any], LinearDescription]] = {
    Simplex: _simplex,
    L1Ball: _l1_ball,
    Hypercube: _box,
    FlowPolytope: _flow,
    BirkhoffPolytope: _birkhoff,
}


def minimize_absolute_sum(
    description: LinearDescription,
    cost: np.ndarray,
    features: np.ndarray,
    offsets: np.ndarray,
    low: np.ndarray | None = None,
    high: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """min over x in K (and low <= x <= high) of <cost, x> + sum_t |<a_t, x> - o_t|.

    Solved through its dual, an LP with one row per variable of the description and
    one bounded column lambda_t in [-1, 1] per term (much faster than the primal's two
    rows per term). Writing K's description with its finite bounds as rows,
    {z : P z <= h, E z = e}, LP duality gives

        max over lambda in [-1, 1]^m, alpha >= 0, beta of  -<o, lambda> - <h, alpha> + <e, beta>
        subject to  [A^T; 0] lambda + P^T alpha - E^T beta = -[cost; 0],

    and the minimiser z* is the sensitivity of that optimum to the right-hand side
    (HiGHS's equality marginals, for the equivalent minimisation).

    Returns:
        (x, lambda): the minimiser's x part (flattened, up to HiGHS's tolerances) and the
        multipliers lambda (in [-1, 1]), optimal for the dual.
    """
    from scipy import sparse
    from scipy.optimize import linprog

    dim = len(cost)
    variables = description.variables
    lower = description.low.copy()
    upper = description.high.copy()
    if low is not None:
        lower[:dim] = np.maximum(lower[:dim], low)
    if high is not None:
        upper[:dim] = np.minimum(upper[:dim], high)
    finite_low = np.flatnonzero(np.isfinite(lower))
    finite_high = np.flatnonzero(np.isfinite(upper))
    inequality_blocks = [
        -sparse.identity(variables, format="csr")[finite_low],
        sparse.identity(variables, format="csr")[finite_high],
    ]
    inequality_rhs = [-lower[finite_low], upper[finite_high]]
    if description.a_ub is not None:
        inequality_blocks.insert(0, sparse.csr_matrix(description.a_ub))
        inequality_rhs.insert(0, np.asarray(description.b_ub, dtype=float))
    inequalities = sparse.vstack(inequality_blocks, format="csr")
    rounds = len(offsets)
    term_columns = sparse.vstack(
        [sparse.csr_matrix(features.T), sparse.csr_matrix((variables - dim, rounds))]
    )
    blocks = [term_columns, inequalities.T]
    objective = [np.asarray(offsets, dtype=float), np.concatenate(inequality_rhs)]
    bounds = [np.tile([-1.0, 1.0], (rounds, 1)), np.tile([0.0, np.inf], (inequalities.shape[0], 1))]
    if description.a_eq is not None:
        equalities = sparse.csr_matrix(description.a_eq)
        blocks.append(-equalities.T)
        objective.append(-np.asarray(description.b_eq, dtype=float))
        bounds.append(np.tile([-np.inf, np.inf], (equalities.shape[0], 1)))
    rhs = np.zeros(variables)
    rhs[:dim] = -cost
    solution = linprog(
        np.concatenate(objective),
        A_eq=sparse.hstack(blocks, format="csr"),
        b_eq=rhs,
        bounds=np.vstack(bounds),
        method="highs",
    )
    if solution.status != 0:
        raise RuntimeError(f"absolute-value LP failed: {solution.message}")
    x = np.asarray(solution.eqlin.marginals[:dim], dtype=float)
    multipliers = np.clip(solution.x[:rounds], -1.0, 1.0)
    return x, multipliers
