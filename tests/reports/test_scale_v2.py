"""standard-v2's scale scenarios (SCALE_V2): the three large sets, learnable horizons,
tuning seeds disjoint from the evaluation seeds, random's vertex-mixture law pinned by
the scenario (standard-v1's scale scenarios keep the set's own law)."""

from __future__ import annotations

import re

import gymnasium as gym
import pytest

from bco_gym.reports.scale import play_scenario
from bco_gym.reports.suites import SCALE_V1, SCALE_V2, Scenario
from bco_gym.stats.paired import series_label


def test_the_three_families_at_their_sizes():
    sizes = {}
    for spec in SCALE_V2:
        env = gym.make(spec.env_id, **dict(spec.env_kwargs))
        try:
            sizes[spec.env_id] = env.unwrapped.set.shape
        finally:
            env.close()
    assert sizes["BCO-ShortestPath-v0"][0] >= 1_000  # edges
    assert sizes["BCO-Birkhoff-v0"][0] >= 32
    assert sizes["BCO-NuclearBall-v0"][0] >= 64 and sizes["BCO-NuclearBall-v0"][1] >= 64
    assert len(sizes) == 3


@pytest.mark.parametrize("spec", SCALE_V2, ids=lambda s: s.name)
def test_each_is_learnable_tuned_on_disjoint_seeds_with_cheap_random(spec):
    assert spec.tuning is not None and not set(spec.tuning.seeds) & set(spec.seeds)
    stated = re.search(
        r"is ([0-9.e]+) here, at most a tenth of the largest horizon", spec.description
    )
    assert stated is not None and float(stated.group(1)) <= spec.horizon / 10
    assert "Why it is learnable" in spec.description
    assert spec.agent_kwargs == {"random": {"law": "vertex-mixture"}}
    assert len(spec.all_horizons) >= 3 and len(spec.horizons_of("fkm")) >= 3


def test_standard_v1_scale_scenarios_keep_the_old_law():
    assert all(not spec.agent_kwargs for spec in SCALE_V1)
    assert {s.name for s in SCALE_V1}.isdisjoint({s.name for s in SCALE_V2})


def test_agent_kwargs_reach_every_run_and_keep_the_label(tmp_path):
    spec = Scenario(
        name="tiny", env_id="BCO-ShortestPath-v0", agents=("random",), horizon=40,
        seeds=(0, 1), env_kwargs={"grid": 3}, agent_kwargs={"random": {"law": "vertex-mixture"}},
    )  # fmt: skip
    results, _ = play_scenario(spec, tmp_path, spec.all_horizons)
    assert len(results) == 2
    for result in results:
        assert result.agent_kwargs == {"law": "vertex-mixture"}
        assert result.params["law"] == "vertex-mixture"
        assert series_label(result) == "random"
    with pytest.raises(ValueError, match=r"agent_kwargs names \['fkm'\], which are not"):
        Scenario("x", "BCO-Ball-v0", ("bbcg",), 50, seeds=(0, 1), agent_kwargs={"fkm": {}})


def test_bench_runs_a_scenario_with_its_agent_kwargs(tmp_path):
    from bco_gym.reports.bench import _run_scenario

    spec = Scenario(
        name="tiny", env_id="BCO-ShortestPath-v0", agents=("random",), horizon=30,
        seeds=(0, 1), env_kwargs={"grid": 3}, agent_kwargs={"random": {"law": "vertex-mixture"}},
    )  # fmt: skip
    results, failures = _run_scenario(
        spec, ["random", "bbcg"], tmp_path, backend="serial", batch_size=None, progress=False
    )
    assert not failures and len(results) == 4
    laws = {(r.agent, r.params.get("law")) for r in results}
    assert laws == {("random", "vertex-mixture"), ("bbcg", None)}
    assert {series_label(r) for r in results} == {"random", "bbcg"}
