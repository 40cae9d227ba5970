"""Paired statistics against hand computations on hand-made results."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from synthetic_results import FINALS, comparison, synthetic_result

from bco_gym.stats.paired import (
    find_reference,
    paired_columns,
    paired_differences,
    paired_table,
    series_label,
    t_interval,
)

T_975_3 = 3.182446305284263  # Student t quantile 0.975 with 3 degrees of freedom


def hand_interval(values):
    values = np.asarray(values, dtype=float)
    half = T_975_3 * values.std(ddof=1) / math.sqrt(len(values))
    return values.mean(), values.mean() - half, values.mean() + half


def test_t_interval_matches_the_formula():
    mean, low, high = t_interval([1.0, 2.0, 3.0, 4.0])
    assert (mean, low, high) == pytest.approx(hand_interval([1, 2, 3, 4]), rel=1e-12)


def test_t_interval_along_an_axis_and_with_one_value():
    values = np.array([[1.0, 10.0], [3.0, 14.0], [2.0, 12.0], [6.0, 20.0]])
    mean, low, high = t_interval(values, axis=0)
    assert (mean[1], low[1], high[1]) == pytest.approx(hand_interval(values[:, 1]), rel=1e-12)
    single = t_interval([5.0])
    assert single[0] == 5.0 and np.isnan(single[1]) and np.isnan(single[2])


@pytest.mark.parametrize("level", [0.0, 1.0, -0.5, 1.5])
def test_t_interval_rejects_levels_outside_the_unit_interval(level):
    with pytest.raises(ValueError, match="level"):
        t_interval([1.0, 2.0], level=level)


def test_labels_mark_full_information_and_non_theory_constants():
    results = comparison()
    assert series_label(results[-1]) == "ofw (full info)"
    tuned = synthetic_result("bbcg", 0, (1, 2, 3), constants="tuned", scale=2.5)
    assert series_label(tuned) == "bbcg (tuned, c=2.5)"


def test_paired_differences_align_seeds_and_leave_out_unpaired_ones():
    results = comparison()
    bbcg = [r for r in results if r.agent == "bbcg"]
    random = [r for r in results if r.agent == "random"][1:]  # no seed 0
    seeds, differences = paired_differences(bbcg, random)
    assert seeds == [1, 2, 3]
    expected = [FINALS["bbcg"][s] - FINALS["random"][s] for s in seeds]
    np.testing.assert_allclose(differences[:, -1], expected)
    np.testing.assert_allclose(differences[:, 0], np.array(expected) / 100)


def test_paired_differences_refuse_different_loss_sequences():
    bbcg = [synthetic_result("bbcg", 0, (1, 2, 3))]
    other = [synthetic_result("random", 0, (1, 2, 4), loss={"name": "linear", "noise": 1.0})]
    with pytest.raises(ValueError, match="different loss"):
        paired_differences(bbcg, other)


def with_digest(result, digest):
    return dataclasses.replace(result, loss={**result.loss, "digest": digest})


def test_paired_tables_refuse_results_whose_loss_digests_differ():
    """Two data sets with the same description (say two arrays): told apart by the digest."""
    results = comparison(("random", "bbcg"))
    mixed = [with_digest(r, "a" * 64 if r.agent == "bbcg" else "b" * 64) for r in results]
    with pytest.raises(ValueError, match=r"cannot pair bbcg .* with random .*loss digest") as error:
        paired_table(mixed, "random")
    assert "'aaaa" in str(error.value) and "'bbbb" in str(error.value)
    same = [with_digest(r, "c" * 64) for r in results]
    assert [row.difference_mean for row in paired_table(same, "random")] == [
        row.difference_mean for row in paired_table(results, "random")
    ]


def test_paired_tables_refuse_different_env_kwargs_but_not_feedback():
    results = comparison(("random", "bbcg"))
    other = [
        dataclasses.replace(r, env_kwargs={"n": 20}) if r.agent == "bbcg" else r for r in results
    ]
    with pytest.raises(ValueError, match=r"cannot pair bbcg .*env kwargs \(\{'n': 20\} against"):
        paired_table(other, "random")
    # comparison() runs ofw with feedback="full" and the others without: still paired
    rows = {row.label: row for row in paired_table(comparison(), "random")}
    assert rows["ofw (full info)"].pairs == 4


def test_paired_table_against_a_hand_computation():
    rows = {row.label: row for row in paired_table(comparison(), "random")}
    bbcg = rows["bbcg"]
    differences = [b - r for b, r in zip(FINALS["bbcg"], FINALS["random"], strict=True)]
    assert (bbcg.difference_mean, bbcg.difference_low, bbcg.difference_high) == pytest.approx(
        hand_interval(differences), rel=1e-12
    )
    assert (bbcg.regret_mean, bbcg.regret_low, bbcg.regret_high) == pytest.approx(
        hand_interval(FINALS["bbcg"]), rel=1e-12
    )
    assert bbcg.pairs == 4 and bbcg.wins == 4 and bbcg.win_fraction == 1.0
    assert bbcg.scaled_regret == pytest.approx(np.mean(FINALS["bbcg"]) / 100**0.75)
    assert bbcg.regret_bound == pytest.approx(1001.5)
    assert bbcg.lmo_per_round == pytest.approx((2 + 4 + 6 + 8) / 400)
    assert bbcg.seconds_per_round == pytest.approx((0.010 + 4 * 0.002) / 400)
    assert rows["fkm"].projections_per_round == pytest.approx(1.0)
    assert rows["ofw (full info)"].full_information
    assert rows["random"].difference_mean is None and rows["random"].wins is None


def test_wins_count_seeds_strictly_below_the_reference():
    rows = {row.label: row for row in paired_table(comparison(), "fkm")}
    # bbcg - fkm per seed: -20, +4, -40, -20 -> 3 wins of 4; random never wins.
    assert (rows["bbcg"].wins, rows["bbcg"].pairs) == (3, 4)
    assert rows["random"].wins == 0 and rows["random"].difference_mean == pytest.approx(21.0)


def test_reference_must_be_unambiguous():
    def variant(constants, c):
        return [
            dataclasses.replace(r, constants=constants, params={"c": c})
            for r in comparison(("bbcg",))
        ]

    results = comparison(("random",)) + variant("tuned", 3.0) + variant("custom", 5.0)
    assert find_reference(["random", "bbcg (tuned, c=3)"], "bbcg") == "bbcg (tuned, c=3)"
    with pytest.raises(ValueError, match="several series"):
        paired_table(results, "bbcg")
    rows = paired_table(results, "bbcg (tuned, c=3)")
    assert rows[0].difference_mean == pytest.approx(
        np.mean(FINALS["random"]) - np.mean(FINALS["bbcg"])
    )
    # An exact label wins over agent-name matching.
    assert paired_table(comparison() + variant("tuned", 3.0), "bbcg")[0].reference == "bbcg"


def test_a_missing_reference_leaves_the_differences_empty():
    rows = paired_table(comparison(("bbcg", "ofw")), "random")
    assert all(row.difference_mean is None and row.pairs == 0 for row in rows)


def test_columns_format_numbers_alike_and_mark_the_reference():
    header, body = paired_columns(paired_table(comparison(), "random"))
    assert header[4] == "minus random [95% CI]"
    by_label = {row[0]: row for row in body}
    assert by_label["random"][4] == "(reference)"
    assert by_label["bbcg"][5] == "4/4"
    regret_column = [row[3] for row in body]
    decimals = {
        len(number.split(".")[1]) if "." in number else 0
        for cell in regret_column
        for number in cell.replace("[", "").replace("]", "").replace(",", "").split()
    }
    assert len(decimals) == 1
    assert by_label["bbcg"][3].startswith(f"{np.mean(FINALS['bbcg']):.0f} [")


def test_latency_columns_are_the_mean_over_seeds_of_each_runs_quantiles():
    results = [
        dataclasses.replace(
            result, latency_us={"p50": 10.0 + i, "p90": 20.0, "p99": 40.0 * (i + 1), "max": 99.0}
        )
        for i, result in enumerate(comparison(("random",)))
    ]
    (row,) = paired_table(results, "random")
    assert row.latency_p50_us == pytest.approx(np.mean([10, 11, 12, 13]))
    assert row.latency_p99_us == pytest.approx(np.mean([40, 80, 120, 160]))
    header, body = paired_columns([row])
    assert header[-2:] == ["p50 µs", "p99 µs"]
    assert body[0][-2:] == ["11.5", "100"]
    # Results saved before latency was measured show a dash.
    (old,) = paired_table(comparison(("random",)), "random")
    assert old.latency_p99_us is None and paired_columns([old])[1][0][-1] == "-"


def array_run(agent, thetas):
    from bco_gym.engine.runner import run
    from bco_gym.envs import BanditConvexEnv
    from bco_gym.losses import from_array
    from bco_gym.sets import L2Ball

    return run(BanditConvexEnv(L2Ball(3), from_array(L2Ball(3), thetas)), agent, seed=0)


def test_two_arrays_are_refused_as_a_pair_and_two_equal_arrays_accepted():
    thetas = np.random.default_rng(0).normal(size=(60, 3))
    other = thetas.copy()
    other[17, 1] += 0.5  # one round differs: the description is the same, the data not
    bbcg = array_run("bbcg", thetas)
    assert bbcg.loss["name"] == array_run("random", other).loss["name"]
    with pytest.raises(ValueError, match=r"cannot pair bbcg \(seed 0\) with random .*loss digest"):
        paired_table([bbcg, array_run("random", other)], "random")
    rows = {row.label: row for row in paired_table([bbcg, array_run("random", thetas.copy())])}
    assert rows["bbcg"].pairs == 1
    assert rows["bbcg"].difference_mean == pytest.approx(
        bbcg.final_regret - array_run("random", thetas).final_regret, abs=1e-12
    )


def test_a_user_agent_on_a_full_information_env_is_not_labelled_full_information():
    user = synthetic_result("user_agents:Jitter", 0, (1, 2, 3), feedback="full")
    ofw = synthetic_result("ofw", 0, (1, 2, 3), feedback="full")
    gone = synthetic_result("nowhere.module:Agent", 0, (1, 2, 3), feedback="full")
    assert series_label(user) == "user_agents:Jitter"
    assert series_label(ofw) == "ofw (full info)"
    assert series_label(gone) == "nowhere.module:Agent"  # no longer importable: as bandit


def test_two_agents_sharing_a_label_and_a_seed_are_refused_never_merged():
    ours = synthetic_result("bbcg", 0, (1, 2, 3))
    ours = dataclasses.replace(ours, agent_spec={"import_path": "user_agents:HalfBBCG"})
    builtin = dataclasses.replace(
        synthetic_result("bbcg", 0, (1, 2, 4)),
        agent_spec={"import_path": "bco_gym.agents.bbcg.agent:BlockBanditCG"},
    )
    for reference in ("bbcg", "random"):  # also where no row is compared with it
        with pytest.raises(
            ValueError,
            match=r"bbcg: seed 0 appears twice at T = 100 by different agents "
            r"\(bco_gym.agents.bbcg.agent:BlockBanditCG, user_agents:HalfBBCG\)",
        ):
            paired_table([ours, builtin], reference=reference)


def test_a_reference_whose_name_has_a_space_is_found_by_its_series():
    mine = [synthetic_result("my algo", s, (1, 2, 3 + s), constants="custom") for s in (0, 1)]
    other = [synthetic_result("bbcg", s, (1, 2, 5 + 2 * s)) for s in (0, 1)]
    assert find_reference(["my algo (custom, c=1)", "bbcg"], "my algo") == "my algo (custom, c=1)"
    assert find_reference(["bbcg2 (custom, c=1)"], "bbcg") is None
    rows = {row.label: row for row in paired_table(mine + other, reference="my algo")}
    assert rows["bbcg"].reference == "my algo (custom, c=1)"
    assert (rows["bbcg"].pairs, rows["bbcg"].difference_mean) == (2, 2.5)
