"""Your own losses: a cost stream from a file, and convex losses given as functions.

Part 1, ``from_array``: a linear cost per round, f_t(x) = <theta_t, x> + b_t, read from an
array on disk (a ``numpy.memmap``: never loaded whole). Here: routing traffic over n
servers, x the share sent to each (a point of the simplex), theta_t the servers' costs
per unit on day t, which follow a daily cycle plus noise, and b_t a fixed overhead. The
comparator (the best fixed split in hindsight) is exact: one LMO on the summed costs.

Part 2, ``from_function``: online logistic regression with the weights constrained to an
ellipsoid, a set the library does not know, written here through its LMO only. Round t
shows a labelled example (a_t, y_t); f_t(w) = log(1 + exp(-y_t <a_t, w>)). The loss and
its gradient are given as batched callables (``batched=True``: they take an array of
rounds and an array of points, one point per round), with G and M stated (and checked
by the library on every value it computes). The comparator is a certified Frank-Wolfe
on the sum of the losses, using only the ellipsoid's LMO; its gap is printed.

In both parts ``BanditConvexEnv(convex_set, losses)`` takes the horizon from the losses.

    python examples/your_own_losses.py --horizon 20000 --servers 8 --features 5
"""

import argparse
import math
import tempfile
from pathlib import Path

import numpy as np

from bco_gym.agents import make_agent
from bco_gym.envs import BanditConvexEnv
from bco_gym.experiment import run
from bco_gym.losses import from_array, from_function
from bco_gym.sets import ConvexSet, Simplex

parser = argparse.ArgumentParser(description="Run agents on losses you bring yourself.")
parser.add_argument("--horizon", type=int, default=20_000, help="T, rounds in each part")
parser.add_argument("--servers", type=int, default=8, help="n, servers to split traffic over")
parser.add_argument("--features", type=int, default=5, help="dimension of the examples (part 2)")
parser.add_argument("--seed", type=int, default=0, help="seed of the data and of the agents")
args = parser.parse_args()
rng = np.random.default_rng(args.seed)


def report(label: str, env: BanditConvexEnv, agents: tuple[str, ...]) -> None:
    """Regret of each agent on ``env`` (same seed, so the same losses)."""
    for name in agents:
        result = run(env, make_agent(name, env), seed=args.seed)
        print(
            f"  {name:>6}: regret {result.final_regret:10.2f}  "
            f"(best fixed action {result.comparator_loss[-1]:.2f}, gap {result.final_gap:.1e}, "
            f"LMO calls {result.lmo_calls}, projections {result.projections})"
        )
    print(f"  {label}: G = {env.problem.lipschitz:.3f}, M = {env.problem.bound:.3f}")


# -- Part 1: linear costs from a file ---------------------------------------------------------
servers = Simplex(args.servers)
days = np.arange(args.horizon)[:, np.newaxis]
phases = rng.uniform(0, 2 * np.pi, args.servers)
base_cost = rng.uniform(0.3, 0.7, args.servers)  # one server is cheapest on average
costs = base_cost + 0.3 * np.sin(2 * np.pi * days / 24 + phases)
costs += 0.1 * rng.standard_normal((args.horizon, args.servers))

with tempfile.TemporaryDirectory() as directory:
    path = Path(directory) / "costs.npy"
    np.save(path, costs)
    thetas = np.load(path, mmap_mode="r")  # a memmap: read chunk by chunk
    overhead = np.full(args.horizon, 0.05)
    losses = from_array(servers, thetas, overhead)
    env = BanditConvexEnv(servers, losses)  # horizon: len(thetas)
    print(f"from_array on {servers!r}, T = {env.horizon}:")
    report("cost per unit of traffic", env, ("bbcg", "fkm", "random"))
    del thetas, losses, env  # release the memmap before the directory goes


# -- Part 2: convex losses as functions, on a user-defined set ---------------------------------
class Ellipsoid(ConvexSet):
    """{w : sum_i (w_i / a_i)^2 <= 1}; LMO(g) = -A^2 g / ||A g|| with A = diag(a); no projection."""

    def __init__(self, axes: np.ndarray):
        self.axes = np.asarray(axes, dtype=float)
        self.shape = self.axes.shape

    def __repr__(self) -> str:
        return f"Ellipsoid(axes={np.round(self.axes, 2).tolist()})"

    aff_dim = property(lambda self: self.axes.size)  # full-dimensional
    center = property(lambda self: np.zeros(self.shape))
    inner_radius = property(lambda self: float(self.axes.min()))
    outer_radius = property(lambda self: float(self.axes.max()))

    def tangent(self, v: np.ndarray) -> np.ndarray:
        return np.asarray(v, dtype=float)

    def lmo(self, direction: np.ndarray) -> np.ndarray:
        scaled = self.axes * np.asarray(direction, dtype=float)
        norm = np.linalg.norm(scaled)
        return np.zeros(self.shape) if norm == 0 else -self.axes * scaled / norm

    def contains(self, x: np.ndarray, atol: float = 1e-9) -> bool:
        x = np.asarray(x, dtype=float)
        return x.shape == self.shape and float(np.sum((x / self.axes) ** 2)) <= 1 + atol


ellipsoid = Ellipsoid(np.linspace(0.5, 2.0, args.features))
true_weights = ellipsoid.lmo(rng.standard_normal(args.features)) * 0.8
examples = rng.standard_normal((args.horizon, args.features))
examples /= np.maximum(1.0, np.linalg.norm(examples, axis=1, keepdims=True))  # ||a_t|| <= 1
labels = np.where(
    rng.uniform(size=args.horizon) < 1 / (1 + np.exp(-examples @ true_weights)), 1, -1
)
margins_factor = labels[:, np.newaxis] * examples  # y_t a_t


def logistic_loss(rounds: np.ndarray, points: np.ndarray) -> np.ndarray:
    """f_t(w) = log(1 + exp(-y_t <a_t, w>)) for each (round, point) pair."""
    return np.logaddexp(0.0, -np.sum(margins_factor[rounds] * points, axis=1))


def logistic_gradient(rounds: np.ndarray, points: np.ndarray) -> np.ndarray:
    """-y_t a_t sigma(-y_t <a_t, w>)."""
    margins = np.sum(margins_factor[rounds] * points, axis=1, keepdims=True)
    return -margins_factor[rounds] / (1.0 + np.exp(margins))


# ||gradient|| <= ||a_t|| <= 1, and |<a_t, w>| <= ||a_t|| R, so |f_t| <= log(1 + e^R)
outer = ellipsoid.outer_radius
losses = from_function(
    ellipsoid,
    logistic_loss,
    logistic_gradient,
    horizon=args.horizon,
    lipschitz=1.0,
    bound=math.log1p(math.exp(outer)),
    batched=True,
)
env = BanditConvexEnv(ellipsoid, losses)
print(f"from_function on {ellipsoid!r} (a user-defined set), T = {env.horizon}:")
report("logistic loss", env, ("bbcg", "bfw", "random"))  # no projection: no fkm
