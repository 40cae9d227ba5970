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
    "shortest_paths.py": (["--horizon", "300", "--grid", "3"], ["bbcg:", "best path in hindsight"]),
    "matrix_completion.py": (
        ["--horizon", "300", "--rows", "4", "--cols", "3"],
        ["bbcg:", "fkm:", "best fixed matrix"],
    ),
    "your_own_losses.py": (
        ["--horizon", "300", "--servers", "4", "--features", "3"],
        ["from_array on Simplex(n=4), T = 300", "from_function on Ellipsoid", "bbcg:", "gap"],
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
