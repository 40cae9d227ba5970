"""FKM (Flaxman, Kalai & McMahan, SODA 2005): bandit gradient descent on the shrunk set,
one point (``fkm``) and two points (``fkm2``).

:mod:`.agent` holds ``fkm``, :mod:`.two_point` ``fkm2``, :mod:`.kernel` their compiled
rounds (numba, imported only where a compiled loop runs)."""

from bco_gym.agents.fkm.agent import FlaxmanAgent
from bco_gym.agents.fkm.two_point import FlaxmanTwoPoint

__all__ = ["FlaxmanAgent", "FlaxmanTwoPoint"]
