"""Arithmetic whose bits do not depend on the CPU: the sums and elementary functions of results.

Two libraries under NumPy choose their code by the CPU they run on, and each choice has
its own rounding:

* **BLAS.** ``a @ b``, ``a.dot(b)``, ``np.vdot``, ``np.vecdot``, ``np.matmul`` and
  ``np.linalg.norm`` of float64 arrays call OpenBLAS, which picks a kernel per CPU (Haswell,
  Zen, SkylakeX, ...), each with its own number of partial sums and its own use of fused
  multiply-adds: ``OPENBLAS_CORETYPE=Sandybridge`` on the same machine gives other last bits
  for a 300-term dot, a matrix-vector product, a matrix product and a norm.
* **NumPy's SIMD loops.** On a CPU with AVX-512 (x86-64-v4), NumPy evaluates float64
  ``power``, ``exp``, ``log``, ``log1p``, ``expm1``, ``arctan2``, ``tanh`` and the other
  functions of its ``loops_umath_fp`` and ``loops_exponent_log`` sources with vectorised code
  (Intel's SVML, its own AVX-512 ``exp``/``log``) where every other CPU calls the C library:
  the same seed drew other loss vectors there (``U ** (1/d)`` of the linear families).

Results use these instead:

* :func:`dot`, :func:`row_dot`, :func:`matvec`: NumPy's pairwise summation of the products
  (``np.add.reduce`` along a contiguous row), the order the compiled kernels reproduce
  (``bco_gym/agents/kernels/oracles.py``); :func:`vecmat`, :func:`gram`, :func:`matmul` add
  the rows one after another (a single column pairwise); :func:`inverse_spd` goes through
  a Cholesky factor. Each is a fixed sequence of IEEE-754 operations, which every CPU
  rounds alike.
* :func:`power`, :func:`exp`, :func:`log`, :func:`cos`, :func:`sin`: the C library's scalar
  functions (Python's :mod:`math`, the functions numba's kernels call too), element by
  element. glibc picks one of its own code paths per CPU as well, by whether the CPU has
  fused multiply-adds (FMA, x86-64-v3): every machine with FMA takes the same one, so the
  bits agree across them; a CPU without FMA gets other last bits from glibc (measured with
  ``GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA``), and so does another C library.

What stays per CPU: LAPACK (``np.linalg.svd``, ``qr``, ``eigvalsh``: the nuclear-norm ball's
oracles, saha-tewari's barrier, the low-rank losses' draws, the portfolio comparator's
step), whose blocked algorithms call BLAS inside; SuperLU's solves with the flow
polytope's factors (its tangent and projection); the C library's functions on a CPU
without FMA. :func:`machine_signature` tells such machines apart, and docs/performance.md
("Results that travel") states the rule the pinned runs and the reference archive are
checked by.
"""

from __future__ import annotations

import hashlib
import math
from itertools import repeat
from typing import Any

import numpy as np


def dot(left: np.ndarray, right: np.ndarray) -> float:
    """<left, right> (any shapes of equal size): the pairwise sum of the products."""
    return float(np.add.reduce(np.multiply(np.ravel(left), np.ravel(right))))


def row_dot(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """<left_i, right_i> for each row i of two (S, *shape) arrays, shape (S,).

    Row-independent by construction: an elementwise product, then NumPy's pairwise sum
    along each row's own contiguous entries, so row i's value does not depend on the
    other rows, on S or on the CPU (a BLAS dot product depends on all three;
    ``np.einsum("ij,ij->i")`` can change its order with the number of rows for long
    rows). So the block and per-round loops see bit-identical losses.
    """
    rows = len(left)
    return np.add.reduce(np.multiply(left.reshape(rows, -1), right.reshape(rows, -1)), axis=-1)


def matvec(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix @ vector`` for a (k, n) matrix and an n-vector: each row's :func:`row_dot`."""
    return np.add.reduce(np.multiply(matrix, vector), axis=-1)


def vecmat(weights: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``weights @ matrix`` for k weights and a (k, n) matrix: sum_i weights[i] matrix[i]
    by NumPy's reduction along the rows, which adds the rows one after another from the
    first when n >= 2, and takes the pairwise sum of the single column when n = 1 (then
    contiguous). Either order is NumPy's code, not the CPU's."""
    return np.add.reduce(np.multiply(weights[:, np.newaxis], matrix), axis=0)


def gram(matrix: np.ndarray) -> np.ndarray:
    """``matrix.T @ matrix`` for a (k, n) matrix: entry (i, j) sums matrix[r, i] matrix[r, j]
    over the rows one after another (so the result is exactly symmetric)."""
    return np.stack([vecmat(matrix[:, i], matrix) for i in range(matrix.shape[1])])


def matmul(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``left @ right`` for a (k, m) and an (m, n) matrix: entry (i, j) sums
    left[i, l] right[l, j] over l one after another (each row of the result a
    :func:`vecmat`)."""
    return np.stack([vecmat(row, right) for row in left]) if len(left) else left @ right


def inverse_spd(matrix: np.ndarray) -> np.ndarray:
    """The inverse of a symmetric positive definite matrix: its Cholesky factor L, then
    L^-1 and (L L^T)^-1 = L^-T L^-1 row by row, every sum a :func:`dot`, :func:`matvec` or
    :func:`vecmat` (LAPACK's inverse goes through BLAS). L keeps the matrix's band (its
    entries further from the diagonal than the matrix's are zero), so a banded matrix of
    bandwidth w costs O(n w^2) for L and O(n^2 w) for the inverse."""
    work = np.array(matrix, dtype=float)
    size = len(work)
    rows, cols = np.nonzero(work)
    band = int(np.max(np.abs(rows - cols))) if rows.size else 0
    factor = np.zeros((size, size))
    for k in range(size):
        low, high = max(0, k - band), min(size, k + band + 1)
        row = factor[k, low:k]
        pivot = work[k, k] - dot(row, row)
        if not pivot > 0.0:
            raise ValueError(f"inverse_spd: the matrix is not positive definite (pivot {k})")
        factor[k, k] = math.sqrt(pivot)
        below = work[k + 1 : high, k] - matvec(factor[k + 1 : high, low:k], row)
        factor[k + 1 : high, k] = below / factor[k, k]
    lower = np.zeros((size, size))  # L^-1, row by row
    for i in range(size):
        low = max(0, i - band)
        unit = np.zeros(size)
        unit[i] = 1.0
        lower[i] = (unit - vecmat(factor[i, low:i], lower[low:i])) / factor[i, i]
    inverse = np.zeros((size, size))  # L^-T L^-1, from the last row up
    for i in range(size - 1, -1, -1):
        high = min(size, i + band + 1)
        above = vecmat(factor[i + 1 : high, i], inverse[i + 1 : high])
        inverse[i] = (lower[i] - above) / factor[i, i]
    return inverse


def _elementwise(function: Any, values: Any, *extra: Any) -> Any:
    """``function`` of every entry of ``values`` (an array of the same shape; a float for
    a scalar), through the C library as Python's :mod:`math` calls it."""
    array = np.asarray(values, dtype=float)
    if array.ndim == 0:
        return function(float(array), *extra)
    flat = array.ravel()
    args = (flat.tolist(), *(repeat(e) for e in extra))
    return np.fromiter(map(function, *args), dtype=float, count=flat.size).reshape(array.shape)


def power(base: Any, exponent: float) -> Any:
    """base ** exponent entrywise (a scalar exponent), by the C library's ``pow``."""
    return _elementwise(math.pow, base, float(exponent))


def exp(values: Any) -> Any:
    """e ** values entrywise, by the C library's ``exp`` (inf past its range)."""
    return _elementwise(_exp, values)


def log(values: Any) -> Any:
    """The natural logarithm entrywise, by the C library's ``log`` (-inf at 0, nan below)."""
    return _elementwise(_log, values)


def cos(values: Any) -> Any:
    """The cosine entrywise, by the C library's ``cos``."""
    return _elementwise(math.cos, values)


def sin(values: Any) -> Any:
    """The sine entrywise, by the C library's ``sin``."""
    return _elementwise(math.sin, values)


def _exp(value: float) -> float:
    try:
        return math.exp(value)
    except OverflowError:
        return math.inf


def _log(value: float) -> float:
    if value > 0.0 or math.isnan(value):
        return math.log(value)
    return -math.inf if value == 0.0 else math.nan


#: How far a result computed on a machine of another signature (:func:`machine_signature`)
#: may be from the one pinned or archived: relative to the largest magnitude of its array.
RELATIVE_TOLERANCE = 1e-12


def close(found: Any, expected: Any, relative: float = RELATIVE_TOLERANCE) -> bool:
    """Whether two arrays (or numbers) of one shape agree within ``relative`` times the
    largest magnitude in ``expected`` (exactly, where that is 0), entry by entry; non-finite
    entries must be equal."""
    found, expected = np.asarray(found, dtype=float), np.asarray(expected, dtype=float)
    if found.shape != expected.shape:
        return False
    finite = np.isfinite(expected)
    if not np.array_equal(np.isfinite(found), finite) or not np.array_equal(
        found[~finite], expected[~finite]
    ):
        return False
    if not finite.any():
        return True
    scale = float(np.max(np.abs(expected[finite])))
    return bool(np.all(np.abs(found[finite] - expected[finite]) <= relative * scale))


def machine_signature() -> dict[str, str]:
    """What a result's bits may depend on beyond the code and the seed, each part a digest
    of what this machine computes on fixed inputs (so it names the behaviour, not a
    product):

    * ``libm``: the C library's ``pow``, ``exp``, ``log``, ``sin``, ``cos`` as results
      use them (:func:`power` ...) on 512 arguments each: equal on every x86-64 CPU with
      FMA under the same glibc, other without FMA or under another C library;
    * ``lapack``: NumPy's BLAS and LAPACK (a dot, a matrix product, an SVD, an eigenvalue
      solve) on small fixed matrices: other on a CPU whose OpenBLAS kernels differ.

    Results computed where ``libm`` is equal agree to the last bit unless they went
    through LAPACK (the nuclear-norm ball's SVDs, saha-tewari's, the quadratic
    comparators' eigenvalues); those agree to the last bit where both parts are equal.
    """
    return {"libm": _digest(_libm_probe()), "lapack": _digest(_lapack_probe())}


def _digest(arrays: list[np.ndarray]) -> str:
    found = hashlib.sha256()
    for array in arrays:
        found.update(np.ascontiguousarray(array, dtype=float).tobytes())
    return found.hexdigest()[:16]


def _probe_inputs(count: int) -> np.ndarray:
    """``count`` fixed arguments in (0, 1), spread over the mantissa (no random stream)."""
    return (np.arange(1, count + 1, dtype=float) * 0.6180339887498949) % 1.0 + 1e-3


def _libm_probe() -> list[np.ndarray]:
    x = _probe_inputs(512)
    return [power(x, 1.0 / 7.0), exp(8.0 * x - 4.0), log(x), sin(40.0 * x), cos(40.0 * x)]


def _lapack_probe() -> list[np.ndarray]:
    x = _probe_inputs(40 * 40).reshape(40, 40) - 0.5
    symmetric = x + x.T
    return [
        np.array([x[0] @ x[1]]),
        x @ x,
        np.linalg.svd(x, compute_uv=False),
        np.linalg.eigvalsh(symmetric),
    ]
