"""6. Many runs at once: ``run_many`` against ``run``, and BBCG against its random numbers.

(a) FKM, BFW, OFW and OGD on the ball and the simplex (n = 10, T = 10^5): 64 seeds
    through ``run_many`` against 64 calls of ``run``. ``run`` costs the same for every
    seed, so the 64 calls are timed on one of them (seed 0) and scaled to 64; its
    result is checked ``same_outcome`` as row 0 of the batch. Targets: speed-up >= 20x,
    batch cost <= 2 us per run-round.
(b) BBCG batched (64 seeds, ball n = 10, T = 10^5): the batch's loop against drawing
    its random numbers for the same batch -- per row and round, the agent's Gaussian
    direction (n normals) and the adversary's noise (n normals and one uniform, the
    linear family), each row from its own generator, in chunks of 4096 rounds. Target:
    within 2x.
(c) Peak RSS of BBCG on the simplex at n = 10^5, T = 10^6, in a fresh process (psutil
    is not needed: ``resource.getrusage`` of the child). A full run draws 2 * 10^11
    normals (hours), so the child plays for ``--memory-seconds`` (default 60) and
    reports its peak and the rounds played; BBCG's memory is periodic in its blocks
    (nothing grows with t but the loss tally, O(1) here), so the first blocks show the
    peak. Target: < 512 MB.
(d) The random agent through ``run_many`` on the ball (n = 10) with S = 1, 8 and 64
    seeds: CPU microseconds per run-round of the whole call (the runner's fixed costs
    per round, shared by the rows of a batch).

The run figures are CPU seconds of the whole calls minus their comparators (the same
comparator calls timed on their own), as in bench_fast_path.py. The sides of each
figure take turns for ``--repeats`` rounds (``common.interleaved``); each figure is the
median [min, max] over the repeats, printed with the load average.

Run:  python benchmarks/bench_batched.py [--quick] [--horizon 100000] [--seeds 64]
          [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

from common import Row, cpu_seconds, interleaved, pin_blas_threads, table, verdict, write_json

pin_blas_threads()

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import bco_gym  # noqa: E402, F401
from bco_gym.experiment import default_checkpoints, run, run_many  # noqa: E402

CASES = {"ball": ("BCO-Ball-v0", {"n": 10}), "simplex": ("BCO-Simplex-v0", {"n": 10})}
AGENTS = ("fkm", "bfw", "ofw", "ogd")
FULL_INFORMATION = ("ofw", "ogd")
HORIZON = 100_000
SEEDS = 64
CHUNK = 4096


def comparator_cpu(env_id: str, kwargs: dict, horizon: int, seeds: list[int]) -> float:
    """CPU seconds of the runs' comparator calls (one per seed), timed on their own."""
    envs = gym.make_vec(
        env_id,
        num_envs=len(seeds),
        vectorization_mode="vector_entry_point",
        horizon=horizon,
        **kwargs,
    )
    envs.reset(seed=seeds)
    points = default_checkpoints(horizon)
    seconds, _, _ = cpu_seconds(
        lambda: [sequence.comparator(points) for sequence in envs.losses.sequences]
    )
    return seconds


def batched_speedup(agent: str, label: str, horizon: int, seeds: int, repeats: int) -> Row:
    env_id, size = CASES[label]
    kwargs = {**size, **({"feedback": "full"} if agent in FULL_INFORMATION else {})}
    seed_list = list(range(seeds))
    timings = interleaved(
        {
            "batch": lambda: run_many(env_id, agent, seed_list, horizon=horizon, env_kwargs=kwargs),
            "single": lambda: run(env_id, agent, seed=0, horizon=horizon, env_kwargs=kwargs),
        },
        repeats,
    )
    batch, single = timings.results["batch"], timings.results["single"]
    batch_comparator = comparator_cpu(env_id, kwargs, horizon, seed_list)
    single_comparator = comparator_cpu(env_id, kwargs, horizon, [0])
    comparators = (single_comparator, batch_comparator)
    ratio = timings.ratio("single", "batch", minus=comparators, scale=seeds)
    cost = timings.spread("batch", minus=batch_comparator).scaled(1e6 / (seeds * horizon))
    same = batch[0].same_outcome(single)
    detail = {
        "env": env_id,
        **kwargs,
        "horizon": horizon,
        "seeds": seeds,
        "repeats": repeats,
        "loop": batch[0].loop,
        "batch_cpu_s": timings.seconds["batch"],
        "single_cpu_s": timings.seconds["single"],
        "comparator_cpu_s": {"batch": batch_comparator, "single": single_comparator},
        "batch_us_per_run_round": str(cost),
        "single_us_per_round": str(
            timings.spread("single", minus=single_comparator).scaled(1e6 / horizon)
        ),
        "same_outcome": same,
    }
    met = verdict(ratio.median, at_least=20.0) and cost.median <= 2.0 and same
    return Row.measured(
        "6a batched",
        f"{agent.upper()} run_many({seeds} seeds) / {seeds} x run ({label}, T={horizon:.0e}); "
        f"{cost} us/run-round",
        ratio,
        "x",
        timings.load,
        ">= 20, <= 2 us/run-round",
        met,
        detail,
    )


def draws(seeds: int, n: int, horizon: int):
    """Drawing BBCG's random numbers for the batch: per row, own generators, by chunks."""
    agents = [np.random.default_rng([seed, 1]) for seed in range(seeds)]
    adversaries = [np.random.default_rng([seed, 2]) for seed in range(seeds)]

    def draw() -> None:
        for start in range(0, horizon, CHUNK):
            rounds = min(CHUNK, horizon - start)
            for agent, adversary in zip(agents, adversaries, strict=True):
                agent.standard_normal((rounds, n))
                adversary.standard_normal((rounds, n))
                adversary.uniform(size=(rounds, 1))

    return draw


def bbcg_floor(horizon: int, seeds: int, repeats: int, n: int = 10) -> Row:
    env_id, kwargs = "BCO-Ball-v0", {"n": n}
    seed_list = list(range(seeds))
    timings = interleaved(
        {
            "batch": lambda: run_many(
                env_id, "bbcg", seed_list, horizon=horizon, env_kwargs=kwargs
            ),
            "draws": draws(seeds, n, horizon),
        },
        repeats,
    )
    comparator = comparator_cpu(env_id, kwargs, horizon, seed_list)
    ratio = timings.ratio("batch", "draws", minus=(comparator, 0.0))
    detail = {
        "env": env_id,
        "n": n,
        "horizon": horizon,
        "seeds": seeds,
        "repeats": repeats,
        "loop": timings.results["batch"][0].loop,
        "batch_cpu_s": timings.seconds["batch"],
        "comparator_cpu_s": comparator,
        "draws_cpu_s": timings.seconds["draws"],
        "batch_us_per_run_round": str(
            timings.spread("batch", minus=comparator).scaled(1e6 / (seeds * horizon))
        ),
    }
    return Row.measured(
        "6b batched",
        f"BBCG run_many({seeds} seeds) loop / drawing its random numbers (ball n={n}, "
        f"T={horizon:.0e})",
        ratio,
        "x",
        timings.load,
        "<= 2",
        verdict(ratio.median, at_most=2.0),
        detail,
    )


def random_agent(horizon: int, sizes: tuple[int, ...], repeats: int) -> list[Row]:
    """(d) CPU us per run-round of the random agent through run_many, S rows each."""
    calls = {
        size: lambda size=size: run_many("BCO-Ball-v0", "random", range(size), horizon=horizon)
        for size in sizes
    }
    timings = interleaved({str(size): call for size, call in calls.items()}, repeats)
    return [
        Row.measured(
            "6d batched",
            f"random agent, run_many on the ball (n=10, S={size}, T={horizon:.0e}), whole call",
            timings.spread(str(size)).scaled(1e6 / (size * horizon)),
            "us/run-round",
            timings.load,
            detail={"seconds": timings.seconds[str(size)], "repeats": repeats},
        )
        for size in sizes
    ]


CHILD = textwrap.dedent(
    """
    import json, os, resource, sys, threading, time, warnings
    warnings.simplefilter("ignore")
    import gymnasium as gym
    import bco_gym
    from bco_gym.agents import make_agent
    from bco_gym.experiment import run

    n, horizon, budget = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    env = gym.make("BCO-Simplex-v0", n=n, horizon=horizon)
    agent = make_agent("bbcg", env)
    start = time.perf_counter()

    def report(finished):
        peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({"peak_mb": peak_kb / 1024, "rounds": int(agent.stats["rounds"]),
                          "seconds": time.perf_counter() - start, "finished": finished}))
        sys.stdout.flush()
        os._exit(0)

    threading.Timer(budget, report, args=(False,)).start()
    run(env, agent, seed=0)
    report(True)
    """
)


def peak_memory(n: int, horizon: int, budget: float) -> Row:
    finished = subprocess.run(
        [sys.executable, "-c", CHILD, str(n), str(horizon), str(budget)],
        capture_output=True,
        text=True,
        check=True,
    )
    figures = json.loads(finished.stdout.strip().splitlines()[-1])
    return Row(
        "6c memory",
        f"BBCG peak RSS (simplex n={n:.0e}, T={horizon:.0e}; "
        f"{figures['rounds']:,} rounds in {figures['seconds']:.0f} s)",
        figures["peak_mb"],
        "MB",
        "< 512",
        verdict(figures["peak_mb"], at_most=511.999),
        {"n": n, "horizon": horizon, **figures},
    )


def measure(
    quick: bool = False,
    horizon: int = HORIZON,
    seeds: int = SEEDS,
    repeats: int = 3,
    memory_seconds: float = 60.0,
) -> tuple[list[Row], dict]:
    if quick:
        horizon, seeds, repeats, memory_seconds = 2_000, 8, 2, 5.0
    rows = [
        batched_speedup(agent, label, horizon, seeds, repeats)
        for agent in AGENTS
        for label in CASES
    ]
    rows.append(bbcg_floor(horizon, seeds, repeats))
    rows += random_agent(horizon, tuple(sorted({1, 8, seeds})), repeats)
    rows.append(peak_memory(100_000, 1_000_000, memory_seconds))
    return rows, {f"{row.benchmark} {row.name}": row.detail for row in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--horizon", type=int, default=HORIZON)
    parser.add_argument("--seeds", type=int, default=SEEDS)
    parser.add_argument("--repeats", type=int, default=3, help="interleaved repeats")
    parser.add_argument("--memory-seconds", type=float, default=60.0)
    args = parser.parse_args()
    rows, _ = measure(args.quick, args.horizon, args.seeds, args.repeats, args.memory_seconds)
    print(table(rows))
    write_json("batched", rows)


if __name__ == "__main__":
    main()
