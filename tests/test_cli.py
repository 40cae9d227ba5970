"""The bco-gym command, end to end in a temporary directory with tiny horizons."""

from __future__ import annotations

import json
import os
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
    assert main(compare("3")) == 0  # more seeds: the sweep grows
    assert len(load_sweep(out)) == 6
    capsys.readouterr()
    different = [*compare("3")]
    different[different.index("120")] = "130"
    assert main(different) == 2
    assert "holds a different sweep: horizon: stored 120, requested 130" in capsys.readouterr().err


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
    chosen = document["constants"]["bco_gym.agents.bbcg.agent:BlockBanditCG"]["value"]  # identity
    assert document["labels"]["bco_gym.agents.bbcg.agent:BlockBanditCG"] == "bbcg"
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


# -- result files you can trust, through the command ---------------------------------------------
@pytest.fixture
def no_figures(monkeypatch):
    """Tables only (as without matplotlib): the figure is not what these tests check."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)


def _tiny_compare(out, *extra):
    return [
        "compare",
        *BALL,
        "--agents",
        "bbcg,random",
        "--horizon",
        "60",
        "--seeds",
        "2",
        "--out",
        str(out),
        "--quiet",
        *extra,
    ]


def test_tampered_cells_are_refused_by_plot_and_recomputed_by_compare(tmp_path, capsys, no_figures):
    out = tmp_path / "cmp"
    assert main(_tiny_compare(out)) == 0
    cells = sorted((out / "cells").glob("*.json"))
    original = cells[0].read_bytes()
    document = json.loads(original)
    document["result"]["final_regret"] = 0.0
    cells[0].write_text(json.dumps(document))
    capsys.readouterr()
    assert main(["plot", str(out)]) == 2
    error = capsys.readouterr().err
    assert cells[0].stem in error and "digest" in error and len(error.splitlines()) == 1
    # one cell's JSON copied over another's
    cells[0].write_bytes(original)
    cells[1].write_bytes(cells[2].read_bytes())
    assert main(["plot", str(out)]) == 2
    assert cells[1].stem in capsys.readouterr().err
    assert main(_tiny_compare(out)) == 0
    err = capsys.readouterr().err
    assert f"warning: CorruptCellWarning: recomputing cell {cells[1].stem}" in err
    assert main(["plot", str(out)]) == 0


def test_plot_replaces_a_symlinked_table_instead_of_writing_through_it(
    tmp_path, capsys, no_figures
):
    out = tmp_path / "cmp"
    assert main(_tiny_compare(out)) == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (out / "table.md").unlink()
    (out / "table.md").symlink_to(victim)
    assert main(["plot", str(out)]) == 0
    assert victim.read_text() == "precious"
    assert not (out / "table.md").is_symlink()
    assert (out / "table.md").read_text().startswith("| agent |")


def test_tables_are_created_with_the_users_umask(tmp_path, capsys, no_figures):
    previous = os.umask(0o027)
    try:
        assert main(_tiny_compare(tmp_path / "cmp")) == 0
    finally:
        os.umask(previous)
    for path in (tmp_path / "cmp").rglob("*"):
        if path.is_file() and path.name != ".lock":
            assert path.stat().st_mode & 0o777 == 0o640, path


def test_a_second_command_on_a_locked_directory_exits_2_naming_the_holder(
    tmp_path, capsys, no_figures
):
    out = tmp_path / "cmp"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from bco_gym.sweeps.store import DirectoryLock\n"
            f"with DirectoryLock({str(out)!r}):\n"
            "    print('held', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        assert main(_tiny_compare(out)) == 2
        assert f"is in use by pid {holder.pid}" in capsys.readouterr().err
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert main(_tiny_compare(out)) == 0


def test_default_outputs_depend_on_env_agents_and_horizon(
    tmp_path, monkeypatch, capsys, no_figures
):
    monkeypatch.chdir(tmp_path)
    base = ["compare", "--env", "BCO-Ball-v0", "--horizon", "40", "--seeds", "1", "--quiet"]
    assert main([*base, "--agents", "random"]) == 0
    assert main([*base, "--agents", "random,bbcg"]) == 0
    assert main([*base, "--agents", "random", "--env-kwargs", '{"n": 4}']) == 0
    made = sorted(p.name for p in (tmp_path / "results" / "compare").iterdir())
    assert made[:2] == ["BCO-Ball-v0_random-bbcg_T40", "BCO-Ball-v0_random_T40"]
    assert len(made) == 3 and made[2].startswith("BCO-Ball-v0_random_T40_")


# -- messages -------------------------------------------------------------------------------------
def test_compare_without_matplotlib_writes_the_tables_and_says_so_once(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "cmp"
    assert main(_tiny_compare(out)) == 0
    captured = capsys.readouterr()
    assert captured.err.count('pip install "bco_gym[plot]"') == 1
    assert "no figure" in captured.out
    assert (out / "table.md").exists() and (out / "table.csv").exists()
    assert not (out / "regret.png").exists()


@pytest.mark.parametrize("env_id", ["BCO-Birkhoff-v0", "BCO-ShortestPath-v0"])
def test_fkm_without_the_qp_extra_names_it_and_suggests_bandit_agents(
    tmp_path, monkeypatch, capsys, env_id
):
    for module in ("bco_gym.sets.birkhoff", "bco_gym.sets.flow"):
        monkeypatch.setattr(f"{module}.qp_available", lambda: False)
    assert main(["run", "--env", env_id, "--agent", "fkm", "--horizon", "10"]) == 2
    error = capsys.readouterr().err
    assert 'pip install "bco_gym[qp]"' in error and "bbcg, bfw, random" in error
    assert "ofw" not in error and "ogd" not in error and len(error.splitlines()) == 1


def test_list_is_aligned_and_free_of_markup(capsys):
    assert main(["list"]) == 0
    printed = capsys.readouterr().out
    assert "``" not in printed and ":class:" not in printed
    agent_lines = printed.split("agents:\n")[1].split("loss families:")[0].splitlines()
    header = agent_lines[0]
    column = header.index("summary")
    assert header.index("feedback") < header.index("scale") < column
    for line in agent_lines[2:]:
        assert line[column - 2 : column] == "  " and line[column] != " ", line


def test_list_names_every_built_in_suite(capsys):
    from bco_gym.reports.references import archive_digest
    from bco_gym.reports.suites import SUITES

    assert main(["list"]) == 0
    printed = capsys.readouterr().out
    suites = printed.split("suites (bco-gym bench --suite NAME):\n")[1].split("agents:")[0]
    names = [line.split()[0] for line in suites.splitlines()[2:]]
    assert names == list(SUITES) and "standard-v3" in names
    v3 = next(line for line in suites.splitlines() if line.split()[0] == "standard-v3")
    assert "18 scenarios" in v3
    built = archive_digest("standard-v3") is not None
    assert ("reference archive" if built else "archive not built yet") in v3
    assert "smoke test" in next(line for line in suites.splitlines() if "quick-v2" in line)


def test_a_capping_warning_is_printed_once_per_kind(tmp_path, capsys, no_figures):
    out = tmp_path / "exp"
    argv = [
        "exponents",
        "--env",
        "BCO-Simplex-v0",
        "--agents",
        "bbcg",
        "--horizons",
        "20:80",
        "--points",
        "3",
        "--seeds",
        "2",
        "--out",
        str(out),
        "--quiet",
    ]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert err.count("reaches the inner radius") == 1
    assert "6 runs: bbcg/T=20, bbcg/T=40, bbcg/T=80" in err


def test_progress_on_a_non_terminal_is_a_line_per_cell(tmp_path, capsys, no_figures):
    argv = _tiny_compare(tmp_path / "cmp")
    argv.remove("--quiet")
    assert main(argv) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("cell ")]
    assert len(lines) == 4 and lines[-1].startswith("cell 4/4: random T=60 seed=1 regret ")


def test_compare_defaults_are_the_ball_where_bbcg_is_not_degenerate():
    """`bco-gym compare` with no arguments: the ball, T = 20000, 5 seeds, the four agents,
    and at those defaults every bandit agent's smoothing radius lies strictly inside r
    (on the simplex at T = 10^4 BBCG's stays capped at r and it ties with random)."""
    import gymnasium as gym

    from bco_gym.agents import make_agent
    from bco_gym.cli import DEFAULT_AGENTS, build_parser

    arguments = build_parser().parse_args(["compare"])
    assert arguments.env == "BCO-Ball-v0"
    assert arguments.horizon == 20_000
    assert list(arguments.seeds) == [0, 1, 2, 3, 4]
    assert list(arguments.agents) == DEFAULT_AGENTS.split(",") == ["bbcg", "fkm", "bfw", "random"]
    env = gym.make(arguments.env, horizon=arguments.horizon)
    inner_radius = env.unwrapped.problem.set.inner_radius
    for name in ("bbcg", "fkm", "bfw"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the capped-radius warning would fail here
            agent = make_agent(name, env)
        assert agent.params["smoothing_radius"] < inner_radius, name


@pytest.mark.parametrize("command", ["bench", "demo"])
def test_ray_address_needs_the_ray_backend(tmp_path, capsys, command):
    out = tmp_path / "out"
    argv = [command, "--out", str(out), "--ray-address", "127.0.0.1:6379", "--backend", "process"]
    if command == "bench":
        argv += ["--agents", "fkm", "--suite", "quick-v2"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"bco-gym {command}: error: --ray-address '127.0.0.1:6379' needs --backend ray "
        "(not 'process')"
    ]
    assert not out.exists()  # refused before anything was written
