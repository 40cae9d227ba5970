"""The experiment examples run top to bottom (tiny horizons, via each script's --horizon).

(examples/rl_baselines.py belongs to the RL baselines and is smoke-tested with them.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

CASES = {
    "quickstart.py": (["--horizon", "300"], ["regret", "runner: regret"]),
    "custom_set.py": (["--horizon", "300", "--n", "5"], ["Permutahedron(n=5)", "bbcg:", "bfw:"]),
    "shortest_paths.py": (
        ["--horizon", "300", "--grid", "3", "--seeds", "2"],
        ["minus bfw", "LMO/round", "best path in hindsight (seed 0)"],
    ),
    "matrix_completion.py": (
        ["--horizon", "300", "--rows", "4", "--cols", "3", "--seeds", "2"],
        ["minus random", "smoothing radius / r", "best fixed matrix in hindsight (seed 0)"],
    ),
    "your_own_losses.py": (
        ["--horizon", "300", "--servers", "4", "--features", "3"],
        ["from_array on Simplex(n=4), T = 300", "from_function on Ellipsoid", "bbcg:", "gap"],
    ),
    "your_own_agent.py": (
        ["--horizon", "300", "--seeds", "3"],
        ["minus bbcg on the same seeds", "minus fkm", "leader (default, c_delta=1)", "/3 seeds"],
    ),
    "compare_agents.py": (
        ["--horizon", "200", "--seeds", "2", "--agents", "bbcg,random"],
        ["regret (mean ± std)", "figure:"],
    ),
}


def test_the_examples_exist():
    assert {path.name for path in EXAMPLES.glob("*.py")} >= set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_runs(name, tmp_path):
    arguments, expected = CASES[name]
    if name == "compare_agents.py":  # the process backend, its __main__ guard included
        arguments = [*arguments, "--out", str(tmp_path / "sweep")]
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *arguments],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    for text in expected:
        assert text in completed.stdout
    if name == "compare_agents.py":
        assert (tmp_path / "sweep" / "regret.png").stat().st_size > 1000
    if name in ("shortest_paths.py", "matrix_completion.py"):
        check_cost_columns(table_rows(completed.stdout))


def table_rows(printed: str) -> dict[str, list[str]]:
    """The agent rows of an example's table: name -> its columns after the name."""
    rows = {}
    for line in printed.splitlines():
        fields = line.split()
        if fields and fields[0] in ("bbcg", "bfw", "fkm", "random"):
            rows[fields[0]] = fields[1:]
    return rows


def check_cost_columns(rows: dict[str, list[str]]) -> None:
    """The claim the tables make about cost: BBCG calls the LMO once per block (well under
    once per round) and never projects; BFW calls it every round; FKM projects every round.

    Columns: regret ± hw, difference ± hw, us/round, LMO/round, proj/round, radius ratio.
    """
    lmo, projections, ratio = 7, 8, 9
    assert float(rows["bbcg"][lmo]) < 0.5 and float(rows["bbcg"][projections]) == 0
    assert float(rows["bfw"][lmo]) == 1 and float(rows["bfw"][projections]) == 0
    if "fkm" in rows:
        assert float(rows["fkm"][projections]) == 1 and float(rows["fkm"][lmo]) == 0
    for name in ("bbcg", "bfw", "fkm"):  # the smoothing radius never exceeds r
        if name in rows:
            assert 0 < float(rows[name][ratio]) <= 1
