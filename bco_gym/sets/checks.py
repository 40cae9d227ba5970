"""Checks shared by the sets: finite arrays, real numbers, sizes and radii.

Every set refuses what is not a real number of the right shape (strings, booleans,
complex and object arrays are refused, never converted), with a message naming the
set, the argument and the value.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

DEFAULT_ATOL = 1e-9
# Relative slack of the vectorised membership screens: a point within this fraction of
# a constraint's bound is re-checked one at a time, so rounding differences between a
# batched reduction and the single-point one cannot change a verdict.
SCREEN_SLACK = 1e-10
_SMALL_ARRAY = 1024


def all_finite(array: np.ndarray) -> bool:
    """Whether every entry of a float array is finite, in one pass without a temporary.

    A sum of the entries (of their squares, for small arrays) is finite exactly when
    every entry is, unless finite terms overflow: only then is the entrywise test run.
    Small arrays use the BLAS dot product, the cheapest call; large ones numpy's own
    sum, as OpenBLAS may thread a long dot product, which is slow on a busy machine.
    """
    flat = array if array.ndim == 1 else array.reshape(-1)
    total = flat.dot(flat) if flat.size <= _SMALL_ARRAY else np.add.reduce(flat)
    if math.isfinite(total):
        return True
    return bool(np.isfinite(flat).all())


def off_by(value: float, target: float) -> str:
    """``value`` with enough digits to tell it from ``target``, and the deviation:
    ``off_by(1.0000000149, 1.0)`` is ``"1.000000015 (1 + 1.49e-08)"``.

    A float32 point rounded to a float64 sum misses a constraint by ~1e-8, which six
    significant digits print as the target itself; the membership messages use this so
    the cause of a refusal is visible beside the tolerance.
    """
    deviation = value - target
    if deviation == 0 or not math.isfinite(deviation):
        return f"{value:.6g}"
    scale = max(abs(value), abs(target), 1e-300)
    digits = max(6, min(17, math.ceil(math.log10(scale / abs(deviation))) + 2))
    sign = "+" if deviation > 0 else "-"
    return f"{value:.{digits}g} ({target:g} {sign} {abs(deviation):.3g})"


def _is_float_array(value: object) -> bool:
    """Whether ``value`` is already a C-contiguous float64 ndarray (the checks' fast path).

    Other arrays are copied to that layout, so an oracle's reductions (BLAS dot
    products, pairwise sums) run the same kernel whatever the caller's memory layout.
    """
    return type(value) is np.ndarray and value.dtype == np.float64 and value.flags.c_contiguous


def _real_array(value: object, owner: type, what: str) -> np.ndarray:
    """``value`` as a float array if its entries are real numbers (int or float)."""
    array = np.asarray(value)
    if array.dtype.kind not in "fiu":
        raise ValueError(
            f"{owner.__name__}: {what} has dtype {array.dtype} ({_short(value)}); expected "
            "real numbers (a float or int array)"
        )
    return np.ascontiguousarray(array, dtype=float)


def _short(value: object) -> str:
    """``repr(value)`` on one line, cut to 60 characters."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def is_real_number(value: object) -> bool:
    """Whether ``value`` is a real number: an int or float (Python or numpy), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def check_size(value: object, name: str, owner: str, minimum: int = 1, why: str = "") -> int:
    """``value`` as an int >= ``minimum``; a ValueError naming ``owner`` and ``name`` otherwise.

    Only integers (Python or numpy) are accepted: a float, even 3.0, a string or a bool
    is refused rather than converted.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise ValueError(
            f"{owner}: {name}={value!r} must be an integer >= {minimum}{why}, "
            f"not a {type(value).__name__}"
        )
    if value < minimum:
        raise ValueError(f"{owner}: {name}={value!r} must be an integer >= {minimum}{why}")
    return int(value)


def check_tolerance(value: object, owner: object, method: str) -> float:
    """``value`` as a finite float >= 0 (the ``atol`` of ``owner.method``); a ValueError
    naming the set's class, the method and the value otherwise.

    NaN would make every comparison with it false (a point far outside K "inside"), a
    negative tolerance would refuse points of K: both are refused, as are strings and bools.
    """
    if isinstance(value, float) and 0.0 <= value < math.inf:
        return value  # the common case, in one comparison
    where = f"{type(owner).__name__}.{method}"
    if not is_real_number(value):
        raise ValueError(
            f"{where}: atol={value!r} must be a finite number >= 0, not a {type(value).__name__}"
        )
    number = float(value)  # type: ignore[arg-type]
    if not (math.isfinite(number) and number >= 0.0):
        raise ValueError(f"{where}: atol={value!r} must be a finite number >= 0")
    return number


def check_radius(value: object, owner: str) -> float:
    """``value`` as a finite float > 0; a ValueError naming ``owner`` otherwise.

    Only real numbers (int or float, Python or numpy) are accepted; a string such as
    "1" or a bool is refused rather than converted.
    """
    if not is_real_number(value):
        raise ValueError(
            f"{owner}: radius={value!r} must be a finite number > 0, not a {type(value).__name__}"
        )
    radius = float(value)  # type: ignore[arg-type]
    if not (np.isfinite(radius) and radius > 0):
        raise ValueError(f"{owner}: radius={value!r} must be a finite number > 0")
    return radius
