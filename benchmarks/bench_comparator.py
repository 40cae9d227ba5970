"""Offline comparator cost: min over K of sum_{t<T} f_t(x) for each loss family.

Prints, per family, the wall time of one comparator call for the whole horizon and
for 40 log-spaced prefixes (what the runner asks for), with the certified gap.
Issue 3's target: T = 10^6 well under a second where sufficient statistics exist
(linear: one LMO on the summed vectors; quadratic: one aggregated solve).

    python benchmarks/bench_comparator.py [--horizon 1000000] [--n 10]
"""

import argparse
import time

import numpy as np

from bco_gym.losses import make_losses
from bco_gym.sets import FlowPolytope, NuclearNormBall, Simplex

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--horizon", type=float, default=1e6, help="T, the prefix length")
parser.add_argument("--n", type=int, default=10, help="dimension of the simplex")
args = parser.parse_args()
horizon = int(args.horizon)
checkpoints = sorted({int(v) for v in np.geomspace(1, horizon, 40)})

simplex = Simplex(args.n)
cases = [
    ("linear", simplex),
    ("quadratic", simplex),
    ("regression", simplex),
    ("portfolio", simplex),
    ("absolute", simplex),
    ("completion", NuclearNormBall(10, 10, 1.0)),
    ("edge-costs", FlowPolytope.grid(5, 5)),
]
print(f"comparator time at T = {horizon:,} (one call; then 40 log-spaced prefixes)")
print(f"{'family':<12} {'set':<44} {'full T (s)':>10} {'40 prefixes (s)':>16} {'gap':>9}")
for family, convex_set in cases:
    losses = make_losses(family, convex_set)
    losses.reset(np.random.default_rng(0))
    start = time.perf_counter()
    (full,) = losses.comparator([horizon])
    middle = time.perf_counter()
    losses.comparator(checkpoints)
    end = time.perf_counter()
    print(
        f"{family:<12} {convex_set!r:<44} {middle - start:>10.2f} {end - middle:>16.2f} "
        f"{full.gap:>9.1e}"
    )
