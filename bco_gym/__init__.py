"""bco_gym: bandit convex optimization as Gymnasium environments.

Importing the package registers every ``BCO-*-v0`` environment id.
"""

from bco_gym import agents, envs, losses, sets, wrappers
from bco_gym.envs import ENV_IDS, BanditConvexEnv, ConvexSetSpace
from bco_gym.errors import InfeasibleActionError, InvalidLossError
from bco_gym.problem import Problem

__version__ = "0.1.0"
__all__ = [
    "ENV_IDS",
    "BanditConvexEnv",
    "ConvexSetSpace",
    "InfeasibleActionError",
    "InvalidLossError",
    "Problem",
    "__version__",
    "agents",
    "envs",
    "losses",
    "sets",
    "wrappers",
]
