"""Regret against the best fixed action in hindsight, recorded along an episode."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

_SUM_CHUNK = 1 << 16


def exact_sum(values: np.ndarray) -> float:
    """The correctly rounded float64 sum of ``values`` (math.fsum, streamed in chunks)."""
    chunks = (values[i : i + _SUM_CHUNK].tolist() for i in range(0, len(values), _SUM_CHUNK))
    return math.fsum(itertools.chain.from_iterable(chunks))


class RegretRecorder(gym.Wrapper):
    """Keeps every round's loss; at the episode's end reports the regret.

    R_T = sum_{t<T} f_t(x_t) - min_{x in K} sum_{t<T} f_t(x), the comparator computed
    offline by the env's loss sequence (``losses.comparator``) and exact up to its
    certified ``gap``. Sums are correctly rounded (math.fsum).

    Adds to ``info`` of the final step (``terminated or truncated``) and only there:
    ``"regret"`` (float), ``"cumulative_loss"`` (float), ``"comparator_loss"`` (float,
    sum_t f_t(x*)), ``"comparator_gap"`` (float, certified bound on comparator_loss minus
    the true minimum, so the true regret lies in [regret, regret + gap]) and
    ``"comparator_point"`` (x*, an array of K's shape).

    Attributes:
        round_losses: f_t(x_t) of the rounds played so far this episode (read-only float64).

    >>> import bco_gym
    >>> env = RegretRecorder(gym.make("BCO-Simplex-v0", n=3, horizon=10))
    >>> _ = env.reset(seed=0)
    >>> infos = [env.step(env.unwrapped.set.center)[4] for _ in range(10)]
    >>> sorted(set(infos[-1]) - set(infos[0]))
    ['comparator_gap', 'comparator_loss', 'comparator_point', 'cumulative_loss', 'regret']
    >>> infos[-1]["regret"] == infos[-1]["cumulative_loss"] - infos[-1]["comparator_loss"]
    True
    """

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self._horizon = env.unwrapped.problem.horizon
        self._losses = np.empty(self._horizon)
        self._filled = 0

    @property
    def round_losses(self) -> np.ndarray:
        view = self._losses[: self._filled]
        view.flags.writeable = False
        return view

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._losses = np.empty(self._horizon)  # earlier episodes' round_losses stay valid
        self._filled = 0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        self._losses[self._filled] = info["loss"]
        self._filled += 1
        if terminated or truncated:
            (comparator,) = self.env.unwrapped.losses.comparator([self._filled])
            cumulative = exact_sum(self.round_losses)
            info["regret"] = cumulative - comparator.value
            info["cumulative_loss"] = cumulative
            info["comparator_loss"] = comparator.value
            info["comparator_gap"] = comparator.gap
            info["comparator_point"] = np.array(comparator.point, copy=True)
        return observation, reward, terminated, truncated, info

    def regret_curve(self, checkpoints: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Regret and comparator gap after each prefix length in ``checkpoints``.

        ``checkpoints`` must increase strictly within [1, rounds played]; one comparator
        call serves them all, and the prefix sums are sums of correctly rounded pieces.
        """
        stops = [int(c) for c in checkpoints]
        if not stops or stops[0] < 1 or stops[-1] > self._filled or stops != sorted(set(stops)):
            raise ValueError(
                f"checkpoints {list(checkpoints)!r} must increase strictly within "
                f"[1, {self._filled}] (the rounds played so far)"
            )
        comparators = self.env.unwrapped.losses.comparator(stops)
        pieces = [exact_sum(self._losses[a:b]) for a, b in itertools.pairwise([0, *stops])]
        prefix = [math.fsum(pieces[: k + 1]) for k in range(len(stops))]
        regret = np.array([s - c.value for s, c in zip(prefix, comparators, strict=True)])
        return regret, np.array([c.gap for c in comparators])
