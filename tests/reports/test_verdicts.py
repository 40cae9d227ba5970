"""The bench report's verdicts are against the tuned reference rows, not the theory rows.

A scenario where bbcg's theory row is weak and its tuned row strong: an agent between the
two must be told it loses to bbcg (tuned) though it beats bbcg (theory). Hand-made
results (no runs), so every number is known.
"""

from __future__ import annotations

import numpy as np
import pytest
from synthetic_results import synthetic_result

from bco_gym.reports import bench_report
from bco_gym.reports.bench_provenance import ScenarioRun
from bco_gym.reports.bench_report import aggregates, write_bench_report
from bco_gym.reports.bench_verdicts import judge, reference_rows, verdict
from bco_gym.reports.suites import Scenario
from bco_gym.stats.ranking import rank
from bco_gym.stats.scores import improvement, score_rows, scores_by_scenario

SEEDS = tuple(range(6))
#: Final regrets per series: (agent, constants, c) -> level. In "tuned-here" bbcg's theory
#: row is weak (200) and its tuned row strong (100); "mine" sits between them at 150.
TUNED_HERE = {
    ("bbcg", "theory", 1.0): 200.0,
    ("bbcg", "tuned", 100.0): 100.0,
    ("fkm", "theory", 1.0): 260.0,
    ("fkm", "tuned", 10.0): 120.0,
    ("mine", "theory", 1.0): 150.0,
    ("random", "theory", None): 400.0,
}
#: A scenario with theory rows only: there the verdict is against the theory row.
THEORY_ONLY = {
    ("bbcg", "theory", 1.0): 100.0,
    ("fkm", "theory", 1.0): 180.0,
    ("mine", "theory", 1.0): 150.0,
    ("random", "theory", None): 400.0,
}


def _results(levels, seed=0):
    """Each series at its level plus a seed effect shared by all (so pairs separate)."""
    rng = np.random.default_rng(seed)
    shared = 10 * rng.standard_normal(len(SEEDS))
    found = []
    for (agent, constants, scale), level in levels.items():
        for index, value in enumerate(level + shared + 0.01 * rng.standard_normal(len(SEEDS))):
            found.append(
                synthetic_result(
                    agent,
                    SEEDS[index],
                    (value / 100, value / 10, value),
                    constants=constants,
                    scale=scale,
                )
            )
    return found


REFERENCES = ("bbcg", "fkm", "random")


def judged(levels, seed=0):
    """The scenario's statistics, its reference rows those of bbcg, fkm and random."""
    return judge(_results(levels, seed), REFERENCES)


def test_the_reference_rows_of_a_scenario_are_its_tuned_and_theory_rows():
    ranking = rank(_results(TUNED_HERE))
    assert reference_rows(ranking, "bbcg") == ("bbcg (tuned, c=100)", "bbcg")
    assert reference_rows(ranking, "fkm") == ("fkm (tuned, c=10)", "fkm")
    assert reference_rows(rank(_results(THEORY_ONLY)), "bbcg") == (None, "bbcg")
    assert reference_rows(ranking, "bfw") == (None, None)


def test_a_middle_agent_loses_to_the_tuned_reference_though_it_beats_the_theory_row():
    ranking = rank(_results(TUNED_HERE))
    assert ranking.beats("mine", "bbcg") and ranking.beats("bbcg (tuned, c=100)", "mine")
    line = verdict("mine", {"tuned-here": judged(TUNED_HERE)})
    assert line.splitlines() == [
        "**mine** (1 scenario):",
        "  - against bbcg (tuned, c=100): worse in 1 (tuned-here)",
        "  - against bbcg (theory constants): better in 1 (tuned-here)",
        "  - against fkm (tuned, c=10): worse in 1 (tuned-here)",
        "  - against fkm (theory constants): better in 1 (tuned-here)",
    ]


def test_without_tuned_rows_the_verdict_is_against_the_theory_row_and_says_so():
    ranked = {"one": judged(THEORY_ONLY), "two": judged(THEORY_ONLY, seed=1)}
    assert verdict("mine", ranked).splitlines() == [
        "**mine** (2 scenarios):",
        "  - against bbcg (theory constants): worse in 2 (one, two)",
        "  - against fkm (theory constants): better in 2 (one, two)",
    ]


def test_a_suite_with_tuned_rows_in_some_scenarios_names_both_kinds():
    ranked = {"tuned-here": judged(TUNED_HERE), "theory-only": judged(THEORY_ONLY)}
    lines = verdict("mine", ranked).splitlines()
    assert lines[1] == (
        "  - against bbcg (tuned, c=100 in 1 scenario; theory constants in 1 scenario without "
        "a tuned row): worse in 2 (tuned-here, theory-only)"
    )
    assert lines[2] == (
        "  - against bbcg (theory constants): better in 1 (tuned-here); worse in 1 (theory-only)"
    )
    # the tuned constant differs by scenario: the item gives its range
    other = _results({**TUNED_HERE, ("bbcg", "tuned", 1e4): 90.0})
    kept = [r for r in other if not (r.agent == "bbcg" and r.scale_value == 100)]
    ranked["other"] = judge(kept, REFERENCES)
    first = verdict("mine", ranked).splitlines()[1]
    assert first.startswith("  - against bbcg (tuned, c=100 to 1e+04 by scenario in 2 scenarios; ")


def test_a_reference_given_as_an_agent_is_judged_by_its_own_theory_row():
    assert verdict("bbcg", {"tuned-here": judged(TUNED_HERE)}).splitlines() == [
        "**bbcg** (1 scenario):",
        "  - against fkm (tuned, c=10): worse in 1 (tuned-here)",
        "  - against fkm (theory constants): better in 1 (tuned-here)",
    ]


def _rows(scenarios):
    return [
        row
        for name, levels in scenarios.items()
        for row in score_rows("synthetic", name, _results(levels))
    ]


def test_the_probability_of_improvement_columns_are_against_the_tuned_rows():
    rows = _rows({"tuned-here": TUNED_HERE})
    agents = list(dict.fromkeys(row.agent for row in rows))
    stats = aggregates(rows, agents, reps=200)
    column = stats.against["bbcg"]
    assert column.header == "P(agent < bbcg (tuned)) [95% CI]"
    assert column.rows == {"tuned-here": "bbcg (tuned)"}
    # every run of mine is above every run of bbcg (tuned) and below every run of bbcg
    assert column.estimates["mine"].value == 0.0
    assert stats.improvements[("mine", "bbcg")].value == 1.0
    assert column.estimates["mine"] == stats.improvements[("mine", "bbcg (tuned)")]
    assert "bbcg (tuned)" not in column.estimates  # not against itself
    assert column.estimates["bbcg"].value == 0.0


def test_a_column_mixing_tuned_and_theory_rows_pools_the_right_row_per_scenario():
    rows = _rows({"tuned-here": TUNED_HERE, "theory-only": THEORY_ONLY})
    agents = list(dict.fromkeys(row.agent for row in rows))
    stats = aggregates(rows, agents, reps=200)
    column = stats.against["fkm"]
    assert column.header == "P(agent < fkm (tuned in 1/2)) [95% CI]"
    assert column.rows == {"tuned-here": "fkm (tuned)", "theory-only": "fkm"}
    mine = scores_by_scenario(rows, "mine")
    theirs = {
        "tuned-here": scores_by_scenario(rows, "fkm (tuned)")["tuned-here"],
        "theory-only": scores_by_scenario(rows, "fkm")["theory-only"],
    }
    assert column.estimates["mine"] == improvement(mine, theirs, reps=200)
    assert column.estimates["mine"].value == pytest.approx(0.5)  # lost one, won one
    # fkm's theory row against its tuned row where there is one (not against itself)
    assert column.estimates["fkm"] == stats.improvements[("fkm", "fkm (tuned)")]


def _scenario(name):
    return Scenario(
        name=name,
        title="3-ball",
        env_id="BCO-Ball-v0",
        agents=("bbcg", "fkm", "random"),
        horizon=100,
        seeds=SEEDS,
        env_kwargs={"n": 3},
        references=("random", "bbcg"),
    )


def test_the_report_gives_the_tuned_verdict_columns_and_paired_table(tmp_path, monkeypatch):
    monkeypatch.setattr(bench_report, "matplotlib_missing", lambda: "no figures in this test")
    monkeypatch.setattr("bco_gym.reports.report.matplotlib_missing", lambda: "no figures")
    runs, rows = [], []
    for name, levels in (("tuned-here", TUNED_HERE), ("theory-only", THEORY_ONLY)):
        results = _results(levels)
        runs.append(ScenarioRun(_scenario(name), ("bbcg", "fkm", "random", "mine"), {}, results))
        rows += score_rows("synthetic", name, results)
    path = write_bench_report(
        tmp_path / "report.md", "synthetic", ["mine"], runs, rows, command="test", reps=200
    )
    text = path.read_text()
    assert "- **mine** (2 scenarios):\n  - against bbcg (tuned, c=100 in 1 scenario; " in text
    assert "A verdict is against the reference's **tuned row**" in text
    assert "The tests form a **fixed family** per scenario" in text
    assert "No scenario here has a tuned row" not in text
    assert (
        "| P(agent < bbcg (tuned in 1/2)) [95% CI] | P(agent < fkm (tuned in 1/2)) [95% CI] |"
        in text
    )
    assert (
        "bbcg: its tuned row in the 1 scenario that has one, its theory row in the other 1" in text
    )
    tuned_section = text[text.index("## 1. tuned-here") : text.index("## 2. theory-only")]
    theory_section = text[text.index("## 2. theory-only") :]
    assert (
        "The verdicts are against bbcg (tuned, c=100) and fkm (tuned, c=10) here, then "
        "against the theory rows bbcg and fkm;" in tuned_section
    )
    assert "### Paired against bbcg (tuned, c=100)" in tuned_section
    assert "### Paired against bbcg\n" not in tuned_section
    assert (
        "The verdicts are against bbcg and fkm here (theory constants: no tuned row here);"
        in theory_section
    )
    assert "### Paired against bbcg\n" in theory_section


def _noisy_results(levels, noise, seed):
    """Each series at its level plus a shared seed effect, with its own noise (sd)."""
    rng = np.random.default_rng(seed)
    shared = 10 * rng.standard_normal(8)
    found = []
    for (agent, constants, scale), level in levels.items():
        values = level + shared + noise.get(agent, 0.01) * rng.standard_normal(8)
        for seed_index, value in enumerate(values):
            found.append(
                synthetic_result(
                    agent, seed_index, (value / 100, value / 10, value), constants=constants,
                    scale=scale,
                )
            )  # fmt: skip
    return found


def test_a_verdict_does_not_move_when_agents_join_the_directory():
    """Issue 43: a verdict changed once a neighbour was added (Holm over all the pairs of
    the scenario). Here six neighbours join; mine's cells are the same draws. The
    all-pairs ranking loses mine's separation from tuned bbcg; the verdict keeps it."""
    alone = {**TUNED_HERE, ("mine", "theory", 1.0): 112.0}
    neighbours = {(f"other{i}", "theory", 1.0): 111.0 for i in range(6)}
    noise = {"mine": 8.0, **{f"other{i}": 8.0 for i in range(6)}}
    before = _noisy_results(alone, noise, seed=2)
    after = _noisy_results({**alone, **neighbours}, noise, seed=2)
    ours = sorted((r.seed, r.final_regret) for r in before if r.agent == "mine")
    assert ours == sorted((r.seed, r.final_regret) for r in after if r.agent == "mine")
    tuned = "bbcg (tuned, c=100)"
    assert rank(before).separated("mine", tuned)
    assert not rank(after).separated("mine", tuned)  # all pairs: the neighbours moved it
    first = verdict("mine", {"s": judge(before, REFERENCES)})
    assert first == verdict("mine", {"s": judge(after, REFERENCES)})
    assert "against bbcg (tuned, c=100): worse in 1 (s)" in first
