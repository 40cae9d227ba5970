"""What Ray costs against the process pool on one machine, and what more nodes would save.

    python benchmarks/bench_ray.py [--suite quick-v2] [--seeds 8] [--repeats 3]

Runs the same bench, ``bco-gym bench --agents fkm,bfw --suite SUITE --seeds K
--recompute-references`` (every cell computed: the reference agents' and the given
ones'), into a fresh directory each time, on the process pool and on Ray (a local
instance started and stopped by the bench, as ``--backend ray`` without an address
does), the two taking turns (process, ray, process, ray, ...), so both meet the same
spells of load. Per run: wall seconds and the CPU seconds of the bench and every process
it started (``RUSAGE_CHILDREN``), with the 1-minute load average before and after.

Printed: each backend's wall and CPU seconds, median [min, max] over the repeats (the CPU
of Ray's workers, children of its raylet, is not counted: only the process pool's CPU
column is whole); the
overhead of Ray, repeat by repeat (wall_ray - wall_process); and the estimate of a run
on N nodes of c cores each, from this machine's figures: the bench's computing time
(the process pool's wall times the cores used here, its own start included) shared by
N*c workers, plus Ray's measured overhead. The estimate assumes cells as divisible as here
(a bench of fewer batches than workers leaves workers idle) and a network that moves a
batch's result (kilobytes) in far less than the batch takes.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

from common import Spread, load_average


def one_bench(backend: str, suite: str, seeds: int) -> tuple[float, float, float, float]:
    """(wall s, CPU s of the bench's processes, load before, load after)."""
    out = tempfile.mkdtemp(prefix=f"bench-{backend}-")
    command = [sys.executable, "-m", "bco_gym.cli", "bench", "--agents", "fkm,bfw"]
    command += ["--suite", suite, "--seeds", str(seeds), "--recompute-references"]
    command += ["--out", out, "--quiet", "--backend", backend]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = load_average()
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    shutil.rmtree(out, ignore_errors=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, load, load_average()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="quick-v2")
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    walls: dict[str, list[float]] = {"process": [], "ray": []}
    cpus: dict[str, list[float]] = {"process": [], "ray": []}
    loads: list[float] = []
    print(
        f"bench --agents fkm,bfw --suite {args.suite} --seeds {args.seeds} "
        f"--recompute-references, {cores} cores, {args.repeats} repeats, in turns"
    )
    for repeat in range(args.repeats):
        for backend in ("process", "ray"):
            wall, cpu, start, end = one_bench(backend, args.suite, args.seeds)
            walls[backend].append(wall)
            cpus[backend].append(cpu)
            loads += [start, end]
            print(
                f"  repeat {repeat + 1} {backend:7s}: {wall:6.1f} s wall, {cpu:6.1f} s CPU, "
                f"load {start:.1f}-{end:.1f}",
                flush=True,
            )
    for backend in walls:
        print(f"{backend:7s}: wall {Spread.of(walls[backend])} s, CPU {Spread.of(cpus[backend])} s")
    overhead = Spread.of(r - p for r, p in zip(walls["ray"], walls["process"], strict=True))
    print(f"Ray's overhead (wall_ray - wall_process, repeat by repeat): {overhead} s")
    print(f"load average over the measurement: {min(loads):.1f}-{max(loads):.1f}")
    work = Spread.of(walls["process"]).median * cores  # core-seconds the bench computes
    print(
        f"estimated wall on N nodes of {cores} cores: {work:.0f} core-s / (N * {cores}) "
        f"+ {overhead.median:.1f} s"
    )
    for nodes in (1, 2, 4, 8):
        print(f"  N = {nodes}: {work / (nodes * cores) + overhead.median:.1f} s")


if __name__ == "__main__":
    main()
