"""The CLI reads agents by identity: constants tuned under an import path apply to the
built-in name, a tuned key matching none of the agents is named, variants and labels
reach the tables, and stale cells are said on stderr."""

from __future__ import annotations

import json
import sys

import pytest

from bco_gym.cli import main

BALL = ["--env", "BCO-Ball-v0", "--env-kwargs", '{"n": 3}']


@pytest.fixture(autouse=True)
def no_figures(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)


def test_constants_tuned_under_a_path_apply_to_the_name_and_unknown_keys_are_named(
    tmp_path, capsys
):
    tuned = tmp_path / "tuned.json"
    argv = ["tune", *BALL, "--agents", "bco_gym.agents.fkm.agent:FlaxmanAgent", "--horizon", "40"]
    argv += ["--tune-seeds", "10:12", "--grid", "0.5:2", "--points", "2", "--quiet"]
    assert main([*argv, "--out", str(tuned)]) == 0
    document = json.loads(tuned.read_text())
    assert list(document["constants"]) == ["bco_gym.agents.fkm.agent:FlaxmanAgent"]
    value = document["constants"]["bco_gym.agents.fkm.agent:FlaxmanAgent"]["value"]
    capsys.readouterr()
    compare = ["compare", *BALL, "--horizon", "40", "--seeds", "2", "--quiet"]
    assert (
        main(
            [
                *compare,
                "--agents",
                "fkm,random",
                "--tuned",
                str(tuned),
                "--out",
                str(tmp_path / "a"),
            ]
        )
        == 0
    )
    out, err = capsys.readouterr()
    line = next(row for row in out.splitlines() if row.startswith("fkm "))
    assert "tuned" in line and f"c={value:.3g}" in line, out
    assert "none of the agents" not in err
    assert (
        main(
            [
                *compare,
                "--agents",
                "bbcg,random",
                "--tuned",
                str(tuned),
                "--out",
                str(tmp_path / "b"),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "holds tuned constants for 'fkm', none of the agents given (bbcg, random)" in err


def test_compare_takes_variants_agent_kwargs_and_labels(tmp_path, capsys):
    argv = ["compare", *BALL, "--horizon", "40", "--seeds", "2", "--quiet"]
    argv += ["--agents", "fkm,fkm[c=2,estimator=residual]", "--out", str(tmp_path / "c")]
    argv += ["--agent-kwargs", '{"fkm": {"c": 0.5}}', "--label", "fkm[c=2,estimator=residual]=F2"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert any(row.startswith("F2 ") for row in out.splitlines()), out
    assert any(row.startswith("fkm ") and "c=0.5" in row for row in out.splitlines()), out
    table = (tmp_path / "c" / "table.md").read_text()
    assert "| F2 " in table


def test_a_changed_agent_is_said_on_stderr_and_recomputed(tmp_path, capsys, monkeypatch):
    module = tmp_path / "code" / "edited_agent.py"
    module.parent.mkdir()
    module.write_text(
        "from user_agents import Jitter\n\nclass Edited(Jitter):\n    name = 'edited'\n"
    )
    monkeypatch.syspath_prepend(str(module.parent))
    argv = ["compare", *BALL, "--agents", "edited_agent:Edited", "--horizon", "30"]
    argv += ["--seeds", "2", "--out", str(tmp_path / "cmp"), "--quiet"]
    assert main(argv) == 0
    module.write_text(module.read_text() + "# edited\n")
    sys.modules.pop("edited_agent", None)
    capsys.readouterr()
    assert main([*argv, "--reuse-stale"]) == 0
    err = capsys.readouterr().err
    assert "StaleCellWarning: agent 'edited': 2 stored cell(s)" in err and "kept as asked" in err
    assert main(argv) == 0
    assert "recomputed" in capsys.readouterr().err
    sys.modules.pop("edited_agent", None)
