"""Separation oracles (ball, L1 ball, box, simplex) against their definition.

For x outside K the oracle returns (a, b) with ||a|| = 1, <a, x> > b and <a, z> <= b on
K, checked through the support function max_K <a, z> = <a, lmo(-a)> (the LMOs are
checked against scipy's LP elsewhere), which here equals b: the hyperplane supports K.
For x in K it returns None, in agreement with ``contains``.
"""

from __future__ import annotations

import numpy as np
import pytest

from bco_gym.sets import FlowPolytope, Hypercube, L1Ball, L2Ball, Simplex

SETS = [
    L2Ball(4, radius=1.5),
    L1Ball(5, radius=2.0),
    Hypercube(low=[-1.0, 0.0, 2.0], high=[1.0, 0.5, 3.0]),
    Simplex(6),
]


def points_around(convex_set, rng, count):
    """Points of K, points near its boundary and far outside (and off the simplex's plane)."""
    inside = convex_set.sample_many(rng, count)
    noise = rng.normal(size=inside.shape)
    return np.concatenate([inside, inside + 0.05 * noise, inside + 3.0 * noise])


@pytest.mark.parametrize("convex_set", SETS, ids=repr)
def test_separation_meets_its_definition(convex_set):
    rng = np.random.default_rng(0)
    separated = 0
    for x in points_around(convex_set, rng, 200):
        answer = convex_set.separation(x)
        if answer is None:
            assert convex_set.contains(x, atol=1e-12)
            continue
        separated += 1
        normal, offset = answer
        assert np.linalg.norm(normal) == pytest.approx(1.0, abs=1e-12)
        # <a, x> as the oracle evaluates it: NumPy's pairwise sum (sets.base.separating)
        assert float(np.add.reduce(normal * x)) > offset
        support = normal @ convex_set.lmo(-normal)  # max over K of <a, z>
        assert support == pytest.approx(offset, abs=1e-12)  # <a, z> <= b on K, and tight
        assert not convex_set.contains(x, atol=0.0)
    assert separated > 200  # the outside points were reached


@pytest.mark.parametrize("convex_set", SETS, ids=repr)
def test_tolerance_admits_points_just_outside(convex_set):
    x = np.asarray(convex_set.lmo(np.arange(convex_set.dim, dtype=float) + 1.0))
    outward = x - convex_set.center
    nudged = x + 1e-10 * outward / np.linalg.norm(outward)
    assert convex_set.separation(nudged) is not None
    assert convex_set.separation(nudged, atol=1e-8) is None
    assert convex_set.has_separation


def test_sets_without_an_oracle_say_so():
    flow = FlowPolytope.grid(2, 2)
    assert not flow.has_separation
    with pytest.raises(NotImplementedError, match="no separation oracle"):
        flow.separation(flow.center)
