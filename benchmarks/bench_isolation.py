"""The cost of isolation: an agent in its own process against the same agent in-process.

``run_many(..., isolate=True)`` plays the agents of S seeds in one child process, one
message each way per round for all S seeds (:mod:`bco_gym.engine.isolation`). This script
plays the same run_many both ways, in turns (in-process, isolated, in-process, ...), and
prints per batch round the wall-clock time of the agent's part of the round (what the
result's ``agent_seconds`` counts: act and update in-process; in the isolated run the
message to the child, the child's act and update, and the answer back), the extra time
isolation adds per round, their ratio, and the child's start (a fresh interpreter that
imports bco_gym and builds the S agents), each as median [min, max] over the repeats with
the load average. Wall-clock, not CPU time: most of the cost is the two context switches
of a round trip, which a CPU clock of either process does not see, and on a loaded machine
the wait for the other process to be scheduled. Beside them, the CPU time of a batch round
as the results count it (``cpu_seconds``: this process's in the loop that played the
rounds, plus, isolated, the child's over the same rounds, read from /proc), which a busy
machine changes much less; the child's start is not in it. The two runs' results are checked
equal (``same_outcome``), so a change of floats would show.

Agents: ``user_agents:Jitter`` (a user's agent whose round costs microseconds: the
message dominates) and ``fkm`` on the 10-ball (a projection a round).

Run:  python benchmarks/bench_isolation.py [--horizon 5000] [--repeats 5] [--seeds 1,8]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from common import Load, Row, Spread, load_average, pin_blas_threads, table, write_json

pin_blas_threads()
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))

import bco_gym  # noqa: E402, F401
from bco_gym.engine.isolation import IsolatedAgents  # noqa: E402
from bco_gym.experiment import run_many  # noqa: E402

ENV = "BCO-Ball-v0"
ENV_KWARGS = {"n": 10}
AGENTS = ("user_agents:Jitter", "fkm")


def batch_round_us(results: list, horizon: int) -> float:
    """The agent's part of one batch round, µs (each row holds its 1/S share)."""
    return sum(result.agent_seconds for result in results) / horizon * 1e6


def child_start_seconds(agent: str, seeds: int) -> float:
    """Wall-clock seconds to start a child and build its S agents (then ended)."""
    import gymnasium as gym

    from bco_gym.agents import resolve_agent

    problem = gym.make(ENV, **ENV_KWARGS).unwrapped.problem
    start = time.perf_counter()
    rows = IsolatedAgents(resolve_agent(agent), problem, seeds)
    seconds = time.perf_counter() - start
    rows.close()
    return seconds


def batch_round_cpu_us(results: list, horizon: int) -> float:
    """CPU µs of one batch round (each row holds its 1/S share of the loop's CPU)."""
    return sum(result.cpu_seconds for result in results) / horizon * 1e6


def measure(agent: str, seeds: int, horizon: int, repeats: int) -> list[Row]:
    inside, alone, starts, cpu_inside, cpu_alone = [], [], [], [], []
    load_start = load_average()
    for _ in range(repeats):
        kwargs = {"horizon": horizon, "env_kwargs": ENV_KWARGS}
        ours = run_many(ENV, agent, list(range(seeds)), **kwargs)
        theirs = run_many(ENV, agent, list(range(seeds)), isolate=True, **kwargs)
        if not all(a.same_outcome(b) for a, b in zip(ours, theirs, strict=True)):
            raise AssertionError(f"{agent}: the isolated results differ from the in-process ones")
        inside.append(batch_round_us(ours, horizon))
        alone.append(batch_round_us(theirs, horizon))
        cpu_inside.append(batch_round_cpu_us(ours, horizon))
        cpu_alone.append(batch_round_cpu_us(theirs, horizon))
        starts.append(child_start_seconds(agent, seeds))
    load = Load(load_start, load_average())
    name = f"{agent}, S={seeds}, T={horizon}"
    extra = Spread.of(b - a for a, b in zip(inside, alone, strict=True))
    ratio = Spread.of(b / a for a, b in zip(inside, alone, strict=True))
    return [
        Row.measured("isolation", f"{name}: in-process", Spread.of(inside), "us/round", load),
        Row.measured("isolation", f"{name}: isolated", Spread.of(alone), "us/round", load),
        Row.measured("isolation", f"{name}: added by isolation", extra, "us/round", load),
        Row.measured("isolation", f"{name}: isolated / in-process", ratio, "x", load),
        Row.measured(
            "isolation", f"{name}: CPU in-process", Spread.of(cpu_inside), "us/round", load
        ),
        Row.measured("isolation", f"{name}: CPU isolated", Spread.of(cpu_alone), "us/round", load),
        Row.measured("isolation", f"{name}: child start", Spread.of(starts), "s", load),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--horizon", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seeds", default="1,8", help="batch sizes S, comma-separated")
    args = parser.parse_args()
    rows = [
        row
        for agent in AGENTS
        for seeds in (int(text) for text in args.seeds.split(","))
        for row in measure(agent, seeds, args.horizon, args.repeats)
    ]
    print(table(rows))
    write_json("isolation", rows)


if __name__ == "__main__":
    main()
