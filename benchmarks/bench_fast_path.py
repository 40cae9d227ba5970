"""2. The fast path: BBCG on the simplex through the runner's block loop.

(a) n = 10, T = 2*10^5, one seed: ``run(..., fast=None)`` (the block loop) against
    ``run(..., fast=False)`` (the Gymnasium loop through the RegretRecorder), the same
    outcome (checked: equal final regret). Target: speed-up >= 20x.
(b) n = 100, T = 10^6: the block loop against drawing T x n standard normals with numpy
    (in blocks of 1000 rows), the floor of any one-point method, which needs one
    Gaussian direction per round. Target: within 3x of the floor.

The figure is the loop: the run's CPU time minus that of its checkpoint comparator (the
same call timed on its own; the comparator regenerates the adversary's whole sequence
once, which costs the same whichever loop ran). The whole-call ratios are shown too.

Run:  python benchmarks/bench_fast_path.py [--quick]
"""

from __future__ import annotations

import argparse

from common import Row, cpu_seconds, interleaved_best, pin_blas_threads, table, verdict, write_json

pin_blas_threads()

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import bco_gym  # noqa: E402, F401
from bco_gym.experiment import default_checkpoints, run  # noqa: E402

SEED = 0


def comparator_seconds(n: int, horizon: int) -> float:
    """CPU seconds of the runner's comparator call for this problem and seed."""
    env = gym.make("BCO-Simplex-v0", n=n, horizon=horizon)
    env.reset(seed=SEED)
    points = default_checkpoints(horizon)
    seconds, _, _ = cpu_seconds(lambda: env.unwrapped.losses.comparator(points))
    return seconds


def bbcg_run(n: int, horizon: int, fast: bool | None):
    return lambda: run(
        "BCO-Simplex-v0", "bbcg", horizon=horizon, seed=SEED, env_kwargs={"n": n}, fast=fast
    )


def normals(n: int, horizon: int):
    """Drawing T x n standard normals, 1000 rows at a time (the one-point floor)."""
    rng = np.random.default_rng(SEED)

    def draw() -> None:
        for start in range(0, horizon, 1000):
            rng.standard_normal((min(1000, horizon - start), n))

    return draw


def speedup(n: int = 10, horizon: int = 200_000, repeats: int = 3) -> Row:
    comparator = comparator_seconds(n, horizon)
    best, results = interleaved_best(
        {"fast": bbcg_run(n, horizon, None), "gym": bbcg_run(n, horizon, False)}, repeats
    )
    fast, slow = results["fast"], results["gym"]
    loop_ratio = (best["gym"] - comparator) / (best["fast"] - comparator)
    detail = {
        "n": n,
        "horizon": horizon,
        "loops": [fast.loop, slow.loop],
        "same_final_regret": fast.final_regret == slow.final_regret,
        "fast_run_cpu_s": best["fast"],
        "gym_run_cpu_s": best["gym"],
        "comparator_cpu_s": comparator,
        "whole_call_speedup": best["gym"] / best["fast"],
        "fast_us_per_round": 1e6 * (best["fast"] - comparator) / horizon,
        "gym_us_per_round": 1e6 * (best["gym"] - comparator) / horizon,
    }
    met = verdict(loop_ratio, at_least=20.0) and detail["same_final_regret"]
    return Row(
        "2a fast path",
        f"BBCG block loop speed-up over gym loop (n={n}, T={horizon:.0e})",
        loop_ratio,
        "x",
        ">= 20",
        met,
        detail,
    )


def against_floor(n: int = 100, horizon: int = 1_000_000, repeats: int = 2) -> Row:
    comparator = comparator_seconds(n, horizon)
    best, results = interleaved_best(
        {"fast": bbcg_run(n, horizon, None), "normals": normals(n, horizon)}, repeats
    )
    fast = results["fast"]
    ratio = (best["fast"] - comparator) / best["normals"]
    detail = {
        "n": n,
        "horizon": horizon,
        "loop": fast.loop,
        "run_cpu_s": best["fast"],
        "comparator_cpu_s": comparator,
        "normals_cpu_s": best["normals"],
        "whole_call_over_floor": best["fast"] / best["normals"],
        "agent_wall_s": fast.agent_seconds,
        "env_wall_s": fast.env_seconds,
        "rounds_per_second": horizon / (best["fast"] - comparator),
    }
    return Row(
        "2b fast path",
        f"BBCG block loop / T x n normals (n={n}, T={horizon:.0e})",
        ratio,
        "x",
        "<= 3",
        verdict(ratio, at_most=3.0),
        detail,
    )


def measure(quick: bool = False) -> tuple[list[Row], dict]:
    if quick:
        rows = [speedup(10, 20_000), against_floor(100, 50_000)]
    else:
        rows = [speedup(), against_floor()]
    return rows, {row.benchmark: row.detail for row in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small horizons (a smoke test)")
    args = parser.parse_args()
    rows, raw = measure(args.quick)
    print(table(rows))
    for name, detail in raw.items():
        print(name, {k: (round(v, 4) if isinstance(v, float) else v) for k, v in detail.items()})
    write_json("fast_path", rows)


if __name__ == "__main__":
    main()
