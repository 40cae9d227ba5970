"""Online Frank-Wolfe (Hazan & Kale, ICML 2012), full information: ``ofw``.

:mod:`.agent` holds the agent, :mod:`.kernel` its compiled rounds (numba, imported only
where a compiled loop runs)."""

from bco_gym.agents.ofw.agent import OnlineFrankWolfe

__all__ = ["OnlineFrankWolfe"]
