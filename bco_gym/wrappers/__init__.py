"""Wrappers around BCO environments."""

from bco_gym.wrappers.adapter import BoxActionAdapter
from bco_gym.wrappers.regret import RegretRecorder

__all__ = ["BoxActionAdapter", "RegretRecorder"]
