"""bco_gym: bandit convex optimization as Gymnasium environments.

Importing the package registers every ``BCO-*-v0`` environment id.
"""

from bco_gym import agents, envs, losses, sets, wrappers
from bco_gym.envs import ENV_IDS, BanditConvexEnv, ConvexSetSpace
from bco_gym.errors import InfeasibleActionError, InvalidLossError
from bco_gym.problem import Problem

#: The library's version (semantic versioning of the API; suites and the reference
#: archive's format carry their own versions: docs/versions.md).
__version__ = "0.2.0"
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
