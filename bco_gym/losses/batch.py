"""S loss sequences of one family evaluated together: one numpy call for all rows.

:class:`LossBatch` holds S sequences of the same family and parameters, each with its
own seed (the rows of a vector env or of ``run_many``). Round t at S points gives the
(S,) losses ``[sequences[i].loss(t, points[i]) for i]``, and a block of k rounds at
(S, k, *shape) points the (S, k) losses ``[sequences[i].losses(t, points[i]) for i]``,
bit for bit, at a few numpy calls per round and S Python calls per chunk.

How. A family's ``_evaluate(params, part, points)`` reads round j's parameters as
``params[key][part][j]`` and the point ``points[j]``, and nothing else that depends on
the seed (sequence-level parameters are baked into the chunk parameters when a chunk
is drawn). So the S sequences' current chunks, stacked into arrays of shape
(chunk_size, S, ...) (a round's S rows contiguous), evaluated as if rows were rounds
(``params[key][offset]`` for round t = chunk * chunk_size + offset), give every row's own
values. The stacks are refreshed once per chunk. (A long block, of ``ROW_BLOCK_ROUNDS``
rounds or more, copies only its own rounds instead: per chunk it spans, each row's
parameters of those rounds concatenated row after row, (S * rounds, ...), and one
``_evaluate`` call on them, bit-equal for the same reason, without copying every chunk
into the stack and without a Python call per row into the family; a batch of one row
evaluates on its chunk in place.)

What a family must satisfy for this (``batch_evaluable``):

1. every array of ``_draw_chunk``'s dict has the chunk's rounds on its leading axis (the
   same number in every row: a finite sequence's last chunk may be shorter);
2. ``_evaluate`` is row-independent: round j's value depends only on the parameters of
   round j and on points[j] (reductions per row, e.g. :func:`~bco_gym.portable.row_dot`,
   never an ``einsum``/``@`` whose summation order can change with the batch);
3. it reads no seed-dependent state of ``self`` (``self._globals``): the attributes it
   reads (``beta``, ``_center_flat``, ...) follow from the family's parameters and the set,
   equal in all S sequences (:class:`LossBatch` checks that ``describe()`` agrees).

The ten families of :data:`VERIFIED_FAMILIES` satisfy them (checked one by one in
tests/losses/test_losses_batch.py), and so does every family evaluating with one of
their ``_evaluate`` functions (e.g. subclasses of ``LinearLoss`` that only change the
means); a user-defined family opts in with the class attribute ``batch_evaluable = True``.
Any other family is evaluated by a loop over the rows (its own chunks and
``_evaluate``): still exact, S calls per round.

Gradients (full information) use a closed form per verified ``_gradient`` function
(:data:`_GRADIENTS`, written over the leading row axis and equal to ``_gradient`` row by
row, elementwise operations only); other families loop over the rows.

A value that is NaN, infinite, or missing (an empty or short result) raises
:class:`~bco_gym.errors.InvalidLossError` naming the family, the round and the row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from bco_gym.errors import InvalidLossError
from bco_gym.losses.absolute import AbsoluteLoss
from bco_gym.losses.base import LossSequence, Params, row_dot
from bco_gym.losses.completion import CompletionLoss
from bco_gym.losses.costs import AssignmentLoss, CongestionLoss, EdgeCostLoss
from bco_gym.losses.linear import LinearLoss, LinearSwitchingLoss
from bco_gym.losses.portfolio import PortfolioLoss
from bco_gym.losses.quadratic import QuadraticLoss
from bco_gym.losses.regression import RegressionLoss
from bco_gym.sets.checks import all_finite

#: From this many rounds on, a block is evaluated on a copy of its own rounds' parameters
#: (no stacked copy of the chunks); shorter ones on the stacked chunks.
ROW_BLOCK_ROUNDS = 32

#: The built-in families whose ``_evaluate`` satisfies the module docstring's conditions.
VERIFIED_FAMILIES: tuple[type[LossSequence], ...] = (
    LinearLoss,
    LinearSwitchingLoss,
    QuadraticLoss,
    RegressionLoss,
    AbsoluteLoss,
    PortfolioLoss,
    CompletionLoss,
    EdgeCostLoss,
    CongestionLoss,
    AssignmentLoss,
)
#: Their ``_evaluate`` functions: a family (a subclass, say) that evaluates with one of
#: them is batch-evaluable whatever else it changes (how it draws its chunks, its means).
BATCH_EVALUATE = frozenset(family._evaluate for family in VERIFIED_FAMILIES)


def batch_evaluable(sequence: LossSequence) -> bool:
    """Whether ``sequence``'s family may be evaluated on stacked rows (module docstring)."""
    kind = type(sequence)
    return kind._evaluate in BATCH_EVALUATE or bool(getattr(kind, "batch_evaluable", False))


class LossBatch:
    """S oblivious loss sequences of one family and parameters, evaluated together.

    Args:
        sequences: S >= 1 sequences of the same type, parameters (``describe()``) and set
            shape; each reset (seeded) on its own. Row i is ``sequences[i]``.
    """

    def __init__(self, sequences: Sequence[LossSequence]):
        self.sequences = list(sequences)
        if not self.sequences:
            raise ValueError("LossBatch needs at least one loss sequence")
        first = self.sequences[0]
        for row, sequence in enumerate(self.sequences):
            if not isinstance(sequence, LossSequence):
                raise TypeError(
                    f"row {row}: expected a LossSequence, got {type(sequence).__name__}"
                )
            if (
                type(sequence) is not type(first)
                or sequence.describe() != first.describe()
                or sequence.set.shape != first.set.shape
                or sequence.chunk_size != first.chunk_size
            ):
                raise ValueError(
                    f"row {row}: {type(sequence).__name__} {sequence.describe()} differs from row "
                    f"0's {type(first).__name__} {first.describe()}; a LossBatch holds one family "
                    "with one set of parameters"
                )
        self.size = len(self.sequences)
        self.name = getattr(first, "name", type(first).__name__)
        family = getattr(first, "name", None)
        shown = f" ({family!r})" if isinstance(family, str) else ""
        #: How errors name the sequences (as ``BanditConvexEnv`` does).
        self.label = f"loss sequence {type(first).__name__}{shown}"
        self.shape = tuple(first.set.shape)
        self.chunk_size = first.chunk_size
        self.stacked = batch_evaluable(first)
        self._evaluate_family = first._evaluate
        self._round_shape = (self.size, *self.shape)
        self._gradient = _GRADIENTS.get(type(first)._gradient)
        self._chunk_index = -1
        self._params: Params = {}
        self._row_chunk_index = -1
        self._row_params: Params = {}

    def __repr__(self) -> str:
        return f"LossBatch({self.size} x {self.sequences[0]!r})"

    def __len__(self) -> int:
        return self.size

    # -- evaluation ---------------------------------------------------------------------
    def losses(self, t: int, points: np.ndarray) -> np.ndarray:
        """f^i_t(points[i]) for every row i: shape (S,), float64."""
        points = self._check_points(points, self._round_shape, "(S, *shape)")
        if not self.stacked:
            return self.block(t, points[:, np.newaxis])[:, 0]
        index, offset = divmod(t, self.chunk_size)
        chunk = self._params if index == self._chunk_index else self._chunk(index)
        params = {key: value[offset] for key, value in chunk.items()}
        values = self._evaluate_family(params, slice(0, self.size), points)
        if values.shape != (self.size,):
            raise InvalidLossError(
                f"{self.label}, round {t}: {self.size} values expected (one per row), got an "
                f"array of shape {values.shape}"
            )
        if not all_finite(values):
            self._checked(values[:, np.newaxis], t)
        return values

    def block(self, start: int, points: np.ndarray) -> np.ndarray:
        """f^i_{start+j}(points[i, j]): shape (S, k) for points of shape (S, k, *shape)."""
        points = np.asarray(points, dtype=np.float64)
        if points.ndim != 2 + len(self.shape) or points.shape[0] != self.size:
            expected = (self.size, "k", *self.shape)
            raise ValueError(
                f"{self.name} loss batch: points of shape {points.shape}, expected {expected}"
            )
        self._check_points(points, (self.size, points.shape[1], *self.shape), "(S, k, *shape)")
        if not self.stacked:
            values = self._row_losses(start, points)
        elif points.shape[1] >= ROW_BLOCK_ROUNDS:  # one row: its own call, no gathering
            gather = self.size > 1
            values = (self._gathered_losses if gather else self._row_losses)(start, points)
        else:
            values = np.empty((self.size, points.shape[1]))
            for first, stop, params in self._pieces(start, start + points.shape[1]):
                piece = points[:, first - start : stop - start]
                values[:, first - start : stop - start] = self._evaluate(params, piece)
        return self._checked(values, start)

    def gradients(self, t: int, points: np.ndarray) -> np.ndarray:
        """A (sub)gradient of f^i_t at points[i] for every row: shape (S, *shape)."""
        points = self._check_points(points, (self.size, *self.shape), "(S, *shape)")
        if self._gradient is None or not self.stacked:
            rows = [
                np.asarray(s.gradient(t, x)) for s, x in zip(self.sequences, points, strict=True)
            ]
            for row, gradient in enumerate(rows):
                if gradient.shape != self.shape or gradient.dtype.kind not in "iuf":
                    raise InvalidLossError(
                        f"{self._where(t, row)}: the gradient is {gradient!r}; expected finite "
                        f"real numbers of shape {self.shape}"
                    )
            gradients = np.stack(rows).astype(np.float64, copy=False)
        else:
            index, offset = divmod(t, self.chunk_size)
            params = {key: value[offset] for key, value in self._chunk(index).items()}
            gradients = self._gradient(self.sequences[0], params, points)
        if not all_finite(gradients):
            row = int(np.argmin(np.isfinite(gradients.reshape(self.size, -1)).all(axis=1)))
            raise InvalidLossError(
                f"{self._where(t, row)}: the gradient is {gradients[row]!r}; expected finite "
                f"real numbers of shape {self.shape}"
            )
        return gradients

    # -- internals ----------------------------------------------------------------------
    def _evaluate(self, params: Params, points: np.ndarray) -> np.ndarray:
        """The stacked evaluation (params (rounds, S, ...)): rows x rounds flattened."""
        rows, rounds = points.shape[:2]
        flat_params = {
            key: np.swapaxes(value, 0, 1).reshape(rows * rounds, *value.shape[2:])
            for key, value in params.items()
        }
        flat_points = points.reshape(rows * rounds, *self.shape)
        values = np.asarray(
            self.sequences[0]._evaluate(flat_params, slice(0, rows * rounds), flat_points)
        )
        if values.shape != (rows * rounds,):
            raise InvalidLossError(
                f"{self.label}: {rows * rounds} values expected from the batched evaluation, "
                f"got an array of shape {values.shape}"
            )
        return values.reshape(rows, rounds)

    def _pieces(self, start: int, stop: int) -> Any:
        """(first round, end round, stacked params (rounds, S, ...)) covering [start, stop)."""
        t = start
        while t < stop:
            index, offset = divmod(t, self.chunk_size)
            end = min(stop, (index + 1) * self.chunk_size)
            params = self._chunk(index)
            window = slice(offset, offset + end - t)
            yield t, end, {key: value[window] for key, value in params.items()}
            t = end

    def _chunk(self, index: int) -> Params:
        """The S sequences' parameters of chunk ``index``, stacked: (chunk_size, S, ...)."""
        if index != self._chunk_index:
            self._params = self._stacked(index, axis=1)
            self._chunk_index = index
        return self._params

    def row_chunk(self, index: int) -> Params:
        """The S sequences' parameters of chunk ``index``, stacked row first: (S, chunk_size,
        ...), for the compiled loops. Each row's rounds stay contiguous, so stacking is a
        plain copy per row (about 6x cheaper than interleaving them as :meth:`_chunk` does),
        into the same arrays each time: the arrays returned are valid until the next call
        for another chunk."""
        if index != self._row_chunk_index:
            self._row_params = self._stacked(index, axis=0, reuse=self._row_params)
            self._row_chunk_index = index
        return self._row_params

    def _stacked(self, index: int, axis: int, reuse: Params | None = None) -> Params:
        """The S sequences' chunk ``index``, each parameter stacked along ``axis`` (into
        the array of ``reuse`` under its key when that has the shape and type)."""
        chunks = [sequence.chunk(index) for sequence in self.sequences]
        stacked = {}
        for key in chunks[0]:
            arrays = [np.asarray(chunk[key]) for chunk in chunks]
            # the last chunk of a finite sequence (data) may be shorter: same in every row
            if any(
                a.ndim == 0 or a.shape != arrays[0].shape or a.shape[0] > self.chunk_size
                for a in arrays
            ):
                raise ValueError(
                    f"{self.name} loss: chunk parameter {key!r} has no common leading round "
                    f"axis of at most {self.chunk_size} rounds; the family cannot be "
                    "batch-evaluated (see bco_gym.losses.batch)"
                )
            out = None if reuse is None else reuse.get(key)
            shape = (*arrays[0].shape[:axis], len(arrays), *arrays[0].shape[axis:])
            if out is None or out.shape != shape or out.dtype != np.result_type(*arrays):
                out = None
            stacked[key] = np.stack(arrays, axis=axis, out=out)
        return stacked

    def _gathered_losses(self, start: int, points: np.ndarray) -> np.ndarray:
        """A long block of a stacked family: per chunk it spans, the rows' parameters of
        its rounds concatenated row after row ((S * rounds, ...), a copy of the block's
        rounds only) and one ``_evaluate`` call on them, bit-equal to each row's own
        call as the evaluation is row-independent (module docstring)."""
        rows, rounds = points.shape[:2]
        stop = start + rounds
        for sequence in self.sequences:
            sequence._check_within_horizon(stop)
        values = np.empty((rows, rounds))
        t = start
        while t < stop:
            index, offset = divmod(t, self.chunk_size)
            end = min(stop, (index + 1) * self.chunk_size)
            window = slice(offset, offset + end - t)
            chunks = [sequence.chunk(index) for sequence in self.sequences]
            params = {key: self._concatenated(chunks, key, t, window) for key in chunks[0]}
            piece = points[:, t - start : end - start]
            count = rows * (end - t)
            flat = np.asarray(
                self._evaluate_family(params, slice(0, count), piece.reshape(count, *self.shape))
            )
            if flat.shape != (count,):
                raise InvalidLossError(
                    f"{self.label}: {count} values expected from the batched evaluation of "
                    f"rounds {t}..{end - 1}, got an array of shape {flat.shape}"
                )
            values[:, t - start : end - start] = flat.reshape(rows, end - t)
            t = end
        return values

    def _concatenated(
        self, chunks: list[Params], key: str, first: int, window: slice
    ) -> np.ndarray:
        """Parameter ``key`` of rounds ``window`` (from round ``first`` on) of every row's
        chunk, row after row: (S * rounds, ...)."""
        try:
            pieces = [chunk[key][window] for chunk in chunks]
            joined = np.concatenate(pieces)
        except (IndexError, TypeError, ValueError):
            raise ValueError(
                f"{self.name} loss: chunk parameter {key!r} has no common leading round axis "
                "in every row; the family cannot be batch-evaluated (see bco_gym.losses.batch)"
            ) from None
        rounds = window.stop - window.start
        if len(joined) != len(chunks) * rounds:  # a piece is never longer than the window
            row = next(row for row, piece in enumerate(pieces) if len(piece) != rounds)
            held = len(pieces[row])
            raise InvalidLossError(
                f"{self._where(first + held, row)}: no parameter {key!r} for this round (the "
                f"chunk holds {held} of rounds {first}..{first + rounds - 1})"
            )
        return joined

    def _row_losses(self, start: int, points: np.ndarray) -> np.ndarray:
        """The exact fallback: each row's own chunks and ``_evaluate``, as ``losses`` does."""
        values = np.empty(points.shape[:2])
        stop = start + points.shape[1]
        for row, sequence in enumerate(self.sequences):
            for first, end, params, part in sequence.chunks(start, stop):
                piece = np.asarray(
                    sequence._evaluate(params, part, points[row, first - start : end - start]),
                    dtype=np.float64,
                )
                if piece.shape != (end - first,):
                    raise InvalidLossError(
                        f"{self._where(first, row)}: expected {end - first} value(s), got an "
                        f"array of shape {piece.shape}"
                    )
                values[row, first - start : end - start] = piece
        return values

    def _checked(self, values: np.ndarray, start: int) -> np.ndarray:
        if not np.isfinite(values).all():
            row, column = np.argwhere(~np.isfinite(values))[0]
            raise InvalidLossError(
                f"{self._where(start + int(column), int(row))}: the loss is "
                f"{float(values[row, column])!r}; a loss must be a finite number (check the loss "
                "sequence's _evaluate/loss at this point)"
            )
        return values

    def _where(self, t: int, row: int) -> str:
        """The sequences, the round and (in a batch of several) the row, for errors."""
        return f"{self.label}, round {t}" + (f", row {row}" if self.size > 1 else "")

    def _check_points(self, points: Any, shape: tuple[Any, ...], label: str) -> np.ndarray:
        if type(points) is not np.ndarray or points.dtype != np.float64:
            points = np.asarray(points, dtype=np.float64)
        if points.shape != shape:
            raise ValueError(
                f"{self.name} loss batch: points of shape {points.shape}, "
                f"expected {label} = {shape}"
            )
        return points


# -- closed-form gradients over the row axis (each equal to the family's _gradient per row) ---
def _flat(points: np.ndarray) -> np.ndarray:
    return points.reshape(len(points), -1)


def _linear_gradient(family: Any, params: Params, points: np.ndarray) -> np.ndarray:
    return params["theta"].reshape(points.shape).copy()


def _cost_gradient(family: Any, params: Params, points: np.ndarray) -> np.ndarray:
    return params["costs"].reshape(points.shape).copy()


def _congestion_gradient(family: Any, params: Params, points: np.ndarray) -> np.ndarray:
    return _cost_gradient(family, params, points) + family.beta * points


def _quadratic_gradient(family: Any, params: Params, points: np.ndarray) -> np.ndarray:
    target = family._center_flat + params["target"]
    return points - target.reshape(points.shape)


def _residuals(family: Any, params: Params, points: np.ndarray) -> np.ndarray:
    shifted = _flat(points) - family._center_flat
    return row_dot(params["features"], shifted) - params["targets"]


def _regression_gradient(family: Any, params: Params, points: np.ndarray) -> np.ndarray:
    residual = _residuals(family, params, points)
    return ((2.0 * residual)[:, np.newaxis] * params["features"]).reshape(points.shape)


def _absolute_gradient(family: Any, params: Params, points: np.ndarray) -> np.ndarray:
    residual = _residuals(family, params, points)
    return (np.sign(residual)[:, np.newaxis] * params["features"]).reshape(points.shape)


def _completion_gradient(family: Any, params: Params, points: np.ndarray) -> np.ndarray:
    rows = np.arange(len(points))
    positions = params["position"].astype(np.intp)
    gradient = np.zeros((len(points), family.rows * family.cols))
    gradient[rows, positions] = _flat(points)[rows, positions] - params["value"]
    return gradient.reshape(points.shape)


_GRADIENTS: dict[Callable[..., Any], Callable[[Any, Params, np.ndarray], np.ndarray]] = {
    LinearLoss._gradient: _linear_gradient,
    QuadraticLoss._gradient: _quadratic_gradient,
    RegressionLoss._gradient: _regression_gradient,
    AbsoluteLoss._gradient: _absolute_gradient,
    CompletionLoss._gradient: _completion_gradient,
    EdgeCostLoss._gradient: _cost_gradient,
    CongestionLoss._gradient: _congestion_gradient,
    # PortfolioLoss: its gradient divides by a BLAS dot product; rows loop for exactness.
}
