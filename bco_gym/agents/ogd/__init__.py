"""Projected online gradient descent (Zinkevich, ICML 2003), full information: ``ogd``.

:mod:`.agent` holds the agent, :mod:`.kernel` its compiled rounds (numba, imported only
where a compiled loop runs)."""

from bco_gym.agents.ogd.agent import OnlineGradientDescent

__all__ = ["OnlineGradientDescent"]
