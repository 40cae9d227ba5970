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
    assert len(told) == 2
    for spec in chosen:
        assert spec.title in text
        assert (tmp_path / "runs" / spec.name / "manifest.json").is_file()
    for link in re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", text):
        assert (tmp_path / link).is_file(), link
    assert "ofw (full info)" in text and "bbcg (full info)" not in text
