"""Oblivious loss sequences (the adversary) and the offline comparator."""

from bco_gym.losses.base import Comparator, LossSequence
from bco_gym.losses.linear import LinearLoss

__all__ = ["Comparator", "LinearLoss", "LossSequence"]
