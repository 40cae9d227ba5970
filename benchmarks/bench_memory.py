"""4. Memory: the peak resident set of a T = 10^7 run against a T = 10^4 run.

BBCG on ``BCO-Simplex-v0`` with n = 100 through ``bco_gym.experiment.run`` (the block
fast path), each run in a fresh Python process that reports its peak RSS (``VmHWM`` of
/proc/self/status, the high-water mark of its own address space; ``ru_maxrss`` is shown
too, but on Linux it keeps the RSS the parent had when it forked) and its RSS after the
imports, before the run. Nothing the runner keeps grows with T: the per-round losses
are not stored above ``ROUND_LOSSES_LIMIT`` (each checkpoint segment keeps an exact
running sum), the agent holds one block (sqrt(T) x n), the loss sequence its last two chunks.

Target: peak RSS at T = 10^7 within 1.5x of the peak at T = 10^4.

Run:  python benchmarks/bench_memory.py [--horizon 10000000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from common import Load, Row, load_average, pin_blas_threads, table, verdict, write_json

pin_blas_threads()

CHILD = """
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
import bco_gym
from bco_gym.experiment import run
def status_mb(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")
before = status_mb("VmRSS")
start = time.process_time()
result = run("BCO-Simplex-v0", "bbcg", horizon={horizon}, seed=0, env_kwargs={{"n": 100}})
print(json.dumps({{
    "horizon": {horizon},
    "rss_after_imports_mb": before,
    "peak_rss_mb": status_mb("VmHWM"),
    "ru_maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "cpu_seconds": time.process_time() - start,
    "loop": result.loop,
    "final_regret": result.final_regret,
    "round_losses_kept": result.round_losses is not None,
}}))
"""


def child_run(horizon: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    start = time.perf_counter()
    finished = subprocess.run(
        [sys.executable, "-c", CHILD.format(horizon=horizon)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    figures = json.loads(finished.stdout.strip().splitlines()[-1])
    figures["wall_seconds"] = time.perf_counter() - start
    return figures


def measure(horizon: int = 10_000_000, baseline: int = 10_000) -> tuple[list[Row], dict]:
    start = load_average()
    small, large = child_run(baseline), child_run(horizon)
    load = Load(start, load_average())
    ratio = large["peak_rss_mb"] / small["peak_rss_mb"]
    raw = {"small": small, "large": large}
    row = Row(
        "4 memory",
        f"peak RSS, T={horizon:.0e} / T={baseline:.0e} (BBCG, simplex n=100)",
        ratio,
        "x",
        "<= 1.5",
        verdict(ratio, at_most=1.5),
        raw,
        load=load,
    )
    return [row], raw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=10_000_000)
    args = parser.parse_args()
    rows, raw = measure(args.horizon)
    print(table(rows))
    for figures in raw.values():
        print(
            f"T={figures['horizon']:.0e}: peak {figures['peak_rss_mb']:.0f} MB (after imports "
            f"{figures['rss_after_imports_mb']:.0f} MB), {figures['cpu_seconds']:.1f} s CPU, "
            f"{figures['loop']} loop"
        )
    write_json("memory", rows)


if __name__ == "__main__":
    main()
