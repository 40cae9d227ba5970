"""Bandit Frank-Wolfe (Chen, Zhang & Karbasi, 2019): ``bfw``.

:mod:`.agent` holds the agent, :mod:`.kernel` its compiled rounds (numba, imported only
where a compiled loop runs)."""

from bco_gym.agents.bfw.agent import BanditFrankWolfe

__all__ = ["BanditFrankWolfe"]
