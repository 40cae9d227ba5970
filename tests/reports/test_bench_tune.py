"""``bench --tune``: a user's agent held to the references' tuning protocol, per scenario.

Issue 43: the references' constants are tuned per scenario over {10, 100, 1,000, 10,000}
on seeds 100-101, while a user's agent got one constant for every scenario.
"""

from __future__ import annotations

import csv
import warnings

import gymnasium as gym
import numpy as np
import pytest
from bench_fixtures import plain_report

from bco_gym.experiment import run
from bco_gym.reports import bench
from bco_gym.reports.suites import SUITES, ScaleTuning, Scenario

GRID = (10.0, 1000.0)
TUNING_SEEDS = (100, 101)
TUNED = (
    Scenario(
        name="tuned-ball",
        title="3-ball, i.i.d. linear",
        env_id="BCO-Ball-v0",
        agents=("bbcg", "random"),
        horizon=300,
        seeds=(0, 1, 2),
        env_kwargs={"n": 3},
        tuning=ScaleTuning(("bbcg",), GRID, TUNING_SEEDS, 200),
    ),
    Scenario(
        name="tuned-box",
        title="3-box, i.i.d. linear",
        env_id="BCO-Hypercube-v0",
        agents=("bbcg", "random"),
        horizon=300,
        seeds=(0, 1, 2),
        env_kwargs={"n": 3},
        tuning=ScaleTuning(("bbcg",), GRID, TUNING_SEEDS, 250),
    ),
    Scenario(
        name="plain-ball",
        title="3-ball, no tuning protocol",
        env_id="BCO-Ball-v0",
        agents=("bbcg", "random"),
        horizon=200,
        seeds=(0, 1),
        env_kwargs={"n": 3},
    ),
)
AGENT = "one_point_fw:OnePointFW"


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """One bench of OnePointFW with --tune on the three scenarios above."""
    out = tmp_path_factory.mktemp("tune") / "bench"
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(SUITES, "tiny-tuned", TUNED)
        plain_report(patch)
        outcome = bench.run_bench([AGENT], out, suite="tiny-tuned", tune=True, progress=False)
    with (out / "scores.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    return outcome, rows, (out / "report.md").read_text()


def chosen_by_hand(scenario):
    """The grid value of least mean final regret on the tuning seeds, at the tuning
    horizon, computed here run by run (not by the bench)."""
    means = []
    for value in GRID:
        regrets = []
        for seed in TUNING_SEEDS:
            env = gym.make(scenario.env_id, horizon=scenario.tuning.horizon, **scenario.env_kwargs)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                regrets.append(run(env, f"{AGENT}[c={value:g}]", seed=seed).final_regret)
        means.append(np.mean(regrets))
    return GRID[int(np.argmin(means))]


def test_the_constant_is_tuned_per_scenario_by_the_references_protocol(tuned):
    outcome, rows, _ = tuned
    found = {}
    for run_ in outcome.runs:
        for result in run_.results:
            if result.agent == "one-point-fw" and result.constants == "tuned":
                found.setdefault(run_.scenario.name, set()).add(result.params["c"])
                assert result.horizon == run_.scenario.horizon  # played at the full horizon
    assert set(found) == {"tuned-ball", "tuned-box"}
    for scenario in TUNED[:2]:
        assert found[scenario.name] == {chosen_by_hand(scenario)}, scenario.name
    # the tuned rows are scored, on every evaluation seed, beside the untuned ones
    tuned_rows = {(r["scenario"], r["seed"]) for r in rows if r["agent"] == "one-point-fw (tuned)"}
    assert tuned_rows == {(name, seed) for name in ("tuned-ball", "tuned-box") for seed in "012"}
    assert {r["scenario"] for r in rows if r["agent"] == "one-point-fw"} == {
        "tuned-ball",
        "tuned-box",
        "plain-ball",
    }


def test_the_report_shows_each_constant_chosen_and_judges_the_tuned_rows(tuned):
    outcome, _, text = tuned
    section = text[text.index("## Tuned constants") :].split("\n## ")[0]
    lines = {
        line.split("|")[1].strip(): line for line in section.splitlines() if "| tuned-" in line
    }
    for name, line in lines.items():
        (value,) = {
            r.params["c"]
            for run_ in outcome.runs
            for r in run_.results
            if run_.scenario.name == name and r.agent == "one-point-fw" and r.constants == "tuned"
        }
        assert f"c={value:g}" in line
        assert "{10, 1000}; seeds 100-101; T = " in line
    assert set(lines) == {"tuned-ball", "tuned-box"}
    assert "- one-point-fw on plain-ball: no tuned row, the scenario has no tuning protocol" in (
        section
    )
    assert "- **one-point-fw (tuned)** (2 scenarios):" in text
    assert "- **one-point-fw** (3 scenarios):" in text


def test_tune_refuses_an_agent_without_a_scale_constant(tmp_path, monkeypatch):
    monkeypatch.setitem(SUITES, "tiny-tuned", TUNED)
    with pytest.raises(ValueError, match=r"--tune: 'user_agents:Unnamed' declares no scale"):
        bench.run_bench(["user_agents:Unnamed"], tmp_path / "b", suite="tiny-tuned", tune=True)
    assert not (tmp_path / "b").exists()


def test_an_agent_whose_every_grid_value_fails_gets_no_tuned_row_and_a_reason(
    tmp_path, monkeypatch
):
    """Jitter's spread must lie in (0, 1]: every value of the grid fails to build. Its own
    cells fail; the bench goes on and says why it has no tuned row."""
    monkeypatch.setitem(SUITES, "tiny-tuned", TUNED[:1])
    plain_report(monkeypatch)
    out = tmp_path / "b"
    outcome = bench.run_bench(["user_agents:Jitter"], out, suite="tiny-tuned", tune=True)
    assert not [r for r in outcome.rows if r.agent == "jitter (tuned)"]
    assert {r.seed for r in outcome.rows if r.agent == "jitter"} == {0, 1, 2}
    text = (out / "report.md").read_text()
    assert (
        "- jitter on tuned-ball: no tuned row, its tuning failed (4 failed cell(s), e.g. " in text
    )


def test_an_agent_plays_its_affordable_horizon_beside_references_at_the_same(tmp_path, monkeypatch):
    """ShortOnePointFW affords 100 rounds on these sets (T = 300): it plays 100, tuned as
    the references' protocol says, and the references play 100 too (theory and tuned
    rows, the tuned constants the scenario's); the report says where it played fewer."""
    monkeypatch.setitem(SUITES, "tiny-tuned", TUNED[:1])
    plain_report(monkeypatch)
    out = tmp_path / "b"
    outcome = bench.run_bench(
        ["one_point_fw:ShortOnePointFW"], out, suite="tiny-tuned", tune=True, progress=False
    )
    main, short = outcome.runs
    assert main.scenario.name == "tuned-ball" and short.scenario.name == "tuned-ball-T100"
    assert "short-one-point-fw" not in {r.agent for r in main.results}
    assert {r.horizon for r in short.results} == {100}
    series = {(r.agent, r.constants) for r in short.results}
    assert series == {
        ("bbcg", "theory"),
        ("bbcg", "tuned"),
        ("random", "default"),
        ("short-one-point-fw", "default"),
        ("short-one-point-fw", "tuned"),
    }
    tuned_bbcg = {
        r.params["c"] for r in main.results if (r.agent, r.constants) == ("bbcg", "tuned")
    }
    assert {
        r.params["c"] for r in short.results if (r.agent, r.constants) == ("bbcg", "tuned")
    } == (tuned_bbcg)  # the scenario's tuned constant, not tuned again
    with (out / "scores.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert {(r["scenario"], r["horizon"]) for r in rows if r["agent"] == "short-one-point-fw"} == {
        ("tuned-ball-T100", "100")
    }
    text = (out / "report.md").read_text()
    assert (
        "- **Fewer rounds**: short-one-point-fw played 100 rounds of tuned-ball (the rounds it "
        "can afford), beside the references at the same horizon: tuned-ball-T100." in text
    )
    assert "- **short-one-point-fw** (1 scenario):" in text
    assert "against bbcg (tuned, c=" in text
    assert "## 2. tuned-ball-T100: 3-ball, i.i.d. linear, at T = 100 (of 300): the rounds " in text
    # a second bench into the directory reads the short scenario back
    again = bench.run_bench(["random"], out, suite="tiny-tuned", progress=False)
    assert [run.scenario.name for run in again.runs] == ["tuned-ball", "tuned-ball-T100"]
    assert "- **Fewer rounds**: short-one-point-fw played 100 rounds" in (
        (out / "report.md").read_text()
    )
