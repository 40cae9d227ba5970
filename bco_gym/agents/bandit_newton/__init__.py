"""The Regularized Bandit Newton method (Suggala, Ravikumar & Netrapalli, COLT 2021,
Algorithm 1): ``bandit-newton``.

:mod:`.agent` holds the agent, :mod:`.region` its focus region (membership, hit-and-run
samples, the barrier method), :mod:`.bounds` Theorem 7's parameters."""

from bco_gym.agents.bandit_newton.agent import BanditNewton

__all__ = ["BanditNewton"]
