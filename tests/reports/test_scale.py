"""Scenarios at scale: their sets, disjoint tuning seeds, and the tuned sweep end to end."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

from bco_gym.reports.scale import play_scenario, scale_parts
from bco_gym.reports.suites import SUITES, ScaleTuning, Scenario
from bco_gym.sweeps.tuning import load_tuned, tune

SCALE = [s for s in SUITES["standard-v1"] if s.tuning is not None]


def test_standard_v1_has_the_three_families_at_scale():
    assert {s.env_id for s in SCALE} == {
        "BCO-Birkhoff-v0",
        "BCO-ShortestPath-v0",
        "BCO-NuclearBall-v0",
    }


@pytest.mark.parametrize("spec", SCALE, ids=lambda s: s.name)
def test_each_set_at_scale_has_dimension_at_least_1000(spec):
    env = gym.make(spec.env_id, **dict(spec.env_kwargs))
    try:
        assert env.unwrapped.set.dim >= 1_000
    finally:
        env.close()
    assert len(spec.all_horizons) >= 3  # the compute frontier needs several horizons


@pytest.mark.parametrize("spec", SCALE, ids=lambda s: s.name)
def test_tuning_seeds_are_disjoint_from_the_evaluation_seeds(spec):
    assert not set(spec.tuning.seeds) & set(spec.seeds)
    quick = spec.quick()
    assert not set(quick.tuning.seeds) & set(quick.seeds)
    # The tuned runs hold delta below r: the theory's delta = r leaves K_delta = {c}.
    for agent in spec.tuning.agents:
        assert spec.tuning.fixed[agent]["smoothing_radius"] < 0.13


def test_a_scenario_whose_tuning_seeds_overlap_is_refused():
    tuning = ScaleTuning(("bbcg",), (1.0, 2.0), seeds=(3, 4), horizon=50)
    with pytest.raises(
        ValueError, match=r"tuning seeds \[3, 4\] overlap the evaluation seeds at \[3\]"
    ):
        Scenario("x", "BCO-Ball-v0", ("bbcg",), 50, seeds=(0, 3), tuning=tuning)


def test_tune_refuses_to_fix_the_constant_it_tunes(tmp_path):
    with pytest.raises(ValueError, match="fix 'c', the constant being tuned"):
        tune("BCO-Ball-v0", ["bbcg"], 50, [1], [1.0, 2.0], out=tmp_path,
             agent_kwargs={"bbcg": {"c": 3.0}})  # fmt: skip


def test_a_tiny_scenario_plays_theory_then_tuned_runs_on_disjoint_seeds(tmp_path):
    fixed = {"smoothing_radius": 0.2, "estimator": "residual"}
    spec = Scenario(
        name="tiny",
        env_id="BCO-Ball-v0",
        agents=("bbcg", "fkm", "random"),
        horizon=80,
        horizons=(40,),
        seeds=(0, 1),
        env_kwargs={"n": 3},
        tuning=ScaleTuning(
            ("bbcg", "fkm"), (0.5, 4.0), seeds=(7,), horizon=60,
            fixed={"bbcg": fixed, "fkm": fixed}, agent_horizons={"fkm": 30},
        ),
        agent_horizons={"fkm": (20, 30)},
    )  # fmt: skip
    results, tunings = play_scenario(spec, tmp_path, spec.all_horizons)
    # One tuning per tuning horizon, each saved with its seeds.
    assert [(t.horizon, list(t.labels.values())) for t in tunings] == [
        (60, ["bbcg"]),
        (30, ["fkm"]),
    ]
    assert [list(t.constants) for t in tunings] == [
        ["bco_gym.agents.bbcg.agent:BlockBanditCG"],
        ["bco_gym.agents.fkm.agent:FlaxmanAgent"],
    ]
    saved = load_tuned(tmp_path / "tuning" / "tiny.json")
    assert saved.tune_seeds == (7,) and saved.fixed == {
        "bco_gym.agents.bbcg.agent:BlockBanditCG": fixed
    }
    assert load_tuned(tmp_path / "tuning" / "tiny-T30.json").constants.keys() == {
        "bco_gym.agents.fkm.agent:FlaxmanAgent"
    }
    chosen = {t.label(a): c.value for t in tunings for a, c in t.constants.items()}
    assert set(chosen.values()) <= {0.5, 4.0}
    tuned = [r for r in results if r.constants == "tuned"]
    # FKM plays its own horizons, on the same seeds as the others.
    assert {(r.agent, r.horizon, r.seed) for r in tuned} == {
        *((a, h, s) for a, hs in (("bbcg", (40, 80)), ("fkm", (20, 30))) for h in hs
          for s in (0, 1)),
    }  # fmt: skip
    assert not {r.seed for r in tuned} & set(saved.tune_seeds)
    for result in tuned:
        assert result.agent_kwargs == {**fixed, "c": chosen[result.agent]}
        assert result.params["smoothing_radius"] == 0.2
    theory = [r for r in results if r.constants != "tuned"]
    assert sorted((r.agent, r.horizon) for r in theory if r.seed == 0) == [
        ("bbcg", 40), ("bbcg", 80), ("fkm", 20), ("fkm", 30), ("random", 40), ("random", 80),
    ]  # fmt: skip
    assert all(r.cpu_seconds is not None for r in results)
    # The report carries the tuning tables and the frontier figure, budget from tuned FKM.
    tuned_part, frontier_part = scale_parts(tunings, spec.seeds)
    text = "\n".join(
        tuned_part(tmp_path, results, "tiny") + frontier_part(tmp_path, results, "tiny")
    )
    assert text.count("### Tuned constants") == 2 and "on seeds [7], disjoint" in text
    assert "at T = 30 on seeds [7]" in text
    assert "### Compute frontier" in text and (tmp_path / "tiny-frontier.png").exists()
    budget = max(r.cpu_seconds for r in tuned if r.agent == "fkm" and r.horizon == 30)
    assert f"Within a budget of {budget:.3g} CPU s per run (fkm (tuned" in text
    assert json.loads((tmp_path / "tuning" / "tiny.json").read_text())["tune_seeds"] == [7]
    # Re-playing resumes: the same results, nothing recomputed.
    again, _ = play_scenario(spec, tmp_path, spec.all_horizons)
    assert len(again) == len(results)
    assert all(a.same_outcome(b) for a, b in zip(again, results, strict=True))


def test_agent_horizons_must_name_agents_of_the_scenario():
    with pytest.raises(ValueError, match=r"agent_horizons names \['fkm'\], which are not"):
        Scenario("x", "BCO-Ball-v0", ("bbcg",), 50, seeds=(0, 1), agent_horizons={"fkm": (10,)})
    spec = Scenario("x", "BCO-Ball-v0", ("bbcg", "fkm"), 50, seeds=(0, 1), horizons=(20,),
                    agent_horizons={"fkm": (10, 5)})  # fmt: skip
    assert spec.horizons_of("fkm") == [5, 10] and spec.horizons_of("bbcg") == [20, 50]
    assert spec.quick().horizons_of("fkm") == [spec.quick_horizon]


def test_the_tune_command_holds_fixed_arguments(tmp_path):
    from bco_gym.cli import main

    out = tmp_path / "tuned.json"
    argv = ["tune", "--env", "BCO-Ball-v0", "--agents", "bbcg", "--horizon", "50"]
    argv += ["--tune-seeds", "7", "--grid", "0.5:4", "--points", "2", "--out", str(out)]
    assert main([*argv, "--fixed", '{"bbcg": {"smoothing_radius": 0.2}}']) == 0
    saved = load_tuned(out)
    assert saved.fixed == {"bco_gym.agents.bbcg.agent:BlockBanditCG": {"smoothing_radius": 0.2}}
    assert saved.overrides()["bbcg"]["smoothing_radius"] == 0.2
    assert main([*argv, "--fixed", '{"fkm": {"smoothing_radius": 0.2}}']) == 2
