"""The compute frontier (regret against CPU seconds): kept importable under this name; the code
lives in :mod:`bco_gym.stats.frontier`, below both the reports and the figures."""

from bco_gym.stats import frontier as _moved
from bco_gym.stats.frontier import *  # noqa: F403  (the names of __all__, the same objects)

__all__ = list(_moved.__all__)
