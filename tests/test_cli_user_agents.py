"""The bco-gym command with agents from outside the library: import paths and entry
points in run, compare, exponents, tune, plot and list; a failing agent fails its own
cells and the command exits 1."""

from __future__ import annotations

import json
import sys
import warnings

import pytest
from agent_plugins import forget_plugin, install_plugin

from bco_gym.cli import main
from bco_gym.experiment import load_sweep
from bco_gym.sweeps import load_failures

BALL = ["--env", "BCO-Ball-v0", "--env-kwargs", '{"n": 3}']


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


@pytest.fixture
def no_figures(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    (tmp_path / "site").mkdir()
    install_plugin(tmp_path / "site", monkeypatch)
    yield
    forget_plugin()


def test_run_takes_an_import_path_and_an_entry_point(tmp_path, capsys, plugin):
    for agent, label in (("user_agents:Jitter", "jitter"), ("plugjitter", "plugjitter")):
        assert main(["run", *BALL, "--agent", agent, "--horizon", "50", "--quiet"]) == 0
        out = capsys.readouterr().out
        assert f"{label} (theory spread=0.5)" in out, out
    assert main(["run", *BALL, "--agent", "user_agents:Nope", "--horizon", "50"]) == 2
    assert "has no attribute 'Nope'" in capsys.readouterr().err
    assert main(["run", *BALL, "--agent", "brokenplug", "--horizon", "50"]) == 2
    assert "plugin 'brokenplug'" in capsys.readouterr().err


def test_list_shows_plugins_and_reports_a_broken_one(capsys, plugin):
    assert main(["list"]) == 0
    printed = capsys.readouterr().out
    assert "plugjitter" in printed and "plugpkg:PlugJitter" in printed
    assert "[entry-point 0.3.1] Jitter shipped by a plugin" in printed
    assert "plugin 'brokenplug'" in printed and "ModuleNotFoundError" in printed
    assert "BlockBanditCG" in printed  # the built-ins are all there


def test_compare_and_plot_take_an_import_path_beside_built_ins(tmp_path, capsys, no_figures):
    out = tmp_path / "cmp"
    argv = ["compare", *BALL, "--agents", "user_agents:Jitter,fkm", "--horizon", "60"]
    assert main([*argv, "--seeds", "2", "--out", str(out), "--quiet"]) == 0
    results = load_sweep(out)
    assert {r.agent for r in results} == {"jitter", "fkm"}
    assert "jitter" in (out / "table.md").read_text()
    assert main(["plot", str(out)]) == 0


def test_a_failing_agent_fails_its_cells_and_compare_exits_1(tmp_path, capsys, no_figures):
    out = tmp_path / "cmp"
    argv = ["compare", *BALL, "--agents", "user_agents:Faulty,random", "--horizon", "40"]
    assert main([*argv, "--seeds", "2", "--out", str(out), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "agent 'faulty' seed 0 (BCO-Ball-v0, T=40) failed in round 3" in err
    assert "2 cell(s) failed" in err
    assert [f.seed for f in load_failures(out)] == [0, 1]
    assert {r.agent for r in load_sweep(out)} == {"random"}
    assert "random" in (out / "table.md").read_text()


def test_exponents_use_a_declared_exponent_and_tune_its_scale_param(tmp_path, capsys, no_figures):
    out = tmp_path / "exp"
    argv = ["exponents", *BALL, "--agents", "user_agents:Jitter,user_agents:Unnamed"]
    argv += ["--horizons", "20:80", "--points", "2", "--seeds", "2", "--quiet"]
    assert main([*argv, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    jitter = next(line for line in printed.splitlines() if line.startswith("jitter "))
    unnamed = next(line for line in printed.splitlines() if line.startswith("Unnamed "))
    # ... theory, LMO/round, proj/round, comparator
    assert jitter.split()[-4] == "1.000"  # its declared regret_exponent
    assert unnamed.split()[-4] == "-"  # none declared: the fit only
    assert jitter.split()[-1] == "exact"
    tuned = tmp_path / "tuned.json"
    argv = ["tune", *BALL, "--agents", "user_agents:Jitter,user_agents:Unnamed"]
    argv += ["--horizon", "40", "--tune-seeds", "10:12", "--grid", "0.1:1", "--points", "2"]
    assert main([*argv, "--out", str(tuned), "--quiet"]) == 0
    document = json.loads(tuned.read_text())
    assert document["constants"]["user_agents:Jitter"]["param"] == "spread"
    assert "user_agents:Unnamed" in document["skipped"]


def test_tune_marks_a_default_that_is_no_theorems_and_compare_notes_full_information(
    tmp_path, capsys, no_figures
):
    argv = ["tune", *BALL, "--agents", "user_agents:Jitter,user_agents:GuessedJitter"]
    argv += ["--horizon", "40", "--tune-seeds", "10:12", "--grid", "0.1:1", "--points", "2"]
    assert main([*argv, "--out", str(tmp_path / "tuned.json"), "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    theorem = next(line for line in lines if line.startswith("jitter "))
    guess = next(line for line in lines if line.startswith("guessed-jitter "))
    assert "spread  0.5000 " in guess and "0.5000 (default, no theorem)" in guess
    assert "0.5000 " in theorem and "no theorem" not in theorem
    argv = ["compare", *BALL, "--agents", "user_agents:GradientJitter,random", "--horizon", "30"]
    assert main([*argv, "--seeds", "1", "--out", str(tmp_path / "cmp"), "--quiet"]) == 0
    assert "note: user_agents:GradientJitter needs full information" in capsys.readouterr().err
