"""One way to resolve a theorem's parameters.

An agent's defaults are its theorem's formulas in the problem's constants T, d, r, R, G
and M (:class:`ProblemConstants`). A power c T^(-p) that the theorem needs below a cap
(a smoothing radius below the inner radius r, so-bgd's squeeze below 1) is
:func:`capped_power`: the default is capped with one ``UserWarning`` pointing at the
user's call, and an explicit value beyond what the theorem allows is refused. An agent's
``OPTIONS`` are its constructor's keyword parameters (:func:`keyword_options`, which
:class:`~bco_gym.agents.base.Agent` applies to every subclass that declares none).
"""

from __future__ import annotations

import inspect
import math
import os
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bco_gym.agents.schedules import positive
from bco_gym.sets.base import ConvexSet


@dataclass(frozen=True)
class ProblemConstants:
    """The problem's constants a theorem's parameters and bounds are written in.

    Attributes:
        horizon: T.
        dimension: d = ``set.aff_dim``, the dimension of aff(K) (the papers' n).
        inner_radius: r, the radius of a ball about the centre inside K (in aff(K)).
        outer_radius: R, the radius of a ball about the centre holding K.
        lipschitz: G, the losses' Lipschitz constant.
        bound: M, a bound on the losses' values.
    """

    horizon: int
    dimension: int
    inner_radius: float
    outer_radius: float
    lipschitz: float
    bound: float

    @classmethod
    def of(cls, problem: Any) -> ProblemConstants:
        """The constants of a :class:`~bco_gym.problem.Problem`."""
        convex_set = problem.set
        return cls(
            horizon=problem.horizon,
            dimension=convex_set.aff_dim,
            inner_radius=convex_set.inner_radius,
            outer_radius=convex_set.outer_radius,
            lipschitz=problem.lipschitz,
            bound=problem.bound,
        )

    def symbols(self) -> tuple[int, int, float, float, float, float]:
        """(T, d, r, R, G, M), for formulas written as the papers write them."""
        return (
            self.horizon,
            self.dimension,
            self.inner_radius,
            self.outer_radius,
            self.lipschitz,
            self.bound,
        )


def capped_power(
    owner: str,
    key: str,
    override: float | None,
    *,
    scale: float,
    symbol: str,
    horizon: int,
    exponent: float,
    cap: float,
    cap_symbol: str,
    limit: float | None = None,
    limit_symbol: str | None = None,
    strictly_below: bool = False,
    reason: str = "",
    consequence: str = "",
) -> float:
    """``override``, or the theorem's default ``scale`` * T^(-``exponent``) capped at ``cap``.

    An ``override`` must be a number in (0, ``limit``] (in (0, ``limit``) when
    ``strictly_below``; ``limit`` is ``cap`` unless given): ValueError naming it, the
    limit (``limit_symbol``) and the ``reason`` otherwise. The default reaching ``cap``
    (``cap_symbol``, e.g. "the inner radius r") is set to ``cap`` with one ``UserWarning``
    that gives the horizon from which the formula stays below it and the ``consequence``
    for the agent, pointed at the user's call (make_agent or the class).
    """
    if override is not None:
        value = positive(owner, key, override, override)
        limit, limit_symbol = (cap, cap_symbol) if limit is None else (limit, limit_symbol)
        if value > limit or (strictly_below and value == limit):
            verb = "exceeds" if value > limit else "equals"
            relation = "<" if strictly_below else "<="
            raise ValueError(
                f"{owner}: {key}={value:g} {verb} {_shown(limit_symbol or '', limit)}{reason}; "
                f"allowed: 0 < {key} {relation} {limit:g}"
            )
        return value
    value = scale * horizon ** (-exponent)
    if value >= cap:
        from_horizon = _power(scale / cap, 1.0 / exponent)
        warnings.warn(
            f"{owner}: the default {key} {symbol} T^(-{exponent:g}) = {value:.3g} reaches "
            f"{_shown(cap_symbol, cap)} at T = {horizon} (it stays below from T > "
            f"{from_horizon:.3g}): it is capped at {cap_symbol}{consequence}",
            UserWarning,
            stacklevel=_first_caller_outside_agents(),
        )
        value = float(cap)
    return value


def _shown(symbol: str, value: float) -> str:
    """ "r = 0.5", or "1" alone when the symbol is the number."""
    return symbol if symbol == f"{value:g}" else f"{symbol} = {value:.3g}"


def smoothing_radius_for(
    owner: str,
    convex_set: ConvexSet,
    override: float | None,
    scale: float,
    horizon: int,
    *,
    exponent: float,
) -> float:
    """delta = ``override`` in (0, r], or scale * T^(-exponent) capped at r
    (:func:`capped_power`): at delta = r the shrunk set K_delta is the centre alone."""
    return capped_power(
        owner,
        "smoothing_radius",
        override,
        scale=scale,
        symbol="c",
        horizon=horizon,
        exponent=exponent,
        cap=convex_set.inner_radius,
        cap_symbol="the inner radius r",
        consequence=(
            f" on {convex_set!r}, so the shrunk set K_delta is the centre alone and the agent "
            "plays the centre plus exploration"
        ),
    )


def keyword_options(init: Callable[..., Any]) -> tuple[str, ...] | None:
    """The keyword parameters of an agent's ``__init__`` after the problem, but
    ``batch_size`` (make_agent's own); None when it takes ``**kwargs`` (any keyword)."""
    parameters = list(inspect.signature(init).parameters.values())[2:]
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return tuple(p.name for p in parameters if p.kind in kinds and p.name != "batch_size")


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
