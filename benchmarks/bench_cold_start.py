"""Cold start of the compiled kernels: CPU seconds of a first process with an empty numba
cache, then of a second process loading what the first compiled.

Each process plays fkm, bfw, ofw, ogd and fkm2 on the ball (a single run and a batch of
two each, T = 300, ``BCO_GYM_KERNELS=on``), a batched bbcg (the block loop's compiled
tracker, sums, draws and certificate), and so-bgd and saha-tewari (the separation steps'
and the barrier solve's kernels, a single run and a batch of two each), in a fresh
``NUMBA_CACHE_DIR``. The load average
is printed beside each figure (docs/performance.md, "Cold start").

Then the first run a newcomer makes (issue 34's target, at most 20 s wall compile
included): ``run_many`` of 10 seeds of fkm on the ball at T = 10^5 in a fresh process with
an empty cache (``BCO_GYM_KERNELS`` at its default, "auto": the agent's kernel compiled,
the auxiliary kernels left to NumPy until cached), wall and CPU seconds, import included.

Run:  python benchmarks/bench_cold_start.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

PLAY = """
import os, time, warnings
warnings.simplefilter("ignore")
os.environ["BCO_GYM_KERNELS"] = "on"
start = time.process_time()
from bco_gym.experiment import run, run_many
for agent, feedback in (("fkm", "bandit"), ("bfw", "bandit"), ("ofw", "full"),
                        ("ogd", "full"), ("fkm2", "two-point")):
    run("BCO-Ball-v0", agent, horizon=300, env_kwargs={"feedback": feedback})
    run_many("BCO-Ball-v0", agent, [0, 1], horizon=300, env_kwargs={"feedback": feedback})
run_many("BCO-Ball-v0", "bbcg", [0, 1], horizon=3000)
for agent in ("so-bgd", "saha-tewari"):
    run("BCO-Ball-v0", agent, horizon=300)
    run_many("BCO-Ball-v0", agent, [0, 1], horizon=300)
print(time.process_time() - start)
"""


FIRST_RUN = """
import os, time, warnings
warnings.simplefilter("ignore")
wall, cpu = time.perf_counter(), time.process_time()
from bco_gym.experiment import run_many
run_many("BCO-Ball-v0", "fkm", list(range(10)), horizon=100_000)
print(time.perf_counter() - wall, time.process_time() - cpu)
"""


def first_run() -> None:
    """The newcomer's first run_many, with an empty numba cache (module docstring)."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "OMP_NUM_THREADS": "1"}
        env.pop("BCO_GYM_KERNELS", None)
        before = os.getloadavg()[0]
        out = subprocess.run(
            [sys.executable, "-c", FIRST_RUN], env=env, capture_output=True, text=True, check=True
        )
        wall, cpu = map(float, out.stdout.strip().splitlines()[-1].split())
        after = os.getloadavg()[0]
        print(
            f"first run_many (fkm, 10 seeds, T = 10^5, empty cache): {wall:.1f} s wall, "
            f"{cpu:.1f} s of CPU (load {before:.1f}-{after:.1f})",
            flush=True,
        )


def main() -> None:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "OMP_NUM_THREADS": "1"}
        for label in ("cold (empty cache)", "warm (cache loaded)"):
            before = os.getloadavg()[0]
            out = subprocess.run(
                [sys.executable, "-c", PLAY], env=env, capture_output=True, text=True, check=True
            )
            seconds = float(out.stdout.strip().splitlines()[-1])
            after = os.getloadavg()[0]
            print(f"{label}: {seconds:.1f} s of CPU (load {before:.1f}-{after:.1f})", flush=True)


if __name__ == "__main__":
    main()
    first_run()
