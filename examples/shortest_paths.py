"""Online shortest paths: routing on a grid DAG with bandit feedback on the path length.

Each round the learner picks a (fractional) unit flow from the top-left to the
bottom-right corner of a grid x grid DAG whose edges point right or down, i.e. a point
of the flow polytope, whose vertices are the monotone paths. It sees only the total
cost of its flow, never the edge costs. The LMO is a shortest-path computation
(dynamic programming in topological order); projecting onto the polytope is a QP, so
projection-free agents have the cheap per-round step here.

    python examples/shortest_paths.py --grid 6 --horizon 50000
"""

import argparse

import gymnasium as gym
import numpy as np

import bco_gym  # noqa: F401  (registers the BCO-*-v0 ids)
from bco_gym.agents import make_agent
from bco_gym.experiment import run

parser = argparse.ArgumentParser(description="Online shortest paths on a grid DAG.")
parser.add_argument("--grid", type=int, default=5, help="the DAG is a grid x grid lattice")
parser.add_argument("--horizon", type=int, default=20_000, help="T, the number of rounds")
parser.add_argument("--seed", type=int, default=0, help="seed of the adversary")
parser.add_argument(
    "--agents",
    default="bbcg,bfw,random",
    help="comma-separated agents; fkm works too but projects with a QP solver",
)
args = parser.parse_args()

print(f"BCO-ShortestPath-v0, {args.grid}x{args.grid} grid, T={args.horizon}")
for name in args.agents.split(","):
    env = gym.make("BCO-ShortestPath-v0", grid=args.grid, horizon=args.horizon)
    result = run(env, make_agent(name, env), seed=args.seed)
    print(
        f"{name:>6}: regret {result.final_regret:10.2f}  "
        f"regret/T^(3/4) {result.final_regret / args.horizon**0.75:7.3f}  "
        f"LMO calls/round {result.lmo_calls / args.horizon:.3f}  "
        f"projections/round {result.projections / args.horizon:.3f}  "
        f"{result.rounds_per_second:,.0f} rounds/s"
    )

# The best fixed path in hindsight, read off the comparator's vertex (edge flows in {0, 1}).
polytope = env.unwrapped.problem.set
(best,) = env.unwrapped.losses.comparator([args.horizon])
moves, node = [], polytope.source
while node != polytope.sink:
    edge = next(
        e for e, (tail, _) in enumerate(polytope.edges) if tail == node and best.point[e] > 0.5
    )
    head = polytope.edges[edge][1]
    moves.append("R" if head[1] > node[1] else "D")
    node = head
print(
    f"best path in hindsight: {' '.join(moves)} (cost {best.value:.2f} over T rounds, "
    f"{int(np.sum(best.point > 0.5))} edges)"
)
