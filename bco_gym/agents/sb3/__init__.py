"""stable-baselines3 models as BCO agents, the reinforcement-learning baselines: a trained
model (``SB3Agent``) and the online ``sb3-ppo``, ``sb3-a2c``, ``sb3-sac``, ``sb3-td3``.

:mod:`.agent` holds the agents, :mod:`.drivers` the code that drives SB3's own training
paths from ``act``/``update``, :mod:`.options` the check of their keyword options.
Importing is free; building one needs the ``rl`` extra."""

from bco_gym.agents.sb3.agent import (
    SB3_AGENTS,
    A2CAgent,
    PPOAgent,
    SACAgent,
    SB3Agent,
    SB3OnlineAgent,
    TD3Agent,
    action_space,
    import_sb3,
    observation_space,
)

__all__ = [
    "SB3_AGENTS",
    "A2CAgent",
    "PPOAgent",
    "SACAgent",
    "SB3Agent",
    "SB3OnlineAgent",
    "TD3Agent",
    "action_space",
    "import_sb3",
    "observation_space",
]
