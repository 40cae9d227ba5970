"""The compiled separation steps of so-bgd and fejer-bgd against their Python loops.

so-bgd (Garber & Kretzu 2022, Algorithm 10) runs Algorithm 6 every round and row: calls
of the set's separation oracle and steps along its normals. The NumPy path runs them row
by row in Python; :class:`bco_gym.agents.gk22.oracles.SeparationSteps` runs every row in one
numba call (:mod:`bco_gym.agents.gk22.kernel`), the same bits. Each figure compares
the same ``run`` (S = 1) or ``run_many`` (S seeds) with the kernel and without, everything
else equal (``BCO_GYM_KERNELS`` stays "auto"; the agent's kernel is switched by its
threshold ``AGENT_MIN_RUN_ROUNDS``), the two taking turns ``--repeats`` times
(:func:`common.interleaved`): CPU µs per round per row of each side, median [min, max],
the ratio (Python loop / kernel) per pair of turns, and the load average. The outcomes
and the separation counts of both sides are checked equal.

Cases: the ball and the simplex (n = 10) at Theorem 15's default constants (Algorithm 6
mostly answers "inside" at once: one oracle call a round) and with a step size that
leaves the set (``step_size`` 0.05; several calls a round); fejer-bgd on the simplex
with such a step. A single run plays 5 times the horizon of a batched one.

Run:  python benchmarks/bench_successors.py [--repeats 5] [--horizon 2000] [--seeds 10]
"""

from __future__ import annotations

import argparse
import warnings

from common import Row, interleaved, pin_blas_threads, table, write_json

pin_blas_threads()

import bco_gym.agents.kernels as kernels  # noqa: E402
from bco_gym.experiment import run, run_many  # noqa: E402

DIM = 10
#: (label, agent, env id, agent options, horizon divisor): fejer-bgd's case takes ~150
#: oracle calls a round (4 ms a round in Python), so a tenth of the horizon
CASES = (
    ("so-bgd ball, theory", "so-bgd", "BCO-Ball-v0", {}, 1),
    ("so-bgd simplex, theory", "so-bgd", "BCO-Simplex-v0", {}, 1),
    ("so-bgd ball, steps", "so-bgd", "BCO-Ball-v0", {"step_size": 0.05}, 1),
    ("so-bgd simplex, steps", "so-bgd", "BCO-Simplex-v0", {"step_size": 0.05}, 1),
    ("fejer-bgd simplex, steps", "fejer-bgd", "BCO-Simplex-v0", {"step_size": 0.05}, 10),
)


def player(agent: str, env_id: str, options: dict, seeds: int, horizon: int, kernel: bool):
    """A call playing the case with the kernel or the Python loop; returns the results."""

    def play():
        kernels.AGENT_MIN_RUN_ROUNDS = 0 if kernel else 2**62
        common = {"horizon": horizon, "env_kwargs": {"n": DIM}, "agent_kwargs": options}
        if seeds == 1:
            return [run(env_id, agent, seed=0, **common)]
        return run_many(env_id, agent, list(range(seeds)), **common)

    return play


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--horizon", type=int, default=2000)
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    warnings.simplefilter("ignore", UserWarning)  # theory constants capped at this horizon
    player("so-bgd", "BCO-Ball-v0", {}, 2, 50, True)()  # numba: import, load or compile
    rows = []
    for label, agent, env_id, options, divisor in CASES:
        for seeds in (1, args.seeds):
            horizon = args.horizon * (5 if seeds == 1 else 1) // divisor
            calls = {
                "kernel": player(agent, env_id, options, seeds, horizon, True),
                "python": player(agent, env_id, options, seeds, horizon, False),
            }
            timings = interleaved(calls, args.repeats)
            a, b = timings.results["kernel"], timings.results["python"]
            same = all(x.same_outcome(y) and x.stats == y.stats for x, y in zip(a, b, strict=True))
            if not same:
                raise SystemExit(f"{label}: the kernel and the Python loop disagree")
            per = 1e6 / (horizon * seeds)
            calls_per_round = a[0].stats["separation_calls"] / horizon
            name = f"{label}, S = {seeds}, T = {horizon} ({calls_per_round:.2f} calls/round)"
            kernel_us, python_us = timings.spread("kernel"), timings.spread("python")
            ratio = timings.ratio("python", "kernel")
            rows.append(
                Row.measured(
                    "successors",
                    name,
                    ratio,
                    "x",
                    timings.load,
                    detail={
                        "kernel_us_per_round_row": kernel_us.scaled(per),
                        "python_us_per_round_row": python_us.scaled(per),
                        "seconds": timings.seconds,
                    },
                )
            )
            print(
                f"{name}: kernel {kernel_us.scaled(per)} µs, Python loop "
                f"{python_us.scaled(per)} µs per round per row; ratio {ratio} x; "
                f"{timings.load}",
                flush=True,
            )
    print()
    print(table(rows))
    print(f"\nwritten: {write_json('bench_successors', rows)}")


if __name__ == "__main__":
    main()
