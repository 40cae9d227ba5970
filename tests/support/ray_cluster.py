"""A throwaway two-node Ray cluster on the loopback address, and nothing else touched.

:class:`TwoNodeCluster` starts a head and one worker node (``ray start --block``, one CPU
each, in their own process groups) with every port, the temporary directory and the home
directory its own, and no ``RAY_*`` variable of the caller: no other Ray instance on the
machine is joined, read (``~/.ray``, ``/tmp/ray``) or stopped. Every process of the
cluster inherits ``HOME=<its temporary directory>``, a marker no other process carries;
stopping the cluster kills the two process groups and then every process still carrying
the marker, and only those. A watchdog process (this file run as a script) does the same
if the process that started the cluster dies without stopping it (a killed pytest worker,
a timeout), so a cluster is never left behind.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

RAY = shutil.which("ray", path=str(Path(sys.executable).parent)) or shutil.which("ray")
ROOT = Path(__file__).resolve().parents[2]
#: the ports ``ray start`` would otherwise pick from fixed defaults (shared with any other
#: instance on the machine), each given a free one
PORT_FLAGS = (
    "node-manager-port",
    "object-manager-port",
    "dashboard-agent-listen-port",
    "dashboard-agent-grpc-port",
    "runtime-env-agent-port",
    "metrics-export-port",
    "min-worker-port",
)
WORKER_PORTS = 20  # min-worker-port .. +WORKER_PORTS: the node's Python workers
#: Seconds to wait for the GCS log's registrations before asking ``ray status`` anyway
LOG_GRACE = 30.0


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for sock in sockets:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in sockets]
    for sock in sockets:
        sock.close()
    return ports


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def marked_processes(home: str) -> list[int]:
    """The pids of this user's processes whose environment holds ``HOME=home``."""
    marker = f"HOME={home}".encode()
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            variables = (entry / "environ").read_bytes().split(b"\0")
        except OSError:  # gone, or another user's
            continue
        if marker in variables and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found


def stop(groups: list[int], home: str) -> None:
    """Kill the process groups ``groups`` and every process marked with ``home``."""
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    for pid in marked_processes(home):  # a process that left its group (none seen so far)
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


class TwoNodeCluster:
    """``with TwoNodeCluster() as cluster:`` a head and a worker node at ``cluster.address``;
    ``cluster.env`` is the environment to run drivers in (its marker included)."""

    def __init__(self) -> None:
        self.temp = Path(tempfile.mkdtemp(prefix="bcoray", dir="/tmp"))  # short socket paths
        self.home = str(self.temp)
        clean = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        self.env = {**clean, "HOME": self.home, "RAY_USAGE_STATS_ENABLED": "0"}
        self.env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])
        )
        self.port, *self.head_ports = free_ports(1 + len(PORT_FLAGS))
        self.worker_ports = free_ports(len(PORT_FLAGS))
        self.address = f"127.0.0.1:{self.port}"
        self.processes: list[subprocess.Popen[bytes]] = []
        self.watchdog: subprocess.Popen[bytes] | None = None

    def _start(self, arguments: list[str], ports: list[int], log: str) -> None:
        command = [RAY, "start", "--block", "--num-cpus=1", "--num-gpus=0", *arguments]
        command += [f"--{flag}={port}" for flag, port in zip(PORT_FLAGS, ports, strict=True)]
        command += [f"--max-worker-port={ports[-1] + WORKER_PORTS}"]
        command += [f"--temp-dir={self.temp}", "--node-ip-address=127.0.0.1"]
        command += ["--disable-usage-stats"]
        with open(self.temp / log, "wb") as stream:
            self.processes.append(
                subprocess.Popen(
                    command,
                    env=self.env,
                    stdout=stream,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )

    def __enter__(self) -> TwoNodeCluster:
        """Starts both nodes and returns at once (the worker node's ``ray start`` waits
        for the head); :meth:`wait_for_nodes` waits until they are up."""
        try:
            self._start(
                ["--head", f"--port={self.port}", "--include-dashboard=false"],
                self.head_ports,
                "head.log",
            )
            self._start([f"--address={self.address}"], self.worker_ports, "worker.log")
            self._watch()
        except BaseException:
            self.__exit__()
            raise
        return self

    def wait_for_nodes(self, count: int = 2, limit: float = 300.0) -> None:
        """Wait until ``ray status`` lists ``count`` alive nodes. It is called once the head's
        GCS has logged ``count`` registrations (a file read; each ``ray status`` is a Python
        process of about a CPU-second, and polling it took 3-4 calls at load 13), or after
        :data:`LOG_GRACE` s should a Ray version log otherwise."""
        self._wait(lambda: listening(self.port) and listening(self.worker_ports[0]), limit)
        grace = time.monotonic() + LOG_GRACE
        self._wait(lambda: self.registered() >= count or time.monotonic() > grace, limit)
        self._wait(lambda: self.nodes() >= count, limit)

    def registered(self) -> int:
        """How many nodes the head's GCS has logged as registering."""
        log = self.temp / "session_latest" / "logs" / "gcs_server.out"
        try:
            return log.read_text(errors="replace").count("Registering new node")
        except OSError:
            return 0

    def _watch(self) -> None:
        """A watchdog that stops the cluster if this process dies without doing so."""
        groups = [str(process.pid) for process in self.processes]
        self.watchdog = subprocess.Popen(
            [sys.executable, __file__, str(os.getpid()), self.home, *groups],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def _wait(self, ready: Callable[[], bool], limit: float) -> None:
        deadline = time.monotonic() + limit
        while not ready():
            for process, log in zip(self.processes, ("head.log", "worker.log"), strict=False):
                if process.poll() is not None:
                    text = (self.temp / log).read_text(errors="replace")[-3000:]
                    raise RuntimeError(f"ray start exited ({log}):\n{text}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"the cluster did not come up in {limit} s")
            time.sleep(0.25)

    def nodes(self) -> int:
        """The number of alive nodes ``ray status`` lists."""
        status = subprocess.run(
            [RAY, "status", f"--address={self.address}"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return status.stdout.count(" node_")

    def __exit__(self, *exc: object) -> None:
        stop([process.pid for process in self.processes], self.home)
        for process in self.processes:
            process.wait()
        if self.watchdog is not None:
            self.watchdog.kill()
            self.watchdog.wait()
        shutil.rmtree(self.temp, ignore_errors=True)


def watch(parent: int, home: str, groups: list[int]) -> None:
    """Until ``home`` (the cluster's directory) is removed: if ``parent`` dies, stop the
    cluster and remove its directory."""
    while Path(home).exists():
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            stop(groups, home)
            shutil.rmtree(home, ignore_errors=True)
            return
        time.sleep(1.0)


if __name__ == "__main__":  # the watchdog: PARENT_PID HOME GROUP...
    watch(int(sys.argv[1]), sys.argv[2], [int(group) for group in sys.argv[3:]])
