"""Batched oracles: lmo_many / project_many row by row against the single oracles.

Row i of a batched answer must equal the single oracle's answer on row i bit for bit
(compared as bytes, so even the sign of a zero counts), whatever the batch size and
whatever the other rows hold. The one documented exception is the nuclear ball's LMO
(a stacked SVD against warm-started ARPACK): equal to 1e-12 given a spectral gap, and
an equally good minimiser without one.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from set_cases import CASES, SHRINK_FRACTION, SHRUNK

from bco_gym.sets import (
    BirkhoffPolytope,
    ConvexSet,
    FlowPolytope,
    Hypercube,
    L1Ball,
    L2Ball,
    NuclearNormBall,
    ShrunkSet,
    Simplex,
    nuclear,
)

SIZES = (1, 2, 64)
EXTREME_SCALES = (1e-300, 1e-160, 1e-20, 1e20, 1e160, 1e300)
QP_SCALES = (1e-6, 1e-2, 1.0, 1e2, 1e4)  # interior-point QPs: moderate scales only


def _nuclear_with_arpack(convex_set: ConvexSet) -> bool:
    base = convex_set.base if isinstance(convex_set, ShrunkSet) else convex_set
    return isinstance(base, NuclearNormBall) and min(base.shape) > nuclear._DENSE_MAX_SIDE


def _directions(convex_set: ConvexSet, rng: np.random.Generator, scales) -> np.ndarray:
    """64 rows: random, tied (small integers, constant rows, a row of equal |g_i|), zero,
    and random rows at extreme scales, in a shuffled order."""
    shape = convex_set.shape
    rows = [rng.standard_normal(shape) for _ in range(24)]
    rows += [rng.integers(-2, 3, size=shape).astype(float) for _ in range(14)]
    rows += [np.full(shape, value) for value in (1.0, -1.0, 0.5)]
    rows += [np.where(rng.random(shape) < 0.5, -3.0, 3.0), np.zeros(shape), -np.zeros(shape)]
    for scale in scales:
        rows += [scale * rng.standard_normal(shape) for _ in range(3)]
    while len(rows) < 64:
        rows.append(rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 3))
    batch = np.array(rows[:64])
    return batch[rng.permutation(64)]


def _points(convex_set: ConvexSet, rng: np.random.Generator, scales) -> np.ndarray:
    """64 points: far outside, just outside, inside (samples, the centre, vertices),
    tied and zero rows, and extreme scales."""
    c = convex_set.center
    radius = convex_set.outer_radius
    shape = convex_set.shape
    rows = []
    for factor in (0.2, 0.9, 1.1, 3.0, 10.0):
        for _ in range(4):
            z = rng.standard_normal(shape)
            rows.append(c + factor * radius * z / np.linalg.norm(z))
    rows += [convex_set.sample(rng) for _ in range(5)]
    rows += [convex_set.lmo(rng.standard_normal(shape)) for _ in range(5)]
    rows += [np.array(c), np.zeros(shape), np.ones(shape), -np.ones(shape)]
    rows += [rng.integers(-2, 3, size=shape).astype(float) for _ in range(8)]
    for scale in scales:
        rows += [scale * rng.standard_normal(shape) for _ in range(2)]
    while len(rows) < 64:
        rows.append(c + rng.standard_normal(shape) * 10.0 ** rng.uniform(-2, 1))
    batch = np.array(rows[:64])
    return batch[rng.permutation(64)]


def _same_bits(left: np.ndarray, right: np.ndarray) -> bool:
    return (
        left.dtype == right.dtype
        and left.shape == right.shape
        and (left.tobytes() == right.tobytes())
    )


def _quietly(call, *args):
    """Call an oracle on extreme inputs (numpy may warn of an intermediate overflow)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return call(*args)


def _subsets(batch: np.ndarray):
    """(batch of size k, the indices of its rows in ``batch``) for k in SIZES."""
    for size in SIZES:
        yield batch[:size].copy(), range(size)
    yield batch[::-1].copy(), range(len(batch) - 1, -1, -1)


def _check_lmo_rows(convex_set: ConvexSet, directions: np.ndarray) -> None:
    singles = [_quietly(convex_set.lmo, g) for g in directions]
    for batch, indices in _subsets(directions):
        answers = _quietly(convex_set.lmo_many, batch)
        assert answers.shape == batch.shape and answers.dtype == np.float64
        for row, index in enumerate(indices):
            if _nuclear_with_arpack(convex_set):
                _assert_same_minimiser(directions[index], answers[row], singles[index])
            else:
                assert _same_bits(answers[row], singles[index]), (index, batch[row])


def _assert_same_minimiser(g: np.ndarray, batched: np.ndarray, single: np.ndarray) -> None:
    """The documented 1e-12 agreement: the same matrix given a spectral gap, otherwise
    the same (optimal) value <g, x>."""
    if not np.any(g):
        assert not np.any(batched) and not np.any(single)
        return
    singular = np.linalg.svd(g / np.abs(g).max(), compute_uv=False)
    gap = (singular[0] - singular[1]) / singular[0]
    if gap > 1e-3:
        np.testing.assert_allclose(batched, single, rtol=0, atol=1e-12)
    scale = np.abs(g).max()
    assert np.vdot(g / scale, batched) == pytest.approx(
        np.vdot(g / scale, single), rel=1e-12, abs=1e-12
    )


def test_lmo_many_equals_lmo_row_by_row(case, rng):
    convex_set = case.make()
    _check_lmo_rows(convex_set, _directions(convex_set, rng, EXTREME_SCALES))


def test_project_many_equals_project_row_by_row(case, rng):
    convex_set = case.make()
    points = _points(convex_set, rng, QP_SCALES if case.qp else EXTREME_SCALES)
    singles = [_quietly(convex_set.project, x) for x in points]
    for batch, indices in _subsets(points):
        answers = _quietly(convex_set.project_many, batch)
        assert answers.shape == batch.shape and answers.dtype == np.float64
        for row, index in enumerate(indices):
            assert _same_bits(answers[row], singles[index]), (index, batch[row])


def test_shrunk_batched_oracles_equal_the_single_ones(shrunk_case, rng):
    base = shrunk_case.make()
    for fraction in (SHRINK_FRACTION, 1.0):
        shrunk = base.shrink(fraction * base.inner_radius)
        _check_lmo_rows(shrunk, _directions(shrunk, rng, EXTREME_SCALES[1:-1]))
        points = _points(shrunk, rng, QP_SCALES if shrunk_case.qp else EXTREME_SCALES[1:-1])
        singles = [_quietly(shrunk.project, x) for x in points]
        for batch, indices in _subsets(points):
            answers = _quietly(shrunk.project_many, batch)
            for row, index in enumerate(indices):
                assert _same_bits(answers[row], singles[index]), (fraction, index)


def test_lmo_many_answers_are_feasible_and_optimal(case, rng):
    """Independent of the single oracle: each row's answer lies in K and beats the
    vertices of K found by the LP (polytopes) or by any sample and LMO answer."""
    convex_set = case.make()
    directions = rng.standard_normal((16, *convex_set.shape))
    answers = convex_set.lmo_many(directions)
    candidates = [convex_set.sample(rng) for _ in range(20)]
    for g, answer in zip(directions, answers, strict=True):
        assert convex_set.contains(answer, atol=1e-9), convex_set.violation(answer)
        value = float(np.vdot(g, answer))
        if case.lp is not None:
            assert value == pytest.approx(case.lp(convex_set, g), abs=1e-8)
        if isinstance(convex_set, NuclearNormBall):
            nuclear_min = -convex_set.radius * np.linalg.svd(g, compute_uv=False)[0]
            assert value == pytest.approx(nuclear_min, rel=1e-12)
        assert value <= min(float(np.vdot(g, y)) for y in candidates) + 1e-12


@pytest.mark.parametrize("scale", EXTREME_SCALES)
def test_extreme_scales_keep_the_oracles_right(case, scale, rng):
    """Huge and tiny directions give the LMO answer of the unscaled direction's value,
    and huge points project into K (no overflow to zero or NaN)."""
    convex_set = case.make()
    directions = rng.standard_normal((8, *convex_set.shape))
    answers = _quietly(convex_set.lmo_many, scale * directions)
    reference = convex_set.lmo_many(directions)
    for g, answer, expected in zip(directions, answers, reference, strict=True):
        assert convex_set.contains(answer, atol=1e-9)
        assert float(np.vdot(g, answer)) == pytest.approx(float(np.vdot(g, expected)), abs=1e-9)
    if convex_set.has_projection and not case.qp:
        projections = _quietly(convex_set.project_many, scale * directions)
        for projection in projections:
            assert np.all(np.isfinite(projection))
            if scale > 1.0:
                assert convex_set.contains(projection, atol=1e-9), convex_set.violation(projection)


def test_batch_layout_does_not_change_rows(case, rng):
    """A Fortran-ordered or strided batch gives the rows of the C-ordered one."""
    convex_set = case.make()
    directions = rng.standard_normal((12, *convex_set.shape))
    expected = convex_set.lmo_many(directions[::2].copy())
    strided = convex_set.lmo_many(directions[::2])
    fortran = convex_set.lmo_many(np.asfortranarray(directions[::2]))
    assert _same_bits(strided, expected) and _same_bits(fortran, expected)
    if convex_set.has_projection:
        points = 3.0 * directions
        expected = convex_set.project_many(points[1::2].copy())
        assert _same_bits(convex_set.project_many(points[1::2]), expected)


def test_batched_oracles_do_not_touch_their_input(case, rng):
    convex_set = case.make()
    directions = rng.standard_normal((5, *convex_set.shape))
    kept = directions.copy()
    answers = convex_set.lmo_many(directions)
    answers += 1.0
    assert _same_bits(directions, kept)
    if convex_set.has_projection:
        projections = convex_set.project_many(directions)
        projections += 1.0
        assert _same_bits(directions, kept)


def test_empty_batches(case):
    convex_set = case.make()
    for oracle in (convex_set.lmo_many, convex_set.project_many):
        for empty in (np.empty((0, *convex_set.shape)), np.empty((0, *convex_set.shape), int)):
            answer = oracle(empty)
            assert answer.shape == (0, *convex_set.shape) and answer.dtype == np.float64
    shrunk = convex_set.shrink(0.5 * convex_set.inner_radius)
    assert shrunk.lmo_many(np.empty((0, *convex_set.shape))).shape == (0, *convex_set.shape)
    assert shrunk.project_many(np.empty((0, *convex_set.shape))).shape == (
        0,
        *convex_set.shape,
    )


def test_integer_batches_are_read_as_numbers(case, rng):
    convex_set = case.make()
    directions = rng.integers(-3, 4, size=(6, *convex_set.shape))
    expected = convex_set.lmo_many(directions.astype(float))
    if not _nuclear_with_arpack(convex_set):
        assert _same_bits(convex_set.lmo_many(directions), expected)


def _bad_batches(shape: tuple[int, ...]):
    good = np.zeros((4, *shape))
    nan_row = good.copy()
    nan_row[2].flat[0] = np.nan
    inf_row = good.copy()
    inf_row[3].flat[-1] = -np.inf
    return [
        (np.zeros(shape), r"has shape .*, expected \(k, "),  # a single row, no batch axis
        (np.zeros((4, *shape[:-1], shape[-1] + 1)), r"has shape .*, expected \(k, "),
        (np.zeros((4, 1, *shape)), r"has shape .*, expected \(k, "),
        (np.zeros(()), r"has shape \(\), expected \(k, "),
        (nan_row, "row 2 has non-finite entries"),
        (inf_row, "row 3 has non-finite entries"),
        (good.astype(complex), "has dtype complex128 .*expected real numbers"),
        (good.astype(bool), "has dtype bool .*expected real numbers"),
        (good.astype(str), "has dtype <U.*expected real numbers"),
        (good.astype(object), "has dtype object .*expected real numbers"),
    ]


@pytest.mark.parametrize("shrunk", [False, True], ids=["K", "K_delta"])
def test_bad_batches_are_refused(case, shrunk):
    convex_set = case.make()
    if shrunk:
        convex_set = convex_set.shrink(0.5 * convex_set.inner_radius)
    for bad, message in _bad_batches(convex_set.shape):
        with pytest.raises(ValueError, match=f"directions {message}"):
            convex_set.lmo_many(bad)
        with pytest.raises(ValueError, match=f"points {message}"):
            convex_set.project_many(bad)


def test_single_oracles_refuse_non_real_arrays(case):
    convex_set = case.make()
    for dtype in (complex, bool, str, object):
        bad = np.zeros(convex_set.shape).astype(dtype)
        for oracle, what in ((convex_set.lmo, "direction"), (convex_set.project, "point")):
            with pytest.raises(ValueError, match=f"{what} has dtype .*expected real numbers"):
                oracle(bad)
    with pytest.raises(ValueError, match="expected real numbers"):
        convex_set.lmo(np.full(convex_set.shape, "0.5"))


# -- a set the user writes: the default row loops ----------------------------------------------
class Ellipse(ConvexSet):
    """{x : (x_0/a)^2 + (x_1/b)^2 <= 1}: geometry, lmo, contains and tangent only."""

    shape = (2,)
    center = np.zeros(2)
    inner_radius = 1.0
    outer_radius = 2.0
    axes = np.array([2.0, 1.0])

    def lmo(self, direction):
        g = self._check_array(direction, "direction")
        scaled = self.axes * g
        norm = np.linalg.norm(scaled)
        return np.zeros(2) if norm == 0 else -self.axes * scaled / norm

    def contains(self, x, atol=1e-9):
        return float(np.sum((np.asarray(x) / self.axes) ** 2)) <= 1.0 + atol

    def tangent(self, v):
        return np.array(v, dtype=float)


class Disc(Ellipse):
    """The unit disc, with a projection."""

    axes = np.array([1.0, 1.0])
    outer_radius = 1.0

    def project(self, x):
        y = self._check_array(x, "point")
        norm = np.linalg.norm(y)
        return y.copy() if norm <= 1.0 else y / norm


@pytest.mark.parametrize("user_set", [Ellipse(), Disc()], ids=["lmo only", "with project"])
def test_default_row_loop_on_a_user_defined_set(user_set, rng):
    directions = rng.standard_normal((64, 2))
    directions[5] = 0.0
    for batch, indices in _subsets(directions):
        answers = user_set.lmo_many(batch)
        for row, index in enumerate(indices):
            assert _same_bits(answers[row], user_set.lmo(directions[index]))
    assert user_set.lmo_many(np.empty((0, 2))).shape == (0, 2)
    with pytest.raises(ValueError, match="directions row 1 has non-finite"):
        user_set.lmo_many(np.array([[0.0, 1.0], [np.nan, 0.0]]))
    shrunk = user_set.shrink(0.25)
    shrunk_answers = shrunk.lmo_many(directions)
    for g, answer in zip(directions, shrunk_answers, strict=True):
        assert _same_bits(answer, shrunk.lmo(g))
    points = 2.0 * directions
    if not user_set.has_projection:
        for convex_set in (user_set, shrunk):
            with pytest.raises(NotImplementedError, match="no Euclidean projection"):
                convex_set.project_many(points)
        return
    for convex_set in (user_set, shrunk):
        projections = convex_set.project_many(points)
        for x, projection in zip(points, projections, strict=True):
            assert _same_bits(projection, convex_set.project(x))


def test_a_user_override_of_lmo_many_is_used_by_the_shrunk_set(rng):
    class Counting(Disc):
        batched_calls = 0

        def lmo_many(self, directions):
            Counting.batched_calls += 1
            return super().lmo_many(directions)

    shrunk = Counting().shrink(0.5)
    directions = rng.standard_normal((3, 2))
    answers = shrunk.lmo_many(directions)
    assert Counting.batched_calls == 1
    for g, answer in zip(directions, answers, strict=True):
        assert _same_bits(answer, shrunk.lmo(g))


def test_nuclear_lmo_many_leaves_the_warm_start_alone(rng):
    ball = NuclearNormBall(6, 4)
    ball.lmo(rng.standard_normal((6, 4)))
    vector = ball._last_vector.copy()
    ball.lmo_many(rng.standard_normal((5, 6, 4)))
    assert _same_bits(ball._last_vector, vector)


@pytest.mark.parametrize("dense_max_side", [128, 2], ids=["dense", "lanczos"])
def test_nuclear_lmo_many_without_a_spectral_gap_returns_a_minimiser(dense_max_side, monkeypatch):
    """sigma_1 = sigma_2: several minimisers; each path returns one of them."""
    monkeypatch.setattr(nuclear, "_DENSE_MAX_SIDE", dense_max_side)
    ball = NuclearNormBall(4, 4, radius=2.0)
    g = np.diag([3.0, 3.0, 1.0, 0.5])
    (batched,) = ball.lmo_many(g[None])
    single = ball.lmo(g)
    for answer in (batched, single):
        assert float(np.vdot(g, answer)) == pytest.approx(-2.0 * 3.0, rel=1e-12)
        assert np.linalg.svd(answer, compute_uv=False).sum() == pytest.approx(2.0, rel=1e-12)


@pytest.mark.parametrize("name", SHRUNK)
def test_shrunk_to_its_centre(name, rng):
    case = next(c for c in CASES if c.name == name)
    base = case.make()
    point_set = base.shrink(base.inner_radius)
    directions = rng.standard_normal((3, *base.shape))
    for answers in (point_set.lmo_many(directions), point_set.project_many(3.0 * directions)):
        for answer in answers:
            np.testing.assert_array_equal(answer, base.center)


def test_nuclear_lmo_many_by_lanczos_rows_for_large_matrices(rng, monkeypatch):
    """Above the dense-SVD size, lmo runs warm-started ARPACK and lmo_many ARPACK row by
    row from a fixed start (exercised here on small matrices by lowering the threshold):
    the documented 1e-12 agreement, and an optimal value without a spectral gap."""
    monkeypatch.setattr(nuclear, "_DENSE_MAX_SIDE", 2)
    for ball in (NuclearNormBall(4, 3, radius=2.0), NuclearNormBall(5, 6)):
        assert _nuclear_with_arpack(ball)
        _check_lmo_rows(ball, _directions(ball, rng, EXTREME_SCALES))
        ball.lmo(rng.standard_normal(ball.shape))
        assert not np.array_equal(ball._last_vector, ball._initial_vector)  # warm-started


LONG_ROWS = [
    lambda: Simplex(2000),
    lambda: L2Ball(2000, radius=3.0),
    lambda: L1Ball(2000),
    lambda: Hypercube(-1.0, 2.0, n=2000),
    lambda: NuclearNormBall(40, 30),
    lambda: FlowPolytope.grid(10, 10),
]


@pytest.mark.parametrize("make", LONG_ROWS, ids=lambda make: repr(make()))
def test_long_rows_do_not_depend_on_the_batch_size(make, rng):
    """Sums over long rows (where numpy may block or reorder a reduction) are still
    those of the single oracle, in batches of 1, 2, 64 and in reverse order."""
    convex_set = make()
    shape = convex_set.shape
    directions = rng.standard_normal((64, *shape)) * 10.0 ** rng.uniform(
        -3, 3, (64,) + (1,) * len(shape)
    )
    _check_lmo_rows(convex_set, directions)
    if convex_set.has_projection and not isinstance(convex_set, FlowPolytope):
        points = convex_set.center + 2.0 * convex_set.outer_radius * directions / np.abs(
            directions
        ).max(axis=tuple(range(1, directions.ndim)), keepdims=True)
        singles = [convex_set.project(x) for x in points]
        for batch, indices in _subsets(points):
            answers = convex_set.project_many(batch)
            for row, index in enumerate(indices):
                assert _same_bits(answers[row], singles[index]), index


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_birkhoff_lmo_against_the_assignment_solver(n, rng):
    """Enumeration (n <= 5) and the assignment solver (n = 6) give an assignment of
    least cost, as scipy's solver finds it, on random, tied and overflowing costs; the
    batched rows are the single answers."""
    from scipy.optimize import linear_sum_assignment

    polytope = BirkhoffPolytope(n)
    directions = np.concatenate(
        [
            rng.standard_normal((20, n, n)),
            rng.integers(-1, 2, size=(10, n, n)).astype(float),
            np.ones((1, n, n)),
            np.zeros((1, n, n)),
            rng.uniform(-1.0, 1.0, size=(4, n, n)) * 1.7e308,  # sums overflow
            rng.standard_normal((2, n, n)) * 1e-310,  # subnormal
        ]
    )
    answers = _quietly(polytope.lmo_many, directions)
    for g, answer in zip(directions, answers, strict=True):
        assert _same_bits(answer, _quietly(polytope.lmo, g))
        assert polytope.contains(answer, atol=0.0)
        assert set(np.unique(answer)) <= {0.0, 1.0}
        unit = g / max(np.abs(g).max(), 1e-300) if np.abs(g).max() > 1e300 else g
        rows, columns = linear_sum_assignment(unit)
        assert float(np.vdot(unit, answer)) == pytest.approx(
            float(unit[rows, columns].sum()), rel=1e-12, abs=1e-300
        )
