"""LMO versus Euclidean projection, set by set, at realistic sizes, measured in one run.

For each set: the median wall time of one LMO call on independent standard normal
directions, of one LMO call on a slowly drifting direction g_k = g + 0.05 z_k (as the
summed gradient estimates of BBCG drift between blocks; this is where the nuclear ball's
ARPACK warm start helps), of one projection of a point c + 2R z/||z|| outside K, and the
ratio projection / LMO. Every call is also checked (answers in K) so the timings are of
correct work.

Run:  python benchmarks/bench_sets.py [--repeats 30]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from bco_gym.sets import (
    BirkhoffPolytope,
    ConvexSet,
    FlowPolytope,
    Hypercube,
    L1Ball,
    L2Ball,
    NuclearNormBall,
    Simplex,
)

SETS: list[tuple[str, Callable[[], ConvexSet]]] = [
    ("Simplex(1000)", lambda: Simplex(1000)),
    ("L2Ball(1000)", lambda: L2Ball(1000)),
    ("L1Ball(1000)", lambda: L1Ball(1000)),
    ("Hypercube(-1, 1, n=1000)", lambda: Hypercube(-1.0, 1.0, n=1000)),
    ("NuclearNormBall(200, 200)", lambda: NuclearNormBall(200, 200)),
    ("FlowPolytope.grid(30, 30)", lambda: FlowPolytope.grid(30, 30)),
    ("BirkhoffPolytope(50)", lambda: BirkhoffPolytope(50)),
]


def median_seconds(call: Callable[[np.ndarray], np.ndarray], inputs: list[np.ndarray]) -> float:
    times = []
    for value in inputs:
        start = time.perf_counter()
        call(value)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def measure(convex_set: ConvexSet, repeats: int, rng: np.random.Generator) -> dict[str, float]:
    shape, c = convex_set.shape, convex_set.center
    independent = [rng.standard_normal(shape) for _ in range(repeats)]
    base = rng.standard_normal(shape)
    drifting = [base + 0.05 * rng.standard_normal(shape) for _ in range(repeats)]
    outside = []
    for _ in range(max(repeats // 3, 5)):
        z = rng.standard_normal(shape)
        outside.append(c + 2.0 * convex_set.outer_radius * z / np.linalg.norm(z))
    for value in independent[:3] + outside[:2]:  # correctness, and warm-up
        assert convex_set.contains(convex_set.lmo(value), atol=1e-9)
        assert convex_set.contains(convex_set.project(value), atol=1e-9)
    tangent_batch = rng.standard_normal((256, *shape))
    start = time.perf_counter()
    convex_set.tangent_many(tangent_batch)
    tangent_seconds = (time.perf_counter() - start) / len(tangent_batch)
    return {
        "lmo": median_seconds(convex_set.lmo, independent),
        "lmo_drift": median_seconds(convex_set.lmo, drifting),
        "project": median_seconds(convex_set.project, outside),
        "tangent": tangent_seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30, help="LMO calls per set (default 30)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    header = (
        f"{'set':<27}{'build':>9}{'LMO':>11}{'LMO drift':>11}{'project':>11}"
        f"{'proj/LMO':>10}{'tangent/row':>13}"
    )
    print(header)
    print("-" * len(header))
    for name, make in SETS:
        start = time.perf_counter()
        convex_set = make()
        build = time.perf_counter() - start
        result = measure(convex_set, args.repeats, rng)
        print(
            f"{name:<27}{_ms(build):>9}{_ms(result['lmo']):>11}{_ms(result['lmo_drift']):>11}"
            f"{_ms(result['project']):>11}{result['project'] / result['lmo']:>9.1f}x"
            f"{_ms(result['tangent']):>13}"
        )
    print("times are medians in milliseconds (build and tangent/row: one run)")


def _ms(seconds: float) -> str:
    return f"{1e3 * seconds:.3f}"


if __name__ == "__main__":
    main()
