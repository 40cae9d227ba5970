"""bench on a real two-node Ray cluster: the same scores as the serial backend.

The test starts its own cluster on this machine (``ray start``: a head and one worker
node, one CPU each, every port its own, its own temporary directory and home, so no Ray
instance of anyone else is joined or touched), runs a quick-v2 subset through ``bco-gym
bench --backend ray --ray-address``, compares scores.csv with the serial backend's apart
from ``computed_at``, and stops the two ``ray start`` process groups it started, and only
those. Skipped only where Ray is not installed.
"""

from __future__ import annotations

import csv
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")

RAY = shutil.which("ray", path=str(Path(sys.executable).parent)) or shutil.which("ray")
ROOT = Path(__file__).resolve().parents[2]
SUBSET = ["--suite", "quick-v2", "--scenarios", "ball-iid", "--seeds", "2"]


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for sock in sockets:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in sockets]
    for sock in sockets:
        sock.close()
    return ports


def node_ports(ports: list[int]) -> list[str]:
    names = (
        "node-manager-port",
        "object-manager-port",
        "dashboard-agent-listen-port",
        "dashboard-agent-grpc-port",
        "runtime-env-agent-port",
        "metrics-export-port",
        "min-worker-port",
    )
    flags = [f"--{name}={port}" for name, port in zip(names, ports, strict=False)]
    return [*flags, f"--max-worker-port={ports[6] + 40}"]


class TwoNodeCluster:
    """A head and a worker node on the loopback address, each a ``ray start --block``
    in its own process group, stopped by signalling those two groups."""

    def __init__(self) -> None:
        self.temp = Path(tempfile.mkdtemp(prefix="bcoray", dir="/tmp"))  # short socket paths
        # its own home: no token or config of another Ray instance on this machine is read
        self.env = {**os.environ, "HOME": str(self.temp), "RAY_USAGE_STATS_ENABLED": "0"}
        self.env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])
        )
        self.port = free_ports(1)[0]
        self.address = f"127.0.0.1:{self.port}"
        self.groups: list[subprocess.Popen[bytes]] = []

    def _start(self, arguments: list[str], log: str) -> None:
        command = [RAY, "start", "--block", "--num-cpus=1", "--num-gpus=0", *arguments]
        command += ["--node-ip-address=127.0.0.1", "--disable-usage-stats"]
        with open(self.temp / log, "wb") as stream:
            self.groups.append(
                subprocess.Popen(
                    command,
                    env=self.env,
                    stdout=stream,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )

    def __enter__(self) -> TwoNodeCluster:
        head = ["--head", f"--port={self.port}", f"--temp-dir={self.temp}"]
        self._start([*head, "--include-dashboard=false", *node_ports(free_ports(8))], "head.log")
        self._wait(lambda: _listening(self.port), "head.log")
        self._start([f"--address={self.address}", *node_ports(free_ports(8))], "worker.log")
        self._wait(self._two_nodes, "worker.log")
        return self

    def _two_nodes(self) -> bool:
        status = subprocess.run(
            [RAY, "status", f"--address={self.address}"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
        return status.count(" node_") >= 2

    def _wait(self, ready, log: str, limit: float = 180.0) -> None:
        deadline = time.monotonic() + limit
        while not ready():
            for process in self.groups:
                if process.poll() is not None:
                    raise RuntimeError((self.temp / log).read_text(errors="replace")[-3000:])
            if time.monotonic() > deadline:
                raise TimeoutError(f"the cluster did not come up in {limit} s")
            time.sleep(0.5)

    def __exit__(self, *exc: object) -> None:
        for process in reversed(self.groups):
            _signal_group(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for process in self.groups:
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for process in self.groups:  # what the graceful stop left: the group's processes
            _signal_group(process.pid, signal.SIGKILL)
            process.wait()
        shutil.rmtree(self.temp, ignore_errors=True)


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def _signal_group(pgid: int, which: signal.Signals) -> None:
    try:
        os.killpg(pgid, which)
    except ProcessLookupError:
        pass


def bench(out: Path, env: dict[str, str], *backend: str) -> list[dict[str, str]]:
    command = [sys.executable, "-m", "bco_gym.cli", "bench", "--agents", "fkm", *SUBSET]
    command += ["--recompute-references", "--out", str(out), "--quiet", *backend]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    with open(out / "scores.csv", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    for row in rows:
        row.pop("computed_at")
    return rows


@pytest.mark.slow
@pytest.mark.skipif(RAY is None, reason="the ray command is not installed")
def test_bench_on_a_two_node_cluster_scores_as_the_serial_backend(tmp_path):
    with TwoNodeCluster() as cluster:
        on_ray = bench(
            tmp_path / "ray", cluster.env, "--backend", "ray", "--ray-address", cluster.address
        )
        nodes = subprocess.run(
            [RAY, "status", f"--address={cluster.address}"],
            env=cluster.env,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout.count(" node_")
        groups = [process.pid for process in cluster.groups]
    assert nodes == 2
    for pgid in groups:  # the cluster it started is gone, every process of it
        listed = subprocess.run(["ps", "-eo", "pgid=,stat="], capture_output=True, text=True)
        alive = [line for line in listed.stdout.splitlines() if line.split()[0] == str(pgid)]
        assert all(line.split()[1].startswith("Z") for line in alive), alive
    serial = bench(tmp_path / "serial", {**os.environ}, "--backend", "serial")
    assert len(on_ray) == len(serial) > 0
    assert on_ray == serial
