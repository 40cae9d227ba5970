"""Garber & Kretzu (2022), bandit convex optimization with infeasible projections:
``loo-bbgd`` (Algorithm 4, a linear optimization oracle) and ``so-bgd`` (Algorithm 10, a
separation oracle), and ``fejer-bgd``, the library's own separation-step variant.

:mod:`.loo_bbgd`, :mod:`.so_bgd` and :mod:`.fejer_bgd` hold the agents, :mod:`.oracles`
the infeasible projections they call (Algorithms 1-3 and 6, Lemmas 6-7),
:mod:`.kernel` the compiled separation steps (numba, imported only where it runs),
:mod:`.bounds` Theorems 11 and 15."""

from bco_gym.agents.gk22.fejer_bgd import FejerBanditGD
from bco_gym.agents.gk22.loo_bbgd import LOOBlockBanditGD
from bco_gym.agents.gk22.so_bgd import SeparationOracleBanditGD

__all__ = ["FejerBanditGD", "LOOBlockBanditGD", "SeparationOracleBanditGD"]
