"""Block Bandit Conditional Gradient (Garber & Kretzu, AISTATS 2020): ``bbcg`` and its
two-point variant ``bbcg2``.

:mod:`.agent` holds ``bbcg``, :mod:`.two_point` ``bbcg2``, :mod:`.bounds` Lemma 3's and
Theorem 1's regret bounds and the expected oracle calls."""

from bco_gym.agents.bbcg.agent import BlockBanditCG
from bco_gym.agents.bbcg.two_point import BlockBanditCG2

__all__ = ["BlockBanditCG", "BlockBanditCG2"]
