"""Small shared pieces of the agents' parameter choices.

* :func:`decaying_step` -- the Frank-Wolfe mixing weight sigma_t = min(1, a * t^(-p)) of
  the online Frank-Wolfe methods (Hazan & Kale 2012; Hazan 2016, Section 7.3).
* :func:`positive` / :func:`block_length` / :func:`flag` -- validated hyperparameter
  overrides (wrong types refused, never coerced).

A theorem's capped powers (the smoothing radius c T^(-p) at most r, ...) are
:func:`bco_gym.agents.theory.capped_power`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np


def decaying_step(t: int, coefficient: float, exponent: float) -> float:
    """sigma_t = min(1, coefficient * t^(-exponent)) for the 1-based round t."""
    return min(1.0, coefficient * t ** (-exponent))


def positive(owner: str, key: str, value: float | None, default: float) -> float:
    """``value`` (or ``default`` when None) as a float, checked finite and > 0."""
    chosen = default if value is None else value
    if isinstance(chosen, bool) or not isinstance(chosen, numbers.Real):
        raise ValueError(f"{owner}: {key}={chosen!r} must be a number")
    if not (math.isfinite(chosen) and chosen > 0):
        raise ValueError(f"{owner}: {key}={chosen!r} must be finite and > 0")
    return float(chosen)


def block_length(owner: str, value: int | None, default: int, horizon: int) -> int:
    """A block size in [1, horizon] (``default`` when None): an int, never a float or bool."""
    chosen = default if value is None else value
    valid = not isinstance(chosen, bool) and isinstance(chosen, numbers.Integral)
    if not valid or not 1 <= chosen <= horizon:
        raise ValueError(
            f"{owner}: block_size={chosen!r} must be an integer in [1, horizon={horizon}]"
        )
    return int(chosen)


def flag(owner: str, key: str, value: bool) -> bool:
    """``value`` if it is a bool (True or False); a ValueError otherwise, never coerced."""
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{owner}: {key}={value!r} must be True or False")
    return bool(value)
