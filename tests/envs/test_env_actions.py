"""feasible_points and check_losses: one batched check behind env.step and the vector env."""

from __future__ import annotations

import numpy as np
import pytest

from bco_gym.envs.actions import check_losses, feasible_points
from bco_gym.errors import InfeasibleActionError, InvalidLossError
from bco_gym.sets import L2Ball, Simplex

SIMPLEX = Simplex(3)
INSIDE = np.array([0.2, 0.3, 0.5])
OUTSIDE = np.array([0.7, 0.7, 0.0])


def test_a_feasible_action_comes_back_as_float64_unprojected():
    points, projected = feasible_points(SIMPLEX, [0, 1, 0], atol=1e-9, round_index=4)
    assert points.dtype == np.float64 and points.tolist() == [0.0, 1.0, 0.0]
    assert projected.shape == () and not projected


def test_batched_rows_get_the_single_verdicts_and_errors_name_the_row():
    rows = np.stack([INSIDE, INSIDE, OUTSIDE])
    with pytest.raises(
        InfeasibleActionError,
        match=r"round 7, row 2: action not in Simplex\(n=3\): .*; the action: \[0.7 0.7 0. \]",
    ):
        feasible_points(SIMPLEX, rows, atol=1e-9, round_index=7, batched=True)
    with pytest.raises(
        InfeasibleActionError,
        match=r"round 7: action not in Simplex\(n=3\): .*; the action: \[0.7 0.7 0. \]",
    ) as single:
        feasible_points(SIMPLEX, OUTSIDE, atol=1e-9, round_index=7)
    assert "row" not in str(single.value)
    points, projected = feasible_points(SIMPLEX, rows[:2], atol=1e-9, round_index=0, batched=True)
    np.testing.assert_array_equal(points, rows[:2])
    assert projected.tolist() == [False, False]


def test_projection_replaces_only_the_infeasible_rows_and_never_the_input():
    rows = np.stack([OUTSIDE, INSIDE, OUTSIDE * 2, INSIDE])
    before = rows.copy()
    points, projected = feasible_points(
        SIMPLEX, rows, atol=1e-9, round_index=0, on_infeasible="project", batched=True
    )
    np.testing.assert_array_equal(rows, before)
    assert projected.tolist() == [True, False, True, False]
    for row, point in zip(rows, points, strict=True):
        expected = SIMPLEX.project(row) if not SIMPLEX.contains(row) else row
        np.testing.assert_array_equal(point, expected)
    single, flag = feasible_points(
        SIMPLEX, OUTSIDE, atol=1e-9, round_index=0, on_infeasible="project"
    )
    np.testing.assert_array_equal(single, points[0])
    assert flag.shape == () and flag


def test_non_finite_rows_are_never_projected():
    rows = np.stack([INSIDE, [np.nan, 0.0, 1.0]])
    with pytest.raises(InfeasibleActionError, match=r"round 3, row 1.*must be finite"):
        feasible_points(
            SIMPLEX, rows, atol=1e-9, round_index=3, on_infeasible="project", batched=True
        )


@pytest.mark.parametrize(
    ("action", "kind"),
    [
        (INSIDE + 0j, "complex"),
        (np.array([True, False, False]), "bool"),
        (["0.2", "0.3", "0.5"], "strings"),
        (np.array(["0.2", "0.3", "0.5"], dtype=object), "objects"),
        (np.array([b"0", b"1", b"0"]), "bytes"),
        ([0.2, None, 0.5], "objects"),
    ],
)
def test_only_real_dtypes_are_actions(action, kind):
    with pytest.raises(InfeasibleActionError, match=rf"round 2: action .* \({kind}\); expected"):
        feasible_points(SIMPLEX, action, atol=1e-9, round_index=2)


@pytest.mark.parametrize(
    "dtype", [np.int8, np.uint16, np.int64, np.float16, np.float32, np.longdouble]
)
def test_every_integer_and_float_dtype_is_accepted_as_its_float64_value(dtype):
    vertex = np.array([0, 1, 0], dtype=dtype)
    points, _ = feasible_points(SIMPLEX, vertex, atol=1e-9, round_index=0)
    assert points.dtype == np.float64 and points.tolist() == [0.0, 1.0, 0.0]


def test_shape_errors_say_what_shape_is_expected():
    with pytest.raises(InfeasibleActionError, match=r"shape \(3,\), expected \(S, 3\)"):
        feasible_points(SIMPLEX, INSIDE, atol=1e-9, round_index=0, batched=True)
    with pytest.raises(InfeasibleActionError, match=r"shape \(1, 3\), expected \(3,\)"):
        feasible_points(SIMPLEX, INSIDE[None], atol=1e-9, round_index=0)
    with pytest.raises(InfeasibleActionError, match="empty batch"):
        feasible_points(SIMPLEX, np.empty((0, 3)), atol=1e-9, round_index=0, batched=True)


def test_a_float32_point_shows_its_distance_and_the_remedies():
    point = np.full(3, 1 / 3, dtype=np.float32)
    with pytest.raises(InfeasibleActionError) as caught:
        feasible_points(SIMPLEX, point, atol=1e-9, round_index=0)
    message = str(caught.value)
    distance = np.linalg.norm(point.astype(float) - SIMPLEX.project(point.astype(float)))
    assert f"distance to the set {distance:.3g}" in message
    assert "atol=" in message and "on_infeasible='project'" in message
    assert "BoxActionAdapter" in message
    # with a tolerance matching float32 rounding the same point is accepted
    feasible_points(SIMPLEX, point, atol=1e-6, round_index=0)


def test_a_ball_has_no_box_hint_when_it_is_a_box_only_the_tolerance():
    with pytest.raises(InfeasibleActionError, match="RescaleAction/ClipAction"):
        feasible_points(L2Ball(2), [1.0, 1.0], atol=1e-9, round_index=0)


def test_check_losses_returns_float64_and_names_family_round_and_row():
    np.testing.assert_array_equal(check_losses([1, 2], losses_name="L", round_index=0), [1.0, 2.0])
    with pytest.raises(InvalidLossError, match=r"L, round 5, row 1: the loss is nan"):
        check_losses([0.0, np.nan], losses_name="L", round_index=5)
    with pytest.raises(InvalidLossError, match=r"L, round 5: the loss is inf") as caught:
        check_losses([np.inf], losses_name="L", round_index=5)
    assert "row" not in str(caught.value)


@pytest.mark.parametrize("values", [[], np.empty(0), 1.0, [[1.0]], ["1.0"], [1 + 0j], [None]])
def test_check_losses_refuses_what_is_not_one_number_per_play(values):
    with pytest.raises(InvalidLossError, match="L, round 0"):
        check_losses(values, losses_name="L", round_index=0)
