"""The anchor certificate's compiled distances (bco_gym/agents/kernels/checks.py) against
the NumPy certificate of bco_gym/envs/feasibility.py: the same verdicts on blocks built
at the limit, and the same accepted and refused blocks."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from bco_gym.agents.kernels.checks import near_anchors
from bco_gym.envs.feasibility import Feasibility
from bco_gym.errors import InfeasibleActionError
from bco_gym.sets import Hypercube, L2Ball


def checks(convex_set):
    plain, fast = Feasibility(convex_set, 1e-9), Feasibility(convex_set, 1e-9)
    fast.use_kernel(near_anchors)
    return plain, fast


def block(convex_set, delta, rows, rounds, scale, rng):
    """Anchors inside K_delta and plays at ``scale`` * delta from them."""
    shrunk = convex_set.shrink(delta)
    anchors = np.array([shrunk.project(v) for v in rng.standard_normal((rows, convex_set.dim))])
    directions = rng.standard_normal((rows, rounds, convex_set.dim))
    directions /= np.linalg.norm(directions, axis=2, keepdims=True)
    return anchors[:, None] + scale * delta * directions, anchors


@pytest.mark.parametrize("convex_set", [L2Ball(10), L2Ball(3, radius=2.0), Hypercube(n=7)])
def test_the_same_verdicts_near_the_limit(convex_set):
    rng = np.random.default_rng(4)
    plain, fast = checks(convex_set)
    delta = 0.1
    slack = plain.atol * convex_set.inner_radius / (4.0 * convex_set.outer_radius)
    for relative in (0.5, 1.0, 1.0 + slack / delta * 0.5, 1.0 + slack / delta * 2, 1.5):
        plays, anchors = block(convex_set, delta, 6, 50, relative, rng)
        want = plain._certified(plays, anchors, delta)
        assert fast._certified(plays, anchors, delta) == want
        assert want == (relative < 1.0 + slack / delta)  # away from the limit's rounding
    plays, anchors = block(convex_set, delta, 3, 8, 1.0, rng)
    plays[1, 4, 0] = np.nan
    assert not fast._certified(plays, anchors, delta)
    assert not plain._certified(plays, anchors, delta)


def test_blocks_accepted_and_refused_alike():
    ball = L2Ball(5)
    rng = np.random.default_rng(9)
    plain, fast = checks(ball)
    plays, anchors = block(ball, 0.2, 4, 30, 1.0, rng)
    for check in (plain, fast):
        np.testing.assert_array_equal(check.block(plays, 0, (anchors, 0.2)), plays)
    plays[2, 7] *= 50.0  # outside the ball: not certified, and the exact check refuses
    for check in (plain, fast):
        with pytest.raises(InfeasibleActionError, match="round 7, row 2"):
            check.block(plays, 0, (anchors, 0.2))
    # a strided block (a slice of a longer one) is certified by the NumPy code
    longer, anchors = block(ball, 0.2, 4, 30, 1.0, rng)
    assert fast._certified(longer[:, 5:], anchors, 0.2) == plain._certified(
        longer[:, 5:], anchors, 0.2
    )
