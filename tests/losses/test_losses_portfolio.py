"""The synthetic portfolio family's comparator: on the simplex exactly, gap never clipped."""

from __future__ import annotations

import numpy as np
import pytest
from losses_helpers import sum_over_rounds

from bco_gym.losses import make_losses
from bco_gym.losses.solvers import certified_gap, frank_wolfe_gap
from bco_gym.sets import Simplex


@pytest.mark.parametrize(("n", "seed"), [(4, 1), (10, 2), (30, 1)])
def test_comparator_point_is_on_the_simplex_and_its_gap_is_honest(n: int, seed: int):
    """Before the fix these cases returned points 1e-13 off the affine hull, values ~4e-9
    below the certified minimum and a negative gap clipped to 0."""
    losses = make_losses("portfolio", Simplex(n))
    losses.reset(np.random.default_rng(seed))
    for result in losses.comparator([3000, 40000]):
        point = result.point
        assert np.all(point >= 0.0)
        assert abs(point.sum() - 1.0) <= n * np.finfo(float).eps
        _, gradient, _ = losses.newton_statistics(result.horizon, point)
        raw = float(gradient @ (point - Simplex(n).lmo(gradient)))
        # the raw dot product is >= 0 up to rounding, and the reported gap covers it
        assert raw >= -1e-12 * result.horizon
        assert result.gap >= raw and result.gap >= 0.0
        assert result.gap <= 1e-9 * result.horizon * losses.bound
        exact = sum_over_rounds(losses, point, result.horizon)
        assert result.value == pytest.approx(exact, rel=1e-12)


def test_a_point_off_the_simplex_gets_a_negative_gap_and_is_refused_as_certified():
    simplex = Simplex(3)
    gradient = np.array([-1e6, -1e6, -1e6 + 1.0])  # a huge normal part, as -T r/<r, x>
    off = np.array([1.0 + 1e-9, 0.0, 0.0])  # the minimiser, pushed off the hull
    gap, vertex = frank_wolfe_gap(simplex, gradient, off)
    assert gap < 0.0  # never clipped: f(off) is below the minimum over K
    np.testing.assert_array_equal(vertex, [1.0, 0.0, 0.0])
    with pytest.raises(ArithmeticError, match="negative Frank-Wolfe gap"):
        certified_gap(simplex, gradient, off)
    inside = np.array([0.25, 0.25, 0.5])
    gap, _ = certified_gap(simplex, gradient, inside)
    assert 0.5 <= gap <= 0.5 + 1e-8  # the exact 0.5 plus its rounding allowance
