"""Linear losses a user brings as an array: f_t(x) = <theta_t, x> + b_t.

:func:`from_array` takes an array (copied, read-only) or a ``numpy.memmap`` (read in
place through a read-only view, chunk by chunk, never loaded whole; a chunk changed in
the file after construction is refused when read) of shape (T, *K.shape) holding
theta_0, ..., theta_{T-1}, and optional offsets b_t of shape (T,) (default 0; copied).
Unlike the ``linear`` family, which is <theta_t, x - c> around the set's centre, the
losses here are exactly the user's <theta_t, x> + b_t. The horizon is T.

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

from bco_gym import portable
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
        thetas: the (T, *K.shape) data, never the caller's writable array: a private
            read-only copy of an in-memory array, or a read-only view of a
            ``numpy.memmap`` (read in place, chunk by chunk, never copied whole).
        offsets: the (T,) float64 offsets, a private read-only copy (zeros when none
            were given).
        read_in_place: True when ``thetas`` is a view of the caller's memmap. Its file
            can still be changed by whoever holds it writable; every chunk is
            fingerprinted when the constants are computed and re-checked on every
            later read, and a changed chunk raises :class:`~bco_gym.errors.InvalidLossError`
            naming its rounds (the constants G, M and the digest describe the data read
            at construction, not a changed file).
    """

    name = "array"

    def __init__(self, convex_set: ConvexSet, thetas: Any, offsets: Any = None):
        super().__init__(convex_set)
        self.thetas, self.read_in_place = _private(_check_thetas(convex_set, thetas))
        self.horizon = len(self.thetas)
        self.offsets, _ = _private(_check_offsets(offsets, self.horizon))
        # Fingerprints of a memmap's chunks, taken on the first read (module docstring).
        self._fingerprints: dict[int, int] | None = {} if self.read_in_place else None
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
        thetas = f"{type(self.thetas).__name__} of shape {self.thetas.shape}"
        return f"ArrayLoss({self.set!r}, thetas={thetas}, horizon={self.horizon})"

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
        if self._fingerprints is None:  # a private read-only copy
            theta = np.asarray(self.thetas[rows], dtype=float).reshape(-1, self.set.dim)
        else:  # a memmap read in place: copy the chunk, then check it is the one first read
            theta = np.array(self.thetas[rows], dtype=float).reshape(-1, self.set.dim)
            self._check_fingerprint(first // self.chunk_size, rows, theta)
        return {"theta": theta, "offset": self.offsets[rows]}

    def _check_fingerprint(self, index: int, rows: slice, theta: np.ndarray) -> None:
        """Record chunk ``index``'s fingerprint on its first read; refuse a changed chunk."""
        assert self._fingerprints is not None
        fingerprint = int(np.ascontiguousarray(theta).view(np.uint64).sum(dtype=np.uint64))
        known = self._fingerprints.setdefault(index, fingerprint)
        if known != fingerprint:
            raise InvalidLossError(
                f"from_array: the memmap's rounds {rows.start}..{rows.stop - 1} changed after "
                "from_array read them (the file was written since); its constants G, M and "
                "digest describe the data read then. Build the losses again from the new data"
            )

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
            value = float(portable.dot(total, point) + offset)
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
        for first, _, params, part in self.chunks(0, self.horizon):
            theta, offset = params["theta"][part], params["offset"][part]
            with np.errstate(over="ignore", invalid="ignore"):
                norms = np.sqrt(row_dot(theta, theta))
                _check_representable(norms, first, "||theta_t||", "thetas")
                largest_norm = max(largest_norm, float(norms.max()))
                directions = theta.reshape(-1, *self.set.shape)
                for sign in (1.0, -1.0):
                    vertices = np.asarray(self.set.lmo_many(sign * directions), dtype=float)
                    values = row_dot(theta, vertices.reshape(len(theta), -1)) + offset
                    _check_representable(values, first, "|f_t(x)| over K", "data")
                    largest_value = max(largest_value, float(np.abs(values).max()))
        if largest_norm == 0.0:
            raise ValueError(
                f"from_array: every theta_t is zero (all {self.horizon} rounds): the losses "
                "are constant on K (G = 0), there is nothing to learn; give non-zero thetas"
            )
        if largest_value == 0.0:
            raise ValueError(
                f"from_array: every f_t is 0 on K (M = 0) although G = {largest_norm!r}: each "
                f"theta_t is orthogonal to {self.set!r} and cancelled by its offset; the "
                "losses are constant on K, there is nothing to learn"
            )
        return largest_norm, largest_value


def from_array(convex_set: ConvexSet, thetas: Any, offsets: Any = None) -> ArrayLoss:
    """Linear losses f_t(x) = <thetas[t], x> + offsets[t] on ``convex_set``, t < len(thetas).

    The data are never read through the caller's writable array: an in-memory array
    (and the offsets) is copied, read-only; a ``numpy.memmap`` is read in place through
    a read-only view, never loaded whole, its chunks fingerprinted so that a file
    changed afterwards is refused when read (:class:`ArrayLoss`, ``read_in_place``).

    Args:
        convex_set: K, any :class:`~bco_gym.sets.ConvexSet` (a user-defined one too).
        thetas: an array or ``numpy.memmap`` of shape (T, *K.shape), real numbers (a
            memmap is read chunk by chunk, never copied whole).
        offsets: b_t, an array of shape (T,), or None for zeros.

    Returns:
        An :class:`ArrayLoss` with ``horizon`` T, true constants G and M, and an exact
        comparator; ``BanditConvexEnv(convex_set, losses)`` takes its horizon from it.

    Raises:
        TypeError: ``convex_set`` is not a ConvexSet, or ``thetas``/``offsets`` are not
            arrays of real numbers (bool, complex, object and string dtypes are refused).
        ValueError: a wrong shape (the message shows the expected one), an empty or
            ragged array, all-zero thetas or losses that vanish on K (constant losses),
            or entries so large that a norm or a loss overflows float64.
        InvalidLossError: a NaN or infinite entry (the message names the round).
    """
    return ArrayLoss(convex_set, thetas, offsets)


def _private(array: np.ndarray) -> tuple[np.ndarray, bool]:
    """(a read-only array the caller cannot write through, whether it is a memmap view)."""
    if isinstance(array, np.memmap):
        view = array.view()
        view.flags.writeable = False
        return view, True
    copy = np.array(array, copy=True)
    copy.flags.writeable = False
    return copy, False


def _check_representable(values: np.ndarray, first: int, what: str, label: str) -> None:
    """ValueError naming the round whose finite data overflow float64 in ``what``."""
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        t = first + int(bad[0])
        raise ValueError(
            f"from_array: round {t}: {what} overflows float64 ({float(values[bad[0]])!r}) "
            f"although the {label} are finite: entries are too large; rescale them "
            "(losses and gradients must stay below about 1e154 in size)"
        )


def _real_array(value: Any, label: str) -> np.ndarray:
    if isinstance(value, np.ndarray):
        array = value
    else:
        try:
            array = np.asarray(value)
        except (ValueError, TypeError) as error:
            raise ValueError(
                f"from_array: {label} is not a rectangular array of numbers ({error})"
            ) from None
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
