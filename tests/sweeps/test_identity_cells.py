"""Sweep cells keyed by the agent's identity: every spelling finds the same cells, a
cell computed by other code (its digest differs) is recomputed with a warning naming
the agent and the cells, or kept with ``reuse_stale`` and the result says so, and a
directory written before identities still loads and grows."""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
import warnings

import pytest

from bco_gym.agents import register, unregister
from bco_gym.sweeps import Cell, load_sweep, run_cells, sweep
from bco_gym.sweeps.sweep import StaleCellWarning

ENV, SETTINGS = "BCO-Ball-v0", {"n": 3}
SOURCE = '''
from user_agents import Jitter

class Moving(Jitter):
    """Jitter under another name."""
    name = "moving"
'''


def _sweep(out, agents, **kwargs):
    return sweep(ENV, agents, 30, [0, 1], out=out, env_kwargs=SETTINGS, progress=False, **kwargs)


def _computed(monkeypatch):
    """The cells actually computed (by the serial backend's batches)."""
    from bco_gym.sweeps import backends

    seen = []
    original = backends.run_batch

    def counting(batch, *args, **kwargs):
        seen.extend((cell.agent, cell.seed) for cell in batch)
        return original(batch, *args, **kwargs)

    monkeypatch.setattr(backends, "run_batch", counting)
    return seen


def _user_module(tmp_path, monkeypatch, source=SOURCE):
    (tmp_path / "moving_agent.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("moving_agent", None)
    importlib.invalidate_caches()


def test_every_spelling_finds_the_same_cells_under_the_label_asked(tmp_path, monkeypatch):
    computed = _computed(monkeypatch)
    first = _sweep(tmp_path, ["user_agents:Jitter", "fkm[c=2]"])
    assert [r.agent for r in first] == ["jitter"] * 2 + ["fkm[c=2]"] * 2
    computed.clear()
    register("my-jitter", __import__("user_agents").Jitter)
    try:
        again = _sweep(
            tmp_path,
            ["my-jitter", "bco_gym.agents.fkm.agent:FlaxmanAgent"],
            agent_kwargs={"bco_gym.agents.fkm.agent:FlaxmanAgent": {"c": 2.0}},
        )
    finally:
        unregister("my-jitter")
    assert computed == []  # nothing recomputed: the same identities
    assert [r.agent for r in again] == ["my-jitter"] * 2 + ["fkm"] * 2  # labels as asked now
    assert all(a.same_outcome(b) for a, b in zip(first, again, strict=True))
    with pytest.raises(ValueError, match="are one agent"):
        _sweep(tmp_path, ["fkm", "bco_gym.agents.fkm.agent:FlaxmanAgent"])
    with pytest.raises(ValueError, match="would all be labelled 'same'"):
        _sweep(tmp_path, ["fkm", "bbcg"], labels={"fkm": "same", "bbcg": "same"})


def test_a_changed_agent_is_recomputed_with_a_warning_or_kept_on_request(tmp_path, monkeypatch):
    _user_module(tmp_path / "code" if (tmp_path / "code").mkdir() is None else None, monkeypatch)
    out = tmp_path / "runs"
    first = _sweep(out, ["moving_agent:Moving", "random"])
    _user_module(tmp_path / "code", monkeypatch, SOURCE + "\n# edited: other code\n")
    computed = _computed(monkeypatch)
    with pytest.warns(StaleCellWarning) as caught:
        kept = _sweep(out, ["moving_agent:Moving", "random"], reuse_stale=True)
    assert computed == []
    message = str(caught[0].message)
    assert "agent 'moving': 2 stored cell(s)" in message and "seed 0 T=30, seed 1 T=30" in message
    assert "kept as asked" in message
    assert any("StaleCellWarning: kept" in w for w in kept[0].warnings)
    assert not any("Stale" in w for w in kept[2].warnings)  # random's code did not change
    with pytest.warns(StaleCellWarning, match="agent 'moving'.*recomputed"):
        again = _sweep(out, ["moving_agent:Moving", "random"])
    assert computed == [("moving_agent:Moving", 0), ("moving_agent:Moving", 1)]
    assert again[0].agent_spec["digest"] != first[0].agent_spec["digest"]
    assert again[0].same_outcome(first[0]) is False  # another digest: another outcome
    with warnings.catch_warnings():
        warnings.simplefilter("error", StaleCellWarning)
        _sweep(out, ["moving_agent:Moving", "random"])  # now current: no warning
    sys.modules.pop("moving_agent", None)


def test_a_name_registered_again_with_other_code_gets_its_own_cells(tmp_path, monkeypatch):
    from user_agents import Jitter, Unnamed

    computed = _computed(monkeypatch)
    register("mine", Jitter)
    try:
        _sweep(tmp_path, ["mine"])
        register("mine", Unnamed, replace=True)
        computed.clear()
        results = _sweep(tmp_path, ["mine"])
    finally:
        unregister("mine")
    assert computed == [("mine", 0), ("mine", 1)]
    assert {r.agent_spec["identity"] for r in results} == {"user_agents:Unnamed"}


def test_a_directory_written_before_identities_still_loads_and_grows(tmp_path, monkeypatch):
    """Cells without identity (as older versions wrote them) keep their keys."""
    old = [Cell(ENV, "fkm", 30, seed, dict(SETTINGS)) for seed in (0, 1)]
    assert "identity" not in old[0].to_dict() and "label" not in old[0].to_dict()
    stored = run_cells(old, out=tmp_path, progress=False)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert all("identity" not in cell for cell in manifest["spec"]["cells"])
    assert [r.agent for r in load_sweep(tmp_path)] == ["fkm", "fkm"]
    computed = _computed(monkeypatch)
    grown = _sweep(tmp_path, ["bco_gym.agents.fkm.agent:FlaxmanAgent", "random"])
    assert computed == [("random", 0), ("random", 1)]  # fkm's old cells were found
    assert grown[0].same_outcome(stored[0]) and grown[0].agent == "fkm"
    assert len(load_sweep(tmp_path)) == 4
