"""Regret on intervals: adaptive, dynamic and switching regret of linear losses, streamed.

For losses f_t(x) = <theta_t, x> + b_t on K (rounds numbered from 0 in code) and plays
y_t, the regret on an interval I of rounds against its best fixed point is

    R(I) = sum_{t in I} f_t(y_t) - min_{x in K} sum_{t in I} f_t(x)
         = sum_I f_t(y_t) - <Theta_I, lmo(Theta_I)> - sum_I b_t,    Theta_I = sum_I theta_t,

exact with one linear minimisation per interval (on the origin-centred Euclidean ball
the closed form min_K <Theta, x> = -r ||Theta||, with ||Theta|| the square root of the
pairwise sum of the squares, :func:`ball_best_values`). :class:`IntervalRegret` computes, over
the dyadic (geometric) cover of Hazan & Seshadhri (2009),
{[s, s + 2^k) : s a multiple of 2^k, the interval inside [0, T)}, k = 0..floor(log2 T):

* the **adaptive regret**: the largest regret over the dyadic intervals and the whole run,
  max(max_I R(I) over the cover, R([0, T))). When T is not a power of two [0, T) is not in
  the cover, and without it the maximum could fall below the static regret R([0, T)); the
  whole run's sums are its dyadic pieces' (the top block and the open blocks) added in time
  order, so it is never below the static regret (up to the sums' rounding, ~1e-12
  relatively: the static regret of a result is summed correctly rounded, these pairwise);
* the maximum of R(I) over the cover's intervals of each length 2^k (the
  interval-regret-against-length curve);
* the **dynamic regret** sum_t f_t(y_t) - sum_t min_K f_t = sum_t R({t}) (the cover's
  level 0);
* given segment boundaries (``linear-switching``), the **switching regret**
  sum_t f_t(y_t) - sum_j min_K sum_{t in segment j} f_t: the best point per segment.

Streaming. The cover is a binary tree: a level-k block is the sum of its two level-(k-1)
halves. Rounds come in spans (:meth:`IntervalRegret.update`, any lengths, in order);
each level keeps at most one open block (its finished left half), so memory is
O(log T) vectors of K's dimension (plus O(log T) per segment). A block's sums are its
halves' sums added in one fixed order, so every value is the same bit for bit however
the rounds are split into spans (one span, per-round, per-block, or per chunk): the
single, batched and Gymnasium runs agree exactly. Sums are pairwise (error O(log T)
ulps), not correctly rounded; a brute-force computation agrees to ~1e-12 relatively.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bco_gym.losses.base import row_dot
from bco_gym.sets.balls import L2Ball
from bco_gym.sets.base import ConvexSet

# the columns after theta in a block's row: sum b_t, sum f_t(y_t), sum of per-round gaps
_CONSTANT, _PLAYED, _GAP, _EXTRA = 0, 1, 2, 3
# squared norms in this range have a square root free of overflow and underflow
_SAFE_SQUARES = (1e-290, 1e290)


def ball_best_values(thetas: np.ndarray, radius: float) -> np.ndarray:
    """min over the ball {||x|| <= radius} of <theta, x> = -radius ||theta|| for each row.

    ||theta|| is the square root of numpy's pairwise sum of the row's squares
    (:func:`~bco_gym.portable.row_dot`), taken on the row scaled by its largest entry
    where the sum of squares would overflow or underflow. A sum with no BLAS call, so a
    compiled update (:mod:`bco_gym.agents.kernels.intervals`) computes the same floats
    without calling back into numpy; the value through the set's own LMO,
    <theta, lmo(theta)>, is other arithmetic and may differ in the last bit (R(I) agrees
    with it to ~1e-15 relatively).
    """
    with np.errstate(over="ignore", under="ignore"):  # such rows are rescaled below
        squares = row_dot(thetas, thetas)
    norms = np.sqrt(squares)
    unsafe = ~((squares > _SAFE_SQUARES[0]) & (squares < _SAFE_SQUARES[1]))
    for row in np.flatnonzero(unsafe).tolist():
        largest = float(np.max(np.abs(thetas[row])))
        if largest == 0.0:
            norms[row] = 0.0
        else:
            scaled = thetas[row : row + 1] / largest
            norms[row] = largest * math.sqrt(float(row_dot(scaled, scaled)[0]))
    return -radius * norms


@dataclass(frozen=True)
class IntervalMetrics:
    """What :class:`IntervalRegret` reports after T rounds.

    Attributes:
        adaptive_regret: the largest regret over the dyadic intervals and the whole run,
            max(max over the dyadic cover of R(I), R([0, T))).
        dynamic_regret: sum_t f_t(y_t) - sum_t min_K f_t.
        lengths: the interval lengths 2^k of the cover, k = 0..floor(log2 T).
        max_interval_regret: max R(I) over the cover's intervals of each length.
        worst_interval: (start, length) of an interval attaining the adaptive regret:
            of the shortest length attaining it, the earliest; (0, T) when only the whole
            run attains it.
        whole_run_regret: R([0, T)), the regret of the whole run against its best fixed
            point (from the tracker's pairwise sums; the cover's top block when T is a
            power of two).
        switching_regret: sum_t f_t(y_t) - sum_j min_K sum_{segment j} f_t, or None
            without segments.
        segments: the segment start rounds given (empty without segments).
    """

    adaptive_regret: float
    dynamic_regret: float
    lengths: list[int]
    max_interval_regret: list[float]
    worst_interval: tuple[int, int]
    whole_run_regret: float
    switching_regret: float | None = None
    segments: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready view (for a result's metadata)."""
        return {
            "adaptive_regret": self.adaptive_regret,
            "dynamic_regret": self.dynamic_regret,
            "lengths": list(self.lengths),
            "max_interval_regret": list(self.max_interval_regret),
            "worst_interval": list(self.worst_interval),
            "whole_run_regret": self.whole_run_regret,
            "switching_regret": self.switching_regret,
            "segments": list(self.segments),
        }


def dyadic_pieces(start: int, stop: int) -> list[tuple[int, int]]:
    """[start, stop) as the fewest aligned dyadic blocks: (level k, index j), in time order."""
    pieces = []
    while start < stop:
        level = (start & -start).bit_length() - 1 if start else (stop - start).bit_length() - 1
        while start + (1 << level) > stop:
            level -= 1
        pieces.append((level, start >> level))
        start += 1 << level
    return pieces


class IntervalRegret:
    """Adaptive, dynamic and switching regret of linear losses, fed span by span.

    Args:
        convex_set: K (its ``lmo_many`` gives each interval's best point).
        horizon: T, the rounds that will be fed.
        segments: optional segment start rounds (sorted, the first 0, all < T); the
            switching regret compares with the best point of each segment.

    Feed ``update(thetas, constants, played)`` with the next rounds' theta_t (rows of K's
    flattened dimension), b_t and f_t(y_t); :meth:`result` after all T rounds.

    A compiled update may be installed (:meth:`use_rounds`, from the engine, which knows
    the kernels): it adds the rounds one at a time to the same state, with the same
    floats in the same order, so the result does not depend on which update ran.
    """

    def __init__(self, convex_set: ConvexSet, horizon: int, segments: Sequence[int] | None = None):
        self.set = convex_set
        self.horizon = int(horizon)
        self.levels = self.horizon.bit_length()  # k = 0..floor(log2 T)
        # A block is a row [sum theta_t (dim), sum b_t, sum f_t(y_t), sum of per-round gaps
        # f_t(y_t) - min_K f_t]. Per level, the open block waiting for its right half (the
        # block just before the next one to come at that level); the top level's block.
        width = int(np.prod(convex_set.shape)) + _EXTRA
        self._open_rows = np.zeros((self.levels, width))
        self._has_open = np.zeros(self.levels, dtype=np.bool_)
        self._top_row = np.zeros(width)  # the top level's block is never paired
        self._has_top = np.zeros(1, dtype=np.bool_)
        self._rounds: Any = None  # a compiled update (use_rounds)
        self._max = np.full(self.levels, -np.inf)
        self._argmax = np.zeros(self.levels, dtype=np.int64)
        self._fed = 0
        self.segments = _check_segments(segments, self.horizon)
        # The blocks the segments are made of (dyadic_pieces), kept as they complete: per
        # level k its wanted indices, sorted, at _wanted_flat[_wanted_start[k] :
        # _wanted_start[k + 1]], of which the first _wanted_next[k] are kept, in the same
        # rows of _piece_rows. Blocks complete in time order at each level, so a pointer
        # per level finds them (the NumPy update and the compiled one alike).
        wanted = self._segment_pieces()
        self._wanted_start = np.zeros(self.levels + 1, dtype=np.int64)
        self._wanted_start[1:] = np.cumsum([len(w) for w in wanted])
        self._wanted_flat = np.concatenate([np.zeros(0, dtype=np.int64), *wanted])
        self._wanted_next = np.zeros(self.levels, dtype=np.int64)
        self._piece_rows = np.zeros((len(self._wanted_flat), width))
        self._piece_row = {
            (level, int(index)): int(self._wanted_start[level]) + k
            for level, indices in enumerate(wanted)
            for k, index in enumerate(indices.tolist())
        }

    def _segment_pieces(self) -> list[np.ndarray]:
        if not self.segments:  # none wanted at any level
            return [np.zeros(0, dtype=np.int64)] * self.levels
        wanted: list[set[int]] = [set() for _ in range(self.levels)]
        bounds = [*self.segments, self.horizon]
        for start, stop in itertools.pairwise(bounds):
            for level, index in dyadic_pieces(start, stop):
                wanted[level].add(index)
        return [np.array(sorted(w), dtype=np.int64) for w in wanted]

    def use_rounds(self, rounds: Any) -> None:
        """Feed the rounds through ``rounds(thetas, constants, played, first, open_rows,
        has_open, top_row, has_top, maxima, argmax, wanted_flat, wanted_start,
        wanted_next, piece_rows)``, a compiled update of this state
        (:class:`bco_gym.agents.kernels.intervals.IntervalSpans`, bound to K's oracle)."""
        self._rounds = rounds

    def update(self, thetas: np.ndarray, constants: np.ndarray, played: np.ndarray) -> None:
        """Add the next ``len(played)`` rounds: theta_t (m, dim), b_t (m,), f_t(y_t) (m,).

        Nothing fed is kept by reference: the caller may overwrite its arrays afterwards.
        The blocks the span completes are summed level by level (each parent its two
        halves added), then all their best values come from one batched LMO.
        """
        count = len(played)
        if count == 0:
            return
        if self._fed + count > self.horizon:
            raise ValueError(
                f"IntervalRegret: {self._fed + count} rounds fed, past the horizon {self.horizon}"
            )
        thetas = np.asarray(thetas, dtype=float).reshape(count, -1)
        if self._rounds is not None:
            first = self._fed
            self._fed += count
            self._rounds(
                np.ascontiguousarray(thetas),
                np.ascontiguousarray(constants, dtype=float).reshape(count),
                np.ascontiguousarray(played, dtype=float).reshape(count),
                first,
                self._open_rows,
                self._has_open,
                self._top_row,
                self._has_top,
                self._max,
                self._argmax,
                self._wanted_flat,
                self._wanted_start,
                self._wanted_next,
                self._piece_rows,
            )
            return
        dim = thetas.shape[1]
        nodes = np.empty((count, dim + _EXTRA))
        nodes[:, :dim] = thetas
        nodes[:, dim + _CONSTANT] = np.asarray(constants, dtype=float).reshape(count)
        nodes[:, dim + _PLAYED] = np.asarray(played, dtype=float).reshape(count)
        best = self._best(thetas) + nodes[:, dim + _CONSTANT]
        nodes[:, dim + _GAP] = nodes[:, dim + _PLAYED] - best
        first = self._fed
        self._fed += count
        self._record(0, first, nodes, nodes[:, dim + _GAP])
        finished = []  # (level, first index, blocks) of the levels above 0
        level = 0
        while level < self.levels - 1:
            first, nodes = self._pair(level, first, nodes)
            if not len(nodes):
                break
            level += 1
            finished.append((level, first, nodes))
        if level == self.levels - 1:  # the top level's block is never paired
            self._top_row[:] = nodes[0]
            self._has_top[0] = True
        if finished:
            stacked = np.concatenate([blocks for _, _, blocks in finished])
            best = self._best(np.ascontiguousarray(stacked[:, :dim])) + stacked[:, dim + _CONSTANT]
            regret = stacked[:, dim + _PLAYED] - best
            offset = 0
            for level, first, blocks in finished:
                self._record(level, first, blocks, regret[offset : offset + len(blocks)])
                offset += len(blocks)

    def _best(self, thetas: np.ndarray) -> np.ndarray:
        """min_K <theta, x> for each row (one batched LMO; the ball's closed form)."""
        if type(self.set) is L2Ball:
            flat = thetas.reshape(len(thetas), -1)
            if not np.isfinite(flat).all():  # refused as the set's LMO refuses them
                self.set.lmo_many(thetas.reshape(len(thetas), *self.set.shape))
            return ball_best_values(flat, float(self.set.radius))
        points = self.set.lmo_many(thetas.reshape(len(thetas), *self.set.shape))
        return row_dot(thetas, np.asarray(points, dtype=float).reshape(len(thetas), -1))

    def _record(self, level: int, first: int, blocks: np.ndarray, regret: np.ndarray) -> None:
        """The level's running maximum; the blocks a segment is made of, kept."""
        where = int(np.argmax(regret))
        if regret[where] > self._max[level]:
            self._max[level] = regret[where]
            self._argmax[level] = first + where
        start, stop = self._wanted_start[level], self._wanted_start[level + 1]
        while start + self._wanted_next[level] < stop:
            row = start + self._wanted_next[level]
            index = int(self._wanted_flat[row])
            if index >= first + len(blocks):
                break
            if index < first:
                raise RuntimeError("IntervalRegret: a wanted block was passed over (bug)")
            self._piece_rows[row] = blocks[index - first]
            self._wanted_next[level] += 1

    def _pair(self, level: int, first: int, blocks: np.ndarray) -> tuple[int, np.ndarray]:
        """(first index, blocks) of the finished parents of ``blocks`` (with this level's
        open block), at level + 1: each parent is its left half plus its right half."""
        if self._has_open[level]:
            first, blocks = first - 1, np.concatenate([self._open_rows[level : level + 1], blocks])
        if first % 2:
            raise RuntimeError("IntervalRegret: a right half arrived without its left (bug)")
        pairs = len(blocks) // 2
        # the open block is copied: the caller may reuse the arrays it fed
        self._has_open[level] = len(blocks) % 2
        if self._has_open[level]:
            self._open_rows[level] = blocks[-1]
        return first // 2, blocks[0 : 2 * pairs : 2] + blocks[1 : 2 * pairs : 2]

    def result(self) -> IntervalMetrics:
        """The metrics after all T rounds (ValueError before)."""
        if self._fed != self.horizon:
            raise ValueError(
                f"IntervalRegret: {self._fed} of {self.horizon} rounds fed; feed them all first"
            )
        # [0, T) is the top level's block (if any) followed by the open blocks of the
        # lower levels from high to low: sum their per-round gaps in that time order.
        lower = [self._open_rows[k] for k in reversed(range(self.levels)) if self._has_open[k]]
        pieces = [self._top_row] * bool(self._has_top[0]) + lower
        dynamic = 0.0
        for row in pieces:
            dynamic += float(row[-_EXTRA + _GAP])
        whole = self._whole_run(pieces)
        level = int(np.argmax(self._max))
        if whole > self._max[level]:  # only the whole run attains it
            adaptive, worst = whole, (0, self.horizon)
        else:
            adaptive, worst = (
                float(self._max[level]),
                (int(self._argmax[level]) << level, 1 << level),
            )
        return IntervalMetrics(
            adaptive_regret=adaptive,
            dynamic_regret=float(dynamic),
            lengths=[1 << k for k in range(self.levels)],
            max_interval_regret=[float(v) for v in self._max],
            worst_interval=worst,
            whole_run_regret=whole,
            switching_regret=self._switching(),
            segments=list(self.segments),
        )

    def _whole_run(self, pieces: list[np.ndarray]) -> float:
        """R([0, T)) from its dyadic pieces (rows, in time order), added left to right."""
        dim = self._top_row.size - _EXTRA
        total = pieces[0].copy()
        for row in pieces[1:]:
            total += row
        best = float(self._best(total[np.newaxis, :dim])[0]) + float(total[dim + _CONSTANT])
        return float(total[dim + _PLAYED]) - best

    def _switching(self) -> float | None:
        if not self.segments:
            return None
        total = 0.0
        bounds = [*self.segments, self.horizon]
        for start, stop in itertools.pairwise(bounds):
            dim = self._piece_rows.shape[1] - _EXTRA
            rows = [self._piece_rows[self._piece_row[key]] for key in dyadic_pieces(start, stop)]
            theta = rows[0][:dim].copy()
            constant, played = float(rows[0][dim + _CONSTANT]), float(rows[0][dim + _PLAYED])
            for row in rows[1:]:
                theta += row[:dim]
                constant += float(row[dim + _CONSTANT])
                played += float(row[dim + _PLAYED])
            total += played - (float(self._best(theta[np.newaxis])[0]) + constant)
        return total


def _check_segments(segments: Sequence[int] | None, horizon: int) -> list[int]:
    if segments is None:
        return []
    values = [int(s) for s in segments]
    if not values or values[0] != 0 or values != sorted(set(values)) or values[-1] >= horizon:
        raise ValueError(
            f"segments {list(segments)!r} must be strictly increasing start rounds, the first 0 "
            f"and all below the horizon {horizon}"
        )
    return values


def interval_metrics(losses: Any, played: np.ndarray, horizon: int | None = None) -> Any:
    """:class:`IntervalMetrics` of plays with per-round losses ``played`` on ``losses``.

    Reads the sequence's linear terms chunk by chunk (see
    :meth:`~bco_gym.losses.base.LossSequence.linear_terms`). Returns a string, the
    reason, when the family is not linear (no exact interval comparator).
    """
    horizon = len(played) if horizon is None else horizon
    reason = losses.changing_reason()
    if reason is not None:
        return reason
    tracker = IntervalRegret(losses.set, horizon, losses.segment_starts(horizon))
    for start, stop, params, part in losses.chunks(0, horizon):
        thetas, constants = losses.linear_terms(params, part)
        tracker.update(thetas, constants, played[start:stop])
    return tracker.result()
