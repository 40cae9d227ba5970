"""Agents renamed since their results were saved: the library's own separation-step
derivation was "so-bgd" until issue 32 gave that name to Garber & Kretzu's Algorithm 10;
result files, sweep cells and tuned constants naming the old agent read as "fejer-bgd",
and a sweep of the new "so-bgd" never takes an old cell for its own."""

from __future__ import annotations

import dataclasses
import json
import warnings

import pytest

from bco_gym.agents.registry import current_agent_name
from bco_gym.engine.runner import run
from bco_gym.sweeps import load_result, load_sweep, save_result
from bco_gym.sweeps.results import _digest
from bco_gym.sweeps.sweep import CorruptCellWarning, sweep
from bco_gym.sweeps.tuning import TunedConstant, Tuning, load_tuned, save_tuned

OLD_PATH = "bco_gym.agents.separation:SeparationBanditGD"


def _as_saved_before_the_rename(result, spec: bool = True):
    """``result`` of fejer-bgd as a result file written before issue 32 held it."""
    old_spec = {**result.agent_spec, "name": "so-bgd", "import_path": OLD_PATH} if spec else {}
    return dataclasses.replace(result, agent="so-bgd", agent_spec=old_spec)


def _fejer():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return run("BCO-Ball-v0", "fejer-bgd", horizon=60, seed=3, env_kwargs={"n": 3})


def test_the_rename_table():
    assert current_agent_name("so-bgd", OLD_PATH) == "fejer-bgd"
    assert current_agent_name("so-bgd", None) == "fejer-bgd"  # saved before agent_spec
    assert current_agent_name("so-bgd", "bco_gym.agents.gk22.so_bgd:SeparationOracleBanditGD") == (
        "so-bgd"
    )
    assert current_agent_name("bbcg", None) == "bbcg"


@pytest.mark.parametrize("spec", [True, False], ids=["with-agent-spec", "before-agent-spec"])
def test_an_old_result_file_loads_as_fejer_bgd(tmp_path, spec):
    fejer = _fejer()
    path = save_result(tmp_path / "old.json", _as_saved_before_the_rename(fejer, spec))
    loaded = load_result(path)
    assert loaded.agent == "fejer-bgd"
    assert loaded.same_outcome(dataclasses.replace(fejer, agent_spec=loaded.agent_spec))
    if spec:
        assert loaded.agent_spec["name"] == "fejer-bgd"
        assert loaded.agent_spec["import_path"] == OLD_PATH  # where it came from, as recorded


def test_a_new_so_bgd_result_keeps_its_name(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        new = run("BCO-Ball-v0", "so-bgd", horizon=60, seed=3, env_kwargs={"n": 3})
    assert load_result(save_result(tmp_path / "new.json", new)).agent == "so-bgd"


def test_a_sweep_reads_old_cells_as_fejer_bgd_and_recomputes_them_for_so_bgd(tmp_path):
    grid = dict(envs="BCO-Ball-v0", agents="so-bgd", horizons=60, seeds=1)
    kwargs = dict(out=tmp_path, env_kwargs={"n": 3}, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        (first,) = sweep(**grid, **kwargs)
    # rewrite the stored cell as a pre-rename sweep left it (the old agent's import path)
    (cell,) = (tmp_path / "cells").glob("*.json")
    document = json.loads(cell.read_text())
    document["result"]["agent_spec"]["import_path"] = OLD_PATH
    document["sha256"] = _digest(document, cell.with_suffix(".npz").read_bytes())
    cell.write_text(json.dumps(document))
    (old,) = load_sweep(tmp_path)
    assert old.agent == "fejer-bgd"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (again,) = sweep(**grid, **kwargs)
    assert any(
        issubclass(w.category, CorruptCellWarning) and "now named 'fejer-bgd'" in str(w.message)
        for w in caught
    )
    assert again.agent == "so-bgd" and again.same_outcome(first)
    assert load_sweep(tmp_path)[0].agent == "so-bgd"


def test_old_tuned_constants_name_fejer_bgd(tmp_path):
    constant = TunedConstant("c", 0.5, 1.0, 0.7, (0.5, 1.0), (1.0, 2.0))
    tuning = Tuning("BCO-Ball-v0", {}, 100, (0,), {"so-bgd": constant}, {}, {"so-bgd": {}})
    path = save_tuned(tmp_path / "new.json", tuning)
    assert set(load_tuned(path).constants) == {"so-bgd"}  # written now: the paper's agent
    document = json.loads(path.read_text())
    del document["agent_names"]  # a file written before issue 32
    path.write_text(json.dumps(document))
    old = load_tuned(path)
    assert set(old.constants) == {"fejer-bgd"} and set(old.fixed) == {"fejer-bgd"}
