"""Local slopes and bootstrap bands of regret exponents: kept importable under this name; the
code lives in :mod:`bco_gym.stats.slopes`, below both the reports and the figures."""

from bco_gym.stats import slopes as _moved
from bco_gym.stats.slopes import *  # noqa: F403  (the names of __all__, the same objects)

__all__ = list(_moved.__all__)
