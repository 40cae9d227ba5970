"""The bco-gym command, end to end in a temporary directory with tiny horizons."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import matplotlib.image
import pytest

from bco_gym.cli import main
from bco_gym.experiment import load_result, load_sweep

BALL = ["--env", "BCO-Ball-v0", "--env-kwargs", '{"n": 3}']


@pytest.fixture(autouse=True)
def _quiet_capping_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def console_script() -> list[str]:
    script = Path(sys.executable).with_name("bco-gym")
    found = str(script) if script.exists() else shutil.which("bco-gym")
    return [found] if found else [sys.executable, "-m", "bco_gym.cli"]


def test_the_installed_command_runs_help_and_list():
    help_run = subprocess.run([*console_script(), "--help"], capture_output=True, text=True)
    assert help_run.returncode == 0
    for command in ("run", "compare", "exponents", "tune", "plot", "list"):
        assert command in help_run.stdout
    listing = subprocess.run([*console_script(), "list"], capture_output=True, text=True)
    assert listing.returncode == 0, listing.stderr
    assert "BCO-Simplex-v0" in listing.stdout and "BCO-Birkhoff-v0" in listing.stdout
    assert "bbcg" in listing.stdout and "BlockBanditCG" in listing.stdout


def test_exponents_help_warns_about_the_simplex(capsys):
    assert main(["exponents", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "T >= 1e5 is needed" in text and "BCO-Ball-v0" in text


def test_run_prints_the_regret_and_saves_the_result(tmp_path, capsys):
    out = tmp_path / "one.json"
    code = main(
        [
            "run",
            *BALL,
            "--agent",
            "fkm",
            "--horizon",
            "150",
            "--seed",
            "2",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    result = load_result(out)
    assert result.agent == "fkm" and result.seed == 2 and result.horizon == 150
    assert f"regret {result.final_regret:.6g}" in printed
    assert "projections/round 1" in printed


def test_compare_writes_table_and_figure_and_refuses_another_sweep(tmp_path, capsys):
    out = tmp_path / "cmp"

    def compare(seeds: str) -> list[str]:
        return [
            "compare",
            *BALL,
            "--agents",
            "bbcg,random",
            "--horizon",
            "120",
            "--seeds",
            seeds,
            "--out",
            str(out),
            "--quiet",
        ]

    args = compare("2")
    assert main(args) == 0
    printed = capsys.readouterr().out
    for text in (
        "regret (mean ± std)",
        "regret/T^(3/4)",
        "LMO/round",
        "proj/round",
        "rounds/s",
        "theory",
        "bbcg",
        "random",
    ):
        assert text in printed
    assert (out / "table.md").read_text().startswith("| agent | constants |")
    assert "regret_mean" in (out / "table.csv").read_text()
    assert matplotlib.image.imread(out / "regret.png").shape[0] > 100
    assert len(load_sweep(out)) == 4
    assert main(args) == 0  # same sweep: resumes (nothing to do)
    capsys.readouterr()
    assert main(compare("3")) == 2
    assert "holds a different sweep" in capsys.readouterr().err


def test_full_information_agents_switch_the_env_to_full_feedback(tmp_path, capsys):
    out = tmp_path / "full"
    assert (
        main(
            [
                "compare",
                *BALL,
                "--agents",
                "ogd,fkm",
                "--horizon",
                "50",
                "--seeds",
                "1",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    assert "feedback='full'" in capsys.readouterr().err
    assert {r.env_kwargs["feedback"] for r in load_sweep(out)} == {"full"}


def test_tune_then_compare_tuned_on_disjoint_seeds(tmp_path, capsys):
    tuned = tmp_path / "tuned.json"
    assert (
        main(
            [
                "tune",
                *BALL,
                "--agents",
                "bbcg",
                "--horizon",
                "80",
                "--tune-seeds",
                "10:12",
                "--grid",
                "0.1:10",
                "--points",
                "3",
                "--out",
                str(tuned),
                "--quiet",
            ]
        )
        == 0
    )
    document = json.loads(tuned.read_text())
    assert document["tune_seeds"] == [10, 11]
    chosen = document["constants"]["bbcg"]["value"]
    assert chosen in (0.1, 1.0, 10.0)
    assert (tmp_path / "tuned_runs" / "manifest.json").exists()
    capsys.readouterr()
    out = tmp_path / "cmp"
    assert (
        main(
            [
                "compare",
                *BALL,
                "--agents",
                "bbcg,random",
                "--horizon",
                "80",
                "--seeds",
                "2",
                "--tuned",
                str(tuned),
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    rows = {line.split()[0]: line for line in printed.splitlines() if line[:4] in ("bbcg", "rand")}
    assert "tuned" in rows["bbcg"] and "default" in rows["random"]
    assert {r.params["c"] for r in load_sweep(out) if r.agent == "bbcg"} == {chosen}
    code = main(
        [
            "compare",
            *BALL,
            "--agents",
            "bbcg",
            "--horizon",
            "80",
            "--seeds",
            "9:12",
            "--tuned",
            str(tuned),
            "--out",
            str(tmp_path / "other"),
            "--quiet",
        ]
    )
    assert code == 2
    assert "overlap the evaluation seeds at [10, 11]" in capsys.readouterr().err


def test_exponents_and_plot_redraw(tmp_path, capsys):
    out = tmp_path / "exp"
    assert (
        main(
            [
                "exponents",
                *BALL,
                "--agents",
                "bbcg,random",
                "--horizons",
                "50:200",
                "--points",
                "3",
                "--seeds",
                "2",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "slope" in printed and "95% CI" in printed and "0.750" in printed
    figure = out / "exponents.png"
    assert matplotlib.image.imread(figure).shape[0] > 100
    figure.unlink()
    assert main(["plot", str(out)]) == 0
    assert figure.stat().st_size > 1000
    assert {r.horizon for r in load_sweep(out)} == {50, 100, 200}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["run", "--env", "BCO-Nope-v0"],
            "unknown env id 'BCO-Nope-v0'; valid ids: BCO-Simplex-v0",
        ),
        (["compare", "--agents", "bbcg,zzz"], "unknown agent name(s) 'zzz'; valid names: bbcg"),
        (["run", "--horizon", "-5"], "'-5' must be a positive integer"),
        (["compare", "--seeds", "0"], "'0' must be a positive integer"),
        (["compare", "--seeds", "5:2"], "seed range '5:2' is empty"),
        (["tune", "--grid", "5:1"], "must satisfy 0 < LOW < HIGH"),
        (["tune", "--grid", "abc"], "must be a range LOW:HIGH"),
        (["exponents", "--points", "1"], "at least 2 horizons"),
        (["run", "--env-kwargs", "{nope"], "is not valid JSON"),
        (["run", "--env-kwargs", '{"n": -3}'], "n=-3"),
        (["plot", "/nonexistent/bco"], "not a bco_gym sweep"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_usage_errors_exit_2_with_a_message(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err
