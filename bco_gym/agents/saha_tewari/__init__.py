"""Saha & Tewari (AISTATS 2011): bandit follow the regularized leader with a
self-concordant barrier, for smooth losses: ``saha-tewari``.

:mod:`.agent` holds the agent, :mod:`.kernel` its compiled Newton step (numba, imported
only where it runs)."""

from bco_gym.agents.saha_tewari.agent import SahaTewari

__all__ = ["SahaTewari"]
