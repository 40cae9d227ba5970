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

Losses must be real numbers and gradients arrays of real numbers (a string, a bool, a
complex number or an object array raises :class:`~bco_gym.errors.InvalidLossError`).
A callable that raises is reported as :class:`~bco_gym.errors.LossFunctionError` naming
the callable, the round and the point (and whether the checks or a run was calling it),
the user's exception as its cause.

The functions must be deterministic and convex in x for the comparator to mean
anything; the sequence does not depend on the env's seed (it is oblivious by
construction: it never sees the plays). Before anything else, ``from_function`` tries to
refute convexity and the gradient on sampled rounds and points of K (the first-order
condition on pairs of points, finite differences along segments, M and G;
:mod:`bco_gym.losses.verification`) and refuses the losses with
:class:`~bco_gym.errors.LossCheckError` naming the round, the points and the
amounts. ``describe()["comparator"]`` (so ``RunResult.loss["comparator"]``) is
``"checked on N samples"`` after the checks pass (sampled checks refute, they do not
prove: "certified" is kept for comparators whose gap is a true bound), ``"uncertified"``
when they were skipped with ``verify=False``.

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

import hashlib
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from bco_gym import portable
from bco_gym.errors import InvalidLossError, LossFunctionError
from bco_gym.io import json_digest
from bco_gym.losses.base import (
    Comparator,
    LossSequence,
    Params,
    check_checkpoints,
)
from bco_gym.losses.solvers import frank_wolfe
from bco_gym.losses.verification import UNCERTIFIED, checked_label, verify_function_loss
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
        verify: bool = True,
    ):
        super().__init__(convex_set)
        for label, value in (("loss", loss), ("gradient", gradient)):
            if not callable(value):
                raise TypeError(f"from_function: {label}={value!r} is not callable")
        for label, flag in (("batched", batched), ("verify", verify)):
            if not isinstance(flag, bool):
                raise TypeError(f"from_function: {label}={flag!r} must be True or False")
        self.horizon = _positive_integer("horizon", horizon)
        self.max_iterations = _positive_integer("max_iterations", max_iterations)
        self._lipschitz = _positive_number("lipschitz", lipschitz)
        self._bound = _positive_number("bound", bound)
        self.tolerance = _positive_number("tolerance", tolerance)
        self.loss_function, self.gradient_function, self.batched = loss, gradient, batched
        #: Whether :func:`~bco_gym.losses.verification.verify_function_loss` passed (else
        #: the caller opted out with ``verify=False``): the comparator's label.
        self.verified = verify
        #: How many samples the checks passed on (0 without them): the comparator's label.
        self.samples_checked = 0
        #: How messages name what was running: the checks, then every later evaluation.
        self._doing = "function loss"
        if verify:
            self._doing = "from_function (checking the losses)"
            try:
                self.samples_checked = verify_function_loss(self)
            finally:
                self._doing = "function loss"

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
            "comparator": checked_label(self.samples_checked) if self.verified else UNCERTIFIED,
        }

    def __repr__(self) -> str:
        loss = _qualified(self.loss_function)
        return f"FunctionLoss({self.set!r}, loss={loss}, horizon={self.horizon})"

    def digest(self) -> str:
        """SHA-256 (hex) of the callables' qualified names, what they capture (the values
        of a closure's cells and of default arguments: :func:`_captured`) and the declared
        constants (the set, horizon, G, M, batched): what identifies a user's function
        without calling it. So f and -f made by one closure factory have different
        digests (and ``paired_table`` will not pair them)."""
        return json_digest(
            {
                "loss": _qualified(self.loss_function),
                "gradient": _qualified(self.gradient_function),
                "captured": [_captured(self.loss_function), _captured(self.gradient_function)],
                "set": repr(self.set),
                "horizon": self.horizon,
                "lipschitz": self._lipschitz,
                "bound": self._bound,
                "batched": self.batched,
            },
            default=repr,
        )

    def _floats_per_round(self) -> int:
        return self.set.dim  # the batched callables see (chunk, *shape) points

    def _draw_chunk(self, rng: np.random.Generator, first: int, size: int) -> Params:
        return {"first": np.array(first)}

    # -- evaluation, checked against the declared constants --------------------------------
    def _evaluate(self, params: Params, part: slice, points: np.ndarray) -> np.ndarray:
        rounds = int(params["first"]) + np.arange(part.start, part.stop)
        return self._values(rounds, points)

    def _values(self, rounds: np.ndarray, points: np.ndarray) -> np.ndarray:
        """Losses of rounds[i] at points[i] (k,), checked: real, finite, within M."""
        if self.batched:
            values = self._call("loss", rounds, points)
            values = _real_array(values, "batched loss", rounds)
            if values.shape != rounds.shape:
                raise ValueError(
                    f"from_function: batched loss returned shape {values.shape} for "
                    f"{len(rounds)} rounds, expected ({len(rounds)},); {_BATCHED_FORM}"
                )
        else:
            pairs = zip(rounds, points, strict=True)
            values = np.array([self._scalar(int(t), x) for t, x in pairs], dtype=float)
        self._check_values(values, rounds, points)
        return values

    def _scalar(self, t: int, x: np.ndarray) -> float:
        value = self._call("loss", t, x)
        if isinstance(value, np.ndarray) and value.shape == ():
            value = value[()]
        if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
            raise InvalidLossError(
                f"function loss: round {t}: loss returned {_short(value)} "
                f"({type(value).__name__}), not a real number"
            )
        return float(value)

    def _check_values(self, values: np.ndarray, rounds: np.ndarray, points: np.ndarray) -> None:
        finite = np.isfinite(values)
        if not finite.all():
            i = int(np.flatnonzero(~finite)[0])
            raise InvalidLossError(
                f"function loss: round {int(rounds[i])}: loss returned {float(values[i])!r}"
                f" at x = {_show(points[i])}"
                + (f" (row {i} of the batch)" if len(values) > 1 else "")
            )
        too_large = np.abs(values) > self._bound * (1 + SLACK)
        if too_large.any():
            i = int(np.flatnonzero(too_large)[0])
            size = abs(float(values[i]))
            raise ValueError(
                f"function loss: round {int(rounds[i])}: |loss| = {size!r} at x = "
                f"{_show(points[i])} exceeds the declared bound={self._bound!r}; declare a "
                "true bound M >= |f_t(x)| on K"
            )

    def _gradient(self, params: Params, offset: int, x: np.ndarray) -> np.ndarray:
        t = int(params["first"]) + offset
        rounds = np.array([t])
        return self._gradients(rounds, x[np.newaxis])[0]

    def _gradients(self, rounds: np.ndarray, points: np.ndarray) -> np.ndarray:
        """Gradients of rounds[i] at points[i] (k, *shape), checked."""
        if self.batched:
            result = _real_array(self._call("gradient", rounds, points), "gradient", rounds)
            if result.shape != points.shape:
                raise ValueError(
                    f"function loss: round {int(rounds[0])}: batched gradient returned shape "
                    f"{result.shape}, expected {points.shape}; {_BATCHED_FORM}"
                )
        else:
            rows = []
            for t, x in zip(rounds, points, strict=True):
                row = _real_array(self._call("gradient", int(t), x), "gradient", [t])
                if row.shape != x.shape:
                    raise ValueError(
                        f"function loss: round {int(t)}: gradient returned shape "
                        f"{row.shape}, expected {x.shape}"
                    )
                rows.append(row)
            result = np.stack(rows)
        flat = result.reshape(len(rounds), -1)
        finite = np.isfinite(flat).all(axis=1)
        norms = np.sqrt((flat * flat).sum(axis=1))
        for i in np.flatnonzero(~finite | (norms > self._lipschitz * (1 + SLACK)))[:1]:
            if not finite[i]:
                raise InvalidLossError(
                    f"function loss: round {int(rounds[i])}: gradient at x = "
                    f"{_show(points[i])} has non-finite entries: {_show(result[i])}"
                )
            norm = float(norms[i])
            raise ValueError(
                f"function loss: round {int(rounds[i])}: ||gradient|| = {norm!r} at x = "
                f"{_show(points[i])} exceeds the declared lipschitz={self._lipschitz!r}; "
                "declare a true bound G on K"
            )
        return result

    def _call(self, which: str, rounds: Any, points: np.ndarray) -> Any:
        """The user's ``loss`` or ``gradient`` (``which``) at round(s) ``rounds`` and
        point(s) ``points``; what it raises comes back as a LossFunctionError naming the
        round and the point (the user's exception as its cause)."""
        function = self.loss_function if which == "loss" else self.gradient_function
        try:
            return function(rounds, points)
        except Exception as error:
            raise LossFunctionError(self._raised(which, error, rounds, points)) from error

    def _raised(self, which: str, error: Exception, rounds: Any, points: np.ndarray) -> str:
        text = " ".join(str(error).split())  # one line
        text = text if len(text) <= 200 else text[:197] + "..."
        cause = f"{type(error).__name__}: {text}" if text else type(error).__name__
        if not self.batched:
            where = f"{self._doing}: round {rounds}"
            return f"{where}: {which}(t, x) raised {cause} at x = {_show(points)}"
        first, last = int(rounds[0]), int(rounds[-1])
        span = f"round {first}" if len(rounds) == 1 else f"rounds {first}..{last}"
        return (
            f"{self._doing}: {span}: batched {which}(rounds, points) raised {cause} "
            f"(row 0: round {first} at x = {_show(points[0])}); {_BATCHED_FORM}"
        )

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


_BATCHED_FORM = (
    "with batched=True the callables take rounds (int64, shape (k,)) and points (shape "
    "(k, *K.shape)) and return shapes (k,) and (k, *K.shape); callables of one round t "
    "and one point x need batched=False"
)


def _captured(function: Any, depth: int = 0) -> Any:
    """What a callable carries besides its code, as JSON-able content: the values in its
    closure cells, its default arguments and, for a bound method or a ``functools.partial``,
    its object's or its arguments' values (:func:`_content`); ``None`` for none."""
    if depth > 3:
        return "..."
    parts: dict[str, Any] = {}
    inner = getattr(function, "__func__", None)  # a bound method: its function and object
    if inner is not None:
        parts["self"] = _content(getattr(function, "__self__", None), depth)
        function = inner
    if hasattr(function, "func") and hasattr(function, "args"):  # functools.partial
        parts["partial"] = _content((function.args, function.keywords), depth)
        function = function.func
    cells = getattr(function, "__closure__", None) or ()
    values = []
    for cell in cells:
        try:
            values.append(_content(cell.cell_contents, depth))
        except ValueError:  # an empty cell
            values.append(None)
    if values:
        parts["closure"] = values
    defaults = (getattr(function, "__defaults__", None), getattr(function, "__kwdefaults__", None))
    if any(defaults):
        parts["defaults"] = _content(defaults, depth)
    return parts or None


def _content(value: Any, depth: int) -> Any:
    """``value`` as JSON-able content: numbers, strings and containers as themselves,
    arrays by their dtype, shape and SHA-256, callables by name and captured values,
    other objects by their type and the content of their attributes (never a repr with a
    memory address, which would change from one process to the next)."""
    if depth > 6:
        return "..."
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value.hex()
    if isinstance(value, np.generic):
        return _content(value.item(), depth)
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        digest = hashlib.sha256(data.tobytes()).hexdigest() if data.dtype != object else None
        return {"array": str(data.dtype), "shape": list(data.shape), "sha256": digest}
    if isinstance(value, list | tuple):
        return [_content(item, depth + 1) for item in value]
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda item: str(item[0]))
        return {str(key): _content(item, depth + 1) for key, item in items}
    if callable(value):
        return {"callable": _qualified(value), "captured": _captured(value, depth + 1)}
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict) and depth < 3:
        fields = {k: _content(v, depth + 1) for k, v in attributes.items()}
        return {"object": _qualified(type(value)), "fields": fields}
    return {"object": _qualified(type(value))}


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
        slope = portable.dot(gradient, direction)
        squared = portable.dot(direction, direction)
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
    verify: bool = True,
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
        verify: True (default): before anything else, check convexity (the first-order
            condition), the gradient (finite differences), M and G on sampled rounds and
            points (:mod:`bco_gym.losses.verification`); the comparator is then labelled
            ``"checked on N samples"`` in ``describe()["comparator"]`` (hence
            ``RunResult.loss``): the checks refute on samples, they prove nothing.
            False: skip the checks; the label is ``"uncertified"``.

    Raises:
        TypeError: a non-callable ``loss``/``gradient``, a non-bool ``batched``/``verify``,
            or ``convex_set`` not a ConvexSet.
        ValueError: a non-integer or non-positive ``horizon``/``max_iterations``, or a
            non-finite or non-positive ``lipschitz``/``bound``/``tolerance``.
        LossCheckError: (a ValueError) a sampled check failed, naming the round, the
            points and the amounts.
        InvalidLossError: a sampled loss or gradient is not finite or not real numbers.
        LossFunctionError: (a RuntimeError) ``loss`` or ``gradient`` raised while being
            checked, naming the round and the point (and, with ``batched=True``, the form
            the callables are called in).
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
        verify=verify,
    )


def _real_array(value: Any, label: str, rounds: Any) -> np.ndarray:
    """``value`` as a float array if it holds real numbers (no bools, strings, objects)."""
    array = np.asarray(value)
    if array.dtype.kind not in "iuf":
        raise InvalidLossError(
            f"function loss: round {int(rounds[0])}: {label} returned {_short(value)} "
            f"(dtype {array.dtype}), not real numbers"
        )
    return array.astype(float, copy=False)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _show(point: np.ndarray) -> str:
    return np.array2string(np.asarray(point), precision=4, threshold=8, separator=", ")


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
