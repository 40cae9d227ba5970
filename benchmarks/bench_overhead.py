"""1. Loop overhead: BBCG through gym.make + RegretRecorder versus the env's own floor.

Both loops step ``RegretRecorder(gym.make("BCO-Simplex-v0", n=10))`` for T rounds from
the same seed: one with BBCG's act/update around each step (the DESIGN.md loop), the
other with one constant action (the centre), which is the floor any agent pays for the
env, its checks, the loss and the recorder. The ratio of their CPU times per round is
what BBCG adds. T is past the horizon (~6,600) below which Theorem 1's smoothing radius
is capped at the inner radius.

Target: BBCG per round <= 3x the floor. The two loops take turns for ``--repeats``
rounds; the figure is the median [min, max] of the per-repeat ratios, with the load
average (``common.interleaved``).

Run:  python benchmarks/bench_overhead.py [--horizon 20000] [--repeats 5]
"""

from __future__ import annotations

import argparse

from common import Row, interleaved, pin_blas_threads, table, verdict, write_json

pin_blas_threads()

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import bco_gym  # noqa: E402, F401
from bco_gym.agents import make_agent  # noqa: E402
from bco_gym.wrappers import RegretRecorder  # noqa: E402

HORIZON = 20_000
SEED = 0


def make_env(horizon: int) -> gym.Env:
    return RegretRecorder(gym.make("BCO-Simplex-v0", n=10, horizon=horizon))


def agent_loop(horizon: int):
    env = make_env(horizon)
    agent = make_agent("bbcg", env)

    def play() -> float:
        observation, info = env.reset(seed=SEED)
        agent.reset(seed=SEED + 1)
        done = False
        while not done:
            action = agent.act(observation)
            observation, _, terminated, truncated, info = env.step(action)
            agent.update(info["loss"], info)
            done = terminated or truncated
        return info["regret"]

    return play


def constant_loop(horizon: int):
    env = make_env(horizon)
    action = np.array(env.unwrapped.set.center)

    def play() -> float:
        env.reset(seed=SEED)
        done = False
        while not done:
            _, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        return info["regret"]

    return play


def measure(horizon: int = HORIZON, repeats: int = 5) -> tuple[list[Row], dict]:
    timings = interleaved({"floor": constant_loop(horizon), "bbcg": agent_loop(horizon)}, repeats)
    ratio = timings.ratio("bbcg", "floor")
    raw = {
        "horizon": horizon,
        "repeats": repeats,
        "floor_us_per_round": str(timings.spread("floor").scaled(1e6 / horizon)),
        "bbcg_us_per_round": str(timings.spread("bbcg").scaled(1e6 / horizon)),
        "floor_cpu_s": timings.seconds["floor"],
        "bbcg_cpu_s": timings.seconds["bbcg"],
        "bbcg_regret": timings.results["bbcg"],
    }
    row = Row.measured(
        "1 overhead",
        "BBCG gym loop / constant-action floor (simplex n=10)",
        ratio,
        "x",
        timings.load,
        "<= 3",
        verdict(ratio.median, at_most=3.0),
        raw,
    )
    return [row], raw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=HORIZON)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rows, raw = measure(args.horizon, args.repeats)
    print(table(rows))
    print(f"floor {raw['floor_us_per_round']} us/round; BBCG {raw['bbcg_us_per_round']} us/round")
    write_json("overhead", rows)


if __name__ == "__main__":
    main()
