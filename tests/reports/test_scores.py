"""Scores across scenarios: hand computations, and rliable against the library's own bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest
from synthetic_results import synthetic_result

from bco_gym.reports.scores import (
    aggregate,
    bootstrap_aggregates,
    improvement,
    iqm,
    mean_of_means,
    performance_profile,
    probability_of_improvement,
    rliable_available,
    score_rows,
    scores_by_scenario,
)


def finals(agent, values):
    return [synthetic_result(agent, s, (v / 100, v / 10, v)) for s, v in enumerate(values)]


def test_a_score_is_regret_over_randoms_on_the_same_seed():
    results = finals("random", [100.0, 50.0, -1.0]) + finals("bbcg", [25.0, 50.0, 3.0])
    rows = score_rows("quick-v1", "ball", results)
    by = {(r.agent, r.seed): r for r in rows}
    assert by[("bbcg", 0)].score == 0.25 and by[("bbcg", 1)].score == 1.0
    assert by[("random", 0)].score == 1.0
    assert math.isnan(by[("bbcg", 2)].score)  # random's regret is not positive there
    assert by[("bbcg", 0)].regret == 25.0 and by[("bbcg", 0)].horizon == 100
    assert list(scores_by_scenario(rows, "bbcg")["ball"]) == [0.25, 1.0]


def test_iqm_mean_and_improvement_by_hand():
    first, second = np.array([0.1, 0.2, 0.3, 0.4]), np.array([1.0, 5.0, 2.0, 3.0, 4.0, 100.0, 6, 7])
    # 12 runs pooled, 3 trimmed at each end: 0.4, 1, 2, 3, 4, 5 remain
    assert iqm([first, second]) == pytest.approx(np.mean([0.4, 1, 2, 3, 4, 5]))
    assert mean_of_means([first, second]) == pytest.approx((0.25 + 128 / 8) / 2)
    # scenario 1: x = (1, 2), y = (2, 3): pairs (1<2, 1<3, 2=2, 2<3) -> 3.5 / 4
    # scenario 2: x = (5,), y = (4,): 0
    value = probability_of_improvement(
        [np.array([1.0, 2.0]), np.array([5.0])], [np.array([2.0, 3.0]), np.array([4.0])]
    )
    assert value == pytest.approx((3.5 / 4 + 0) / 2)


def test_the_bootstrap_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(0)
    groups = [rng.uniform(0.2, 0.6, 8), rng.uniform(0.3, 0.9, 8), rng.uniform(0, 1, 4)]
    first = bootstrap_aggregates(groups, reps=500)
    assert first == bootstrap_aggregates(groups, reps=500)
    for name, point in (("iqm", iqm(groups)), ("mean", mean_of_means(groups))):
        low, high = first[name]
        assert low < point < high
    # one value per scenario: every resample is the data itself
    single = bootstrap_aggregates([np.array([0.5]), np.array([0.7])], reps=50)
    assert single["mean"] == pytest.approx((0.6, 0.6))


def test_the_performance_profile_counts_runs_at_or_below_tau():
    profile = performance_profile(
        {"a": np.array([0.1, 0.5]), "b": np.array([0.5, 0.9, 1.2, 2.0])}, np.array([0.5, 1.0])
    )
    assert profile == pytest.approx([(1 + 1 / 4) / 2, (1 + 2 / 4) / 2])


def test_rliable_and_the_own_bootstrap_agree():
    """Same data, both implementations: equal points, intervals within Monte Carlo error."""
    assert rliable_available()  # the dev extra installs it
    rng = np.random.default_rng(1)
    ours = {f"s{i}": rng.uniform(0.1, 0.8, 6) for i in range(4)}
    theirs = {f"s{i}": rng.uniform(0.3, 1.0, 6) for i in range(4)}
    with_rliable = aggregate(ours, reps=1000)
    own = aggregate(ours, reps=4000, use_rliable=False)
    for name in ("iqm", "mean"):
        assert with_rliable[name].method == "rliable" and own[name].method == "bco_gym"
        assert with_rliable[name].value == pytest.approx(own[name].value, rel=1e-12)
        width = own[name].high - own[name].low
        assert abs(with_rliable[name].low - own[name].low) < 0.25 * width
        assert abs(with_rliable[name].high - own[name].high) < 0.25 * width
    rl = improvement(ours, theirs, reps=1000, use_rliable=True)
    mine = improvement(ours, theirs, reps=4000)
    assert rl.method == "rliable" and mine.method == "bco_gym"
    assert rl.value == pytest.approx(mine.value, rel=1e-12)
    for bound in ("low", "high"):
        assert abs(getattr(rl, bound) - getattr(mine, bound)) < 0.25 * (mine.high - mine.low)
    # rliable is seeded too, and leaves NumPy's global generator as it found it
    state = np.random.get_state()[1].copy()  # noqa: NPY002
    assert aggregate(ours, reps=200)["iqm"] == aggregate(ours, reps=200)["iqm"]
    assert (np.random.get_state()[1] == state).all()  # noqa: NPY002


def test_ragged_scenarios_use_the_own_bootstrap():
    ragged = {"a": np.array([0.1, 0.2, 0.3]), "b": np.array([0.4, 0.5])}
    assert aggregate(ragged)["iqm"].method == "bco_gym"
    with pytest.raises(ValueError, match="equally many runs"):
        aggregate(ragged, use_rliable=True)
