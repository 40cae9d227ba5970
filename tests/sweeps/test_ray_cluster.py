"""bench on a real two-node Ray cluster: the same scores as the serial backend.

The test starts its own cluster on this machine (``ray start``: a head and one worker
node, one CPU each, on the loopback address; tests/support/ray_cluster.py: every port,
the temporary directory and the home its own, a watchdog that stops it if the test
dies), runs a quick-v2 subset through ``bco-gym bench --backend ray --ray-address``, and
compares scores.csv with the serial backend's apart from ``computed_at``. Then it checks
that no process of the cluster is left. Skipped only where Ray is not installed.

The subset is as small as still proves the point: one scenario, its reference agents
(FKM among them) recomputed (``--recompute-references``: nothing read from the archive),
two seeds so that each agent's batch plays two rows at once, T = 2,000 as quick-v2 says;
the cells take a second of CPU, the cluster's start most of the test's time. The serial
bench runs while the cluster starts.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")

from ray_cluster import RAY, TwoNodeCluster, marked_processes  # tests/support

SUBSET = ["--suite", "quick-v2", "--scenarios", "ball-iid", "--seeds", "2"]
BENCH = ["bench", "--agents", "fkm", *SUBSET, "--recompute-references", "--quiet"]
#: ``bco-gym`` with the report's figures left out and its intervals by bco_gym's own
#: bootstrap (rliable's import and bootstraps took 26 of the 38 s a bench took at load 14):
#: the cells, scores.csv and the backends are what is compared, not the report. The switch
#: is ``bco_gym.stats.scores.rliable_available``, where the statistics look it up (patching
#: the re-export in ``bco_gym.reports.scores`` changed nothing: rliable ran again, 8.6 of
#: the 15.8 CPU-s each bench took at load 10).
DRIVER = """
import sys
from bco_gym.reports import bench_report, report
from bco_gym.stats import scores
bench_report.matplotlib_missing = report.matplotlib_missing = lambda: "not drawn here"
scores.rliable_available = lambda: False
from bco_gym.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def bench(out: Path, env: dict[str, str], *backend: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-c", DRIVER, *BENCH, "--out", str(out), *backend]
    return subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)


def scores(out: Path, bench: subprocess.Popen[str]) -> list[dict[str, str]]:
    _, err = bench.communicate(timeout=900)
    assert bench.returncode == 0, err[-3000:]
    with open(out / "scores.csv", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    for row in rows:
        row.pop("computed_at")
    return rows


@pytest.mark.slow
@pytest.mark.skipif(RAY is None, reason="the ray command is not installed")
def test_bench_on_a_two_node_cluster_scores_as_the_serial_backend(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    serial = bench(tmp_path / "serial", env, "--backend", "serial")  # while the cluster starts
    try:
        with TwoNodeCluster() as cluster:
            cluster.wait_for_nodes(2)
            address = ["--backend", "ray", "--ray-address", cluster.address]
            on_ray = scores(tmp_path / "ray", bench(tmp_path / "ray", cluster.env, *address))
            home = cluster.home
    except BaseException:
        serial.kill()
        raise
    assert not marked_processes(home)  # every process of the cluster is gone
    assert not os.path.exists(home)
    alone = scores(tmp_path / "serial", serial)
    agents = {row["agent"] for row in alone}
    assert "fkm" in agents and len(agents) >= 3 and len(alone) == 2 * len(agents)
    assert on_ray == alone
