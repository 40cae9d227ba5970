"""Online matrix completion over the nuclear-norm ball.

A hidden low-rank matrix Y is observed one noisy entry per round; the learner plays a
matrix X of nuclear norm <= 1 and pays (X_ij - y_t)^2 / 2 for the revealed entry
(i, j), seeing only that number. The LMO of the nuclear ball is the top singular pair
of the direction (rank one), while projecting needs a full SVD: the case where
projection-free methods pay off as the matrices grow.

    python examples/matrix_completion.py --rows 20 --cols 20 --horizon 50000
"""

import argparse

import gymnasium as gym
import numpy as np

import bco_gym  # noqa: F401  (registers the BCO-*-v0 ids)
from bco_gym.agents import make_agent
from bco_gym.experiment import run

parser = argparse.ArgumentParser(description="Online matrix completion on the nuclear ball.")
parser.add_argument("--rows", type=int, default=10, help="rows of the matrices")
parser.add_argument("--cols", type=int, default=10, help="columns of the matrices")
parser.add_argument("--horizon", type=int, default=20_000, help="T, the number of rounds")
parser.add_argument("--seed", type=int, default=0, help="seed of the adversary")
parser.add_argument("--agents", default="bbcg,bfw,fkm,random", help="comma-separated agents")
args = parser.parse_args()

print(f"BCO-NuclearBall-v0, {args.rows}x{args.cols}, completion losses, T={args.horizon}")
for name in args.agents.split(","):
    env = gym.make("BCO-NuclearBall-v0", rows=args.rows, cols=args.cols, horizon=args.horizon)
    result = run(env, make_agent(name, env), seed=args.seed)
    print(
        f"{name:>6}: regret {result.final_regret:10.3f} (comparator gap "
        f"{result.final_gap:.1e})  LMO calls/round {result.lmo_calls / args.horizon:.3f}  "
        f"projections/round {result.projections / args.horizon:.3f}  "
        f"{result.rounds_per_second:,.0f} rounds/s"
    )

# How close is the best fixed matrix in hindsight to the hidden target?
(best,) = env.unwrapped.losses.comparator([args.horizon])
singular_values = np.linalg.svd(best.point, compute_uv=False)
print(
    f"best fixed matrix in hindsight: nuclear norm {singular_values.sum():.3f}, "
    f"leading singular values {np.round(singular_values[:4], 3).tolist()}"
)
