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
The two sides take turns for ``--repeats`` rounds; each figure is the median [min, max]
of the per-repeat ratios, printed with the load average (``common.interleaved``).

Run:  python benchmarks/bench_fast_path.py [--quick] [--repeats 5]
"""

from __future__ import annotations

import argparse

from common import Row, cpu_seconds, interleaved, pin_blas_threads, table, verdict, write_json

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


def speedup(n: int = 10, horizon: int = 200_000, repeats: int = 5) -> Row:
    comparator = comparator_seconds(n, horizon)
    timings = interleaved(
        {"fast": bbcg_run(n, horizon, None), "gym": bbcg_run(n, horizon, False)}, repeats
    )
    fast, slow = timings.results["fast"], timings.results["gym"]
    loop_ratio = timings.ratio("gym", "fast", minus=(comparator, comparator))
    per_round = 1e6 / horizon
    detail = {
        "n": n,
        "horizon": horizon,
        "repeats": repeats,
        "loops": [fast.loop, slow.loop],
        "same_final_regret": fast.final_regret == slow.final_regret,
        "fast_run_cpu_s": timings.seconds["fast"],
        "gym_run_cpu_s": timings.seconds["gym"],
        "comparator_cpu_s": comparator,
        "whole_call_speedup": str(timings.ratio("gym", "fast")),
        "fast_us_per_round": str(timings.spread("fast", minus=comparator).scaled(per_round)),
        "gym_us_per_round": str(timings.spread("gym", minus=comparator).scaled(per_round)),
    }
    met = verdict(loop_ratio.median, at_least=20.0) and detail["same_final_regret"]
    return Row.measured(
        "2a fast path",
        f"BBCG block loop speed-up over gym loop (n={n}, T={horizon:.0e})",
        loop_ratio,
        "x",
        timings.load,
        ">= 20",
        met,
        detail,
    )


def against_floor(n: int = 100, horizon: int = 1_000_000, repeats: int = 3) -> Row:
    comparator = comparator_seconds(n, horizon)
    timings = interleaved(
        {"fast": bbcg_run(n, horizon, None), "normals": normals(n, horizon)}, repeats
    )
    fast = timings.results["fast"]
    ratio = timings.ratio("fast", "normals", minus=(comparator, 0.0))
    detail = {
        "n": n,
        "horizon": horizon,
        "repeats": repeats,
        "loop": fast.loop,
        "run_cpu_s": timings.seconds["fast"],
        "comparator_cpu_s": comparator,
        "normals_cpu_s": timings.seconds["normals"],
        "whole_call_over_floor": str(timings.ratio("fast", "normals")),
        "agent_wall_s": fast.agent_seconds,
        "env_wall_s": fast.env_seconds,
    }
    return Row.measured(
        "2b fast path",
        f"BBCG block loop / T x n normals (n={n}, T={horizon:.0e})",
        ratio,
        "x",
        timings.load,
        "<= 3",
        verdict(ratio.median, at_most=3.0),
        detail,
    )


def measure(quick: bool = False, repeats: int = 5) -> tuple[list[Row], dict]:
    if quick:
        rows = [speedup(10, 20_000, 2), against_floor(100, 50_000, 2)]
    else:
        rows = [speedup(repeats=repeats), against_floor(repeats=max(2, repeats - 2))]
    return rows, {row.benchmark: row.detail for row in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small horizons (a smoke test)")
    parser.add_argument("--repeats", type=int, default=5, help="interleaved repeats of 2a")
    args = parser.parse_args()
    rows, raw = measure(args.quick, args.repeats)
    print(table(rows))
    for name, detail in raw.items():
        print(name, {k: (round(v, 4) if isinstance(v, float) else v) for k, v in detail.items()})
    write_json("fast_path", rows)


if __name__ == "__main__":
    main()
