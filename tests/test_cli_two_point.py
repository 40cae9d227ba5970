"""The CLI with two-point agents: feedback='two-point' is chosen when every agent is one."""

from __future__ import annotations

from bco_gym.cli import main
from bco_gym.experiment import load_result

BALL = ["--env", "BCO-Ball-v0", "--env-kwargs", '{"n": 3}']


def test_run_of_a_two_point_agent_makes_a_two_point_env(tmp_path, capsys):
    out = tmp_path / "fkm2.json"
    code = main(["run", *BALL, "--agent", "fkm2", "--horizon", "200", "--out", str(out)])
    assert code == 0
    assert "regret" in capsys.readouterr().out
    saved = load_result(out)
    assert saved.problem["feedback"] == "two-point" and saved.agent == "fkm2"
    assert saved.final_regret <= saved.regret_bound


def test_mixing_two_point_and_one_point_agents_is_refused(tmp_path, capsys):
    code = main(
        ["compare", *BALL, "--agents", "fkm2,fkm", "--horizon", "100", "--out", str(tmp_path)]
    )
    assert code != 0
    assert "feedback='two-point'" in capsys.readouterr().err
