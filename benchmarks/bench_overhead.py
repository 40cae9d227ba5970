"""1. Loop overhead: BBCG through gym.make + RegretRecorder versus the env's own floor.

Both loops step ``RegretRecorder(gym.make("BCO-Simplex-v0", n=10))`` for T rounds from
the same seed: one with BBCG's act/update around each step (the DESIGN.md loop), the
other with one constant action (the centre), which is the floor any agent pays for the
env, its checks, the loss and the recorder. The ratio of their CPU times per round is
what BBCG adds. T is past the horizon (~6,600) below which Theorem 1's smoothing radius
is capped at the inner radius.

Target: BBCG per round <= 3x the floor.

Run:  python benchmarks/bench_overhead.py [--horizon 20000]
"""

from __future__ import annotations

import argparse

from common import Row, interleaved_best, pin_blas_threads, table, verdict, write_json

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


def measure(horizon: int = HORIZON, repeats: int = 3) -> tuple[list[Row], dict]:
    best, results = interleaved_best(
        {"floor": constant_loop(horizon), "bbcg": agent_loop(horizon)}, repeats
    )
    floor_seconds, agent_seconds, regret = best["floor"], best["bbcg"], results["bbcg"]
    ratio = agent_seconds / floor_seconds
    raw = {
        "horizon": horizon,
        "floor_us_per_round": 1e6 * floor_seconds / horizon,
        "bbcg_us_per_round": 1e6 * agent_seconds / horizon,
        "floor_rounds_per_second": horizon / floor_seconds,
        "bbcg_rounds_per_second": horizon / agent_seconds,
        "bbcg_regret": regret,
    }
    row = Row(
        "1 overhead",
        "BBCG gym loop / constant-action floor (simplex n=10)",
        ratio,
        "x",
        "<= 3",
        verdict(ratio, at_most=3.0),
        raw,
    )
    return [row], raw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=HORIZON)
    args = parser.parse_args()
    rows, raw = measure(args.horizon)
    print(table(rows))
    print(
        f"floor {raw['floor_us_per_round']:.1f} us/round ({raw['floor_rounds_per_second']:,.0f} "
        f"rounds/s); BBCG {raw['bbcg_us_per_round']:.1f} us/round"
    )
    write_json("overhead", rows)


if __name__ == "__main__":
    main()
