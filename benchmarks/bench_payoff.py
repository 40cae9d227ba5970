"""3. The projection-free payoff: BBCG, BFW and FKM on two large structured problems.

* online matrix completion: ``BCO-NuclearBall-v0``, 200 x 200 (d = 40,000), the
  ``completion`` loss (one noisy entry of a rank-2 target per round);
* online shortest paths: ``BCO-ShortestPath-v0`` on the 30 x 30 grid DAG (1,740 edges,
  d = 841), the ``edge-costs`` loss.

Each agent runs through ``bco_gym.experiment.run`` with its default loop (BBCG: the
block fast path; BFW and FKM: the lean per-round loop) for the same T, seed 0. The three
agents take turns for ``--repeats`` rounds (``common.interleaved``); the per-round cost
is the CPU time of the whole call minus that of its comparator (timed on its own),
divided by T: it includes the env's feasibility check of every play and the loss. The
cost ratio is the median [min, max] of the per-repeat ratios, beside the load average;
the run's own loop time (``agent_seconds + env_seconds``, wall clock) is in the JSON.
Regrets are of seeds 0 .. ``--seeds`` - 1 (seed 0 from the timed runs).

Constants. Theorem 1's smoothing radius c T^(-1/4) exceeds the inner radius r on both
problems at any practical T (d is large), where it is capped at r: then K_delta = {c},
FKM's projection is trivial and there is nothing to measure. So every agent gets
delta = r/2. The scale c (the one free constant of each agent, the same value for all
three) is set so that the theorem's step size uses the instance's loss scale instead of
the worst-case bound M: c = M delta T^(1/4) / f_bar, with f_bar the mean |f_t| at the
centre over 256 rounds. (With the worst-case M the matrix-completion iterates would not
leave the centre in T rounds: its losses are ~1e-5 M.)

Targets: FKM's per-round cost >= 10x BBCG's, with BBCG's regret <= 2x FKM's.

Run:  python benchmarks/bench_payoff.py [--horizon 2000] [--seeds 1] [--repeats 2]
"""

from __future__ import annotations

import argparse
from functools import partial

from common import Row, cpu_seconds, interleaved, pin_blas_threads, table, verdict, write_json

pin_blas_threads()

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import bco_gym  # noqa: E402, F401
from bco_gym.experiment import run  # noqa: E402

PROBLEMS = {
    "matrix completion 200x200": ("BCO-NuclearBall-v0", {"rows": 200, "cols": 200}),
    "shortest paths 30x30 grid": ("BCO-ShortestPath-v0", {"grid": 30}),
}
AGENTS = ("bbcg", "bfw", "fkm")
HORIZON = 2000


def constants(env_id: str, size: dict, horizon: int) -> dict:
    """delta = r/2 and the shared scale c (module docstring), from a separate seed."""
    env = gym.make(env_id, horizon=horizon, **size)
    env.reset(seed=10_000)
    convex_set, losses = env.unwrapped.set, env.unwrapped.losses
    delta = convex_set.inner_radius / 2
    centre = np.broadcast_to(convex_set.center, (256, *convex_set.shape))
    typical = float(np.abs(losses.losses(0, centre)).mean())
    return {"smoothing_radius": delta, "c": losses.bound * delta * horizon**0.25 / typical}


def comparator_cpu(env_id: str, size: dict, horizon: int, seed: int) -> float:
    env = gym.make(env_id, horizon=horizon, **size)
    env.reset(seed=seed)
    seconds, _, _ = cpu_seconds(lambda: env.unwrapped.losses.comparator([horizon]))
    return seconds


def _play(env_id: str, size: dict, overrides: dict, horizon: int, agent: str, seed: int = 0):
    return partial(
        run,
        env_id,
        agent,
        horizon=horizon,
        seed=seed,
        env_kwargs=size,
        agent_kwargs=overrides,
        checkpoints=[horizon],
    )


def measure(horizon: int = HORIZON, seeds: int = 1, repeats: int = 2) -> tuple[list[Row], dict]:
    rows, raw = [], {}
    for label, (env_id, size) in PROBLEMS.items():
        overrides = constants(env_id, size, horizon)

        play = partial(_play, env_id, size, overrides, horizon)

        timings = interleaved({agent: play(agent) for agent in AGENTS}, repeats)
        comparator = comparator_cpu(env_id, size, horizon, 0)
        per_agent: dict[str, dict] = {}
        for agent in AGENTS:
            first = timings.results[agent]
            others = [play(agent, seed)() for seed in range(1, seeds)]
            regrets = [result.final_regret for result in (first, *others)]
            per_agent[agent] = {
                "cpu_ms_per_round": str(
                    timings.spread(agent, minus=comparator).scaled(1e3 / horizon)
                ),
                "loop_wall_ms_per_round": 1e3 * (first.agent_seconds + first.env_seconds) / horizon,
                "cpu_s": timings.seconds[agent],
                "mean_regret": float(np.mean(regrets)),
                "regrets": regrets,
                "loop": first.loop,
                "lmo_calls_per_round": first.lmo_calls / horizon,
                "projections_per_round": first.projections / horizon,
            }
        raw[label] = {
            "env_id": env_id,
            "size": size,
            "horizon": horizon,
            "seeds": seeds,
            "repeats": repeats,
            "comparator_cpu_s": comparator,
            "constants": overrides,
            "agents": per_agent,
        }
        speed = timings.ratio("fkm", "bbcg", minus=(comparator, comparator))
        regret_ratio = per_agent["bbcg"]["mean_regret"] / per_agent["fkm"]["mean_regret"]
        rows.append(
            Row.measured(
                "3 payoff",
                f"FKM / BBCG per-round cost ({label})",
                speed,
                "x",
                timings.load,
                ">= 10",
                verdict(speed.median, at_least=10.0),
                raw[label],
            )
        )
        rows.append(
            Row(
                "3 payoff",
                f"BBCG / FKM regret ({label}, {seeds} seed{'s' if seeds > 1 else ''})",
                regret_ratio,
                "x",
                "<= 2",
                verdict(regret_ratio, at_most=2.0),
                raw[label],
            )
        )
    return rows, raw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=HORIZON)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=2, help="interleaved repeats")
    args = parser.parse_args()
    rows, raw = measure(args.horizon, args.seeds, args.repeats)
    print(table(rows))
    for label, values in raw.items():
        for agent, figures in values["agents"].items():
            print(
                f"{label}: {agent:<5} {figures['cpu_ms_per_round']} CPU ms/round "
                f"(loop, wall: {figures['loop_wall_ms_per_round']:.3f}) "
                f"({figures['loop']} loop), regret {figures['mean_regret']:.4g}"
            )
    write_json("payoff", rows)


if __name__ == "__main__":
    main()
