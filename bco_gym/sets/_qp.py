"""Euclidean projection onto {y >= 0, E y = b} by the Clarabel interior-point QP solver.

Used by the polytopes without a combinatorial projection (FlowPolytope,
BirkhoffPolytope). Clarabel (Goulart & Chen 2024, https://clarabel.org) is an optional
dependency, the ``qp`` extra: ``pip install "bco_gym[qp]"``. The QP

    minimise (1/2)||y||^2 - <x, y>   subject to  E y = b,  y >= 0

is set up once per set (the solver keeps its symbolic factorisation) and re-solved with
a new linear term for each point.

Polishing. An interior-point answer is only sqrt(tolerance)-accurate at degenerate
points (an entry and its multiplier both zero, e.g. projecting a point of a face), and
never exactly feasible. So the answer is polished on its active set: with
S = {e : y_e >= z_e} (primal entry at least its dual multiplier), the equality-
constrained least-squares problem min ||y_S - x_S|| s.t. E_S y_S = b, y_e = 0 off S,
is solved exactly, y_S = x_S - E_S^T lambda with (E_S E_S^T) lambda = E_S x_S - b.
Whenever supp(y*) is in S and S holds no strictly active constraint, this is the exact
projection y*. The polished point is kept if it is nonnegative, feasible to 1e-12 and
within 1e-5 of the solver's answer; otherwise the solver's answer, clipped at 0, is
returned (feasible to about the solver tolerance, 1e-10).
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # scipy is imported where used: `import bco_gym` stays light
    import scipy.sparse as sp

SOLVER_TOLERANCE = 1e-10
_SMALL = 300
_DENSE_LIMIT = 3000


def qp_available() -> bool:
    """Whether the Clarabel solver can be imported."""
    return importlib.util.find_spec("clarabel") is not None


def missing_solver_message(owner: str) -> str:
    return (
        f"{owner}.project needs the Clarabel QP solver: pip install 'bco_gym[qp]' (or clarabel). "
        "Projection-free agents ('bbcg', 'bfw', 'ofw', 'random') do not need a projection; "
        "'fkm' and 'ogd' do."
    )


class NonnegativeProjector:
    """argmin_y ||y - x|| subject to E y = b, y >= 0, for a fixed full-row-rank E."""

    def __init__(self, equality_matrix: sp.spmatrix, equality_rhs: np.ndarray, owner: str):
        import scipy.sparse as sp

        self.equality_matrix = sp.csc_matrix(equality_matrix, dtype=float)
        self.equality_rhs = np.asarray(equality_rhs, dtype=float)
        self.owner = owner
        self._solver: Any = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_solver"] = None  # the compiled solver does not pickle; rebuilt on demand
        return state

    def _build(self, linear_term: np.ndarray) -> Any:
        try:
            import clarabel
        except ImportError:
            raise NotImplementedError(missing_solver_message(self.owner)) from None
        import scipy.sparse as sp

        rows, size = self.equality_matrix.shape
        settings = clarabel.DefaultSettings()
        settings.verbose = False
        settings.presolve_enable = False
        for name in ("tol_gap_abs", "tol_gap_rel", "tol_feas"):
            setattr(settings, name, SOLVER_TOLERANCE)
        settings.tol_ktratio = 1e-10
        constraints = sp.vstack([self.equality_matrix, -sp.eye(size)], format="csc")
        rhs = np.concatenate([self.equality_rhs, np.zeros(size)])
        cones = [clarabel.ZeroConeT(rows), clarabel.NonnegativeConeT(size)]
        quadratic = sp.eye(size, format="csc")
        return clarabel.DefaultSolver(quadratic, linear_term, constraints, rhs, cones, settings)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if self._solver is None:
            self._solver = self._build(-x)
        else:
            self._solver.update(q=-x)
        solution = self._solver.solve()
        status = str(solution.status)
        if status not in ("Solved", "AlmostSolved"):
            raise RuntimeError(
                f"{self.owner}.project: the Clarabel QP solver stopped with {status}"
            )
        y = np.asarray(solution.x, dtype=float)
        multipliers = np.asarray(solution.z, dtype=float)[self.equality_matrix.shape[0] :]
        polished = self._polish(x, y >= multipliers)
        if polished is not None and np.max(np.abs(polished - y)) <= 1e-5 * (
            1.0 + np.max(np.abs(x))
        ):
            return polished
        return np.maximum(y, 0.0)

    def _polish(self, x: np.ndarray, support: np.ndarray) -> np.ndarray | None:
        """The exact projection onto {E y = b, y = 0 off ``support``} if it is >= 0, else None."""
        matrix = self.equality_matrix[:, support]
        touched = np.diff(matrix.tocsr().indptr) > 0
        if np.any(self.equality_rhs[~touched] != 0.0):
            return None
        matrix = matrix.tocsr()[touched]
        rhs = matrix @ x[support] - self.equality_rhs[touched]
        gram = (matrix @ matrix.T).tocsc()
        if gram.shape[0] <= _SMALL:  # dense least squares also covers a singular Gram matrix
            multiplier = np.linalg.lstsq(gram.toarray(), rhs, rcond=None)[0]
        else:
            try:
                from scipy.sparse.linalg import splu

                multiplier = splu(gram, permc_spec="MMD_AT_PLUS_A").solve(rhs)
            except RuntimeError:  # exactly singular: a support with several components
                if gram.shape[0] > _DENSE_LIMIT:
                    return None
                multiplier = np.linalg.lstsq(gram.toarray(), rhs, rcond=None)[0]
        y = np.zeros_like(x)
        y[support] = x[support] - matrix.T @ multiplier
        residual = self.equality_matrix @ y - self.equality_rhs
        if y.min() < -1e-13 or np.max(np.abs(residual)) > 1e-12 * (1.0 + np.max(np.abs(x))):
            return None
        return np.maximum(y, 0.0)
