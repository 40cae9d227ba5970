"""Full information in bandit company (issue 40): marked everywhere, ranked apart.

``bench --agents ogd`` on a scenario with ``feedback = "full"`` ranked ogd first in the
verdicts and the score table; only the per-scenario table said "(full info)".
"""

from __future__ import annotations

import csv

import pytest

from bco_gym.reports import bench
from bco_gym.reports.suites import SUITES, Scenario

FULL = (
    Scenario(
        name="full-ball",
        title="3-ball, i.i.d. linear, full feedback",
        env_id="BCO-Ball-v0",
        agents=("bbcg", "fkm", "random"),
        horizon=400,
        seeds=(0, 1, 2, 3),
        env_kwargs={"n": 3, "feedback": "full"},
    ),
)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """One bench of ogd beside bbcg, fkm and random: (outcome, scores.csv, report.md)."""
    out = tmp_path_factory.mktemp("full") / "bench"
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(SUITES, "tiny-full", FULL)
        patch.setattr("bco_gym.stats.scores.rliable_available", lambda: False)  # figures drawn
        outcome = bench.run_bench(["ogd"], out, suite="tiny-full", progress=False)
    with (out / "scores.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    return outcome, rows, (out / "report.md").read_text()


def table_agents(text):
    """The agents of the first markdown table in ``text``, in order."""
    lines = text.splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith("| "))
    table = []
    for line in lines[start + 2 :]:  # below the header and its rule
        if not line.startswith("| "):
            break
        table.append(line.split("|")[1].strip())
    return table


def test_scores_csv_says_what_each_row_learned_from(report):
    _, rows, _ = report
    feedback = {(row["agent"], row["feedback"]) for row in rows}
    assert feedback == {
        ("ogd", "full"),
        ("bbcg", "bandit"),
        ("fkm", "bandit"),
        ("random", "bandit"),
    }


def test_ogd_is_marked_and_ranked_apart_from_the_bandit_agents(report):
    outcome, _, text = report
    regret = {a: min(r.regret for r in outcome.rows if r.agent == a) for a in ("ogd", "bbcg")}
    assert regret["ogd"] < regret["bbcg"]  # it would rank first, were it ranked with them
    # the verdict says it is not a bandit result
    assert "- **ogd** (full information: it sees gradients, a lower reference, not a bandit " in (
        text
    )
    # the score table: the bandit agents alone, then ogd in a table of its own, marked
    scores = text[text.index("## Scores across scenarios") :]
    assert "ogd" not in table_agents(scores)
    apart = scores[scores.index("**not ranked with the bandit agents**") :]
    assert table_agents(apart) == ["ogd (full info)"]
    # the matrix of every pair names it marked
    matrix = text[text.index("### Probability of improvement, every pair") :]
    assert "| ogd (full info) |" in matrix and "| ogd |" not in matrix
    # the scenario: kept out of the ordered groups, named with its mean
    scenario = text[text.index("## 1. full-ball") :]
    groups = next(line for line in scenario.splitlines() if line.startswith("Ordered groups"))
    assert "ogd" not in groups and "3 bandit rows" in groups
    assert "not ranked with the bandit rows (mean final regret): ogd (full info) " in scenario
    advice = next(line for line in scenario.splitlines() if line.startswith("Which method"))
    assert "choose ogd" not in advice
    assert "ogd (full info) does better still" in advice


def test_the_figures_mark_it(report):
    from bco_gym.plotting import bench as figures
    from bco_gym.reports.bench_report import PROFILE_TAUS, aggregates

    outcome, _, _ = report
    stats = aggregates(outcome.rows, list(dict.fromkeys(r.agent for r in outcome.rows)), 100)
    assert stats.order()[-1] == "ogd"  # after every bandit agent
    figure = figures.aggregate_figure(stats, "tiny-full")
    labels = [tick.get_text() for tick in figure.axes[0].get_yticklabels()]
    assert labels[-1] == "ogd (full info) (1 scen.)"
    assert any("not ranked with the bandit agents" in t.get_text() for t in figure.axes[0].texts)
    profile = figures.profile_figure(stats, PROFILE_TAUS, "x")
    legend = [t.get_text() for t in profile.legends[0].get_texts()]
    assert "ogd (full info)" in legend
    matrix = figures.improvement_figure(stats, "x")
    assert "ogd (full info)" in [t.get_text() for t in matrix.axes[0].get_yticklabels()]
