"""The main job: every scenario is well formed, and a quick run writes the whole report."""

from __future__ import annotations

import re

import gymnasium as gym
import pytest

from bco_gym.agents import AGENTS
from bco_gym.reports.demo import SCENARIOS, run_demo


@pytest.mark.parametrize("spec", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_every_scenario_names_a_valid_env_and_agents(spec):
    env = gym.make(spec.env_id, **dict(spec.env_kwargs))
    feedback = env.unwrapped.problem.feedback
    env.close()
    for name in spec.agents:
        assert name in AGENTS
        if AGENTS[name].feedback == "full":
            assert feedback == "full", f"{name} needs feedback='full' in {spec.name}"
    assert set(spec.references) <= set(spec.agents)
    assert len(spec.seeds) >= 2  # paired intervals need two seeds at least


def test_slugs_and_titles_are_distinct():
    assert len({s.name for s in SCENARIOS}) == len(SCENARIOS)
    assert len({s.title for s in SCENARIOS}) == len(SCENARIOS)


def test_a_quick_demo_writes_the_report_with_every_scenario(tmp_path):
    chosen = [s for s in SCENARIOS if s.name in ("ball-iid", "portfolio-nyse")]
    told = []
    path = run_demo(tmp_path, scenarios=chosen, backend="serial", quick=True, announce=told.append)
    text = path.read_text()
    assert len(told) == 1 and told[0].startswith("2 scenarios, ")  # one pool, one line
    for spec in chosen:
        assert spec.title in text
    assert (tmp_path / "runs" / "demo" / "manifest.json").is_file()  # one pool, one sweep
    for link in re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", text):
        assert (tmp_path / link).is_file(), link
    assert "ogd (full info)" in text and "bbcg (full info)" not in text
    assert (tmp_path / "index.html").is_file()


def test_the_progress_bar_weighs_each_run_by_its_estimated_cost():
    from bco_gym.reports.demo import estimated_seconds, scenario_cells

    birkhoff = scenario_cells(SCENARIOS[0])
    fkm = [c for c in birkhoff if c.agent == "fkm"]
    assert {c.horizon for c in fkm} == {300, 1_000} and {c.constants for c in fkm} == {"tuned"}
    # an FKM round on the Birkhoff polytope costs ~170 of BBCG's there
    per_round = {c.agent: estimated_seconds(c) / c.horizon for c in birkhoff}
    assert per_round["fkm"] > 100 * per_round["bbcg"]
    total = sum(map(estimated_seconds, (c for s in SCENARIOS for c in scenario_cells(s))))
    assert 60 < total < 400  # CPU seconds: the 5-minute job on two cores


def test_costly_batches_are_split_and_handed_out_first():
    from bco_gym.sweeps.backends import largest_first, split_costly

    def cost(cell):
        return cell.horizon * (100.0 if cell.agent == "fkm" else 1.0)

    from bco_gym.reports.demo import scenario_cells

    birkhoff = scenario_cells(SCENARIOS[0])
    fkm = [c for c in birkhoff if c.agent == "fkm" and c.horizon == 1_000]
    cheap = [c for c in birkhoff if c.constants == "theory" and c.horizon == 10_000]
    pending = split_costly([fkm, cheap], cost, workers=2)
    # the fkm batch (8 x 10^5 of cost against 8 x 10^4) is halved down to a quarter of a
    # worker's share; the cheap one is kept whole; the costliest are handed out first
    assert all(sum(map(cost, b)) <= sum(map(cost, fkm + cheap)) / 8 for b in pending[:-1])
    assert pending[-1] == cheap and sorted(c.seed for b in pending[:-1] for c in b) == list(
        range(8)
    )
    ordered = largest_first(pending, cost)
    assert ordered[-1] == cheap and largest_first(pending)[0] == cheap  # by rounds: cheap first
