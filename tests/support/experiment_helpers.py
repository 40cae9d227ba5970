"""Tiny instances shared by the experiment tests (small n and horizons: fast)."""

from __future__ import annotations

from bco_gym.experiment import run

ENV_ID = "BCO-Ball-v0"
ENV_KWARGS = {"n": 3}
HORIZON = 200


def tiny_run(agent: str = "bbcg", seed: int = 0, **kwargs):
    """One run on the 3-dimensional ball with linear losses, T = 200 unless overridden."""
    kwargs.setdefault("horizon", HORIZON)
    kwargs.setdefault("env_kwargs", ENV_KWARGS)
    return run(ENV_ID, agent, seed=seed, **kwargs)
