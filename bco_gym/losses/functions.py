"""Convex losses a user brings as functions: f_t(x) = loss(t, x), with its gradient.

:func:`from_function` wraps two callables and the constants the user vouches for:

* ``loss(t, x)`` -> float and ``gradient(t, x)`` -> an array shaped like x, for rounds
  t = 0, ..., horizon - 1 (numbered from 0) and points x of K; or, declared with
  ``batched=True``, ``loss(rounds, points)`` -> shape (k,) and
  ``gradient(rounds, points)`` -> shape (k, *K.shape) for an int64 array ``rounds`` of
  shape (k,) and ``points`` of shape (k, *K.shape) (row i is round rounds[i] at
  points[i]). Batched callables are called once per chunk of rounds instead of once per
  round, which the comparator needs for long horizons.
* ``lipschitz`` (G, a bound on ||gradient(t, x)|| over K) and ``bound`` (M, a bound on
  |loss(t, x)| over K): positive finite numbers. Every value the env or the comparator
  computes is checked against them: a value above M or a gradient longer than G (beyond
  a relative 1e-9) raises ValueError naming the round, as does a non-finite value
  (:class:`~bco_gym.errors.InvalidLossError`) or one of the wrong shape.

The functions must be deterministic and convex in x for the comparator to mean
anything; the sequence does not depend on the env's seed (it is oblivious by
construction: it never sees the plays).

Comparator: F(x) = sum_{t<T'} f_t(x) minimised over K by the away-step Frank-Wolfe
method of :mod:`bco_gym.losses.solvers` (only K's LMO is used, so any user-defined set
works), with an adaptive-smoothness step (the short step -<g, d>/(L ||d||^2), L doubled
until F decreases at least by the quadratic model, then relaxed by 0.9 for the next
iteration; Pedregosa, Negiar, Askari & Jaggi, AISTATS 2020). Each evaluation of F or
its gradient is one streamed pass over the rounds. Certified by the Frank-Wolfe gap at
the returned point, f(x) - min_K F <= gap (convexity), stopping once it is below
``tolerance * T' * M`` or after ``max_iterations`` iterations (the gap says how far it got).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from bco_gym.errors import InvalidLossError
from bco_gym.losses.base import (
    Comparator,
    LossSequence,
    Params,
    check_checkpoints,
    json_digest,
)
from bco_gym.losses.solvers import frank_wolfe
from bco_gym.sets.base import ConvexSet

SLACK = 1e-9


class FunctionLoss(LossSequence):
    """f_t(x) = loss(t, x) for t < horizon, from user callables (module docstring).

    Build it with :func:`from_function`, which validates the input.
    """

    name = "function"

    def __init__(
        self,
        convex_set: ConvexSet,
        loss: Callable[..., Any],
        gradient: Callable[..., Any],
        horizon: int,
        lipschitz: float,
        bound: float,
        *,
        batched: bool = False,
        tolerance: float = 1e-6,
        max_iterations: int = 1000,
    ):
        super().__init__(convex_set)
        for label, value in (("loss", loss), ("gradient", gradient)):
            if not callable(value):
                raise TypeError(f"from_function: {label}={value!r} is not callable")
        if not isinstance(batched, bool):
            raise TypeError(f"from_function: batched={batched!r} must be True or False")
        self.horizon = _positive_integer("horizon", horizon)
        self.max_iterations = _positive_integer("max_iterations", max_iterations)
        self._lipschitz = _positive_number("lipschitz", lipschitz)
        self._bound = _positive_number("bound", bound)
        self.tolerance = _positive_number("tolerance", tolerance)
        self.loss_function, self.gradient_function, self.batched = loss, gradient, batched

    @property
    def lipschitz(self) -> float:
        return self._lipschitz

    @property
    def bound(self) -> float:
        return self._bound

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "loss": getattr(self.loss_function, "__qualname__", repr(self.loss_function)),
            "horizon": self.horizon,
            "lipschitz": self._lipschitz,
            "bound": self._bound,
            "batched": self.batched,
        }

    def __repr__(self) -> str:
        loss = _qualified(self.loss_function)
        return f"FunctionLoss({self.set!r}, loss={loss}, horizon={self.horizon})"

    def digest(self) -> str:
        """SHA-256 (hex) of the callables' qualified names and the declared constants (the
        set, horizon, G, M, batched): what identifies a user's function without calling
        it. Two different callables under one qualified name are not told apart."""
        return json_digest(
            {
                "loss": _qualified(self.loss_function),
                "gradient": _qualified(self.gradient_function),
                "set": repr(self.set),
                "horizon": self.horizon,
                "lipschitz": self._lipschitz,
                "bound": self._bound,
                "batched": self.batched,
            }
        )

    def _floats_per_round(self) -> int:
        return self.set.dim  # the batched callables see (chunk, *shape) points

    def _draw_chunk(self, rng: np.random.Generator, first: int, size: int) -> Params:
        return {"first": np.array(first)}

    # -- evaluation, checked against the declared constants --------------------------------
    def _evaluate(self, params: Params, part: slice, points: np.ndarray) -> np.ndarray:
        rounds = int(params["first"]) + np.arange(part.start, part.stop)
        if self.batched:
            values = np.asarray(self.loss_function(rounds, points), dtype=float)
            if values.shape != rounds.shape:
                raise ValueError(
                    f"from_function: batched loss returned shape {values.shape} for "
                    f"{len(rounds)} rounds, expected ({len(rounds)},)"
                )
        else:
            pairs = zip(rounds, points, strict=True)
            values = np.array([self._scalar(int(t), x) for t, x in pairs])
        self._check_values(values, rounds)
        return values

    def _scalar(self, t: int, x: np.ndarray) -> float:
        value = self.loss_function(t, x)
        try:
            return float(value)
        except (TypeError, ValueError) as exc:
            raise InvalidLossError(
                f"function loss: round {t}: loss returned {value!r}, not a number"
            ) from exc

    def _check_values(self, values: np.ndarray, rounds: np.ndarray) -> None:
        finite = np.isfinite(values)
        if not finite.all():
            i = int(np.flatnonzero(~finite)[0])
            raise InvalidLossError(
                f"function loss: round {int(rounds[i])}: loss returned {float(values[i])!r}"
                + (f" (row {i} of the batch)" if len(values) > 1 else "")
            )
        too_large = np.abs(values) > self._bound * (1 + SLACK)
        if too_large.any():
            i = int(np.flatnonzero(too_large)[0])
            size = abs(float(values[i]))
            raise ValueError(
                f"function loss: round {int(rounds[i])}: |loss| = {size!r} exceeds the "
                f"declared bound={self._bound!r}; declare a true bound M >= |f_t(x)| on K"
            )

    def _gradient(self, params: Params, offset: int, x: np.ndarray) -> np.ndarray:
        t = int(params["first"]) + offset
        rounds = np.array([t])
        return self._gradients(rounds, x[np.newaxis])[0]

    def _gradients(self, rounds: np.ndarray, points: np.ndarray) -> np.ndarray:
        """Gradients of rounds[i] at points[i] (k, *shape), checked."""
        if self.batched:
            result = np.asarray(self.gradient_function(rounds, points), dtype=float)
        else:
            result = np.stack(
                [
                    np.asarray(self.gradient_function(int(t), x), dtype=float)
                    for t, x in zip(rounds, points, strict=True)
                ]
            )
        if result.shape != points.shape:
            raise ValueError(
                f"function loss: round {int(rounds[0])}: gradient returned shape "
                f"{result.shape[1:] if not self.batched else result.shape}, expected "
                f"{points.shape[1:] if not self.batched else points.shape}"
            )
        flat = result.reshape(len(rounds), -1)
        finite = np.isfinite(flat).all(axis=1)
        norms = np.sqrt((flat * flat).sum(axis=1))
        for i in np.flatnonzero(~finite | (norms > self._lipschitz * (1 + SLACK)))[:1]:
            if not finite[i]:
                raise InvalidLossError(
                    f"function loss: round {int(rounds[i])}: gradient has non-finite entries"
                )
            norm = float(norms[i])
            raise ValueError(
                f"function loss: round {int(rounds[i])}: ||gradient|| = {norm!r} exceeds the "
                f"declared lipschitz={self._lipschitz!r}; declare a true bound G on K"
            )
        return result

    # -- comparator ------------------------------------------------------------------------
    def comparator(self, checkpoints: Sequence[int]) -> list[Comparator]:
        stops = check_checkpoints(checkpoints)
        self._check_within_horizon(stops[-1])
        if self._seed is None:  # the callables need no seed; reading chunks does
            self.reset(np.random.default_rng(0))
        results, start = [], None
        for stop in stops:
            objective = _SummedLosses(self, stop)
            solved = frank_wolfe(
                self.set,
                objective,
                tolerance=self.tolerance * stop * self._bound,
                start=start,
                max_iterations=self.max_iterations,
            )
            results.append(Comparator(stop, solved.point, solved.value, solved.gap))
            start = solved.point
        return results


def _qualified(function: Any) -> str:
    """``module.qualname`` of a callable (its repr when it has no qualified name)."""
    name = getattr(function, "__qualname__", None)
    if name is None:
        return repr(function)
    return f"{getattr(function, '__module__', '?')}.{name}"


class _SummedLosses:
    """F(x) = sum_{t<stop} f_t(x) for :func:`~bco_gym.losses.solvers.frank_wolfe`."""

    def __init__(self, losses: FunctionLoss, stop: int):
        self.losses, self.stop = losses, stop
        self.smoothness = 1e-6 * stop * losses.lipschitz**2 / max(losses.bound, 1e-300)
        self._cached: tuple[bytes, float] | None = None

    def value(self, x: np.ndarray) -> float:
        key = x.tobytes()
        if self._cached is not None and self._cached[0] == key:
            return self._cached[1]
        point = x.reshape(self.losses.set.shape)
        total = float(self.losses.cumulative_loss(point, [self.stop])[0])
        self._cached = (key, total)
        return total

    def gradient(self, x: np.ndarray) -> np.ndarray:
        point = x.reshape(self.losses.set.shape)
        total = np.zeros(self.losses.set.dim)
        for t0, t1, _, _ in self.losses.chunks(0, self.stop):
            rounds = np.arange(t0, t1)
            points = np.broadcast_to(point, (len(rounds), *point.shape))
            total += self.losses._gradients(rounds, points).reshape(len(rounds), -1).sum(axis=0)
        return total

    def line_search(
        self, x: np.ndarray, gradient: np.ndarray, direction: np.ndarray, max_step: float
    ) -> float:
        """Adaptive short step: halve it (double L) until F(x + s d) <= the quadratic model."""
        slope = float(gradient @ direction)
        squared = float(direction @ direction)
        if slope >= 0.0 or squared == 0.0:
            return 0.0
        current = self.value(x)
        smoothness = self.smoothness
        for _ in range(60):
            step = min(max_step, -slope / (smoothness * squared))
            model = current + step * slope + 0.5 * smoothness * step**2 * squared
            if self.value(x + step * direction) <= model:
                self.smoothness = 0.9 * smoothness
                return step
            smoothness *= 2.0
        return 0.0


def from_function(
    convex_set: ConvexSet,
    loss: Callable[..., Any],
    gradient: Callable[..., Any],
    horizon: int,
    lipschitz: float,
    bound: float,
    *,
    batched: bool = False,
    tolerance: float = 1e-6,
    max_iterations: int = 1000,
) -> FunctionLoss:
    """Convex losses f_t(x) = loss(t, x), t < horizon, with their gradients (module docstring).

    Args:
        convex_set: K, any :class:`~bco_gym.sets.ConvexSet` (the comparator uses only its LMO).
        loss: ``loss(t, x) -> float`` (or batched, see ``batched``).
        gradient: ``gradient(t, x) -> array shaped like x`` (or batched).
        horizon: T, the number of rounds (an integer >= 1).
        lipschitz: G > 0, a true bound on ||gradient(t, x)|| over K (checked on every use).
        bound: M > 0, a true bound on |loss(t, x)| over K (checked on every use).
        batched: False (default): the callables take one round and one point. True: they
            take ``rounds`` (int64, shape (k,)) and ``points`` (shape (k, *K.shape)) and
            return shapes (k,) and (k, *K.shape).
        tolerance: the comparator stops once its Frank-Wolfe gap is <= tolerance * T' * M.
        max_iterations: Frank-Wolfe iterations at most per prefix (the gap reports the rest).

    Raises:
        TypeError: a non-callable ``loss``/``gradient``, a non-bool ``batched``, or
            ``convex_set`` not a ConvexSet.
        ValueError: a non-integer or non-positive ``horizon``/``max_iterations``, or a
            non-finite or non-positive ``lipschitz``/``bound``/``tolerance``.
    """
    return FunctionLoss(
        convex_set,
        loss,
        gradient,
        horizon,
        lipschitz,
        bound,
        batched=batched,
        tolerance=tolerance,
        max_iterations=max_iterations,
    )


def _positive_integer(label: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"from_function: {label}={value!r} must be an integer >= 1")
    return int(value)


def _positive_number(label: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"from_function: {label}={value!r} must be a finite number > 0")
    number = float(value)
    if not np.isfinite(number) or number <= 0.0:
        raise ValueError(f"from_function: {label}={value!r} must be a finite number > 0")
    return number


__all__ = ["FunctionLoss", "from_function"]
