"""PBGD (Zhao, Wang, Zhang & Zhou, JMLR 2021): Hedge over gradient-descent experts on a
geometric grid of step sizes, for dynamic regret; one point (``pbgd``) and two (``pbgd2``).

:mod:`.agent` holds the agents, :mod:`.bounds` their dynamic-regret bound."""

from bco_gym.agents.pbgd.agent import PBGD, PBGD2

__all__ = ["PBGD", "PBGD2"]
