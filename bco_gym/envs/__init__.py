"""Gymnasium environments for bandit convex optimization; importing registers the ids."""

from bco_gym.envs.env import BanditConvexEnv
from bco_gym.envs.pairs import PairSpace
from bco_gym.envs.registration import ENV_IDS
from bco_gym.envs.spaces import ConvexSetSpace
from bco_gym.envs.vector import BanditConvexVectorEnv

__all__ = ["ENV_IDS", "BanditConvexEnv", "BanditConvexVectorEnv", "ConvexSetSpace", "PairSpace"]
