"""Small shared pieces of the agents' parameter choices.

* :func:`decaying_step` -- the Frank-Wolfe mixing weight sigma_t = min(1, a * t^(-p)) of
  the online Frank-Wolfe methods (Hazan & Kale 2012; Hazan 2016, Section 7.3).
* :func:`smoothing_radius_for` -- delta = c * T^(-p), capped at the inner radius r with a
  ``UserWarning``: for delta = r the shrunk set K_delta = c + (1 - delta/r)(K - c) is the
  centre alone, so the agent plays the centre plus exploration.
* :func:`positive` / :func:`block_length` / :func:`flag` -- validated hyperparameter
  overrides (wrong types refused, never coerced).
"""

from __future__ import annotations

import math
import numbers
import os
import sys
import warnings

import numpy as np

from bco_gym.sets.base import ConvexSet


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


def smoothing_radius_for(
    owner: str,
    convex_set: ConvexSet,
    override: float | None,
    scale: float,
    horizon: int,
    *,
    exponent: float,
) -> float:
    """delta = ``override`` or scale * T^(-exponent), at most r = ``convex_set.inner_radius``.

    An explicit ``override`` above r is an error (the theory needs delta <= r, else
    x + delta*u may leave K). The default formula is capped at r; whenever delta = r a
    ``UserWarning`` says that K_delta degenerates to the centre and from which horizon
    the formula stays below r.
    """
    r = convex_set.inner_radius
    if override is not None:
        delta = positive(owner, "smoothing_radius", override, override)
        if delta > r:
            raise ValueError(
                f"{owner}: smoothing_radius={delta:g} exceeds the inner radius r={r:g} of "
                f"{convex_set!r}; allowed: 0 < smoothing_radius <= r"
            )
    else:
        delta = scale * horizon ** (-exponent)
    if delta >= r:
        if override is None:
            reason = (
                f"c*T^(-{exponent:g}) = {delta:.3g} reaches the inner radius r={r:.3g}; it "
                f"stays below r once T > (c/r)^(1/{exponent:g}) = "
                f"{_power(scale / r, 1.0 / exponent):.3g} (here T={horizon})"
            )
        else:
            reason = f"smoothing_radius={delta:g} equals the inner radius r={r:.3g}"
        warnings.warn(
            f"{owner} on {convex_set!r}: {reason}. The smoothing radius is r, so the shrunk "
            "set K_delta is the centre alone and the agent plays the centre plus exploration.",
            UserWarning,
            stacklevel=_first_caller_outside_agents(),
        )
        delta = r
    return delta


def _power(base: float, exponent: float) -> float:
    """base ** exponent, inf where float64 overflows (for messages)."""
    try:
        return base**exponent
    except OverflowError:
        return math.inf


def _first_caller_outside_agents() -> int:
    """The ``stacklevel`` that points a warning at the user's call (make_agent or a class)."""
    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level
