"""Without the Clarabel solver the flow and Birkhoff polytopes have no projection; the
Python errors that refuse a projection-based agent or ``on_infeasible="project"`` then
name the ``qp`` extra that provides it (as the CLI's check does)."""

from __future__ import annotations

import gymnasium as gym
import pytest

import bco_gym  # registers the env ids
import bco_gym.sets.birkhoff
import bco_gym.sets.flow
from bco_gym.agents import make_agent
from bco_gym.sets import Simplex
from bco_gym.sets.base import projection_hint


@pytest.fixture
def without_clarabel(monkeypatch):
    monkeypatch.setattr(bco_gym.sets.flow, "qp_available", lambda: False)
    monkeypatch.setattr(bco_gym.sets.birkhoff, "qp_available", lambda: False)


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [("BCO-ShortestPath-v0", {"grid": 3}), ("BCO-Birkhoff-v0", {"n": 3})],
)
def test_missing_projection_errors_name_the_qp_extra(without_clarabel, env_id, kwargs):
    env = gym.make(env_id, **kwargs)
    assert not env.unwrapped.set.has_projection
    with pytest.raises(ValueError, match=r"needs a Euclidean projection.*bco_gym\[qp\]"):
        make_agent("fkm", env)
    with pytest.raises(ValueError, match=r"on_infeasible='project'.*bco_gym\[qp\]"):
        gym.make(env_id, on_infeasible="project", **kwargs)
    make_agent("bbcg", env)  # a projection-free agent is still fine


def test_no_hint_where_no_extra_helps(without_clarabel):
    assert projection_hint(Simplex(3)) == ""  # it has a projection
    env = gym.make("BCO-ShortestPath-v0", grid=3)
    assert "bco_gym[qp]" in projection_hint(env.unwrapped.set)
