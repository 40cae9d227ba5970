"""Random play, the benchmark's baseline: ``random``."""

from bco_gym.agents.random.agent import RandomAgent

__all__ = ["RandomAgent"]
