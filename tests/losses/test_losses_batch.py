"""LossBatch: S sequences evaluated together equal each sequence's own values bit for bit.

For every family on every set it supports: round by round, in blocks crossing a chunk
boundary, and gradients; a user family that does not opt in is evaluated row by row;
NaN/inf/empty values raise InvalidLossError naming the family, round and row.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest
from losses_helpers import CASE_IDS, CASES, SETS, feasible_points, sequence

from bco_gym.errors import InvalidLossError
from bco_gym.losses import FAMILIES, LinearLoss
from bco_gym.losses.batch import ROW_BLOCK_ROUNDS, VERIFIED_FAMILIES, LossBatch, batch_evaluable
from bco_gym.sets import L2Ball

ROWS = 3


def points_for(set_name: str, rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` feasible points per row: shape (ROWS, count, *shape)."""
    convex_set = SETS[set_name]
    pool = feasible_points(convex_set, rng, 4)
    return pool[rng.integers(0, len(pool), (ROWS, count))]


def test_the_verified_families_are_registered_and_stacked():
    assert set(VERIFIED_FAMILIES) <= set(FAMILIES.values())
    for family, set_name in CASES:
        if FAMILIES[family] in VERIFIED_FAMILIES:
            assert LossBatch([sequence(family, set_name)]).stacked


@pytest.mark.parametrize(("family", "set_name"), CASES, ids=CASE_IDS)
def test_rounds_blocks_and_gradients_equal_each_rows_own(family, set_name):
    sequences = [sequence(family, set_name, seed=seed) for seed in (3, 4, 5)]
    batch = LossBatch(sequences)  # stacked or row by row: the values are each row's own
    rng = np.random.default_rng(0)
    chunk = batch.chunk_size
    for t in (0, 1, chunk - 1, chunk, 2 * chunk + 7):
        points = points_for(set_name, rng, 1)[:, 0]
        values = batch.losses(t, points)
        expected = [s.loss(t, x) for s, x in zip(sequences, points, strict=True)]
        assert values.dtype == np.float64 and values.tolist() == expected
        gradients = batch.gradients(t, points)
        for row, (s, x) in enumerate(zip(sequences, points, strict=True)):
            assert np.array_equal(gradients[row], s.gradient(t, x))
    for start, count in ((chunk - 5, 12), (chunk - 20, ROW_BLOCK_ROUNDS + 3)):
        block = points_for(set_name, rng, count)  # crosses a chunk boundary: short, long
        values = batch.block(start, block)
        assert values.shape == (ROWS, count)
        for row, s in enumerate(sequences):
            assert np.array_equal(values[row], s.losses(start, block[row]))


class ShiftedLinear(LinearLoss):
    """A user family that does not opt in (it overrides _evaluate)."""

    name = "shifted-linear"

    def _evaluate(self, params, part, points):
        return super()._evaluate(params, part, points) + 1.0


def test_user_family_without_opt_in_is_evaluated_row_by_row():
    ball = L2Ball(3)
    sequences = []
    for seed in range(ROWS):
        s = ShiftedLinear(ball)
        s.reset(np.random.default_rng(seed))
        sequences.append(s)
    batch = LossBatch(sequences)
    assert not batch.stacked and not batch_evaluable(sequences[0])
    points = np.zeros((ROWS, 4, 3)) + 0.1
    values = batch.block(2, points)
    for row, s in enumerate(sequences):
        assert np.array_equal(values[row], s.losses(2, points[row]))


class NaNAtRowOne(LinearLoss):
    """Opted in; the value is NaN where a point's first coordinate is exactly 0.25."""

    name = "nan-linear"
    batch_evaluable: ClassVar[bool] = True

    def _evaluate(self, params, part, points):
        values = super()._evaluate(params, part, points)
        return np.where(points.reshape(len(points), -1)[:, 0] == 0.25, np.nan, values)


class EmptyLoss(LinearLoss):
    name = "empty-linear"

    def _evaluate(self, params, part, points):
        return np.empty(0)


def make_rows(kind, rows=ROWS):
    out = []
    for seed in range(rows):
        s = kind(L2Ball(2))
        s.reset(np.random.default_rng(seed))
        out.append(s)
    return out


def test_nan_names_family_round_and_row():
    batch = LossBatch(make_rows(NaNAtRowOne))
    points = np.zeros((ROWS, 3, 2))
    points[1, 2, 0] = 0.25
    with pytest.raises(
        InvalidLossError, match=r"NaNAtRowOne \('nan-linear'\), round 9, row 1: the loss is nan"
    ):
        batch.block(7, points)
    with pytest.raises(InvalidLossError, match=r"round 4, row 1"):
        batch.losses(4, points[:, 2])


def test_empty_values_raise_invalid_loss():
    batch = LossBatch(make_rows(EmptyLoss))
    with pytest.raises(
        InvalidLossError, match=r"EmptyLoss \('empty-linear'\), round 0, row 0: expected 1 value"
    ):
        batch.losses(0, np.zeros((ROWS, 2)))


def test_mixed_families_or_shapes_are_refused():
    first = sequence("linear", "ball")
    other = sequence("quadratic", "ball")
    with pytest.raises(ValueError, match="row 1"):
        LossBatch([first, other])
    with pytest.raises(ValueError, match="at least one"):
        LossBatch([])
    batch = LossBatch([first])
    with pytest.raises(ValueError, match="expected"):
        batch.losses(0, np.zeros((2, 3)))


class FiniteLinear(LinearLoss):
    """A finite sequence (as data-backed ones are): its last chunk is shorter."""

    name = "finite-linear"
    batch_evaluable: ClassVar[bool] = True
    rounds = 40

    def _draw_chunk(self, rng, first, size):
        params = super()._draw_chunk(rng, first, size)
        return {key: value[: max(0, self.rounds - first)] for key, value in params.items()}


def test_a_short_last_chunk_is_stacked():
    sequences = make_rows(FiniteLinear)
    batch = LossBatch(sequences)
    points = np.full((ROWS, 6, 2), 0.1)
    values = batch.block(FiniteLinear.rounds - 6, points)
    for row, s in enumerate(sequences):
        assert np.array_equal(values[row], s.losses(FiniteLinear.rounds - 6, points[row]))
    assert batch.losses(FiniteLinear.rounds - 1, points[:, 0]).tolist() == [
        s.loss(FiniteLinear.rounds - 1, points[0, 0]) for s in sequences
    ]


class CountedLinear(LinearLoss):
    """Opted in; counts its ``_evaluate`` calls and the rounds they evaluate."""

    name = "counted-linear"
    batch_evaluable: ClassVar[bool] = True
    calls: ClassVar[list[int]] = []

    def _evaluate(self, params, part, points):
        CountedLinear.calls.append(len(points))
        return super()._evaluate(params, part, points)


def test_a_long_block_is_one_call_per_chunk_it_spans_and_each_rows_own():
    sequences = make_rows(CountedLinear)
    batch = LossBatch(sequences)
    chunk = batch.chunk_size
    rng = np.random.default_rng(1)
    for start, count, pieces in ((7, 2 * ROW_BLOCK_ROUNDS, 1), (chunk - 9, ROW_BLOCK_ROUNDS, 2)):
        points = rng.uniform(-0.7, 0.7, (ROWS, count, 2))
        CountedLinear.calls.clear()
        values = batch.block(start, points)
        assert len(CountedLinear.calls) == pieces and sum(CountedLinear.calls) == ROWS * count
        for row, s in enumerate(sequences):
            assert np.array_equal(values[row], s.losses(start, points[row]))


def test_a_long_block_past_a_short_last_chunk_names_the_round_and_row():
    sequences = make_rows(FiniteLinear)
    batch = LossBatch(sequences)
    count = ROW_BLOCK_ROUNDS + 2
    points = np.full((ROWS, count, 2), 0.1)
    start = FiniteLinear.rounds - count
    values = batch.block(start, points)  # the last rounds there are: each row's own values
    for row, s in enumerate(sequences):
        assert np.array_equal(values[row], s.losses(start, points[row]))
    with pytest.raises(InvalidLossError, match=rf"round {FiniteLinear.rounds}, row 0: no param"):
        batch.block(start + 1, points)


class UnroundedLinear(LinearLoss):
    """Opted in, but one chunk parameter has no round axis (a scalar)."""

    name = "unrounded-linear"
    batch_evaluable: ClassVar[bool] = True

    def _draw_chunk(self, rng, first, size):
        return {**super()._draw_chunk(rng, first, size), "scale": np.float64(2.0)}


@pytest.mark.parametrize("count", [3, ROW_BLOCK_ROUNDS])
def test_a_chunk_parameter_without_a_round_axis_is_refused(count):
    batch = LossBatch(make_rows(UnroundedLinear))
    with pytest.raises(ValueError, match="'scale' has no common leading round axis"):
        batch.block(0, np.zeros((ROWS, count, 2)))
