"""Feasible sets with linear minimization oracles (one module per family)."""

from bco_gym.sets.balls import L2Ball
from bco_gym.sets.base import ConvexSet, ShrunkSet
from bco_gym.sets.simplex import Simplex

__all__ = ["ConvexSet", "L2Ball", "ShrunkSet", "Simplex"]
