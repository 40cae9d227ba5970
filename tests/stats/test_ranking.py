"""Rankings from all pairs: Holm's correction, the paired t-test, ordered groups."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from synthetic_results import synthetic_result

from bco_gym.stats.paired import t_interval
from bco_gym.stats.ranking import holm, paired_p_value, rank, ranking_text


def results_with_finals(finals: dict[str, list[float]]) -> list:
    return [
        synthetic_result(agent, seed, (value / 100, value / 10, value))
        for agent, values in finals.items()
        for seed, value in enumerate(values)
    ]


def test_holm_matches_the_step_down_definition():
    p_values = [0.01, 0.04, 0.03, 0.005]
    # sorted: 0.005 (x4), 0.01 (x3), 0.03 (x2), 0.04 (x1), running maximum
    assert holm(p_values) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


def test_holm_is_monotone_and_never_below_the_raw_p_values():
    rng = np.random.default_rng(3)
    for _ in range(50):
        p_values = list(rng.uniform(0, 0.2, size=rng.integers(1, 9)))
        adjusted = holm(p_values)
        order = np.argsort(p_values)
        assert all(a >= p for a, p in zip(adjusted, p_values, strict=True))
        assert all(np.diff(np.asarray(adjusted)[order]) >= 0)
        assert min(adjusted) == pytest.approx(min(1.0, len(p_values) * min(p_values)))


def test_the_p_value_is_scipys_paired_t_test_and_agrees_with_the_interval():
    rng = np.random.default_rng(0)
    for _ in range(40):
        values = rng.normal(rng.uniform(-1, 1), 1.0, size=rng.integers(2, 10))
        p_value = paired_p_value(values)
        assert p_value == pytest.approx(stats.ttest_1samp(values, 0.0).pvalue, rel=1e-10)
        _, low, high = t_interval(values)
        assert (p_value < 0.05) == (low > 0 or high < 0)
    assert paired_p_value([1.0]) == 1.0
    assert paired_p_value([0.0, 0.0, 0.0]) == 1.0
    assert paired_p_value([2.0, 2.0, 2.0]) == 0.0


def misleading_chain() -> dict[str, list[float]]:
    """A beats C on every seed by 5 +- 0.1; B is noisy and sits between them by mean."""
    rng = np.random.default_rng(1)
    base = 100 + 20 * rng.standard_normal(8)  # the sequences' shared noise
    return {
        "a": list(base),
        "b": list(102.5 + 60 * rng.standard_normal(8)),
        "c": list(base + 5 + 0.1 * rng.standard_normal(8)),
    }


def test_all_pairs_separate_what_a_neighbour_chain_calls_a_tie():
    finals = misleading_chain()
    ranking = rank(results_with_finals(finals))
    assert ranking.labels == ("a", "b", "c")  # b's mean lies between
    # Neighbour chain: a-b and b-c intervals both contain 0 ...
    for better, worse in itertools.pairwise(ranking.labels):
        _, low, high = t_interval(np.subtract(finals[better], finals[worse]))
        assert low < 0 < high
    # ... but a and c, on their own seeds, are told apart even after Holm (3 pairs).
    a_c = ranking.pairs[("a", "c")]
    differences = np.subtract(finals["a"], finals["c"])
    assert a_c.mean == pytest.approx(differences.mean())
    assert a_c.wins == 8 and a_c.first_better
    assert ranking.pairs[("c", "a")].mean == pytest.approx(-a_c.mean)
    raw = [
        stats.ttest_1samp(np.subtract(finals[x], finals[y]), 0).pvalue
        for x, y in (("a", "b"), ("a", "c"), ("b", "c"))
    ]
    assert a_c.adjusted == pytest.approx(holm(raw)[1], rel=1e-9)
    assert not ranking.separated("a", "b") and not ranking.separated("b", "c")
    groups, left_out = ranking.groups
    assert groups == (("a",), ("c",)) and left_out == ("b",)
    assert ranking_text(ranking) == "a < c (b not separated from any)"


def test_groups_are_a_weak_order_with_ties_inside():
    rng = np.random.default_rng(2)
    base = 50 + 10 * rng.standard_normal(8)

    def shifted(shift):
        return list(base + shift + 0.5 * rng.standard_normal(8))

    finals = {"x": shifted(0), "y": shifted(0.1), "z": shifted(10), "w": shifted(20)}
    ranking = rank(results_with_finals(finals))
    groups, left_out = ranking.groups
    assert left_out == ()
    assert [set(g) for g in groups] == [{"x", "y"}, {"z"}, {"w"}]
    for index, group in enumerate(groups):
        for a, b in itertools.combinations(group, 2):
            assert not ranking.separated(a, b)
        for later in groups[index + 1 :]:
            assert all(ranking.beats(a, b) for a in group for b in later)
    assert ranking_text(ranking) == "{x, y} < z < w"


def test_holm_can_withhold_a_claim_the_raw_interval_makes():
    """Three seeds, ten pairs: a raw p of about 0.02 does not survive the correction."""
    rng = np.random.default_rng(5)
    base = 100 + 30 * rng.standard_normal(3)
    finals = {name: list(base + 50 * rng.standard_normal(3)) for name in "pqrs"}
    finals["t"] = list(np.asarray(finals["p"]) - np.array([3.0, 5.0, 7.0]))
    ranking = rank(results_with_finals(finals))
    comparison = ranking.pairs[("t", "p")]
    assert comparison.p_value < 0.05 and comparison.high < 0  # the raw interval excludes 0
    assert comparison.adjusted > 0.05 and not comparison.separated


def test_nothing_is_separated_with_one_seed():
    ranking = rank(results_with_finals({"a": [1.0], "b": [9.0], "c": [5.0]}))
    assert not any(c.separated for c in ranking.pairs.values())
    assert all(math.isnan(c.low) for c in ranking.pairs.values())
    assert ranking_text(ranking) == "none separated: {a, c, b}"


def test_rank_refuses_several_horizons():
    longer = synthetic_result("b", 0, (1, 2, 3, 4), checkpoints=(1, 10, 100, 1000))
    results = [*results_with_finals({"a": [1.0, 2.0]}), longer]
    with pytest.raises(ValueError, match="one horizon"):
        rank(results)
