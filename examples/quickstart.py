"""Quick start: the Gymnasium loop by hand, BBCG on the probability simplex.

Plays Block Bandit Conditional Gradient (Garber & Kretzu 2020) against an oblivious
sequence of linear losses on the simplex in R^10, seeing only the scalar loss of each
point it plays, and prints its regret against the best fixed point in hindsight.
Then it asks the experiment runner for the same run: same seeds, same numbers.

    python examples/quickstart.py --horizon 100000
"""

import argparse

import gymnasium as gym

import bco_gym  # noqa: F401  (registers the BCO-*-v0 ids)
from bco_gym.agents import make_agent
from bco_gym.experiment import agent_seed_for, run
from bco_gym.wrappers import RegretRecorder

parser = argparse.ArgumentParser(description="BBCG on BCO-Simplex-v0, the loop by hand.")
parser.add_argument("--horizon", type=int, default=20_000, help="T, the number of rounds")
parser.add_argument("--seed", type=int, default=0, help="seed of the adversary (the env)")
args = parser.parse_args()

# The env publishes the problem (set, T, G, M); the recorder keeps the per-round losses.
env = RegretRecorder(gym.make("BCO-Simplex-v0", horizon=args.horizon))
agent = make_agent("bbcg", env)  # Theorem 1's parameters for this problem
print(f"{env.unwrapped.problem.set!r}, T={args.horizon}: {agent!r}")

# The agent's randomness is a stream independent of the env's (see agent_seed_for).
observation, info = env.reset(seed=args.seed)
agent.reset(seed=agent_seed_for(args.seed))
done = False
while not done:
    action = agent.act(observation)
    observation, reward, terminated, truncated, info = env.step(action)  # reward = -loss
    agent.update(info["loss"], info)
    done = terminated or truncated

scaled = info["regret"] / args.horizon**0.75
print(
    f"regret {info['regret']:.2f} (regret/T^(3/4) = {scaled:.3f}), "
    f"best fixed loss {info['comparator_loss']:.2f}, LMO calls {agent.stats['lmo_calls']}"
)

# The runner plays exactly this loop and adds timings, checkpoints and metadata.
result = run("BCO-Simplex-v0", "bbcg", horizon=args.horizon, seed=args.seed)
print(f"runner: regret {result.final_regret:.2f}, {result.rounds_per_second:,.0f} rounds/s")
assert abs(result.final_regret - info["regret"]) <= 1e-9 * max(1.0, abs(info["regret"]))
