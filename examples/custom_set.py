"""A user-defined feasible set known only through its LMO: the permutahedron.

The permutahedron P_n is the convex hull of the n! permutations of (1, 2, ..., n).
Projecting onto it is a nontrivial isotonic-regression problem, but its linear
minimization oracle is a sort: <g, x> is minimal when the largest value n sits on the
smallest g_i (rearrangement inequality). That is all a projection-free agent needs.

Geometry (what the ConvexSet contract asks for):
  * aff(P_n) = {x : sum x = n(n+1)/2}, so V = {v : sum v = 0}, d = n - 1 and
    tangent(v) = v - mean(v);
  * centre c = (n+1)/2 (1, ..., 1);
  * facets {sum_{i in S} x_i >= k(k+1)/2}, |S| = k (Rado): their distance to c is
    sqrt(n k (n-k))/2, smallest at k = 1, so r = sqrt(n(n-1))/2;
  * R = ||(1..n) - c|| = sqrt(n(n^2-1)/12) (every vertex is a permutation of it);
  * x in P_n iff sum x = n(n+1)/2 and, sorted decreasingly, every prefix sum is at most
    that of (n, n-1, ..., 1) (majorization).

    python examples/custom_set.py --n 8 --horizon 20000
"""

import argparse
import math

import numpy as np

from bco_gym.agents import make_agent
from bco_gym.envs import BanditConvexEnv
from bco_gym.experiment import run
from bco_gym.sets import ConvexSet


class Permutahedron(ConvexSet):
    """conv{permutations of (1, ..., n)}; LMO by sorting, O(n log n); no projection."""

    def __init__(self, n: int):
        self.n = n
        self.shape = (n,)
        self._values = np.arange(n, 0, -1, dtype=float)  # n, n-1, ..., 1

    def __repr__(self) -> str:
        return f"Permutahedron(n={self.n})"

    @property
    def aff_dim(self) -> int:
        return self.n - 1

    @property
    def center(self) -> np.ndarray:
        return np.full(self.n, (self.n + 1) / 2)

    @property
    def inner_radius(self) -> float:
        return math.sqrt(self.n * (self.n - 1)) / 2

    @property
    def outer_radius(self) -> float:
        return math.sqrt(self.n * (self.n**2 - 1) / 12)

    def tangent(self, v: np.ndarray) -> np.ndarray:
        v = np.asarray(v, dtype=float)
        return v - v.mean()

    def lmo(self, direction: np.ndarray) -> np.ndarray:
        vertex = np.empty(self.n)
        vertex[np.argsort(direction, kind="stable")] = self._values
        return vertex

    def contains(self, x: np.ndarray, atol: float = 1e-9) -> bool:
        x = np.asarray(x, dtype=float)
        if x.shape != self.shape or not np.all(np.isfinite(x)):
            return False
        prefix = np.cumsum(np.sort(x)[::-1])
        bound = np.cumsum(self._values)
        return abs(prefix[-1] - bound[-1]) <= atol * self.n and bool(
            np.all(prefix <= bound + atol * np.arange(1, self.n + 1))
        )


parser = argparse.ArgumentParser(description="BBCG and BFW on a user-defined set.")
parser.add_argument("--n", type=int, default=6, help="dimension of the permutahedron")
parser.add_argument("--horizon", type=int, default=20_000, help="T, the number of rounds")
parser.add_argument("--seed", type=int, default=0, help="seed of the adversary")
args = parser.parse_args()

permutahedron = Permutahedron(args.n)
print(
    f"{permutahedron!r}: d={permutahedron.aff_dim}, r={permutahedron.inner_radius:.3f}, "
    f"R={permutahedron.outer_radius:.3f}, has_projection={permutahedron.has_projection}"
)
for name in ("bbcg", "bfw", "random"):
    env = BanditConvexEnv(permutahedron, "linear", args.horizon)  # rejects infeasible plays
    result = run(env, make_agent(name, env), seed=args.seed)
    print(
        f"{name:>6}: regret {result.final_regret:10.2f}  "
        f"regret/T^(3/4) {result.final_regret / args.horizon**0.75:7.3f}  "
        f"LMO calls/round {result.lmo_calls / args.horizon:.3f}"
    )
