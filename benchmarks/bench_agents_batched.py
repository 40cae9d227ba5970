"""Batched agents against single ones, measured side by side in one run (agents alone).

Three measurements, each printed with the ratio beside it:

1. Per round, FKM/BFW/OFW/OGD on the ball and the simplex (n = 10): a single agent's
   act+update against a batched agent's (S = 64) per run-round (its time / S); both
   play the same fixed losses (and gradients), no env, best of ``--repeats``.
2. BBCG's block path batched (S = 64, n = 10): time per run-round against the time of
   drawing its random numbers alone (the Gaussian directions of every row).
3. BBCG's peak memory at n = 10^5, T = 10^6 (``--memory``): a child process plays the
   first ``--rounds`` rounds through the block path with linear losses; blocks are
   handed out in slices of ``BLOCK_BUDGET_FLOATS // n`` plays, so the peak (RSS, from
   ``getrusage``) is reached in the first blocks and stays there.

Usage:
    PYTHONPATH=. OMP_NUM_THREADS=1 python benchmarks/bench_agents_batched.py
    PYTHONPATH=. OMP_NUM_THREADS=1 python benchmarks/bench_agents_batched.py --memory
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
import warnings

import numpy as np

from bco_gym.agents import BLOCK_BUDGET_FLOATS, make_agent
from bco_gym.losses import LinearLoss
from bco_gym.problem import Problem
from bco_gym.sets import L2Ball, Simplex


def _agent(name, convex_set, horizon, batch_size=None):
    loss = LinearLoss(convex_set)
    feedback = "full" if name in ("ofw", "ogd") else "bandit"
    problem = Problem(convex_set, horizon, loss.lipschitz, loss.bound, feedback)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return make_agent(name, problem, batch_size=batch_size)


def _seconds_per_round(agent, rounds, losses, info):
    agent.reset(seed=0)
    start = time.perf_counter()
    for _ in range(rounds):
        agent.act(None)
        agent.update(losses, info)
    return (time.perf_counter() - start) / rounds


def per_round(rounds: int, rows: int, repeats: int) -> None:
    print(f"1. act+update per run-round, n = 10, single vs batched S = {rows} ({rounds} rounds)")
    for name in ("fkm", "bfw", "ofw", "ogd"):
        for convex_set in (L2Ball(10), Simplex(10)):
            single = _agent(name, convex_set, rounds)
            batched = _agent(name, convex_set, rounds, batch_size=rows)
            gradient = convex_set.tangent(np.full(10, 0.1) + np.arange(10) / 100)
            one = {"gradient": gradient}
            many = {"gradient": np.repeat(gradient[np.newaxis], rows, axis=0)}
            times = [
                (
                    _seconds_per_round(single, rounds, 0.3, one),
                    _seconds_per_round(batched, rounds, np.full(rows, 0.3), many) / rows,
                )
                for _ in range(repeats)
            ]
            alone, shared = min(t[0] for t in times), min(t[1] for t in times)
            print(
                f"   {name:4s} {type(convex_set).__name__:8s} single {alone * 1e6:7.1f} us   "
                f"batched {shared * 1e6:6.2f} us/run-round   ratio {alone / shared:5.1f}x"
            )


def bbcg_against_its_draws(horizon: int, rows: int, repeats: int) -> None:
    print(f"2. BBCG block path, batched S = {rows}, n = 10, T = {horizon}")
    ball = L2Ball(10)
    agent = _agent("bbcg", ball, horizon, batch_size=rows)
    theta = np.random.default_rng(0).standard_normal(10) / 10
    best_agent = best_draws = float("inf")
    for _ in range(repeats):
        agent.reset(seed=0)
        start = time.perf_counter()
        while agent.stats["rounds"] < horizon:
            plays = agent.block_actions()
            agent.update_block(plays @ theta)
        best_agent = min(best_agent, time.perf_counter() - start)
        generators = [np.random.default_rng(seed) for seed in range(rows)]
        start = time.perf_counter()
        for rng in generators:
            rng.standard_normal((horizon, 10))
        best_draws = min(best_draws, time.perf_counter() - start)
    per = horizon * rows
    print(
        f"   agent {best_agent / per * 1e6:.3f} us/run-round, its Gaussian draws alone "
        f"{best_draws / per * 1e6:.3f} us/run-round: ratio {best_agent / best_draws:.2f}x "
        "(losses evaluated by one product per slice, included)"
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
    parser.add_argument("--repeats", type=int, default=3, help="best of this many")
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
