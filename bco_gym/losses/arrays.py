"""Linear losses a user brings as an array: f_t(x) = <theta_t, x> + b_t.

:func:`from_array` wraps an array (or a ``numpy.memmap``, read chunk by chunk, never
loaded whole) of shape (T, *K.shape) holding theta_0, ..., theta_{T-1}, and optional
offsets b_t of shape (T,) (default 0). Unlike the ``linear`` family, which is
<theta_t, x - c> around the set's centre, the losses here are exactly the user's
<theta_t, x> + b_t. The horizon is T.

Constants (true bounds over K, computed once from the data with the LMO): the gradient
is theta_t, so G = max_t ||theta_t||; f_t ranges over
[<theta_t, lmo(theta_t)> + b_t, <theta_t, lmo(-theta_t)> + b_t] on K, so
M = max_t max(|<theta_t, lmo(theta_t)> + b_t|, |<theta_t, lmo(-theta_t)> + b_t|)
(2T LMO answers, through ``lmo_many`` chunk by chunk), attained.

Comparator: exact (gap 0), one LMO on the summed vectors:
x* = lmo(sum_{t<T'} theta_t), value <sum_t theta_t, x*> + sum_t b_t.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from bco_gym.errors import InvalidLossError
from bco_gym.losses.base import (
    Comparator,
    LossSequence,
    Params,
    check_checkpoints,
    row_dot,
)
from bco_gym.sets.base import ConvexSet


class ArrayLoss(LossSequence):
    """f_t(x) = <thetas[t], x> + offsets[t] for t < T = len(thetas) (module docstring).

    Build it with :func:`from_array`, which validates the input.

    Attributes:
        thetas: the (T, *K.shape) array or memmap, as given (never copied whole).
        offsets: the (T,) float64 offsets (zeros when none were given).
    """

    name = "array"

    def __init__(self, convex_set: ConvexSet, thetas: Any, offsets: Any = None):
        super().__init__(convex_set)
        self.thetas = _check_thetas(convex_set, thetas)
        self.horizon = len(self.thetas)
        self.offsets = _check_offsets(offsets, self.horizon)
        self._lipschitz, self._bound = self._constants()
        self._digest: str | None = None

    @property
    def lipschitz(self) -> float:
        return self._lipschitz

    @property
    def bound(self) -> float:
        return self._bound

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "horizon": self.horizon}

    def __repr__(self) -> str:
        return f"ArrayLoss({self.set!r}, horizon={self.horizon})"

    def digest(self) -> str:
        """SHA-256 (hex) of the data: the set, the shape, theta_t (as float64) and b_t, read
        chunk by chunk; it does not depend on the seed (computed once, then cached)."""
        if self._digest is None:
            hasher = hashlib.sha256(f"{self.set!r}|{tuple(self.thetas.shape)}".encode())
            step = max(1, self.chunk_size)
            for first in range(0, self.horizon, step):
                rows = np.asarray(self.thetas[first : first + step], dtype=np.float64)
                hasher.update(np.ascontiguousarray(rows).tobytes())
            hasher.update(np.ascontiguousarray(self.offsets, dtype=np.float64).tobytes())
            self._digest = hasher.hexdigest()
        return self._digest

    def _draw_chunk(self, rng: np.random.Generator, first: int, size: int) -> Params:
        rows = slice(first, min(first + size, self.horizon))
        theta = np.asarray(self.thetas[rows], dtype=float).reshape(-1, self.set.dim)
        return {"theta": theta, "offset": self.offsets[rows]}

    def _evaluate(self, params: Params, part: slice, points: np.ndarray) -> np.ndarray:
        flat = points.reshape(len(points), -1)
        return row_dot(params["theta"][part], flat) + params["offset"][part]

    def _gradient(self, params: Params, offset: int, x: np.ndarray) -> np.ndarray:
        return params["theta"][offset].reshape(self.set.shape).copy()

    def linear_terms(self, params: Params, part: slice) -> tuple[np.ndarray, np.ndarray]:
        return params["theta"][part], params["offset"][part]

    def changing_reason(self) -> str | None:
        return None

    def comparator(self, checkpoints: Sequence[int]) -> list[Comparator]:
        stops = check_checkpoints(checkpoints)
        self._check_within_horizon(stops[-1])
        self._ensure_reset()
        sums = self.prefix_sums(
            stops,
            lambda params, part: (
                params["theta"][part].sum(axis=0),
                np.array(params["offset"][part].sum()),
            ),
        )
        results = []
        for stop, (total, offset) in zip(stops, sums, strict=True):
            point = np.asarray(self.set.lmo(total.reshape(self.set.shape)), dtype=float)
            value = float(total @ point.ravel() + offset)
            results.append(Comparator(horizon=stop, point=point, value=value, gap=0.0))
        return results

    def _ensure_reset(self) -> None:
        """The data need no seed, but reading chunks does: fix one if none was drawn."""
        if self._seed is None:
            self.reset(np.random.default_rng(0))

    def _constants(self) -> tuple[float, float]:
        """(G, M) over K from the data, chunk by chunk (module docstring)."""
        self._ensure_reset()
        largest_norm, largest_value = 0.0, 0.0
        for _, _, params, part in self.chunks(0, self.horizon):
            theta, offset = params["theta"][part], params["offset"][part]
            largest_norm = max(largest_norm, float(np.sqrt(row_dot(theta, theta)).max()))
            directions = theta.reshape(-1, *self.set.shape)
            for sign in (1.0, -1.0):
                vertices = np.asarray(self.set.lmo_many(sign * directions), dtype=float)
                values = row_dot(theta, vertices.reshape(len(theta), -1)) + offset
                largest_value = max(largest_value, float(np.abs(values).max()))
        return largest_norm, largest_value


def from_array(convex_set: ConvexSet, thetas: Any, offsets: Any = None) -> ArrayLoss:
    """Linear losses f_t(x) = <thetas[t], x> + offsets[t] on ``convex_set``, t < len(thetas).

    Args:
        convex_set: K, any :class:`~bco_gym.sets.ConvexSet` (a user-defined one too).
        thetas: an array or ``numpy.memmap`` of shape (T, *K.shape), real numbers (it is
            read chunk by chunk, never copied whole).
        offsets: b_t, an array of shape (T,), or None for zeros.

    Returns:
        An :class:`ArrayLoss` with ``horizon`` T, true constants G and M, and an exact
        comparator; ``BanditConvexEnv(convex_set, losses)`` takes its horizon from it.

    Raises:
        TypeError: ``convex_set`` is not a ConvexSet, or ``thetas``/``offsets`` are not
            arrays of real numbers (bool, complex, object and string dtypes are refused).
        ValueError: a wrong shape (the message shows the expected one) or an empty array.
        InvalidLossError: a NaN or infinite entry (the message names the round).
    """
    return ArrayLoss(convex_set, thetas, offsets)


def _real_array(value: Any, label: str) -> np.ndarray:
    array = value if isinstance(value, np.ndarray) else np.asarray(value)
    if array.dtype.kind not in "iuf":
        raise TypeError(
            f"from_array: {label} must hold real numbers (integer or float dtype), "
            f"got dtype {array.dtype} ({type(value).__name__})"
        )
    return array


def _check_thetas(convex_set: ConvexSet, thetas: Any) -> np.ndarray:
    array = _real_array(thetas, "thetas")
    expected = ", ".join(map(str, ("T", *convex_set.shape)))
    if array.ndim != 1 + len(convex_set.shape) or array.shape[1:] != convex_set.shape:
        raise ValueError(
            f"from_array: thetas has shape {array.shape}, expected ({expected}) "
            f"for T rounds on {convex_set!r}"
        )
    if len(array) == 0:
        raise ValueError("from_array: thetas is empty (T = 0); at least one round is needed")
    _check_finite(array, "thetas")
    return array


def _check_offsets(offsets: Any, horizon: int) -> np.ndarray:
    if offsets is None:
        return np.zeros(horizon)
    array = _real_array(offsets, "offsets")
    if array.shape != (horizon,):
        raise ValueError(f"from_array: offsets has shape {array.shape}, expected ({horizon},)")
    _check_finite(array, "offsets")
    return np.asarray(array, dtype=float)


def _check_finite(array: np.ndarray, label: str, rows: int = 4096) -> None:
    """InvalidLossError naming the first round with a NaN or infinite entry (chunked)."""
    for first in range(0, len(array), rows):
        block = np.asarray(array[first : first + rows], dtype=float).reshape(
            min(rows, len(array) - first), -1
        )
        bad = np.flatnonzero(~np.isfinite(block).all(axis=1))
        if bad.size:
            t = first + int(bad[0])
            raise InvalidLossError(
                f"from_array: {label}[{t}] (round {t}) holds a non-finite entry "
                f"({float(block[bad[0]][~np.isfinite(block[bad[0]])][0])!r}); losses must be finite"
            )


__all__ = ["ArrayLoss", "from_array"]
