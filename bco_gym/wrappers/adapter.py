"""Expose a BCO env to reinforcement-learning libraries through the action box [-1, 1]^shape."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np

from bco_gym.sets.box_maps import DEFAULT_VERTEX_TOLERANCE, BoxMap, MappedPoint, box_map


class BoxActionAdapter(gym.ActionWrapper):
    """Let an agent act in ``Box(-1, 1, shape, float32)``; map each action onto K.

    stable-baselines3's continuous-action algorithms (PPO, A2C, SAC, TD3) want a
    normalised box of actions; a BCO env wants points of K. This wrapper overrides
    the one hook :meth:`action` with the set's :func:`~bco_gym.sets.box_maps.box_map`,
    a continuous map whose image lies in K:

    * Simplex: x = softmax(beta a), beta = (log((n - 1) / tol) + 1) / 2 so each vertex
      is reached within ``vertex_tolerance`` tol (default 1e-3);
    * L2Ball / L1Ball / NuclearNormBall of radius rho: x = a ||a||_inf / gamma(a) with
      gamma the ball's norm divided by rho (onto the ball; the cube's boundary lands
      on the sphere);
    * Hypercube [low, high]: x = (low + high)/2 + a (high - low)/2;
    * any other set with a projection (flow and Birkhoff polytopes): x = Pi_K of the
      affine image of ``a`` in K's bounding box (one QP per step there).

    Observations, rewards (Python floats), flags and ``info`` pass through unchanged;
    the wrapper adds no ``info`` key. Actions outside the box are clipped to it first.
    The adapter is for training SB3 models; ``SB3Agent.act`` already returns points of
    K, to step the env without the adapter: handed one, the adapter warns.

    Args:
        env: a BCO env (``env.unwrapped.problem.set`` is K) with one point per action:
            ``feedback="two-point"`` envs (pairs of points) and envs already wrapped in a
            BoxActionAdapter are refused with a ValueError.
        vertex_tolerance: the simplex map's reach, see above.

    Example:
        >>> import gymnasium as gym, bco_gym
        >>> env = BoxActionAdapter(gym.make("BCO-Simplex-v0", n=3, horizon=5))
        >>> env.action_space
        Box(-1.0, 1.0, (3,), float32)
    """

    def __init__(self, env: gym.Env, vertex_tolerance: float = DEFAULT_VERTEX_TOLERANCE):
        super().__init__(env)
        problem = getattr(env.unwrapped, "problem", None)
        if problem is None:
            raise TypeError(
                f"BoxActionAdapter needs a bco_gym env (whose env.unwrapped.problem is the BCO "
                f"problem, e.g. gym.make('BCO-Simplex-v0')); got {env!r}"
            )
        inner = env
        while isinstance(inner, gym.Wrapper):
            if isinstance(inner, BoxActionAdapter):
                raise ValueError(
                    f"BoxActionAdapter over {env!r}, which already has one: its actions are "
                    "box actions already, a second adapter would map points of K as if they "
                    "were; wrap the env once"
                )
            inner = inner.env
        if problem.feedback == "two-point":
            raise ValueError(
                f"BoxActionAdapter maps one box action to one point of K, but {env!r} has "
                f"feedback='two-point' (its actions are pairs of points, shape "
                f"{(2, *problem.set.shape)}); make the env with feedback='bandit' (or 'full') "
                "to train an RL policy through the adapter"
            )
        self.box_map: BoxMap = box_map(problem.set, vertex_tolerance)
        self.action_space = gym.spaces.Box(-1.0, 1.0, problem.set.shape, np.float32)

    def action(self, action: np.ndarray) -> np.ndarray:
        """The point of K standing for the box action ``action``."""
        if isinstance(action, MappedPoint):
            warnings.warn(
                "BoxActionAdapter.step got a point of K already mapped from a box action (an "
                "SB3Agent's act() output): mapping it again plays another point. Step the env "
                "without the adapter (adapter.env, or the env before BoxActionAdapter) with "
                "the agent's plays; the adapter is for training SB3 models.",
                UserWarning,
                stacklevel=3,
            )
        return self.box_map(action)
