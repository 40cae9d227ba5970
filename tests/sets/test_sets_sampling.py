"""ConvexSet.sample_many: shapes, membership and the documented laws of every built-in set.

The vectorised draws need not repeat ``sample``'s stream, so their laws are checked
against closed forms (Kolmogorov-Smirnov tests at fixed seeds, so deterministic) and,
set by set, against the loop over ``sample`` (two-sample KS on a few statistics).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from set_cases import CASES

from bco_gym.sets import Hypercube, L1Ball, L2Ball, NuclearNormBall, Simplex
from bco_gym.sets.base import ConvexSet

DRAWS = 4000
LEVEL = 1e-3  # a KS p-value below this fails (the seeds are fixed: no flakiness)


def _rng(seed: int = 7) -> np.random.Generator:
    return np.random.default_rng(seed)


def _uniform_ks(values: np.ndarray) -> float:
    return stats.kstest(values, "uniform").pvalue


# -- every built-in set (and its shrunk copy) -------------------------------------------------
@pytest.mark.parametrize("count", [0, 1, 57])
def test_shape_and_membership_of_every_built_in_set(case, count):
    for convex_set in (case.make(), case.make().shrink(0.3 * case.make().inner_radius)):
        points = convex_set.sample_many(_rng(), count)
        assert points.shape == (count, *convex_set.shape) and points.dtype == np.float64
        assert convex_set.violation_many(points) is None
        if count > 1:  # independent draws, not copies of one point
            assert len(np.unique(points.reshape(count, -1), axis=0)) == count


def test_the_draws_come_from_the_generator_passed(case):
    convex_set = case.make()
    first = convex_set.sample_many(_rng(3), 20)
    np.testing.assert_array_equal(first, convex_set.sample_many(_rng(3), 20))
    assert not np.array_equal(first, convex_set.sample_many(_rng(4), 20))
    rng = _rng(3)  # two calls continue one stream: not the same points again
    assert not np.array_equal(convex_set.sample_many(rng, 20), convex_set.sample_many(rng, 20))


@pytest.mark.parametrize("count", [-1, 2.0, True, "3", None])
def test_bad_counts_are_refused(count):
    with pytest.raises(ValueError, match=r"sample_many: count=.* must be an int >= 0"):
        Simplex(3).sample_many(_rng(), count)


# -- the laws of the vectorised sets -----------------------------------------------------------
def test_simplex_is_uniform_dirichlet():
    n = 6
    points = Simplex(n).sample_many(_rng(), DRAWS)
    np.testing.assert_allclose(points.sum(axis=1), 1.0, atol=1e-12)
    for j in (0, n - 1):  # each marginal is Beta(1, n - 1)
        assert stats.kstest(points[:, j], stats.beta(1, n - 1).cdf).pvalue > LEVEL
    # the sum of the first k entries is Beta(k, n - k)
    assert stats.kstest(points[:, :2].sum(axis=1), stats.beta(2, n - 2).cdf).pvalue > LEVEL


@pytest.mark.parametrize("n", [1, 2, 5])
def test_l2_ball_radius_law_and_uniform_direction(n):
    radius = 2.5
    points = L2Ball(n, radius=radius).sample_many(_rng(n), DRAWS)
    norms = np.linalg.norm(points, axis=1)
    assert _uniform_ks((norms / radius) ** n) > LEVEL  # P(r <= s) = (s/R)^n
    if n == 1:  # the direction is a fair sign
        assert stats.binomtest(int((points[:, 0] > 0).sum()), DRAWS).pvalue > LEVEL
        return
    # a uniform direction u has (u_1 + 1)/2 ~ Beta((n-1)/2, (n-1)/2), on any axis
    half = (n - 1) / 2
    for axis in (np.eye(n)[0], np.ones(n) / np.sqrt(n)):
        cosines = points @ axis / norms
        assert stats.kstest((cosines + 1) / 2, stats.beta(half, half).cdf).pvalue > LEVEL


def test_l1_ball_is_uniform():
    n, radius = 4, 1.5
    points = L1Ball(n, radius=radius).sample_many(_rng(), DRAWS)
    norms = np.abs(points).sum(axis=1) / radius  # uniform in the ball: ||x||_1/R ~ Beta(n, 1)
    assert stats.kstest(norms, stats.beta(n, 1).cdf).pvalue > LEVEL
    for j in range(n):  # |x_j|/R ~ Beta(1, n), with a fair sign
        assert stats.kstest(np.abs(points[:, j]) / radius, stats.beta(1, n).cdf).pvalue > LEVEL
        assert stats.binomtest(int((points[:, j] > 0).sum()), DRAWS).pvalue > LEVEL


def test_box_is_uniform_per_coordinate_and_independent():
    low, high = np.array([-1.0, 0.0, 2.0]), np.array([1.0, 0.5, 5.0])
    points = Hypercube(low, high).sample_many(_rng(), DRAWS)
    unit = (points - low) / (high - low)
    for j in range(3):
        assert _uniform_ks(unit[:, j]) > LEVEL
    assert abs(stats.pearsonr(unit[:, 0], unit[:, 1]).statistic) < 4 / np.sqrt(DRAWS)


def test_nuclear_ball_radius_law():
    ball = NuclearNormBall(4, 3, radius=2.0)
    points = ball.sample_many(_rng(), DRAWS)
    norms = np.linalg.svd(points, compute_uv=False).sum(axis=1) / 2.0
    assert _uniform_ks(norms**ball.dim) > LEVEL  # ||X||_*/R = U^(1/(rows*cols))


# -- the vectorised law is the loop's law ------------------------------------------------------
def _statistics(points: np.ndarray) -> list[np.ndarray]:
    flat = points.reshape(len(points), -1)
    return [flat[:, 0], flat[:, -1], np.linalg.norm(flat, axis=1), flat.sum(axis=1)]


@pytest.mark.parametrize(
    "convex_set",
    [
        Simplex(5),
        L2Ball(3, radius=2.0),
        L1Ball(4, radius=1.5),
        Hypercube(np.array([-1.0, 0.0]), np.array([1.0, 0.5])),
        NuclearNormBall(3, 2, radius=0.5),
        L2Ball(3).shrink(0.4),
    ],
    ids=repr,
)
def test_vectorised_draws_have_the_law_of_the_sample_loop(convex_set):
    batched = convex_set.sample_many(_rng(1), 2000)
    rng = _rng(2)
    looped = np.array([convex_set.sample(rng) for _ in range(2000)])
    for statistic_batched, statistic_looped in zip(
        _statistics(batched), _statistics(looped), strict=True
    ):
        assert stats.ks_2samp(statistic_batched, statistic_looped).pvalue > LEVEL


def test_shrunk_set_maps_the_base_sets_draws():
    base = L1Ball(4, radius=1.5)
    shrunk = base.shrink(0.3)
    np.testing.assert_array_equal(
        shrunk.sample_many(_rng(), 30),
        base.center + shrunk.scale * (base.sample_many(_rng(), 30) - base.center),
    )


# -- the default loop ----------------------------------------------------------------------------
class Square(ConvexSet):
    """[0, 1]^2 known only through its LMO and membership (a user-defined set)."""

    def __repr__(self) -> str:  # a stable test id (pytest-xdist compares ids)
        return "Square()"

    shape = (2,)
    center = np.full(2, 0.5)
    inner_radius = 0.5
    outer_radius = float(np.sqrt(0.5))

    def lmo(self, direction):
        g = self._check_array(direction, "direction")
        return (g < 0).astype(float)

    def contains(self, x, atol=1e-9):
        x = np.asarray(x)
        return bool(np.all(x >= -atol) and np.all(x <= 1 + atol))


@pytest.mark.parametrize(
    "convex_set",
    [Square(), *[c.make() for c in CASES if c.name in ("grid2x4", "birkhoff3")]],
    ids=repr,
)
def test_default_is_the_loop_over_sample(convex_set):
    """User-defined sets (and the built-in sets without a closed form) loop over sample."""
    rng = _rng()
    expected = np.array([convex_set.sample(rng) for _ in range(9)])
    np.testing.assert_array_equal(convex_set.sample_many(_rng(), 9), expected)
    assert convex_set.sample_many(_rng(), 0).shape == (0, *convex_set.shape)
