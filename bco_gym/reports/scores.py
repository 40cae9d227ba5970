"""Normalised scores, IQM and mean with stratified-bootstrap intervals, probability of
improvement, performance profiles: kept importable under this name; the code lives in
:mod:`bco_gym.stats.scores`, below both the reports and the figures."""

from bco_gym.stats import scores as _moved
from bco_gym.stats.scores import *  # noqa: F403  (the names of __all__, the same objects)

__all__ = list(_moved.__all__)
