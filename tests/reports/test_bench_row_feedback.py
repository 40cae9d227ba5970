"""A reference row of its own feedback (``Scenario.agent_feedback``, standard-v3's pbgd2):
it plays the scenario's env and losses with the feedback its agent declares, no more, and
is marked and ranked apart wherever rows are ranked (as issue 40's full-information rows).
"""

from __future__ import annotations

import csv

import numpy as np
import pytest

from bco_gym.reports import bench
from bco_gym.reports.references import scenario_digest
from bco_gym.reports.scale import scenario_cells
from bco_gym.reports.scenario import ScaleTuning
from bco_gym.reports.suites import SUITES, Scenario, check_scenario, load_suite_file
from bco_gym.sweeps.results import SweepMismatchError
from bco_gym.sweeps.sweep import cells, run_cells

ROWS = Scenario(
    name="rows-ball",
    title="3-ball, i.i.d. linear, one two-point row",
    env_id="BCO-Ball-v0",
    agents=("bbcg", "fkm", "random", "fkm2"),
    horizon=400,
    seeds=(0, 1, 2, 3),
    env_kwargs={"n": 3},
    agent_feedback={"fkm2": "two-point"},
)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """One bench of bfw beside the scenario's rows: (outcome, scores.csv, report.md)."""
    out = tmp_path_factory.mktemp("rows") / "bench"
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(SUITES, "tiny-rows", (ROWS,))
        patch.setattr("bco_gym.stats.scores.rliable_available", lambda: False)
        outcome = bench.run_bench(["bfw"], out, suite="tiny-rows", progress=False)
    with (out / "scores.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    return outcome, rows, (out / "report.md").read_text(), out


def test_the_row_plays_the_same_env_and_losses_with_its_own_feedback(report):
    outcome, _, _, _ = report
    results = [r for run in outcome.runs for r in run.results]
    by = {(r.agent, r.seed): r for r in results}
    for seed in ROWS.seeds:
        two, one = by[("fkm2", seed)], by[("fkm", seed)]
        assert two.problem["feedback"] == "two-point" and one.problem["feedback"] == "bandit"
        assert two.env_kwargs == {"n": 3, "feedback": "two-point"}
        assert one.env_kwargs == {"n": 3}
        # the same loss sequence: the same best point's cumulative loss at every checkpoint
        assert np.array_equal(two.comparator_loss, one.comparator_loss)
    assert all(r.problem["feedback"] == "bandit" for r in results if r.agent != "fkm2")


def test_scores_csv_and_the_report_mark_it_and_rank_it_apart(report):
    outcome, rows, text, _ = report
    assert {(row["agent"], row["feedback"]) for row in rows} == {
        ("fkm2", "two-point"),
        ("bbcg", "bandit"),
        ("fkm", "bandit"),
        ("bfw", "bandit"),
        ("random", "bandit"),
    }
    scenario = text[text.index("## 1. rows-ball") :]
    groups = next(line for line in scenario.splitlines() if line.startswith("Ordered groups"))
    assert "fkm2" not in groups and "4 bandit rows" in groups
    assert "not ranked with the bandit rows (mean final regret): fkm2 (two-point) " in scenario
    scores = text[text.index("## Scores across scenarios") :]
    apart = scores[scores.index("**not ranked with the bandit agents**") :]
    assert "fkm2 (two-point)" in apart.split("\n\n")[1]
    matrix = text[text.index("### Probability of improvement, every pair") :]
    assert "| fkm2 (two-point) |" in matrix and "| fkm2 |" not in matrix
    from bco_gym.plotting import bench as figures
    from bco_gym.reports.bench_report import aggregates

    stats = aggregates(outcome.rows, list(dict.fromkeys(r.agent for r in outcome.rows)), 100)
    assert stats.order()[-1] == "fkm2"  # after every bandit agent
    figure = figures.aggregate_figure(stats, "tiny-rows")
    labels = [tick.get_text() for tick in figure.axes[0].get_yticklabels()]
    assert labels[-1] == "fkm2 (two-point) (1 scen.)"


def test_the_export_marks_it_and_ranks_it_apart(report):
    import io

    from bco_gym.reports import export

    _, _, _, out = report
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(SUITES, "tiny-rows", (ROWS,))
        found = export.load_bench(out, reps=200)
    aggregate, scenarios, _ = export.tables(found)
    assert [row.shown for row in aggregate.rows][-1] == "fkm2 (two-point)"
    two = [row for row in scenarios.rows if row.feedback == "two-point"]
    assert [row.shown for row in two] == ["fkm2 (two-point)"] and two[0].group is None
    rows = list(csv.DictReader(io.StringIO(export.csv_text(found))))
    assert {row["ranked"] for row in rows if row["agent"].startswith("fkm2")} == {"apart"}


def test_a_tuned_scenarios_row_plays_its_own_feedback_and_the_tuning_the_scenarios(tmp_path):
    tuned = Scenario(
        name="rows-tuned",
        env_id="BCO-Ball-v0",
        agents=("fkm", "random", "fkm2"),
        horizon=50,
        seeds=(0, 1),
        env_kwargs={"n": 3},
        agent_feedback={"fkm2": "two-point"},
        tuning=ScaleTuning(agents=("fkm",), grid=(1.0, 10.0), seeds=(100,), horizon=30),
    )
    grid = scenario_cells(tuned, tmp_path, [50])
    feedback = {(c.agent, c.constants): c.env_kwargs.get("feedback", "bandit") for c in grid}
    assert feedback == {
        ("fkm", "theory"): "bandit",
        ("random", "theory"): "bandit",
        ("fkm2", "theory"): "two-point",
        ("fkm", "tuned"): "bandit",
    }
    assert {c.env_kwargs.get("feedback") for c in _tuning_cells(tmp_path)} == {None}


def _tuning_cells(out):
    from bco_gym.sweeps.store import SweepStore
    from bco_gym.sweeps.sweep import Cell

    store = SweepStore(out / "tuning" / "rows-tuned")
    return [Cell.from_dict(c) for c in store.read_manifest()["spec"]["cells"]]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"agent_feedback": {"fkm2": "pairs"}}, "allowed: 'two-point', 'full'"),
        ({"agent_feedback": {"fkm2": "full"}}, "'fkm2' declares feedback='two-point'"),
        ({"agent_feedback": {"fkm2": "two-point", "ogd": "full"}}, "not among its agents"),
        ({"agent_feedback": {}}, "declare its row's feedback"),
        (
            {"env_kwargs": {"n": 3, "feedback": "two-point"}, "agents": ("fkm2", "random")},
            "is the scenario's own feedback already",
        ),
        (
            {"tuning": ScaleTuning(agents=("fkm2",), grid=(1.0,), seeds=(100,), horizon=30)},
            "'fkm2' is tuned",
        ),
    ],
)
def test_a_row_gets_exactly_what_its_agent_declares(changes, message):
    values = {**ROWS.__dict__, **changes}
    with pytest.raises(ValueError, match=message):
        Scenario(**values)


def test_the_digest_holds_a_rows_feedback_only_where_one_is_declared():
    plain = Scenario(**{**ROWS.__dict__, "agents": ("bbcg", "fkm", "random"), "agent_feedback": {}})
    assert scenario_digest(ROWS) != scenario_digest(plain)
    # without one, the digest is the one scenarios had before the field existed
    from bco_gym.io import json_digest
    from bco_gym.reports.references import DEFINING_FIELDS, _jsonable

    before = json_digest({n: _jsonable(getattr(plain, n)) for n in DEFINING_FIELDS})
    assert scenario_digest(plain) == before


def test_a_suite_file_declares_it_and_the_check_builds_it_on_its_env(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(
        'name = "mine"\n[[scenario]]\nname = "s"\nenv_id = "BCO-Ball-v0"\n'
        'agents = ["fkm", "fkm2"]\nhorizon = 50\nseeds = [0, 1]\nenv_kwargs = { n = 3 }\n'
        'agent_feedback = { fkm2 = "two-point" }\n',
        encoding="utf-8",
    )
    name, (scenario,) = load_suite_file(path)
    assert name == "mine" and scenario.env_kwargs_of("fkm2") == {"n": 3, "feedback": "two-point"}
    assert scenario.env_kwargs_of("fkm") == {"n": 3}
    check_scenario(scenario, "here", scenario.agents)  # fkm2 builds on the two-point env


def test_a_sweep_grows_by_a_row_of_its_own_feedback_but_not_by_changing_one(tmp_path):
    out = tmp_path / "sweep"
    run_cells(cells("BCO-Ball-v0", "fkm", 20, 2, env_kwargs={"n": 3}), out=out)
    two = cells("BCO-Ball-v0", "fkm2", 20, 2, env_kwargs={"n": 3, "feedback": "two-point"})
    assert len(run_cells(two, out=out)) == 2  # the same env and losses, another row
    moved = cells("BCO-Ball-v0", "fkm", 20, 3, env_kwargs={"n": 3, "feedback": "full"})
    with pytest.raises(SweepMismatchError, match="feedback of fkm"):
        run_cells(moved, out=out)
    other = cells("BCO-Ball-v0", "bbcg", 20, 2, env_kwargs={"n": 4})
    with pytest.raises(SweepMismatchError, match="env_kwargs"):
        run_cells(other, out=out)


def test_the_demo_plays_it_on_its_own_feedback_too():
    from bco_gym.reports.demo import scenario_cells as demo_cells

    grid = demo_cells(ROWS)
    assert {c.agent: c.env_kwargs.get("feedback", "bandit") for c in grid} == {
        "bbcg": "bandit",
        "fkm": "bandit",
        "random": "bandit",
        "fkm2": "two-point",
    }
