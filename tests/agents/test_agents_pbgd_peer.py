"""pbgd and pbgd2 against their peer, PyNOL's PBGD (the ``pynol-xzp`` package, the
``peer`` extra): the same exploration draws, the plays compared round by round.

With PyNOL's Hedge given bco_gym's fixed rate the two implementations play the same
points to rounding, on the ball and on the simplex, from one point and from two. With
PyNOL's own rate, 2/(L D sqrt(t)) in Hedge's multiplicative form, they part from the
third round on; that form has no regret guarantee, shown on two experts.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pynol", reason="the peer comparison needs the `peer` extra (pynol-xzp)")

from pynol.learner.meta import Hedge
from pynol_peer import compare, drifting_costs

from bco_gym.sets import L2Ball, Simplex

HORIZON = 300


@pytest.mark.parametrize("two_point", [False, True], ids=["pbgd", "pbgd2"])
@pytest.mark.parametrize("convex_set", [L2Ball(5), Simplex(6)], ids=repr)
def test_the_plays_equal_the_peers_with_the_same_meta_rate(convex_set, two_point):
    thetas = drifting_costs(convex_set, HORIZON, seed=1)
    ours, theirs = compare(convex_set, HORIZON, thetas, two_point=two_point)
    assert ours.shape == theirs.shape == (HORIZON, 2 if two_point else 1, convex_set.shape[0])
    assert np.abs(ours - theirs).max() <= 1e-12
    assert np.abs(np.diff(ours, axis=0)).max() > 1e-3  # the plays moved: not a trivial match


@pytest.mark.parametrize("two_point", [False, True], ids=["pbgd", "pbgd2"])
def test_the_peers_own_meta_rate_is_the_one_difference(two_point):
    """PyNOL's decreasing rate changes the meta's weights from the second update on (the
    first update sees every expert at the centre, all surrogate losses 0)."""
    convex_set = L2Ball(5)
    thetas = drifting_costs(convex_set, HORIZON, seed=1)
    ours, theirs = compare(convex_set, HORIZON, thetas, two_point=two_point, same_rate=False)
    gaps = np.abs(ours - theirs).reshape(HORIZON, -1).max(axis=1)
    assert gaps[:2].max() <= 1e-15
    assert gaps.max() > 1e-4


def test_multiplicative_hedge_with_a_decreasing_rate_has_linear_regret():
    """Two experts, losses (0, 1) for T/4 rounds then (1, 0): PyNOL's Hedge with rate
    1/sqrt(t) lets the second expert win back its weight only at the later, smaller rates
    (p_t is proportional to p_1 exp(-sum_s eps_s l_s)) and lags it for the rest of the run:
    regret about T/2 against it. With a fixed rate (pbgd's meta) the regret is
    O(sqrt(T log N))."""
    T = 4000
    regrets = {}
    for kind, rate in (
        ("decreasing", np.array([1 / np.sqrt(t + 1) for t in range(T)])),
        ("fixed", np.sqrt(8 * np.log(2) / T)),
    ):
        hedge = Hedge(prob=np.array([0.5, 0.5]), lr=rate)
        total, cumulative = 0.0, np.zeros(2)
        for t in range(T):
            loss = np.array([0.0, 1.0]) if t < T // 4 else np.array([1.0, 0.0])
            hedge.opt_by_optimism(None)
            total += float(hedge.prob @ loss)
            cumulative += loss
            hedge.opt_by_gradient(loss)
        regrets[kind] = total - cumulative.min()
    assert regrets["decreasing"] > 0.45 * T
    assert regrets["fixed"] < np.sqrt(T * np.log(2) / 2) + 1
