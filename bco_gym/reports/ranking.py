"""All-pairs paired tests with Holm's correction, the ordered groups: kept importable under
this name; the code lives in :mod:`bco_gym.stats.ranking`, below both the reports and the
figures."""

from bco_gym.stats import ranking as _moved
from bco_gym.stats.ranking import *  # noqa: F403  (the names of __all__, the same objects)

__all__ = list(_moved.__all__)
