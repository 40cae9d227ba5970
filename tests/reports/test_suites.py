"""Suites: one validation path for built-in and TOML scenarios, --scenarios, quick-v2."""

from __future__ import annotations

import csv
from dataclasses import asdict
from pathlib import Path

import pytest

from bco_gym.cli import main
from bco_gym.reports import bench
from bco_gym.reports.suites import (
    SMOKE_TEST_NOTE,
    SUITES,
    Scenario,
    centre_players,
    load_suite_file,
    resolve_suite,
    select_scenarios,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "suite.toml"
GOOD = """
[[scenario]]
name = "b"
env_id = "BCO-Ball-v0"
agents = ["bbcg", "random"]
horizon = 100
seeds = [0, 1]
env_kwargs = { n = 3, loss = "linear-drift", loss_kwargs = { rate = 0.01 } }
"""


def write(tmp_path, text, name="s.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_example_suite_file_loads_into_scenarios():
    name, scenarios = load_suite_file(EXAMPLE)
    assert name == "my-suite"
    assert [s.name for s in scenarios] == ["ball-iid-5", "ball-drift-5"]
    first = scenarios[0]
    assert first.seeds == (0, 1, 2, 3) and first.agents == ("bbcg", "fkm", "random")
    assert first.env_kwargs == {"n": 5} and first.horizon == 2000
    assert scenarios[1].env_kwargs["loss_kwargs"] == {"rate": 5e-4}


def test_a_toml_scenario_equals_the_same_scenario_built_in_python(tmp_path):
    name, (scenario,) = load_suite_file(write(tmp_path, GOOD))
    assert name == "s"
    built = Scenario(
        name="b",
        env_id="BCO-Ball-v0",
        agents=("bbcg", "random"),
        horizon=100,
        seeds=(0, 1),
        env_kwargs={"n": 3, "loss": "linear-drift", "loss_kwargs": {"rate": 0.01}},
    )
    assert asdict(scenario) == asdict(built)


BAD = [
    ("seeds = [0, 1]", "seeds = [0, 0]", "contain duplicates"),
    ("seeds = [0, 1]", "seeds = [0]", "expected at least 2"),
    ("horizon = 100", "horizon = 0", "horizon=0; expected a positive integer"),
    ('env_id = "BCO-Ball-v0"', 'env_id = "BCO-Nope-v0"', "env_id='BCO-Nope-v0'; allowed: BCO-"),
    ('agents = ["bbcg", "random"]', 'agents = ["bbcg", "nope"]', "agent 'nope'"),
    ('name = "b"', 'name = "a b"', "scenario name 'a b'; expected a slug"),
]


@pytest.mark.parametrize(("old", "new", "message"), BAD)
def test_toml_and_python_scenarios_are_refused_with_the_same_message(tmp_path, old, new, message):
    path = write(tmp_path, GOOD.replace(old, new))
    with pytest.raises(ValueError, match=message) as from_file:
        load_suite_file(path)
    values = dict(
        name="b", env_id="BCO-Ball-v0", agents=("bbcg", "random"), horizon=100, seeds=(0, 1)
    )
    key, value = new.split(" = ")
    values[key] = {"seeds": lambda: tuple(eval(value)), "agents": lambda: tuple(eval(value))}.get(
        key, lambda: eval(value)
    )()
    with pytest.raises(ValueError, match=message) as from_python:
        Scenario(**values)
    assert str(from_python.value) in str(from_file.value)


def test_a_suite_file_refuses_unknown_keys_and_duplicate_names(tmp_path):
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['horizn'\]; allowed: name, env_id"):
        load_suite_file(write(tmp_path, GOOD.replace("horizon", "horizn")))
    with pytest.raises(ValueError, match=r"unknown top-level key\(s\) \['suite'\]"):
        load_suite_file(write(tmp_path, 'suite = "x"\n' + GOOD))
    with pytest.raises(ValueError, match=r"scenario name\(s\) \['b'\] used twice"):
        load_suite_file(write(tmp_path, GOOD + GOOD))
    with pytest.raises(ValueError, match="is not valid TOML"):
        load_suite_file(write(tmp_path, "[[scenario]\n"))
    with pytest.raises(ValueError, match="a built-in suite's"):
        load_suite_file(write(tmp_path, 'name = "quick-v2"\n' + GOOD))
    with pytest.raises(ValueError, match="unknown suite 'nope'; allowed: quick-v1"):
        resolve_suite("nope")


def test_scenarios_not_in_the_suite_are_refused_by_name(capsys):
    with pytest.raises(ValueError, match=r"'nope', 'nada' not in suite 'quick-v2'; its scen"):
        select_scenarios("quick-v2", SUITES["quick-v2"], ["ball-iid", "nope", "nada"])
    chosen = select_scenarios("quick-v2", SUITES["quick-v2"], ["box-iid", "ball-iid"])
    assert [s.name for s in chosen] == ["ball-iid", "box-iid"]  # the suite's order
    for command in ("bench", "demo"):
        extra = ["--agents", "bfw"] if command == "bench" else []
        code = main([command, *extra, "--suite", "quick-v2", "--scenarios", "nope", "--out", "x"])
        assert code == 2
        err = capsys.readouterr().err
        assert "'nope' not in suite 'quick-v2'" in err and "ball-iid, ball-quadratic" in err


def test_no_quick_v2_scenario_is_degenerate_or_duplicate():
    scenarios = SUITES["quick-v2"]
    for scenario in scenarios:
        assert centre_players(scenario) == {}, scenario.name  # nobody plays the centre
        assert scenario.horizon <= 2_000 and len(scenario.seeds) >= 3
    settings = [(s.env_id, repr(sorted(s.env_kwargs.items()))) for s in scenarios]
    assert len(set(settings)) == len(settings)
    assert len({s.description for s in scenarios}) == len(scenarios)
    (drift,) = [s for s in scenarios if s.env_kwargs.get("loss") == "linear-drift"]
    assert drift.env_kwargs["loss_kwargs"]["rate"] * drift.horizon >= 0.5  # radians: it moves


def test_centre_players_finds_the_capped_radius():
    (simplex,) = [s for s in SUITES["quick-v1"] if s.name == "simplex-iid"]
    assert set(centre_players(simplex)) == {"bbcg", "fkm", "bfw"}


def test_quick_v2_is_labelled_a_smoke_test(tmp_path, capsys, plain):
    """Its first line and scores.csv's label (a plain report: the figures and rliable's
    intervals are tests/reports/test_bench.py's)."""
    out = tmp_path / "b"
    outcome = bench.run_bench(
        ["bfw"], out, suite="quick-v2", scenarios=["ball-iid"], seeds=2, progress=False
    )
    first = outcome.report.read_text().splitlines()[0]
    # one scenario of the six: the report and scores.csv say it is a subset, too
    assert first == f"# {SMOKE_TEST_NOTE} (bco-gym bench: suite quick-v2, subset: 1 of 6 scenarios)"
    with (out / "scores.csv").open() as handle:
        assert {row["suite"] for row in csv.DictReader(handle)} == {
            "quick-v2 (smoke test; subset: 1 of 6 scenarios)"
        }
    capsys.readouterr()
    assert main(["bench", "--help"]) == 0
    assert "SMOKE TEST" in " ".join(capsys.readouterr().out.split())


def test_quick_v1_warns_that_quick_v2_supersedes_it(tmp_path):
    with pytest.warns(bench.SupersededSuiteWarning, match="quick-v2 supersedes quick-v1.*0.02 rad"):
        with pytest.raises(ValueError):  # refused after the warning: a stranger directory
            (tmp_path / "x").mkdir()
            (tmp_path / "x" / "y").write_text("")
            bench.run_bench(["bfw"], tmp_path / "x", suite="quick-v1")


def test_a_bench_runs_a_toml_suite(tmp_path, plain):
    path = write(tmp_path, GOOD, "mine.toml")
    outcome = bench.run_bench(["bfw"], tmp_path / "b", suite=str(path), progress=False)
    assert {(r.suite, r.scenario) for r in outcome.rows} == {("mine", "b")}


def test_standard_v2_is_a_grid_of_distinct_purposes():
    scenarios = SUITES["standard-v2"]
    assert 16 <= len(scenarios) <= 24
    purposes = [s.purpose for s in scenarios]
    assert all(purposes) and len(set(purposes)) == len(purposes)
    assert len({s.name for s in scenarios}) == len(scenarios)
    envs = {s.env_id for s in scenarios}
    assert {"BCO-Ball-v0", "BCO-Simplex-v0", "BCO-NuclearBall-v0"} <= envs
    assert envs & {"BCO-Hypercube-v0", "BCO-L1Ball-v0"}
    assert envs & {"BCO-ShortestPath-v0", "BCO-Birkhoff-v0"}
    for scenario in scenarios:  # theory and tuned references, tuned on other seeds
        assert scenario.tuning is not None and not set(scenario.tuning.seeds) & set(scenario.seeds)
    tracking = [
        s for s in scenarios if s.env_kwargs.get("loss") in ("linear-drift", "linear-switching")
    ]
    assert tracking and all({"loo-bbgd", "so-bgd"} <= set(s.agents) for s in tracking)
    assert any("saha-tewari" in s.agents for s in scenarios)


def test_no_price_series_is_learnable_from_one_point_feedback_within_its_length():
    """Why standard-v2's exp-concave scenario is synthetic (docs/benchmark.md): on every
    shipped price series T_dir, the rounds before the summed one-point estimates point down
    the mean gradient, exceeds the data's length 10^4 times over (inf: no mean gradient
    told from its noise)."""
    from bco_gym.data import PORTFOLIO_DATASETS
    from bco_gym.losses.market import dataset_shape
    from bco_gym.reports.signal import gradient_signal

    for dataset in PORTFOLIO_DATASETS:
        days = dataset_shape(dataset)[0]
        signal = gradient_signal("BCO-Portfolio-v0", {"dataset": dataset}, rounds=days)
        assert signal.rounds_direction > 1e4 * days, (dataset, signal)


def test_the_synthetic_portfolio_scenario_is_learnable_within_its_horizon():
    from bco_gym.reports.signal import gradient_signal

    (spec,) = [s for s in SUITES["standard-v2"] if s.name == "simplex-portfolio-10"]
    assert spec.env_id == "BCO-Simplex-v0" and spec.env_kwargs["loss"] == "portfolio"
    # measured on 5,000 rounds (unbiased for ||grad F||^2; the scenario plays 20,000)
    signal = gradient_signal(spec.env_id, dict(spec.env_kwargs), rounds=5_000)
    assert signal.aff_dim == 9
    assert signal.rounds_direction <= spec.horizon / 10, signal


def test_the_trap_misleads_an_early_window_and_its_comparator_is_the_bias():
    """ball-trap-10: a window of the first T^(2/3) rounds sees the half swing along v more
    than the bias along mu, while the best fixed point over the run is the bias direction."""
    import math

    import gymnasium as gym

    (spec,) = [s for s in SUITES["standard-v2"] if s.name == "ball-trap-10"]
    env = gym.make(spec.env_id, horizon=spec.horizon, **spec.env_kwargs)
    env.reset(seed=0)
    losses = env.unwrapped.losses
    bias, swing = losses._globals["first"], losses._globals["second"]
    window = math.ceil(spec.horizon ** (2 / 3))
    early = losses._means(0, window).mean(axis=0)
    assert abs(early @ swing) > 4 * abs(early @ bias)  # 0.45 against 0.1
    (best,) = losses.comparator([spec.horizon])
    assert best.point @ bias < -0.95  # the comparator plays against the bias
    assert window < losses.block  # the window lies in the first block
    assert spec.horizon * losses.bias > 4 * losses.block * losses.swing / 2
    env.close()
