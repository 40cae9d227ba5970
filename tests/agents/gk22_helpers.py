"""Shared helpers of the Garber & Kretzu (2022) agent tests: linear loss sequences of
three kinds and the brute-force largest regret over ALL intervals [s, e].

Imported by name (``from gk22_helpers import ...``), as ``agent_helpers``.
"""

from __future__ import annotations

import warnings

import numpy as np

from bco_gym.agents import make_agent
from bco_gym.problem import Problem
from bco_gym.sets import L2Ball, Simplex


def sequence(kind: str, n: int, horizon: int, period: int, rng: np.random.Generator) -> np.ndarray:
    """Loss vectors theta_t (T, n) of norm <= 1 (G = 1 and |f| <= 1 on the unit ball).

    * "stationary": a fixed unit vector plus small noise;
    * "switching": a fresh unit vector on each of 6 equal segments, plus noise;
    * "adversarial": +-e_0 flipped every ``period`` rounds (the agent's block size), so
      that an agent lagging a block behind always chases the sign just abandoned.
    """
    if kind == "stationary":
        mean = np.tile(rng.normal(size=n), (horizon, 1))
    elif kind == "switching":
        means = rng.normal(size=(6, n))
        mean = means[np.minimum(np.arange(horizon) * 6 // horizon, 5)]
    elif kind == "adversarial":
        signs = np.where((np.arange(horizon) // period) % 2 == 0, 1.0, -1.0)
        mean = np.outer(signs, np.eye(n)[0])
    else:
        raise ValueError(kind)
    mean = mean / np.linalg.norm(mean, axis=1, keepdims=True)
    thetas = 0.8 * mean + 0.2 * rng.uniform(-1, 1, size=(horizon, n)) / np.sqrt(n)
    return thetas


def play(agent, convex_set, thetas: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Play f_t(x) = <theta_t, x>; returns the plays (T, n) and their losses (T,)."""
    agent.reset(seed=seed)
    plays = np.empty_like(thetas)
    for t, theta in enumerate(thetas):
        plays[t] = agent.act(None)
        agent.update(float(theta @ plays[t]))
    return plays, np.einsum("ij,ij->i", plays, thetas)


def largest_interval_regret(convex_set, thetas: np.ndarray, losses: np.ndarray) -> float:
    """max over all 1 <= s <= e <= T of sum_{s..e} f_t(y_t) - min_K sum_{s..e} f_t, by brute
    force from prefix sums (exact minimum: -R||sum theta|| on the ball about 0, the
    smallest entry of sum theta on the simplex)."""
    loss_prefix = np.concatenate(([0.0], np.cumsum(losses)))
    theta_prefix = np.vstack((np.zeros(thetas.shape[1]), np.cumsum(thetas, axis=0)))
    worst = -np.inf
    for s in range(len(losses)):
        sums = theta_prefix[s + 1 :] - theta_prefix[s]
        if isinstance(convex_set, L2Ball):
            best = -convex_set.radius * np.linalg.norm(sums, axis=1)
        elif isinstance(convex_set, Simplex):
            best = sums.min(axis=1)
        else:
            raise TypeError(convex_set)
        worst = max(worst, float(np.max(loss_prefix[s + 1 :] - loss_prefix[s] - best)))
    return worst


def agent_for(name: str, convex_set, horizon: int, batch_size=None, **overrides):
    """The agent for linear losses of norm <= 1 (G = 1, M = R + ||c||) on ``convex_set``."""
    bound = convex_set.outer_radius + float(np.linalg.norm(convex_set.center))
    problem = Problem(convex_set, horizon, 1.0, bound, "bandit")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return make_agent(name, problem, batch_size=batch_size, **overrides)
