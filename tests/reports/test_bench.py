"""bco-gym bench: growth by agents, scores, verdicts, refusals, quick-v1 end to end.

The figures and rliable's intervals of a bench report (most of a tiny bench's time) are
test_the_report_has_verdicts_aggregates_figures_and_scenarios's; the tests of cells, rows
and a report's words take the ``plain`` fixture (no figures, bco_gym's bootstrap).
"""

from __future__ import annotations

import csv
import math
import re

import numpy as np
import pytest

from bco_gym.cli import main
from bco_gym.reports import bench
from bco_gym.reports.bench_verdicts import verdict
from bco_gym.reports.suites import SUITES, Scenario
from bco_gym.stats.scores import improvement, scores_by_scenario

TINY = (
    Scenario(
        name="tiny-ball",
        title="3-ball, i.i.d. linear",
        env_id="BCO-Ball-v0",
        agents=("bbcg", "fkm", "random"),
        horizon=300,
        seeds=(0, 1, 2),
        env_kwargs={"n": 3},
    ),
    Scenario(
        name="tiny-drift",
        title="3-ball, drifting mean",
        env_id="BCO-Ball-v0",
        agents=("bbcg", "random"),
        horizon=200,
        seeds=(0, 1),
        env_kwargs={"n": 3, "loss": "linear-drift"},
    ),
)


@pytest.fixture
def tiny_suite(monkeypatch):
    monkeypatch.setitem(SUITES, "tiny", TINY)
    return "tiny"


def cell_files(out):
    return {p.relative_to(out): p.stat().st_mtime_ns for p in out.glob("runs/*/cells/*.json")}


def read_scores(out):
    with (out / "scores.csv").open() as handle:
        return list(csv.DictReader(handle))


def test_a_bench_grown_by_one_agent_computes_only_the_new_cells(tmp_path, tiny_suite, plain):
    out = tmp_path / "bench"
    first = bench.run_bench(["bfw"], out, suite=tiny_suite, progress=False)
    before = cell_files(out)
    assert len(before) == 3 * 4 + 2 * 3  # (bbcg, fkm, random, bfw) x 3 + (bbcg, random, bfw) x 2
    second = bench.run_bench(["bfw", "user_agents:Jitter"], out, suite=tiny_suite, progress=False)
    after = cell_files(out)
    new = set(after) - set(before)
    assert len(new) == 3 + 2
    assert all(after[path] == stamp for path, stamp in before.items())  # none rewritten
    kept = {(r.scenario, r.agent, r.seed): r.regret for r in first.rows}
    assert all(
        kept[key] == r.regret for r in second.rows if (key := (r.scenario, r.agent, r.seed)) in kept
    )
    assert {r.agent for r in second.rows} == {"bbcg", "fkm", "random", "bfw", "jitter"}
    assert "`user_agents:Jitter`" in (out / "report.md").read_text()  # its identity


def test_scores_are_regret_over_randoms_on_the_same_seed(tmp_path, tiny_suite, plain):
    out = tmp_path / "bench"
    outcome = bench.run_bench(["bfw"], out, suite=tiny_suite, progress=False)
    rows = read_scores(out)
    assert list(rows[0]) == [
        "suite",
        "scenario",
        "agent",
        "feedback",
        "seed",
        "horizon",
        "regret",
        "score",
        "adaptive_regret",
        "dynamic_regret",
        "version",
        "computed_at",
    ]
    assert len(rows) == len(outcome.rows) == 18
    assert {row["feedback"] for row in rows} == {"bandit"}
    assert {row["version"] for row in rows} == {__import__("bco_gym").__version__}
    assert all(row["computed_at"].endswith("Z") for row in rows)
    random = {
        (r["scenario"], r["seed"]): float(r["regret"]) for r in rows if r["agent"] == "random"
    }
    for row in rows:
        assert row["suite"] == "tiny"
        expected = float(row["regret"]) / random[(row["scenario"], row["seed"])]
        assert float(row["score"]) == pytest.approx(expected, rel=1e-15)
        assert int(row["horizon"]) == (300 if row["scenario"] == "tiny-ball" else 200)
    results = {(r.agent, r.seed): r for r in outcome.runs[0].results}
    first = results[(rows[0]["agent"], int(rows[0]["seed"]))]
    assert float(rows[0]["regret"]) == first.final_regret
    assert float(rows[0]["adaptive_regret"]) == first.adaptive_regret  # linear losses: exact
    assert float(rows[0]["dynamic_regret"]) == first.dynamic_regret


def test_the_report_has_verdicts_aggregates_figures_and_scenarios(tmp_path, tiny_suite):
    out = tmp_path / "bench"
    outcome = bench.run_bench(["bfw", "ogd"], out, suite=tiny_suite, progress=False)
    text = (out / "report.md").read_text()
    assert re.search(
        r"- \*\*bfw\*\* \(2 scenarios\):\n  - against bbcg \(theory constants\): .*\n"
        r"  - against fkm \(theory constants\): ",
        text,
    )
    assert "- **ogd**: ran in no scenario" in text
    assert "- ogd on tiny-ball: needs feedback='full', the scenario gives 'bandit'" in text
    assert "| agent | scenarios | runs | IQM score [95% CI] | mean score [95% CI] |" in text
    assert "## 1. tiny-ball" in text and "## 2. tiny-drift" in text
    assert "### Paired against random" in text and "Ordered groups, the all-pairs ranking" in text
    for link in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text):
        assert (out / link).read_bytes()[:4] == b"\x89PNG", link
    assert "![Final regret minus random's on the same seeds, per scenario](headline.png)" in text
    assert {
        "headline.png",
        "scores-aggregate.png",
        "scores-profile.png",
        "scores-improvement.png",
    } <= {p.name for p in out.glob("*.png")}
    # the probability of improvement for every pair the bench ran, not only against bbcg/fkm
    start = text.index("### Probability of improvement, every pair")
    matrix = text[start : text.index("![Probability of improvement", start)]
    header = next(line for line in matrix.splitlines() if line.startswith("| P(row < column)"))
    agents = [cell.strip() for cell in header.strip("|").split("|")][1:]
    assert sorted(agents) == ["bbcg", "bfw", "fkm", "random"]
    rows = {
        cells[0]: dict(zip(agents, cells[1:], strict=True))
        for line in matrix.splitlines()[3:]
        if line.startswith("| ") and not line.startswith("| P(")
        for cells in [[c.strip() for c in line.strip("|").split("|")]]
        if cells[0] in agents
    }
    assert set(rows) == set(agents)
    per_agent = {a: scores_by_scenario(outcome.rows, a) for a in agents}
    for first in agents:
        for second in agents:
            if first == second:
                assert rows[first][second] == ""
                continue
            found = improvement(per_agent[first], per_agent[second])
            shown = rows[first][second].strip("*")
            value = float(shown.split(" ")[0])
            assert value == pytest.approx(found.value, abs=5e-4)
            low, high = (float(v) for v in shown[shown.index("[") + 1 : -1].split(", "))
            assert rows[first][second].startswith("**") == (low > 0.5 or high < 0.5)


def test_the_verdict_follows_the_holm_tests_against_the_reference_rows():
    from synthetic_results import synthetic_result

    from bco_gym.reports.bench_verdicts import judge

    rng = np.random.default_rng(0)
    base = 100 + 10 * rng.standard_normal(6)
    finals = {"bbcg": base, "fkm": base + 30, "mine": base + 15, "random": base + 60}
    results = [
        synthetic_result(agent, seed, (v / 100, v / 10, v))
        for agent, values in finals.items()
        for seed, v in enumerate(values + 0.01 * rng.standard_normal(6))
    ]
    references = ("bbcg", "fkm", "random")
    ranked = {
        "one": judge(results, references),
        "two": judge([r for r in results if r.agent != "fkm"], references),
    }
    assert verdict("mine", ranked).splitlines() == [
        "**mine** (2 scenarios):",
        "  - against bbcg (theory constants): worse in 2 (one, two)",
        "  - against fkm (theory constants): better in 1 (one)",
    ]


def test_refusals(tmp_path, tiny_suite):
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not a bench directory"):
        bench.run_bench(["bfw"], stranger, suite=tiny_suite)
    with pytest.raises(
        ValueError, match="unknown suite 'nope'; allowed: quick-v1, standard-v1, quick-v2"
    ):
        bench.run_bench(["bfw"], tmp_path / "a", suite="nope")
    with pytest.raises(ValueError, match="unknown agent 'nope'"):
        bench.run_bench(["nope"], tmp_path / "b", suite=tiny_suite)
    with pytest.raises(ValueError, match="seeds must be an integer >= 2"):
        bench.run_bench(["bfw"], tmp_path / "c", suite=tiny_suite, seeds=1)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    out = tmp_path / "d"
    (out).mkdir()
    (out / bench.MARKER).write_text('{"format": 1, "suite": "quick-v1"}')
    with pytest.raises(ValueError, match="holds a bench of suite 'quick-v1', not 'tiny'"):
        bench.run_bench(["bfw"], out, suite=tiny_suite)


def test_the_cli_refuses_a_directory_it_did_not_write(tmp_path, capsys):
    (tmp_path / "x.txt").write_text("x")
    assert main(["bench", "--agents", "bfw", "--out", str(tmp_path)]) == 2
    assert "not written by `bco-gym bench`" in capsys.readouterr().err
    assert main(["bench", "--agents", "nope", "--out", str(tmp_path / "new")]) == 2
    assert "unknown agent 'nope'" in capsys.readouterr().err


def test_quick_v2_end_to_end_from_the_cli(tmp_path, capsys, plain):
    """Without figures, intervals by bco_gym's bootstrap (the ``plain`` fixture): the figures
    and rliable's intervals of a bench report are
    test_the_report_has_verdicts_aggregates_figures_and_scenarios's; here the rows, the
    verdicts' words and a re-run that computes nothing and writes the same report."""
    out = tmp_path / "bench"
    code = main(
        ["bench", "--agents", "vertex_agent:Vertex", "--seeds", "2", "--out", str(out), "--quiet"]
    )
    assert code == 0, capsys.readouterr().err
    rows = read_scores(out)
    assert {r["scenario"] for r in rows} == {s.name for s in SUITES["quick-v2"]}
    jitter = [float(r["score"]) for r in rows if r["agent"] == "vertex"]
    assert len(jitter) == 6 * 2 and all(math.isfinite(s) and s > 0 for s in jitter)
    text = (out / "report.md").read_text()
    assert (
        "Generated by `bco-gym bench --agents vertex_agent:Vertex --suite quick-v2 --seeds 2"
        in text
    )
    assert "- **vertex** (6 scenarios):\n  - against bbcg (theory constants): " in text
    assert "No scenario here has a tuned row of bbcg or fkm: every verdict below is" in text
    # re-running computes nothing and writes the same report
    before = cell_files(out)
    assert (
        main(
            [
                "bench",
                "--agents",
                "vertex_agent:Vertex",
                "--seeds",
                "2",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    assert cell_files(out) == before
    assert (out / "report.md").read_text() == text


SIMPLEX = Scenario(
    name="tiny-simplex",
    title="3-simplex",
    env_id="BCO-Simplex-v0",
    agents=("bbcg", "random"),
    horizon=100,
    seeds=(0, 1),
    env_kwargs={"n": 3},
)


def test_a_failing_user_agent_fails_its_cells_alone(tmp_path, monkeypatch, capsys, plain):
    """Jitter plays off the simplex's affine hull: its cells there fail, the rest finish."""
    monkeypatch.setitem(SUITES, "tiny-failing", (TINY[1], SIMPLEX))
    out = tmp_path / "bench"
    with pytest.warns(UserWarning, match="cells failed"):
        outcome = bench.run_bench(["user_agents:Jitter"], out, suite="tiny-failing", progress=False)
    assert len(outcome.failures) == 2
    for seed, line in enumerate(outcome.failures):
        assert line.startswith(f"tiny-simplex: agent 'jitter' seed {seed} ")
        assert "failed in round 0" in line and "not in Simplex" in line
    agents = {(r.scenario, r.agent) for r in outcome.rows}
    assert ("tiny-drift", "jitter") in agents  # it ran where it could
    assert ("tiny-simplex", "jitter") not in agents
    assert ("tiny-simplex", "bbcg") in agents
    text = (out / "report.md").read_text()
    failed = text[text.index("## Failed cells") : text.index("## Scores across")]
    # grouped by reason: the error once, then the cells it covers (both seeds, round 0)
    assert failed.count("- 2 cell(s): InfeasibleActionError") == 1  # numbers differ per cell
    assert "  - tiny-simplex: jitter, seed(s) 0, 1 (T=" in failed
    code = main(
        ["bench", "--agents", "user_agents:Jitter", "--suite", "tiny-failing", "--out", str(out)]
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "2 cell(s) failed" in err and "seed 1" in err


def test_the_explore_commit_agent_of_the_readme_scores_below_random(tmp_path, tiny_suite, plain):
    outcome = bench.run_bench(["explore_commit:ExploreCommit"], tmp_path / "b", suite=tiny_suite)
    scores = [r.score for r in outcome.rows if r.agent == "explore-commit"]
    assert len(scores) == 5 and max(scores) < 1.0  # it learns on i.i.d. and slow drift


def test_a_bench_directory_is_cumulative_unless_agents_only(tmp_path, tiny_suite, plain):
    """An agent benched earlier into --out stays in report.md and scores.csv; a second
    spelling of it finds its cells; --agents-only reports the given agents alone."""
    out = tmp_path / "bench"
    bench.run_bench(["bfw"], out, suite=tiny_suite, progress=False)
    before = cell_files(out)
    second = bench.run_bench(["user_agents:Jitter"], out, suite=tiny_suite, progress=False)
    assert {r.agent for r in second.rows} == {"bbcg", "fkm", "random", "bfw", "jitter"}
    assert {r["agent"] for r in read_scores(out)} == {"bbcg", "fkm", "random", "bfw", "jitter"}
    text = (out / "report.md").read_text()
    agents = text[text.index("## Agents") :].split("\n## ")[0]
    for label, identity in (
        ("bfw", "bco_gym.agents.bfw.agent:BanditFrankWolfe"),
        ("jitter", "user_agents:Jitter"),
    ):
        assert re.search(rf"\| {label} \| `{re.escape(identity)}` \| \S+ \| \S+Z", agents)
    grown = set(cell_files(out)) - set(before)
    assert len(grown) == 3 + 2  # jitter's cells only
    same = bench.run_bench(
        ["bco_gym.agents.bfw.agent:BanditFrankWolfe"],
        out,
        suite=tiny_suite,
        progress=False,
        agents_only=True,
    )
    assert set(cell_files(out)) - set(before) == grown  # bfw by its path: nothing recomputed
    assert {r.agent for r in same.rows} == {"bbcg", "fkm", "random", "bfw"}
    assert "jitter" not in {r["agent"] for r in read_scores(out)}


def test_bench_takes_variants_labels_and_agent_kwargs(tmp_path, tiny_suite, plain):
    out = tmp_path / "bench"
    outcome = bench.run_bench(
        ["fkm[c=2]", "user_agents:Jitter"],
        out,
        suite=tiny_suite,
        progress=False,
        agent_kwargs={"user_agents:Jitter": {"spread": 0.25}},
        labels={"user_agents:Jitter": "quarter jitter"},
    )
    rows = {(r.agent, r.scenario) for r in outcome.rows}  # series labels: "(custom)" constants
    assert ("fkm[c=2] (custom)", "tiny-ball") in rows and ("fkm", "tiny-ball") in rows
    assert ("quarter jitter (custom)", "tiny-drift") in rows
    text = (out / "report.md").read_text()
    assert "- **quarter jitter** (2 scenarios)" in text and "- **fkm[c=2]** (" in text
    with pytest.raises(ValueError, match=r"would change the reference; give a variant"):
        bench.run_bench(
            ["fkm"], out, suite=tiny_suite, progress=False, agent_kwargs={"fkm": {"c": 2}}
        )
