"""A/B of one batched run between two versions of the library: CPU time, in turns.

Two long-lived worker processes, one per version, each importing its own copy of
``bco_gym`` (the old one from ``git archive`` of a commit into
``benchmarks/out/ab/<commit>``, kept, so numba's cache of its kernels is reused; the new
one from this checkout, or from a second commit with ``--new``), play the same
``run_many`` once to warm up, then take turns (old, new, old, new, ...) timing the call
with ``time.process_time`` in their own process. Each turn's pair gives a difference
(old - new, µs per run-round saved) and a ratio; the figures are their median [min,
max] over the turns, beside the load average, and the two versions' final regrets are
compared so that a change of floats would show.

Run:  python benchmarks/bench_ab.py OLD_COMMIT [--new COMMIT] [--agent bbcg] [--seeds 10]
      [--horizon 100000] [--repeats 9] [--env-kwargs '{"loss": "portfolio"}']
      [--kernels auto|on|off]

``--kernels`` sets ``BCO_GYM_KERNELS`` in both workers (``off``: the NumPy loops).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from common import OUT, Load, Spread, load_average

ROOT = Path(__file__).resolve().parent.parent

WORKER = """
import json, os, sys, time, warnings
warnings.simplefilter("ignore")
import bco_gym
assert bco_gym.__file__.startswith(os.getcwd()), bco_gym.__file__
from bco_gym.experiment import run_many
env, agent, seeds, horizon = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
env_kwargs = json.loads(sys.argv[5])
def play():
    return run_many(env, agent, list(range(seeds)), horizon=horizon, env_kwargs=env_kwargs)
play()
for line in sys.stdin:
    start = time.process_time()
    results = play()
    seconds = time.process_time() - start
    regrets = [float(result.final_regret) for result in results]
    print(json.dumps({"seconds": seconds, "regrets": regrets}), flush=True)
"""


def checkout(commit: str) -> Path:
    """``commit``'s tree under benchmarks/out/ab/<full hash> (made once, then reused)."""
    full = subprocess.run(
        ["git", "rev-parse", "--verify", f"{commit}^{{commit}}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    target = OUT / "ab" / full
    if not (target / "bco_gym").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile() as archive:
            subprocess.run(["git", "archive", full], cwd=ROOT, stdout=archive, check=True)
            archive.seek(0)
            with tarfile.open(fileobj=archive) as tar:
                tar.extractall(target, filter="data")
    return target


def worker(source: Path, args: argparse.Namespace) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(source), "OMP_NUM_THREADS": "1"}
    env["BCO_GYM_KERNELS"] = args.kernels
    command = [sys.executable, "-c", WORKER, args.env, args.agent, str(args.seeds)]
    return subprocess.Popen(
        [*command, str(args.horizon), args.env_kwargs],
        cwd=source,  # ``-c`` puts the working directory first on the path
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def turn(process: subprocess.Popen[str]) -> dict:  # type: ignore[type-arg]
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("go\n")
    process.stdin.flush()
    return json.loads(process.stdout.readline())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", help="the commit to compare against")
    parser.add_argument("--new", help="a commit for the new side (default: this checkout)")
    parser.add_argument("--env", default="BCO-Ball-v0")
    parser.add_argument("--agent", default="bbcg")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--horizon", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--env-kwargs", default="{}", help="gym.make keywords, as JSON")
    parser.add_argument("--kernels", default="auto", choices=("auto", "on", "off"))
    args = parser.parse_args()
    new = ROOT if args.new is None else checkout(args.new)
    sides = {"old": worker(checkout(args.old), args), "new": worker(new, args)}
    seconds: dict[str, list[float]] = {"old": [], "new": []}
    regrets: dict[str, list[float]] = {}
    start = load_average()
    try:
        for _ in range(args.repeats):
            for name, process in sides.items():
                answer = turn(process)
                seconds[name].append(answer["seconds"])
                regrets[name] = answer["regrets"]
    finally:
        for process in sides.values():
            assert process.stdin is not None
            process.stdin.close()
            process.wait()
    load = Load(start, load_average())
    per_run_round = 1e6 / (args.seeds * args.horizon)
    pairs = list(zip(seconds["old"], seconds["new"], strict=True))
    saved = Spread.of((old - new) * per_run_round for old, new in pairs)
    ratio = Spread.of(new / old for old, new in pairs)
    for name in sides:
        figures = Spread.of(seconds[name]).scaled(per_run_round)
        print(f"{name}: {figures} us per run-round (CPU)")
    print(f"saved: {saved} us per run-round; new/old {ratio}; {load}, {args.repeats} turns")
    print(f"the same final regrets: {regrets['old'] == regrets['new']}")


if __name__ == "__main__":
    main()
