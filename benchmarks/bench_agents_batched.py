"""Batched agents against single ones, measured side by side in one run (agents alone).

Three measurements, each printed with the ratio beside it:

1. Per round, FKM/BFW/OFW/OGD on the ball and the simplex (n = 10): a single agent's
   act+update against a batched agent's (S = 64) per run-round (its time / S); both
   play the same fixed losses (and gradients), no env.
2. BBCG's block path batched (S = 64, n = 10): time per run-round against the time of
   drawing its random numbers alone (the Gaussian directions of every row).

The two sides of 1 and 2 take turns for ``--repeats`` rounds (``common.interleaved``, CPU
time); each ratio is the median [min, max] of the per-repeat ratios, with the load
average printed beside it.
3. BBCG's peak memory at n = 10^5, T = 10^6 (``--memory``): a child process plays the
   first ``--rounds`` rounds through the block path with linear losses; blocks are
   handed out in slices of ``BLOCK_BUDGET_FLOATS // n`` plays, so the peak (RSS, from
   ``getrusage``) is reached in the first blocks and stays there.

Usage:
    python benchmarks/bench_agents_batched.py
    python benchmarks/bench_agents_batched.py --memory
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
import warnings

from common import interleaved, pin_blas_threads

pin_blas_threads()

import numpy as np  # noqa: E402

from bco_gym.agents import BLOCK_BUDGET_FLOATS, make_agent  # noqa: E402
from bco_gym.losses import LinearLoss  # noqa: E402
from bco_gym.problem import Problem  # noqa: E402
from bco_gym.sets import L2Ball, Simplex  # noqa: E402


def _agent(name, convex_set, horizon, batch_size=None):
    loss = LinearLoss(convex_set)
    feedback = "full" if name in ("ofw", "ogd") else "bandit"
    problem = Problem(convex_set, horizon, loss.lipschitz, loss.bound, feedback)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return make_agent(name, problem, batch_size=batch_size)


def _play(agent, rounds, losses, info):
    def play() -> None:
        agent.reset(seed=0)
        for _ in range(rounds):
            agent.act(None)
            agent.update(losses, info)

    return play


def per_round(rounds: int, rows: int, repeats: int) -> None:
    print(f"1. act+update per run-round, n = 10, single vs batched S = {rows} ({rounds} rounds)")
    for name in ("fkm", "bfw", "ofw", "ogd"):
        for convex_set in (L2Ball(10), Simplex(10)):
            single = _agent(name, convex_set, rounds)
            batched = _agent(name, convex_set, rounds, batch_size=rows)
            gradient = convex_set.tangent(np.full(10, 0.1) + np.arange(10) / 100)
            one = {"gradient": gradient}
            many = {"gradient": np.repeat(gradient[np.newaxis], rows, axis=0)}
            timings = interleaved(
                {
                    "single": _play(single, rounds, 0.3, one),
                    "batched": _play(batched, rounds, np.full(rows, 0.3), many),
                },
                repeats,
            )
            alone = timings.spread("single").scaled(1e6 / rounds)
            shared = timings.spread("batched").scaled(1e6 / (rounds * rows))
            ratio = timings.ratio("single", "batched", scale=rows)
            print(
                f"   {name:4s} {type(convex_set).__name__:8s} single {alone.median:7.1f} us   "
                f"batched {shared.median:6.2f} us/run-round   ratio {ratio}x   ({timings.load})"
            )


def bbcg_against_its_draws(horizon: int, rows: int, repeats: int) -> None:
    print(f"2. BBCG block path, batched S = {rows}, n = 10, T = {horizon}")
    ball = L2Ball(10)
    agent = _agent("bbcg", ball, horizon, batch_size=rows)
    theta = np.random.default_rng(0).standard_normal(10) / 10

    def play() -> None:
        agent.reset(seed=0)
        while agent.stats["rounds"] < horizon:
            plays = agent.block_actions()
            agent.update_block(plays @ theta)

    def draw() -> None:
        for rng in [np.random.default_rng(seed) for seed in range(rows)]:
            rng.standard_normal((horizon, 10))

    timings = interleaved({"agent": play, "draws": draw}, repeats)
    per = 1e6 / (horizon * rows)
    print(
        f"   agent {timings.spread('agent').scaled(per).median:.3f} us/run-round, its Gaussian "
        f"draws alone {timings.spread('draws').scaled(per).median:.3f} us/run-round: ratio "
        f"{timings.ratio('agent', 'draws')}x ({timings.load}; losses evaluated by one product "
        "per slice, included)"
    )


def memory_child(dimension: int, horizon: int, rounds: int) -> None:
    """Play ``rounds`` rounds of BBCG (T = horizon) and print the peak RSS in MB."""
    ball = L2Ball(dimension)
    agent = _agent("bbcg", ball, horizon)
    theta = np.random.default_rng(0).standard_normal(dimension) / np.sqrt(dimension)
    agent.reset(seed=0)
    largest = 0
    while agent.stats["rounds"] < rounds:
        plays = agent.block_actions()
        largest = max(largest, len(plays))
        agent.update_block(plays @ theta)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{peak:.0f} {largest} {agent.params['block_size']}")


def memory(dimension: int, horizon: int, rounds: int) -> None:
    print(f"3. BBCG peak RSS, n = {dimension}, T = {horizon}, first {rounds} rounds")
    command = [sys.executable, __file__, "--child", str(dimension), str(horizon), str(rounds)]
    start = time.perf_counter()
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout.split()
    peak, largest, block = float(output[0]), int(output[1]), int(output[2])
    print(
        f"   peak RSS {peak:.0f} MB (target < 512 MB); block size {block}, handed out in "
        f"slices of <= {largest} plays (budget {BLOCK_BUDGET_FLOATS} floats per row); "
        f"{time.perf_counter() - start:.0f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3000, help="rounds of measurement 1")
    parser.add_argument("--rows", type=int, default=64, help="S, the batch size")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved repeats")
    parser.add_argument("--memory", action="store_true", help="also measurement 3")
    parser.add_argument("--memory-rounds", type=int, default=20_000, help="rounds of 3")
    parser.add_argument("--child", nargs=3, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        memory_child(*args.child)
        return
    per_round(args.rounds, args.rows, args.repeats)
    bbcg_against_its_draws(20_000, args.rows, args.repeats)
    if args.memory:
        memory(100_000, 1_000_000, args.memory_rounds)


if __name__ == "__main__":
    main()
