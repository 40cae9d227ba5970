"""One identity per agent: every spelling (built-in or registered name, entry point,
import path, class, factory, variant) gives the same identity, labels are short and
separate from it, and the code digest follows the agent's module source."""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest
from agent_plugins import forget_plugin, install_plugin
from user_agents import Jitter, jitter_factory

from bco_gym.agents import FlaxmanAgent, register, registry, resolve_agent
from bco_gym.engine import run, run_many

BALL, SMALL = "BCO-Ball-v0", {"n": 3}


@pytest.fixture
def registered():
    names = []

    def add(name, factory, **kwargs):
        names.append(name)
        return register(name, factory, **kwargs)

    yield add
    for name in names:
        registry._REGISTERED.pop(name, None)


def test_every_spelling_of_one_agent_has_one_identity_and_digest(registered, tmp_path, monkeypatch):
    registered("my-fkm", FlaxmanAgent)
    spellings = ["fkm", "bco_gym.agents.fkm.agent:FlaxmanAgent", FlaxmanAgent, "my-fkm"]
    specs = [resolve_agent(agent) for agent in spellings]
    assert {spec.identity() for spec in specs} == {"bco_gym.agents.fkm.agent:FlaxmanAgent"}
    assert len({spec.digest for spec in specs}) == 1 and specs[0].digest is not None
    assert [spec.name for spec in specs] == ["fkm", "fkm", "fkm", "my-fkm"]  # labels differ
    registered("jit-fn", jitter_factory)
    factories = [jitter_factory, "user_agents:jitter_factory", "jit-fn"]
    assert {resolve_agent(f).identity() for f in factories} == {"user_agents:jitter_factory"}
    install_plugin(tmp_path, monkeypatch)
    try:
        by_entry, by_path = resolve_agent("plugjitter"), resolve_agent("plugpkg:PlugJitter")
        assert by_entry.identity() == by_path.identity() == "plugpkg:PlugJitter"
        assert by_entry.digest == by_path.digest  # the module and the version 0.3.1
        assert by_entry.version == by_path.version == "0.3.1"
    finally:
        forget_plugin()


def test_a_variant_binds_typed_keywords_and_equals_the_same_overrides():
    spec = resolve_agent("fkm[c=2,estimator=residual]")
    assert spec.kwargs == (("c", 2.0), ("estimator", "residual"))
    assert isinstance(dict(spec.kwargs)["c"], float)  # c: float | None -> a float
    assert spec.name == "fkm[c=2,estimator=residual]"
    same = resolve_agent("fkm").identity({"estimator": "residual", "c": 2})
    assert (
        spec.identity() == same == "bco_gym.agents.fkm.agent:FlaxmanAgent[c=2,estimator=residual]"
    )
    assert resolve_agent("user_agents:Faulty[at=4,fault=nan]").kwargs == (
        ("at", 4),
        ("fault", "nan"),
    )
    assert resolve_agent(spec.identity()).identity() == spec.identity()  # identities resolve
    for bad, message in [
        ("fkm[d=1]", r"unknown keyword\(s\) d; allowed: c, step_size"),
        ("fkm[c]", r"'c' is not key=value"),
        ("fkm[]", "empty brackets"),
        ("fkm[c=1,c=2]", "gives 'c' twice"),
        ("fkm[c=1", "one pair of brackets at the end"),
    ]:
        with pytest.raises(ValueError, match=message):
            resolve_agent(bad)


def test_a_variants_values_are_validated_as_make_agent_validates():
    with pytest.raises(ValueError, match="estimator"):
        run(BALL, "fkm[estimator=wrong]", horizon=20, env_kwargs=SMALL)
    with pytest.raises(ValueError, match=r"spread=2\.0 must be in \(0, 1\]"):
        run(BALL, "user_agents:Jitter[spread=2]", horizon=20, env_kwargs=SMALL)


def test_results_of_every_spelling_are_the_same_outcome():
    """The issue's first step: run_many by import path against run with the class."""
    many = run_many(BALL, "user_agents:Jitter", [0, 1, 2], horizon=60, env_kwargs=SMALL)
    alone = run(BALL, Jitter, seed=2, horizon=60, env_kwargs=SMALL)
    assert many[2].same_outcome(alone)
    assert many[2].agent == alone.agent == "jitter"
    variant = run(BALL, "fkm[c=2]", seed=1, horizon=60, env_kwargs=SMALL)
    overrides = run_many(
        BALL, FlaxmanAgent, [1], horizon=60, env_kwargs=SMALL, agent_kwargs={"c": 2}
    )
    assert variant.same_outcome(overrides[0]) and variant.agent_kwargs == {"c": 2.0}
    assert variant.constants == overrides[0].constants == "custom"
    plain = run(BALL, "fkm", seed=1, horizon=60, env_kwargs=SMALL)
    assert not plain.same_outcome(variant)
    assert variant.agent_spec["identity"] == "bco_gym.agents.fkm.agent:FlaxmanAgent[c=2]"
    assert variant.computed_at is not None and variant.computed_at.endswith("Z")


def test_the_code_digest_follows_the_module_source(tmp_path, monkeypatch):
    module = tmp_path / "digested_agent.py"
    source = textwrap.dedent(
        """
        from user_agents import Jitter

        class Drifting(Jitter):
            name = "drifting"
        """
    )
    module.write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = resolve_agent("digested_agent:Drifting").digest
    module.write_text(source + "\n# a comment is a change of code too\n")
    sys.modules.pop("digested_agent", None)
    importlib.invalidate_caches()
    after = resolve_agent("digested_agent:Drifting").digest
    assert before is not None and after is not None and before != after
    sys.modules.pop("digested_agent", None)


def test_default_labels_are_short_and_a_label_is_not_the_identity():
    assert resolve_agent("user_agents:Jitter").name == "jitter"  # its declared name
    assert resolve_agent("user_agents:Unnamed").name == "Unnamed"  # its class name
    assert resolve_agent("user_agents:HalfBBCG").name == "HalfBBCG"  # not the built-in's
    relabelled = resolve_agent("fkm").with_label("Flaxman et al.")
    assert relabelled.identity() == resolve_agent("fkm").identity()
    result = run(BALL, relabelled, horizon=30, env_kwargs=SMALL)
    assert result.agent == "Flaxman et al."
    assert result.same_outcome(run(BALL, "fkm", horizon=30, env_kwargs=SMALL))
    with pytest.raises(ValueError, match="label ' x' must be a non-empty string"):
        resolve_agent("fkm").with_label(" x")
