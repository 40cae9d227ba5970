"""Your own agent, scored beside the library's: a 40-line bandit learner against BBCG and FKM.

``EstimatedLeader`` follows the leader of its own one-point gradient estimates: it plays
the LMO's answer for the summed estimates, pulled towards the centre of K so that a
sphere of exploration around it stays inside K, and learns from the loss at a random
point of that sphere (the estimator of Flaxman, Kalai & McMahan 2005). It is a
subclass of :class:`bco_gym.agents.Agent` with the three hooks ``_reset``, ``_act`` and
``_update``; nothing else is needed for ``run``, ``run_many``, sweeps and the CLI
(``PYTHONPATH=examples bco-gym compare --agents your_own_agent:EstimatedLeader,bbcg,fkm``).

The script plays it, BBCG and FKM on the same seeds (``run_many``: each seed's losses are
the same for the three), then prints the paired table against each reference: the mean
final regret difference with its 95% interval over seeds, and on how many seeds the
new agent did better. docs/your_own_agent.md explains each piece.

What the default run shows (ball n = 10, T = 20,000, seeds 0-7; 6 s of CPU): on these
i.i.d. linear losses following the estimated leader pays off. Its final regret is
3,352 [2,939, 3,764], against BBCG's 4,761 and FKM's 5,420; minus BBCG -1,409
[-1,819, -999] and minus FKM -2,069 [-2,425, -1,712], better on 8/8 seeds each. With
``--loss linear-adversarial`` (the follow-the-leader trap) it is still ahead at this
horizon (minus BBCG -507 [-778, -236], 7/8 seeds): its noisy estimates keep it from
following the alternating signs. It has no regret guarantee (``regret_exponent`` is
left undeclared), so ``bco-gym exponents`` shows its fitted slope only.

    python examples/your_own_agent.py
    python examples/your_own_agent.py --horizon 100000 --seeds 16
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

import bco_gym  # noqa: F401  (registers the BCO-*-v0 ids)
from bco_gym.agents import Agent


class EstimatedLeader(Agent):
    """Follow the leader on one-point gradient estimates, exploring a shrinking sphere.

    x_t = c + (1 - delta/r) (lmo(sum_{s<t} g_s) - c); play y_t = x_t + delta u_t, u_t
    uniform on the unit sphere of aff(K) - c (dimension d); g_t = (d / delta) f_t(y_t) u_t;
    delta = c_delta r T^(-1/4).
    """

    name = "leader"
    SCALE_PARAM = "c_delta"  # the one constant `bco-gym tune` searches
    THEORY_DEFAULTS = False  # a guess, not a theorem: results say "default"

    def __init__(self, problem: Any, c_delta: float = 1.0):
        super().__init__(problem)
        if not 0 < c_delta <= problem.horizon**0.25:
            raise ValueError(f"c_delta={c_delta!r} must be in (0, T^(1/4)] (delta <= r)")
        delta = c_delta * self.set.inner_radius * problem.horizon**-0.25
        self.params = {"c_delta": float(c_delta), "delta": float(delta)}

    def _reset(self) -> None:
        self.estimates = np.zeros(self.set.shape)

    def _act(self) -> np.ndarray:
        center, delta = self.set.center, self.params["delta"]
        leader = self.set.lmo(self.estimates) if self._round else center
        self.stats["lmo_calls"] += bool(self._round)
        direction = self.set.tangent(self.rng.standard_normal(self.set.shape))  # in aff(K)
        self.direction = direction / np.linalg.norm(direction)
        shrink = 1.0 - delta / self.set.inner_radius
        return center + shrink * (leader - center) + delta * self.direction

    def _update(self, loss: float, info: Any) -> None:
        self.estimates += (self.set.aff_dim / self.params["delta"]) * loss * self.direction


def main() -> None:
    from bco_gym.experiment import paired_table, run_many

    parser = argparse.ArgumentParser(description="A new agent against BBCG and FKM.")
    parser.add_argument("--env", default="BCO-Ball-v0", help="a BCO env id")
    parser.add_argument("--horizon", type=int, default=20_000, help="T, the number of rounds")
    parser.add_argument("--seeds", type=int, default=8, help="seeds 0..K-1, shared by all")
    parser.add_argument("--loss", default=None, help="the env's loss family (default its own)")
    args = parser.parse_args()
    env_kwargs = {} if args.loss is None else {"loss": args.loss}

    seeds = list(range(args.seeds))
    results = []
    for agent in (EstimatedLeader, "bbcg", "fkm"):  # a class, or any name/import path
        results += run_many(args.env, agent, seeds, horizon=args.horizon, env_kwargs=env_kwargs)
    family = results[0].loss["name"]
    print(f"{args.env}, {family} losses, T = {args.horizon}, seeds {seeds[0]}..{seeds[-1]}")
    for reference in ("bbcg", "fkm"):
        print(f"\nfinal regret, and minus {reference} on the same seeds (95% intervals)")
        for row in paired_table(results, reference=reference):
            regret = f"{row.regret_mean:9.1f} [{row.regret_low:.1f}, {row.regret_high:.1f}]"
            line = f"{row.label:>28}  {regret}"
            if row.difference_mean is not None:
                line += (
                    f"  {row.difference_mean:+9.1f} [{row.difference_low:+.1f}, "
                    f"{row.difference_high:+.1f}]  better on {row.wins}/{row.pairs} seeds"
                )
            print(line)


if __name__ == "__main__":
    main()
