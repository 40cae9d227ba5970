"""Every public name of the contract is importable from where the contract says, and
docs/api.md's "Public names" table (the README links to it) lists it.

A name is (module, dotted attribute path); attributes of dataclasses (``RunResult``'s
fields) are checked on a result of a short run, keys of ``info`` and of
``RunResult.loss`` on an episode, and keyword arguments on the signature.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from pathlib import Path

import gymnasium as gym
import pytest

ROOT = Path(__file__).resolve().parent.parent

#: (module, attribute path): importable as ``from module import first`` then ``.rest``
NAMES = [
    ("bco_gym", "BanditConvexEnv"),
    ("bco_gym", "InfeasibleActionError"),
    ("bco_gym.envs", "BanditConvexVectorEnv"),
    ("bco_gym.envs", "PairSpace"),
    ("bco_gym.sets", "ConvexSet.lmo_many"),
    ("bco_gym.sets", "ConvexSet.project_many"),
    ("bco_gym.sets", "ConvexSet.sample_many"),
    ("bco_gym.agents", "Agent"),
    ("bco_gym.agents", "Agent.THEORY_DEFAULTS"),
    ("bco_gym.agents", "make_agent"),
    ("bco_gym.agents", "register"),
    ("bco_gym.agents", "SB3Agent"),
    ("bco_gym.agents", "AgentSpec.identity"),
    ("bco_gym.agents.registry", "AgentLoadError"),
    ("bco_gym.errors", "AgentError"),
    ("bco_gym.wrappers", "RegretRecorder"),
    ("bco_gym.wrappers", "BoxActionAdapter"),
    ("bco_gym.losses", "from_array"),
    ("bco_gym.losses", "from_function"),
    ("bco_gym.losses", "wealth"),
    ("bco_gym.losses", "final_wealth"),
    ("bco_gym.experiment", "run"),
    ("bco_gym.experiment", "run_many"),
    ("bco_gym.experiment", "RunResult"),
    ("bco_gym.experiment", "sweep"),
    ("bco_gym.experiment", "load_sweep"),
    ("bco_gym.experiment", "tune"),
    ("bco_gym.experiment", "paired_table"),
    ("bco_gym.experiment.suites", "SUITES"),
    ("bco_gym.experiment.suites", "Scenario"),
]
RESULT_FIELDS = ["adaptive_regret", "dynamic_regret", "latency_us"]
MODULES = ["bco_gym.experiment.backends"]


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else len(text)]


DOCS_API = _section((ROOT / "docs" / "api.md").read_text(), "## Public names")


@pytest.mark.parametrize(("module", "path"), NAMES, ids=[f"{m}:{p}" for m, p in NAMES])
def test_name_imports_from_where_the_contract_says(module, path):
    first, *rest = path.split(".")
    found = getattr(importlib.import_module(module), first)  # from module import first
    for part in rest:
        found = getattr(found, part)
    assert found is not None


@pytest.mark.parametrize("module", MODULES)
def test_module_imports(module):
    assert importlib.import_module(module).__name__ == module


def _listed(text: str, name: str) -> bool:
    return re.search(rf"`{re.escape(name)}[`(\[]", text) is not None


ALL_LISTED = (
    [path for _, path in NAMES]
    + [f"RunResult.{f}" for f in RESULT_FIELDS]
    + [
        "backends",
        'RunResult.loss["digest"]',
    ]
)


@pytest.mark.parametrize("name", ALL_LISTED)
def test_the_api_docs_list_the_name(name):
    assert _listed(DOCS_API, name), f"docs/api.md's Public names lacks `{name}`"


def test_the_readme_links_to_the_public_names():
    assert "docs/api.md" in (ROOT / "README.md").read_text()


def test_result_fields_info_keys_and_keywords():
    import bco_gym
    from bco_gym.agents import SB3Agent, register
    from bco_gym.experiment import RunResult, run
    from bco_gym.experiment.suites import SUITES

    fields = {field.name for field in dataclasses.fields(RunResult)}
    assert set(RESULT_FIELDS) <= fields
    result = run("BCO-Ball-v0", "random", seed=0, horizon=20)
    assert set(result.latency_us) == {"p50", "p90", "p99", "max"}
    assert isinstance(result.loss["digest"], str) and len(result.loss["digest"]) == 64
    env = bco_gym.wrappers.RegretRecorder(gym.make("BCO-Ball-v0", horizon=3))
    env.reset(seed=0)
    for _ in range(3):
        *_, info = env.step(env.unwrapped.set.center)
    assert {"adaptive_regret", "dynamic_regret"} <= set(info)
    assert "name" in inspect.signature(SB3Agent).parameters
    assert list(inspect.signature(register).parameters) == ["name", "factory", "summary", "replace"]
    assert {"quick-v1", "standard-v1", "quick-v2", "standard-v2"} <= set(SUITES)
