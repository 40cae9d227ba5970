"""Linear losses: a stochastic adversary with a clear best action, and a switching one.

``linear``:

    f_t(x) = <theta_t, x - c>,   theta_t = mu + s * w_t,

with c the set's centre, mu a fixed vector of V (the direction space of aff(K)) with
||mu|| = ``mean_norm`` and a uniformly random direction drawn at reset, and w_t i.i.d.
uniform in the unit ball of V, scaled by ``noise`` = s.

``linear-switching``: the same with a mean that changes every ``period`` rounds,

    theta_t = mu_{floor(t / period)} + s * w_t,

mu_p of norm ``mean_norm`` in an independent uniform direction of V for each period p,
drawn from its own generator ``default_rng([seed, 2, p])`` (so it does not depend on how
rounds are read). Non-stationary but oblivious: the whole sequence is fixed at reset.

Constants (true bounds over K). theta_t lies in V and ||theta_t|| <= mean_norm + noise,
so the gradient norm is at most G = mean_norm + noise, and for x in K,
|f_t(x)| <= ||theta_t|| ||x - c|| <= G R with R the outer radius: M = G R.

Comparator: exact (gap 0), one LMO on the summed vectors,
x* = lmo(sum_{t<T'} theta_t), value sum_t <theta_t, x* - c>.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from bco_gym import portable
from bco_gym.losses.base import (
    Comparator,
    LossSequence,
    Params,
    check_checkpoints,
    check_number,
    row_dot,
)
from bco_gym.sets import (
    BirkhoffPolytope,
    FlowPolytope,
    Hypercube,
    L1Ball,
    L2Ball,
    Simplex,
)
from bco_gym.sets.balls import euclidean_norm
from bco_gym.sets.base import ConvexSet, ShrunkSet


def unit_ball_in_tangent(convex_set: ConvexSet, rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` i.i.d. points uniform in the unit ball of V, flattened to (size, dim)."""
    g = convex_set.tangent_many(rng.standard_normal((size, *convex_set.shape)))
    g = g.reshape(size, -1)
    norms = np.sqrt(row_dot(g, g))[:, np.newaxis]
    radii = portable.power(rng.uniform(size=(size, 1)), 1.0 / convex_set.aff_dim)
    return g * (radii / np.maximum(norms, np.finfo(float).tiny))


def _contiguous_floats(*arrays: np.ndarray) -> bool:
    """Whether every array is a C-contiguous float64 ndarray (what the compiled code takes)."""
    return all(
        isinstance(a, np.ndarray) and a.dtype == np.float64 and a.flags.c_contiguous for a in arrays
    )


def unit_direction_in_tangent(convex_set: ConvexSet, rng: np.random.Generator) -> np.ndarray:
    """A direction uniform on the unit sphere of V, flattened to (dim,)."""
    direction = convex_set.tangent(rng.standard_normal(convex_set.shape)).ravel()
    return direction / euclidean_norm(direction)


class LinearLoss(LossSequence):
    """f_t(x) = <theta_t, x - c> with theta_t = mu + noise * (uniform in the unit ball of V).

    Args:
        convex_set: the feasible set K.
        mean_norm: ||mu||, the strength of the best action (default 0.5).
        noise: radius of the per-round noise (default 0.5); ||theta_t|| <= mean_norm + noise.
    """

    stationary = True

    name = "linear"
    _thetas: Any = None  # a compiled draw of theta_t (use_kernel), or None
    _values: Any = None  # a compiled evaluation (use_kernel), or None

    def __init__(self, convex_set: ConvexSet, mean_norm: float = 0.5, noise: float = 0.5):
        super().__init__(convex_set)
        self.mean_norm = check_number(self.name, "mean_norm", mean_norm)
        self.noise = check_number(self.name, "noise", noise)
        if self.mean_norm + self.noise <= 0:
            raise ValueError(f"{self.name} loss: mean_norm + noise must be > 0 (both are 0)")
        self._center_flat = np.asarray(convex_set.center, dtype=float).ravel()

    @property
    def lipschitz(self) -> float:
        return self.mean_norm + self.noise

    @property
    def bound(self) -> float:
        return self.lipschitz * self.set.outer_radius

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "mean_norm": self.mean_norm, "noise": self.noise}

    def _draw_globals(self, rng: np.random.Generator) -> Params:
        return {"mean": self.mean_norm * unit_direction_in_tangent(self.set, rng)}

    def _means(self, first: int, size: int) -> np.ndarray:
        """mu for rounds first..first+size-1 (broadcastable to (size, dim))."""
        return self._globals["mean"]

    def use_kernel(self, thetas: Any, values: Any = None) -> bool:
        """Draw the chunks' theta_t with ``thetas``, a compiled form of the same operations
        (:func:`bco_gym.agents.kernels.losses.linear_thetas`; the same bits, in one pass),
        where it applies: a set of one axis whose direction space is all of R^n; and
        evaluate contiguous spans with ``values``
        (:func:`~bco_gym.agents.kernels.losses.linear_values`, the same floats). Returns
        whether the draw was installed (the compiled loops install both)."""
        applies = len(self.set.shape) == 1 and self.set.aff_dim == self.set.dim
        self._thetas = thetas if applies else None
        self._values = values
        return applies

    def _draw_chunk(self, rng: np.random.Generator, first: int, size: int) -> Params:
        thetas = self._thetas
        if thetas is None:
            noise = self.noise * unit_ball_in_tangent(self.set, rng, size)
            theta = self._means(first, size) + noise
        else:  # the same draws and operations, compiled (use_kernel)
            dim = self._center_flat.size  # the set's (full) dimension, = aff_dim here
            normals = rng.standard_normal((size, dim))
            uniforms = rng.uniform(size=size)  # the power is taken in the kernel
            means = np.asarray(self._means(first, size), dtype=float).reshape(-1, dim)
            theta, offset = np.empty((size, dim)), np.empty(size)
            thetas(
                normals,
                uniforms,
                1.0 / dim,
                float(self.noise),
                means,
                self._center_flat,
                theta,
                offset,
                np.empty(dim),
            )
            return {"theta": theta, "offset": offset}  # offset: portable.matvec's floats
        return {"theta": theta, "offset": portable.matvec(theta, self._center_flat)}

    def _evaluate(self, params: Params, part: slice, points: np.ndarray) -> np.ndarray:
        theta = params["theta"][part]
        flat = points.reshape(len(points), -1)
        if self._values is not None and _contiguous_floats(theta, flat, params["offset"]):
            values = np.empty(len(flat))  # the same floats, compiled (use_kernel)
            self._values(theta, flat, params["offset"][part], -1.0, values, np.empty(flat.shape[1]))
            return values
        return row_dot(theta, flat) - params["offset"][part]

    def _gradient(self, params: Params, offset: int, x: np.ndarray) -> np.ndarray:
        return params["theta"][offset].reshape(self.set.shape).copy()

    def summed_vectors(self, checkpoints: Sequence[int]) -> list[np.ndarray]:
        """sum_{t < T'} theta_t for each prefix length T' (streamed chunk by chunk)."""
        sums = self.prefix_sums(checkpoints, lambda params, part: (params["theta"][part].sum(0),))
        return [total for (total,) in sums]

    def comparator(self, checkpoints: Sequence[int]) -> list[Comparator]:
        return linear_comparators(self.set, checkpoints, self.summed_vectors(checkpoints))

    def linear_terms(self, params: Params, part: slice) -> tuple[np.ndarray, np.ndarray]:
        return params["theta"][part], -params["offset"][part]

    def changing_reason(self) -> str | None:
        return None


def linear_comparators(
    convex_set: ConvexSet, checkpoints: Sequence[int], totals: Sequence[np.ndarray]
) -> list[Comparator]:
    """Exact comparators of sum_t <theta_t, x - c> from the summed vectors (one LMO each).

    Point lmo(total) and value ``total @ (point - c)`` at each checkpoint: for all of them
    in one ``lmo_many`` and one :func:`~bco_gym.portable.row_dot` (each row's pairwise sum) where
    the set's batched LMO is its single one row by row (``_batched_lmo_is_single``),
    else one ``lmo`` and one dot each: the same floats either way.
    """
    stops = check_checkpoints(checkpoints)
    center = np.asarray(convex_set.center, dtype=float).ravel()
    rows = _batchable_rows(convex_set, totals, len(stops))
    if rows is not None:
        points = convex_set.lmo_many(rows.reshape(len(rows), *convex_set.shape))
        values = portable.row_dot(rows, points.reshape(len(rows), -1) - center).tolist()
        return [
            Comparator(stop, point, value, 0.0)
            for stop, point, value in zip(stops, points, values, strict=True)
        ]
    results = []
    for stop, total in zip(stops, totals, strict=True):
        point = np.asarray(convex_set.lmo(total.reshape(convex_set.shape)), dtype=float)
        value = portable.dot(total, point.ravel() - center)
        results.append(Comparator(horizon=stop, point=point, value=value, gap=0.0))
    return results


def _batchable_rows(
    convex_set: ConvexSet, totals: Sequence[np.ndarray], count: int
) -> np.ndarray | None:
    """The summed vectors stacked (count, dim) when one ``lmo_many`` may answer them for
    :func:`linear_comparators`: a set whose batched LMO is its single one, and ``count``
    finite float64 vectors of its dimension (else None: the row loop, and its errors)."""
    if len(totals) != count or not _batched_lmo_is_single(convex_set):
        return None
    shape = (convex_set.dim,)
    if not all(isinstance(t, np.ndarray) and t.dtype == float and t.shape == shape for t in totals):
        return None
    rows = np.concatenate(totals).reshape(count, -1)
    return rows if np.isfinite(rows).all() else None


#: The sets whose ``lmo_many`` rows are their ``lmo`` answers bit for bit and whose ``lmo``
#: keeps no state (tests/sets/test_sets_batched.py); the nuclear ball is left out (its
#: batched LMO is a stacked SVD, its single one warm-started ARPACK above 128 a side).
_EXACT_BATCHED_LMO = (L1Ball, L2Ball, Hypercube, Simplex, BirkhoffPolytope, FlowPolytope)


def _batched_lmo_is_single(convex_set: ConvexSet) -> bool:
    """Whether ``convex_set.lmo_many`` gives ``convex_set.lmo``'s answers bit for bit: one
    of the built-in sets of :data:`_EXACT_BATCHED_LMO` (its exact class: a subclass may
    change ``lmo``) or a shrunk one, c + a(K - c), of such a set."""
    if type(convex_set) is ShrunkSet:
        return _batched_lmo_is_single(convex_set.base)
    return type(convex_set) in _EXACT_BATCHED_LMO


class LinearSwitchingLoss(LinearLoss):
    """``linear`` whose mean takes a fresh random direction at every segment's start.

    Args:
        convex_set: the feasible set K.
        mean_norm: ||mu_p|| for every segment p (default 0.5).
        noise: radius of the per-round noise (default 0.5).
        period: rounds per segment (an integer >= 1; default 1000 when ``segments`` is
            not given): segment p is rounds [p period, (p + 1) period).
        segments: instead of ``period``, the number S of segments of the horizon T
            (an integer >= 1): segment p is rounds [floor(p T / S), floor((p + 1) T / S)),
            fixed when the env binds the horizon (``bind_horizon``). The start rounds
            are recorded in ``describe()`` (``"segment_starts"``), so in every result.

    Each segment's mean costs one small generator, so very short segments are slower to
    draw. The switching comparator (best point per segment) is reported by
    :mod:`bco_gym.losses.intervals` from ``segment_starts``.
    """

    stationary = False

    name = "linear-switching"

    def __init__(
        self,
        convex_set: ConvexSet,
        mean_norm: float = 0.5,
        noise: float = 0.5,
        period: int | None = None,
        segments: int | None = None,
    ):
        super().__init__(convex_set, mean_norm=mean_norm, noise=noise)
        if period is not None and segments is not None:
            raise ValueError(
                f"{self.name} loss: give period={period!r} or segments={segments!r}, not both"
            )
        for label, value in (("period", period), ("segments", segments)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1
            ):
                raise ValueError(f"{self.name} loss: {label}={value!r} must be an integer >= 1")
        self.segments = None if segments is None else int(segments)
        self.period = None if segments is not None else int(1000 if period is None else period)
        self._starts: np.ndarray | None = None  # segment starts when ``segments`` is given

    def describe(self) -> dict[str, Any]:
        if self.segments is None:
            return {**super().describe(), "period": self.period}
        starts = None if self._starts is None else self._starts.tolist()
        return {**super().describe(), "segments": self.segments, "segment_starts": starts}

    def bind_horizon(self, horizon: int) -> None:
        if self.segments is None:
            return
        if self.segments > horizon:
            raise ValueError(
                f"{self.name} loss: segments={self.segments} is more than the horizon "
                f"{horizon}; allowed: 1..{horizon}"
            )
        self._starts = (np.arange(self.segments, dtype=np.int64) * horizon) // self.segments

    def segment_starts(self, horizon: int) -> list[int]:
        if self.segments is None:
            assert self.period is not None
            return list(range(0, horizon, self.period))
        if self._starts is None:
            self.bind_horizon(horizon)
        assert self._starts is not None
        return [int(s) for s in self._starts if s < horizon]

    def _draw_globals(self, rng: np.random.Generator) -> Params:
        return {}

    def period_mean(self, index: int) -> np.ndarray:
        """mu_p for segment p = ``index`` (flattened), from default_rng([seed, 2, p])."""
        rng = np.random.default_rng([self.seed, 2, index])
        return self.mean_norm * unit_direction_in_tangent(self.set, rng)

    def _segment_of(self, rounds: np.ndarray) -> np.ndarray:
        if self.segments is None:
            assert self.period is not None
            return rounds // self.period
        if self._starts is None:
            raise RuntimeError(
                f"{self.name} loss with segments={self.segments}: the horizon is not bound; "
                "make it inside an env (BanditConvexEnv binds it) or call bind_horizon(T)"
            )
        return np.searchsorted(self._starts, rounds, side="right") - 1

    def _means(self, first: int, size: int) -> np.ndarray:
        periods = self._segment_of(np.arange(first, first + size))
        lowest = int(periods[0])
        means = np.stack([self.period_mean(p) for p in range(lowest, int(periods[-1]) + 1)])
        return means[periods - lowest]
