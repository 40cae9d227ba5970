"""Shared helpers for the agent tests: a lean play loop and two user-defined sets.

Imported by name (``from agent_helpers import ...``): pytest puts this directory on
``sys.path`` under its default import mode.
"""

from __future__ import annotations

import warnings

import numpy as np

from bco_gym.agents import AGENTS, Agent, make_agent
from bco_gym.losses import LinearLoss
from bco_gym.problem import Problem
from bco_gym.sets.base import ConvexSet
from bco_gym.sets.checks import DEFAULT_ATOL

BANDIT_AGENTS = ("bbcg", "fkm", "bfw", "random")
FULL_AGENTS = ("ofw", "ogd")
ALL_AGENTS = BANDIT_AGENTS + FULL_AGENTS


def build(name: str, convex_set: ConvexSet, horizon: int, **overrides) -> tuple[Agent, LinearLoss]:
    """An agent for linear losses on ``convex_set`` (feedback matching the agent)."""
    loss = LinearLoss(convex_set)
    feedback = AGENTS[name].feedback
    problem = Problem(convex_set, horizon, loss.lipschitz, loss.bound, feedback)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # degenerate K_delta at tiny horizons
        agent = make_agent(name, problem, **overrides)
    return agent, loss


def play(
    agent: Agent, loss_fn, horizon: int, *, blocks: bool = False, gradient_fn=None
) -> tuple[np.ndarray, np.ndarray]:
    """Play ``horizon`` rounds; ``loss_fn(t, y)`` is the loss. Returns (actions, losses).

    With ``blocks`` the agent's block hooks are used (one batch of plays at a time);
    ``gradient_fn(t, y)`` feeds ``info["gradient"]`` to full-information agents.
    """
    actions, losses, t = [], [], 0
    while t < horizon:
        if blocks:
            plays = agent.block_actions()
            values = np.array([loss_fn(t + i, y) for i, y in enumerate(plays)])
            agent.update_block(values)
        else:
            y = agent.act(None)
            plays, values = y[np.newaxis], np.array([loss_fn(t, y)])
            info = None if gradient_fn is None else {"gradient": gradient_fn(t, y)}
            agent.update(values[0], info)
        actions.extend(plays)
        losses.extend(values)
        t += len(plays)
    return np.array(actions), np.array(losses)


def play_linear(agent: Agent, loss: LinearLoss, horizon: int, seed: int, *, blocks=False):
    """Reset the loss (seed) and the agent (seed + 1) and play; full agents get gradients."""
    loss.reset(np.random.default_rng(seed))
    agent.reset(seed=seed + 1)
    gradient_fn = loss.gradient if agent.feedback == "full" else None
    return play(agent, loss.loss, horizon, blocks=blocks, gradient_fn=gradient_fn)


def regret(loss: LinearLoss, losses: np.ndarray) -> float:
    """sum_t f_t(y_t) - min_K sum_t f_t (exact comparator of the linear family)."""
    return float(losses.sum() - loss.comparator([len(losses)])[0].value)


class Permutahedron(ConvexSet):
    """conv{permutations of (1, ..., n)}, a user-defined set with only the required verbs.

    Geometry: centre c = ((n+1)/2) 1; aff(K) = {sum x = n(n+1)/2}, so V = {sum v = 0},
    d = n - 1 and tangent(v) = v - mean(v). Facets: sum_{i in S} x_i >= |S|(|S|+1)/2 for
    every proper subset S; the centre's distance to the facet with |S| = k is
    sqrt(k(n-k)n)/2, smallest at k = 1: r = sqrt(n(n-1))/2. The vertices are at distance
    R = sqrt(n(n^2-1)/12) from c. LMO: the largest entry n goes where g is smallest (sort).
    Membership: x is majorized by (n, ..., 1) (Rado's theorem): equal totals and each
    partial sum of x sorted decreasingly at most that of (n, ..., 1).
    """

    def __init__(self, n: int):
        self.n = n
        self.shape = (n,)

    def __repr__(self) -> str:
        return f"Permutahedron({self.n})"

    @property
    def aff_dim(self) -> int:
        return self.n - 1

    @property
    def center(self) -> np.ndarray:
        return np.full(self.n, (self.n + 1) / 2)

    @property
    def inner_radius(self) -> float:
        return float(np.sqrt(self.n * (self.n - 1)) / 2)

    @property
    def outer_radius(self) -> float:
        return float(np.sqrt(self.n * (self.n**2 - 1) / 12))

    def tangent(self, v: np.ndarray) -> np.ndarray:
        return v - v.mean()

    def lmo(self, direction: np.ndarray) -> np.ndarray:
        vertex = np.empty(self.n)
        vertex[np.argsort(direction)] = np.arange(self.n, 0, -1)
        return vertex

    def contains(self, x: np.ndarray, atol: float = DEFAULT_ATOL) -> bool:
        x = np.asarray(x, dtype=float)
        top = np.cumsum(np.sort(x)[::-1])
        bound = np.cumsum(np.arange(self.n, 0, -1, dtype=float))
        return bool(abs(top[-1] - bound[-1]) <= atol and np.all(top <= bound + atol))


class FrobeniusBall(ConvexSet):
    """{X in R^(rows x cols) : ||X||_F <= 1}, a matrix-shaped user-defined set.

    Centre 0, full-dimensional (d = rows*cols), r = R = 1; LMO -G/||G||_F; projection by
    radial scaling; ``tangent_many`` is the identity, vectorised.
    """

    def __init__(self, rows: int, cols: int):
        self.shape = (rows, cols)

    def __repr__(self) -> str:
        return f"FrobeniusBall{self.shape}"

    @property
    def center(self) -> np.ndarray:
        return np.zeros(self.shape)

    @property
    def inner_radius(self) -> float:
        return 1.0

    @property
    def outer_radius(self) -> float:
        return 1.0

    def tangent_many(self, vectors: np.ndarray) -> np.ndarray:
        return np.array(vectors, dtype=float, copy=True)

    def lmo(self, direction: np.ndarray) -> np.ndarray:
        norm = np.linalg.norm(direction)
        return np.zeros(self.shape) if norm == 0 else -direction / norm

    def project(self, x: np.ndarray) -> np.ndarray:
        norm = np.linalg.norm(x)
        return np.array(x, dtype=float) if norm <= 1 else x / norm

    def contains(self, x: np.ndarray, atol: float = DEFAULT_ATOL) -> bool:
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.linalg.norm(x) <= 1 + atol)
