"""The registry and every documented bad input."""

from __future__ import annotations

import numpy as np
import pytest
from losses_helpers import SETS, sequence

from bco_gym.losses import FAMILIES, LossSequence, families_for, make_losses
from bco_gym.sets import Simplex


def test_families_for_each_set():
    everywhere = [
        "linear",
        "linear-switching",
        "linear-drift",
        "linear-adversarial",
        "quadratic",
        "regression",
    ]
    expected = {
        "simplex": [*everywhere, "absolute", "portfolio"],
        "ball": everywhere,
        "l1": [*everywhere, "absolute"],
        "box": [*everywhere, "absolute"],
        "nuclear": [*everywhere, "completion", "linear-low-rank"],
        "flow": [*everywhere, "absolute", "edge-costs", "congestion"],
        "birkhoff": [*everywhere, "absolute", "assignment"],
    }
    for set_name, names in expected.items():
        assert families_for(SETS[set_name]) == names
    assert set(FAMILIES) == {name for names in expected.values() for name in names}
    for name, family in FAMILIES.items():
        assert family.name == name and issubclass(family, LossSequence)


def test_unknown_family_lists_the_allowed_names():
    with pytest.raises(ValueError, match="unknown loss family 'cubic'; allowed: linear, "):
        make_losses("cubic", Simplex(3))


@pytest.mark.parametrize(
    ("family", "set_name"), [("portfolio", "ball"), ("completion", "simplex"), ("absolute", "ball")]
)
def test_family_not_defined_on_the_set_lists_the_valid_ones(family: str, set_name: str):
    allowed = ", ".join(families_for(SETS[set_name]))
    with pytest.raises(ValueError, match=f"families for this set: {allowed}$"):
        make_losses(family, SETS[set_name])
    with pytest.raises(ValueError, match="is not defined on"):
        FAMILIES[family](SETS[set_name])


def test_unknown_parameter_lists_the_allowed_ones():
    with pytest.raises(
        ValueError, match=r"unknown parameter\(s\) sigma; allowed: mean_norm, noise$"
    ):
        make_losses("linear", Simplex(3), sigma=1.0)


@pytest.mark.parametrize(
    ("family", "set_name", "kwargs", "message"),
    [
        ("linear", "simplex", {"noise": -0.1}, r"noise=-0.1 must be a finite number in \[0, inf\)"),
        ("linear", "simplex", {"mean_norm": 0.0, "noise": 0.0}, "must be > 0"),
        ("linear", "simplex", {"mean_norm": float("nan")}, "mean_norm=nan"),
        ("linear-switching", "simplex", {"period": 0}, "period=0 must be an integer >= 1"),
        ("linear-switching", "simplex", {"period": 2.5}, "period=2.5 must be an integer"),
        ("quadratic", "ball", {"distance": -1}, "distance=-1"),
        ("regression", "ball", {"feature_norm": 0.0}, r"feature_norm=0.0 .* in \(0, inf\)"),
        ("absolute", "simplex", {"outlier_rate": 1.5}, r"outlier_rate=1.5 .* in \[0, 1\]"),
        ("portfolio", "simplex", {"r_min": 0.0}, r"r_min=0.0 .* in \(0, 1\]"),
        ("portfolio", "simplex", {"r_max": 0.9}, r"r_max=0.9 .* in \[1, inf\)"),
        ("portfolio", "simplex", {"correlation": 2}, "correlation=2"),
        ("completion", "nuclear", {"rank": 4}, r"rank=4 must be an integer in \[1, 3\]"),
        ("completion", "nuclear", {"signal": 1.2}, "signal=1.2"),
        ("edge-costs", "flow", {"noise": 0.5}, r"noise=0.5 .* in \[0, 0.25\]"),
        ("assignment", "birkhoff", {"mean_high": 0.1}, r"mean_high=0.1 .* in \[0.25, inf\)"),
        ("congestion", "flow", {"beta": 0}, r"beta=0 .* in \(0, inf\)"),
    ],
)
def test_bad_parameters_raise_value_error(family, set_name, kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_losses(family, SETS[set_name], **kwargs)


def test_bad_rounds_points_and_checkpoints():
    losses = make_losses("quadratic", Simplex(3))
    with pytest.raises(RuntimeError, match="call reset"):
        losses.loss(0, np.full(3, 1 / 3))
    losses.reset(np.random.default_rng(0))
    x = np.full(3, 1 / 3)
    for bad_round in (-1, 1.5, True):
        with pytest.raises(ValueError, match="must be an integer >= 0"):
            losses.loss(bad_round, x)
    with pytest.raises(ValueError, match=r"point has shape \(4,\), expected \(3,\)"):
        losses.gradient(0, np.ones(4))
    with pytest.raises(ValueError, match=r"points have shape \(2, 4\), expected \(k, 3\)"):
        losses.losses(0, np.ones((2, 4)))
    for bad in ([], [0, 5], [-3], [2.5]):
        with pytest.raises(ValueError, match="checkpoints"):
            losses.comparator(bad)


def test_make_losses_needs_a_convex_set():
    with pytest.raises(TypeError, match="ConvexSet"):
        make_losses("linear", np.zeros(3))


def test_reset_fixes_the_sequence_before_any_action():
    """Oblivious: two readers of one seed agree whatever points they evaluate."""
    first, second = sequence("absolute", "box", seed=3), sequence("absolute", "box", seed=3)
    low = np.asarray(SETS["box"].bounds()[0])
    first.losses(0, np.broadcast_to(low, (50, 3)))  # an adversary that saw plays would react
    np.testing.assert_array_equal(
        first.losses(50, np.zeros((5, 3)) + low), second.losses(50, np.zeros((5, 3)) + low)
    )


@pytest.mark.parametrize(("rows", "cols", "rank"), [(1, 2, 1), (2, 1, 1), (1, 1, 1), (3, 4, 2)])
def test_completion_default_rank_fits_small_matrices(rows: int, cols: int, rank: int):
    import gymnasium as gym

    import bco_gym  # noqa: F401  (registers the ids)

    env = gym.make("BCO-NuclearBall-v0", rows=rows, cols=cols, horizon=20)
    assert env.unwrapped.losses.rank == rank == min(2, rows, cols)
    env.reset(seed=0)
    _, reward, *_ = env.step(np.zeros((rows, cols)))
    assert np.isfinite(reward)
    target = env.unwrapped.losses.target()
    assert np.linalg.matrix_rank(target) == rank
