"""Oblivious loss sequences (the adversary) and the offline comparator.

Families (``FAMILIES``: name -> class; each class says on which sets it is defined via
``supports``):

* ``linear``, ``linear-switching``: <theta_t, x - c> (every set);
* ``linear-drift``, ``linear-adversarial``: <theta_t, x - c> with a rotating mean, or
  alternating swings around a small bias (sets of affine dimension >= 2);
* ``quadratic``: ||x - z_t||^2/2; ``regression``: (<a_t, x - c> - b_t)^2 (every set);
* ``absolute``: |<a_t, x - c> - b_t| (polytopes with a linear description);
* ``portfolio``: -log <r_t, x> (simplex);
* ``completion``: one observed entry of a low-rank matrix per round (nuclear-norm ball);
* ``linear-low-rank``: <Theta_t, X - C> with a low-rank mean (nuclear-norm ball);
* ``edge-costs``, ``congestion``: path costs (flow polytope);
* ``assignment``: <C_t, X> (Birkhoff polytope).

Beyond the families: :class:`PortfolioDataLoss` (-log <r_t, x> on a real price data set,
``gym.make("BCO-Portfolio-v0", dataset=...)``) with :func:`wealth` (exp(-loss) entry by
entry: a run's wealth curve) and :func:`final_wealth` (a run's final wealth); and the user's own
losses, :func:`from_array` (linear, <theta_t, x> + b_t from an array or memmap, exact
comparator) and :func:`from_function` (convex callables, certified Frank-Wolfe
comparator). These three have a finite ``horizon``; ``BanditConvexEnv(K, losses)``
takes it.
"""

from __future__ import annotations

import inspect
from typing import Any

from bco_gym.losses.absolute import AbsoluteLoss
from bco_gym.losses.adversaries import LinearAdversarialLoss, LinearDriftLoss
from bco_gym.losses.arrays import ArrayLoss, from_array
from bco_gym.losses.base import Comparator, LossSequence
from bco_gym.losses.completion import CompletionLoss
from bco_gym.losses.costs import AssignmentLoss, CongestionLoss, EdgeCostLoss
from bco_gym.losses.functions import FunctionLoss, from_function
from bco_gym.losses.linear import LinearLoss, LinearSwitchingLoss
from bco_gym.losses.lowrank import LowRankLinearLoss
from bco_gym.losses.market import PortfolioDataLoss, final_wealth, wealth
from bco_gym.losses.portfolio import PortfolioLoss
from bco_gym.losses.quadratic import QuadraticLoss
from bco_gym.losses.regression import RegressionLoss
from bco_gym.sets.base import ConvexSet

FAMILIES: dict[str, type[LossSequence]] = {
    family.name: family
    for family in (
        LinearLoss,
        LinearSwitchingLoss,
        LinearDriftLoss,
        LinearAdversarialLoss,
        QuadraticLoss,
        RegressionLoss,
        AbsoluteLoss,
        PortfolioLoss,
        CompletionLoss,
        LowRankLinearLoss,
        EdgeCostLoss,
        CongestionLoss,
        AssignmentLoss,
    )
}


def families_for(convex_set: ConvexSet) -> list[str]:
    """Names of the families defined on ``convex_set``, in registry order."""
    return [name for name, family in FAMILIES.items() if family.supports(convex_set)]


def make_losses(name: str, convex_set: ConvexSet, **kwargs: Any) -> LossSequence:
    """The loss family ``name`` on ``convex_set`` with its parameters ``kwargs``.

    Raises:
        ValueError: unknown family, a family not defined on this set (the message lists
            ``families_for(convex_set)``), an unknown parameter name (the message lists the
            family's parameters) or a bad parameter value.
    """
    if name not in FAMILIES:
        raise ValueError(f"unknown loss family {name!r}; allowed: {', '.join(FAMILIES)}")
    family = FAMILIES[name]
    if not isinstance(convex_set, ConvexSet):
        raise TypeError(f"make_losses needs a ConvexSet, got {type(convex_set).__name__}")
    if not family.supports(convex_set):
        raise ValueError(
            f"loss family {name!r} is not defined on {convex_set!r} ({family.support_note()}); "
            f"families for this set: {', '.join(families_for(convex_set))}"
        )
    allowed = [
        p for p in inspect.signature(family.__init__).parameters if p not in ("self", "convex_set")
    ]
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        raise ValueError(
            f"loss family {name!r}: unknown parameter(s) {', '.join(unknown)}; "
            f"allowed: {', '.join(allowed) or '(none)'}"
        )
    return family(convex_set, **kwargs)


__all__ = [
    "FAMILIES",
    "AbsoluteLoss",
    "ArrayLoss",
    "AssignmentLoss",
    "Comparator",
    "CompletionLoss",
    "CongestionLoss",
    "EdgeCostLoss",
    "FunctionLoss",
    "LinearAdversarialLoss",
    "LinearDriftLoss",
    "LinearLoss",
    "LinearSwitchingLoss",
    "LossSequence",
    "LowRankLinearLoss",
    "PortfolioDataLoss",
    "PortfolioLoss",
    "QuadraticLoss",
    "RegressionLoss",
    "families_for",
    "final_wealth",
    "from_array",
    "from_function",
    "make_losses",
    "wealth",
]
