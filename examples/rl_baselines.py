"""General-purpose RL (stable-baselines3) against bandit convex optimization agents.

PPO, A2C and TD3 learn online over one episode of BCO-Simplex-v0, acting in the box
[-1, 1]^n mapped onto the simplex by a softmax (``bco_gym.wrappers.BoxActionAdapter``'s
map); BBCG, FKM and the uniform random agent play the same loss sequences (same env
seeds). Every run goes through ``bco_gym.experiment.run``, which measures the regret
against the best fixed point in hindsight. Prints a table (final regret, rounds per
second) and saves the regret curves.

Needs the ``rl`` and ``plot`` extras: pip install 'bco_gym[rl,plot]'.

    python examples/rl_baselines.py --horizon 2000 --seeds 0 1 2
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np
import torch

import bco_gym  # noqa: F401  (registers the env ids)
from bco_gym.agents import make_agent
from bco_gym.agents.sb3.agent import SB3_AGENTS
from bco_gym.experiment import run
from bco_gym.plotting import plot_regret

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--horizon", type=int, default=2000, help="rounds T of each episode")
parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="env seeds")
parser.add_argument("--n", type=int, default=10, help="dimension of the simplex")
parser.add_argument(
    "--agents",
    default="sb3-ppo,sb3-a2c,sb3-td3,bbcg,fkm,random",
    help="comma-separated agent names (sb3-* learn online during the episode)",
)
parser.add_argument("--figure", default="rl_baselines.png", help="where to save the figure")


def build_agent(name: str, env: gym.Env):
    """The agent ``name`` for ``env``'s problem, with its default hyperparameters."""
    if name in SB3_AGENTS:  # also reachable through make_agent once registered there
        return SB3_AGENTS[name](env.unwrapped.problem)
    return make_agent(name, env)


def main(argv: list[str] | None = None) -> dict[str, list]:
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # tiny networks: one thread is fastest, and bit-reproducible
    names = [name.strip() for name in args.agents.split(",") if name.strip()]
    results: dict[str, list] = {name: [] for name in names}
    for name in names:
        for seed in args.seeds:
            env = gym.make("BCO-Simplex-v0", n=args.n, horizon=args.horizon)
            # every agent runs with its default constants ("theory" in the results)
            agent = build_agent(name, env)
            results[name].append(run(env, agent, seed=seed, constants="theory"))

    print(f"BCO-Simplex-v0, n={args.n}, T={args.horizon}, seeds {args.seeds} (sb3-*: online)")
    print(f"{'agent':<10} {'final regret':>22} {'regret / T':>11} {'rounds/s':>10}")
    for name, runs in results.items():
        final = np.array([r.regret[-1] for r in runs])
        spread = final.std(ddof=1) if len(final) > 1 else 0.0
        speed = np.mean([r.rounds_per_second for r in runs])
        print(
            f"{name:<10} {final.mean():>12.2f} ± {spread:<7.2f} "
            f"{final.mean() / args.horizon:>11.4f} {speed:>10.0f}"
        )
    path = plot_regret([r for runs in results.values() for r in runs], args.figure)
    print(f"figure: {path}")
    return results


if __name__ == "__main__":
    main()
