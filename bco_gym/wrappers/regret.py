"""Regret against the best fixed action in hindsight, recorded along an episode."""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from bco_gym.errors import InvalidLossError
from bco_gym.losses.intervals import interval_metrics

_SUM_CHUNK = 1 << 16
_FIRST_CAPACITY = 1 << 12


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
    ``"comparator_point"`` (x*, an array of K's shape); for changing environments
    ``"adaptive_regret"`` (the largest regret over the dyadic intervals {[s, s + 2^k)}
    and the whole run, each against its own best fixed point),
    ``"dynamic_regret"`` (sum_t f_t(x_t) - sum_t min_K f_t) and ``"interval_regret"``
    (the maximum per interval length, the interval attaining the adaptive regret, the
    whole run's regret, the switching regret of
    ``linear-switching``; see :mod:`bco_gym.losses.intervals`). Both regrets are exact
    for linear losses and None otherwise, the reason in ``interval_regret["reason"]``.

    With two-point feedback (``feedback="two-point"``) the env's ``info["loss"]`` is
    the mean of f_t at the round's two points, so the regret recorded is
    sum_t (f_t(x_t^0) + f_t(x_t^1))/2 - min_x sum_t f_t(x), the convention of Agarwal,
    Dekel & Xiao (2010).

    Memory grows with the rounds played (a buffer doubled as needed, up to the
    horizon), so a huge horizon costs nothing up front. A non-finite loss or
    comparator raises :class:`~bco_gym.errors.InvalidLossError`: no ``nan`` regret.
    An episode stopped before the env's end (by a ``TimeLimit`` outside this wrapper,
    or a reset mid-episode) reports nothing; the next ``reset`` or ``close`` warns.

    Attributes:
        round_losses: f_t(x_t) of the rounds played so far this episode (read-only float64).

    >>> import bco_gym
    >>> env = RegretRecorder(gym.make("BCO-Simplex-v0", n=3, horizon=10))
    >>> _ = env.reset(seed=0)
    >>> infos = [env.step(env.unwrapped.set.center)[4] for _ in range(10)]
    >>> sorted(set(infos[-1]) - set(infos[0]))  # doctest: +NORMALIZE_WHITESPACE
    ['adaptive_regret', 'comparator_gap', 'comparator_loss', 'comparator_point',
     'cumulative_loss', 'dynamic_regret', 'interval_regret', 'regret']
    >>> infos[-1]["regret"] == infos[-1]["cumulative_loss"] - infos[-1]["comparator_loss"]
    True
    """

    def __init__(self, env: gym.Env):
        super().__init__(env)
        problem = getattr(env.unwrapped, "problem", None)
        if problem is None:
            raise TypeError(
                f"RegretRecorder needs a bco_gym env (whose env.unwrapped.problem is the BCO "
                f"problem, e.g. gym.make('BCO-Simplex-v0')); got {env!r}"
            )
        self._horizon = problem.horizon
        self._losses = np.empty(min(self._horizon, _FIRST_CAPACITY))
        self._filled = 0
        self._finished = 0

    @property
    def round_losses(self) -> np.ndarray:
        view = self._losses[: self._filled]
        view.flags.writeable = False
        return view

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._warn_if_cut_short()
        # a new buffer, so earlier episodes' round_losses stay valid
        self._losses = np.empty(min(self._horizon, _FIRST_CAPACITY))
        self._filled = self._finished = 0
        return self.env.reset(**kwargs)

    def close(self) -> None:
        self._warn_if_cut_short()
        self._filled = 0
        super().close()

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        self._record(info["loss"])
        if terminated or truncated:
            info.update(self._report())
        return observation, reward, terminated, truncated, info

    def _record(self, loss: float) -> None:
        """Append one round's loss, doubling the buffer (up to the horizon) when full."""
        if not math.isfinite(loss):
            raise InvalidLossError(
                f"RegretRecorder: the loss of round {self._filled} is {loss!r}; a regret needs "
                f"finite losses (from {self.env.unwrapped.losses!r})"
            )
        if self._filled == len(self._losses):
            grown = np.empty(min(self._horizon, 2 * len(self._losses)))
            grown[: self._filled] = self._losses
            self._losses = grown
        self._losses[self._filled] = loss
        self._filled += 1

    def _report(self) -> dict[str, Any]:
        """The info keys of an episode's last step (see the class docstring)."""
        losses = self.env.unwrapped.losses
        (comparator,) = losses.comparator([self._filled])
        if not (math.isfinite(comparator.value) and math.isfinite(comparator.gap)):
            raise InvalidLossError(
                f"RegretRecorder: the comparator of {losses!r} over {self._filled} rounds has "
                f"value {comparator.value!r} and gap {comparator.gap!r}; both must be finite"
            )
        cumulative = exact_sum(self.round_losses)
        self._finished = self._filled
        return {
            "regret": cumulative - comparator.value,
            "cumulative_loss": cumulative,
            "comparator_loss": comparator.value,
            "comparator_gap": comparator.gap,
            "comparator_point": np.array(comparator.point, copy=True),
            **self._changing(losses),
        }

    def _changing(self, losses: Any) -> dict[str, Any]:
        """Adaptive and dynamic regret (None, with the reason, for a non-linear family)."""
        metrics = interval_metrics(losses, self.round_losses)
        if isinstance(metrics, str):
            return {
                "adaptive_regret": None,
                "dynamic_regret": None,
                "interval_regret": {"reason": metrics},
            }
        return {
            "adaptive_regret": metrics.adaptive_regret,
            "dynamic_regret": metrics.dynamic_regret,
            "interval_regret": metrics.as_dict(),
        }

    def _warn_if_cut_short(self) -> None:
        """Warn when an episode stopped before the env's end: no regret was reported."""
        if 0 < self._filled and self._finished != self._filled:
            warnings.warn(
                f"RegretRecorder: the last episode was reset after {self._filled} of "
                f"{self._horizon} rounds, before the env ended it, so no regret was reported "
                "for it. If a TimeLimit (or another wrapper) outside RegretRecorder cut it "
                "short, put RegretRecorder outside it, e.g. RegretRecorder(gym.make(id, "
                "max_episode_steps=k)), or make the env with horizon=k.",
                UserWarning,
                stacklevel=3,
            )

    def regret_curve(self, checkpoints: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Regret and comparator gap after each prefix length in ``checkpoints``.

        ``checkpoints`` must increase strictly within [1, rounds played]; one comparator
        call serves them all, and the prefix sums are sums of correctly rounded pieces.
        """
        given = None if isinstance(checkpoints, str | bytes) else np.asarray(checkpoints, object)
        if (
            given is None
            or given.ndim != 1
            or not all(isinstance(c, int | np.integer) and not isinstance(c, bool) for c in given)
        ):
            raise ValueError(
                f"checkpoints {checkpoints!r} are not allowed; expected a sequence of integer "
                f"prefix lengths within [1, {self._filled}]"
            )
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
