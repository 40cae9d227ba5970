"""Paired differences against a reference on the same seeds, the paired table: kept importable
under this name; the code lives in :mod:`bco_gym.stats.paired`, below both the reports and
the figures."""

from bco_gym.stats import paired as _moved
from bco_gym.stats.paired import *  # noqa: F403  (the names of __all__, the same objects)

__all__ = list(_moved.__all__)
