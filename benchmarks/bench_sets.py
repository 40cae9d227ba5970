"""Set oracles, set by set, measured in one run: LMO versus projection, and batched
oracles versus single calls.

Table 1, at realistic sizes: the median wall time of one LMO call on independent
standard normal directions, of one LMO call on a slowly drifting direction
g_k = g + 0.05 z_k (as the summed gradient estimates of BBCG drift between blocks; this
is where the nuclear ball's ARPACK warm start helps), of one projection of a point
c + 2R z/||z|| outside K, and the ratio projection / LMO. Every call is also checked
(answers in K) so the timings are of correct work.

Table 2, batched oracles: ``lmo_many`` on a batch of 64 rows against 64 calls of
``lmo`` on the same rows, and ``project_many`` against 64 calls of ``project`` (points
half inside, half outside K), at the sizes of table 1 and at the small sizes batched
agents use (10 coordinates, or the default size of the set's env; S = 64 rows every
round). CPU time of this process
(BLAS on one thread), both sides taking turns, the least of ``--turns`` kept; the
speed-up is (64 single calls) / (one batched call), and "us/row" is the batched call's
time divided by 64. The batched answers are checked against the single ones (bit for
bit; the nuclear ball's LMO above 128 x 128 to 1e-12, see its docstring). A set whose
``project_many`` is a row loop (the QP projections of the flow and Birkhoff polytopes)
is measured at the small sizes only.

Table 3, the fixed cost of a batched call at the small sizes: microseconds per call of
``lmo`` on one row and of ``lmo_many`` on 1, 8 and 64 rows.

Run:  python benchmarks/bench_sets.py [--repeats 30] [--turns 5]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from common import interleaved_best, pin_blas_threads

pin_blas_threads()

import numpy as np  # noqa: E402

from bco_gym.sets import (  # noqa: E402
    BirkhoffPolytope,
    ConvexSet,
    FlowPolytope,
    Hypercube,
    L1Ball,
    L2Ball,
    NuclearNormBall,
    Simplex,
)
from bco_gym.sets.nuclear import _DENSE_MAX_SIDE  # noqa: E402

SETS: list[tuple[str, Callable[[], ConvexSet]]] = [
    ("Simplex(1000)", lambda: Simplex(1000)),
    ("L2Ball(1000)", lambda: L2Ball(1000)),
    ("L1Ball(1000)", lambda: L1Ball(1000)),
    ("Hypercube(-1, 1, n=1000)", lambda: Hypercube(-1.0, 1.0, n=1000)),
    ("NuclearNormBall(200, 200)", lambda: NuclearNormBall(200, 200)),
    ("FlowPolytope.grid(30, 30)", lambda: FlowPolytope.grid(30, 30)),
    ("BirkhoffPolytope(50)", lambda: BirkhoffPolytope(50)),
]
SMALL_SETS: list[tuple[str, Callable[[], ConvexSet]]] = [  # n = 10 and the envs' defaults
    ("Simplex(10)", lambda: Simplex(10)),
    ("L2Ball(10)", lambda: L2Ball(10)),
    ("L1Ball(10)", lambda: L1Ball(10)),
    ("Hypercube(-1, 1, n=10)", lambda: Hypercube(-1.0, 1.0, n=10)),
    ("NuclearNormBall(10, 10)", lambda: NuclearNormBall(10, 10)),
    ("FlowPolytope.grid(5, 5)", lambda: FlowPolytope.grid(5, 5)),
    ("BirkhoffPolytope(5)", lambda: BirkhoffPolytope(5)),
]
BATCH = 64
OVERHEAD_SIZES = (1, 8, 64)


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


def batched_against_single(
    convex_set: ConvexSet, turns: int, rng: np.random.Generator, with_projection: bool
) -> dict[str, float]:
    """CPU seconds of 64 single calls and of one batched call, for the LMO and (if
    ``with_projection``) the projection, the answers checked against each other."""
    shape, c = convex_set.shape, convex_set.center
    directions = rng.standard_normal((BATCH, *shape))
    z = rng.standard_normal((BATCH, *shape))
    z /= np.sqrt((z * z).reshape(BATCH, -1).sum(axis=1)).reshape(BATCH, *[1] * len(shape))
    radii = convex_set.outer_radius * np.where(np.arange(BATCH) % 2 == 0, 0.5, 2.0)
    points = c + radii.reshape(BATCH, *[1] * len(shape)) * z
    calls = {
        "lmo": lambda: [convex_set.lmo(g) for g in directions],
        "lmo_many": lambda: convex_set.lmo_many(directions),
    }
    if with_projection:
        calls["project"] = lambda: [convex_set.project(x) for x in points]
        calls["project_many"] = lambda: convex_set.project_many(points)
    seconds, results = interleaved_best(calls, turns)
    _check_rows(convex_set, results)
    return seconds


def _check_rows(convex_set: ConvexSet, results: dict[str, object]) -> None:
    single, batched = np.array(results["lmo"]), results["lmo_many"]
    if isinstance(convex_set, NuclearNormBall) and min(convex_set.shape) > _DENSE_MAX_SIDE:
        assert np.max(np.abs(single - batched)) <= 1e-12
    else:
        assert np.array_equal(single, batched)
    if "project" in results:
        assert np.array_equal(np.array(results["project"]), results["project_many"])


def print_batched(sets: list[tuple[str, Callable[[], ConvexSet]]], turns: int, rng) -> None:
    for name, make in sets:
        convex_set = make()
        small = any(name == small_name for small_name, _ in SMALL_SETS)
        vectorised = not isinstance(convex_set, FlowPolytope | BirkhoffPolytope)
        with_projection = convex_set.has_projection and (small or vectorised)
        result = batched_against_single(convex_set, turns, rng, with_projection)
        cells = _pair(result["lmo"], result["lmo_many"])
        if with_projection:
            cells += _pair(result["project"], result["project_many"])
        else:
            cells += f"{'(by rows, not timed)':>37}"
        print(f"{name:<27}{cells}")


def print_overhead(turns: int, rng: np.random.Generator) -> None:
    """Microseconds per call of lmo and of lmo_many on 1, 8 and 64 rows (small sets):
    the fixed cost of a batched call, which batched agents pay every round."""
    for name, make in SMALL_SETS:
        convex_set = make()
        directions = rng.standard_normal((BATCH, *convex_set.shape))
        calls = {"lmo": lambda s=convex_set, d=directions: s.lmo(d[0])}
        for size in OVERHEAD_SIZES:
            calls[f"k={size}"] = lambda s=convex_set, d=directions[:size]: s.lmo_many(d)
        repeated = {key: _repeated(call, 20) for key, call in calls.items()}
        seconds, _ = interleaved_best(repeated, turns)
        cells = "".join(f"{1e6 * value / 20:>10.1f}" for value in seconds.values())
        print(f"{name:<27}{cells}")


def _repeated(call: Callable[[], object], times: int) -> Callable[[], None]:
    def run() -> None:
        for _ in range(times):
            call()

    return run


def _pair(single: float, batched: float) -> str:
    ratio = f"{single / batched:.1f}x"
    return f"{_ms(single):>10}{_ms(batched):>10}{ratio:>9}{1e6 * batched / BATCH:>8.2f}"


def _ms(seconds: float) -> str:
    return f"{1e3 * seconds:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30, help="LMO calls per set (default 30)")
    parser.add_argument("--turns", type=int, default=5, help="turns of the batched timing")
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
    print()
    header = (
        f"{'set':<27}{'64 x lmo':>10}{'lmo_many':>10}{'speed-up':>9}{'us/row':>8}"
        f"{'64 x proj':>10}{'proj_many':>10}{'speed-up':>9}{'us/row':>8}"
    )
    print(f"batched oracles, {BATCH} rows: CPU ms, least of {args.turns} turns taken in turn")
    print(header)
    print("-" * len(header))
    print_batched(SMALL_SETS + SETS, args.turns, rng)
    print("speed-up = 64 single calls / one batched call; us/row = the batched call / 64")
    print()
    print("cost of one call in microseconds: lmo on one row, lmo_many on k rows")
    header = f"{'set':<27}{'lmo':>10}" + "".join(f"{f'k={k}':>10}" for k in OVERHEAD_SIZES)
    print(header)
    print("-" * len(header))
    print_overhead(args.turns, rng)


if __name__ == "__main__":
    main()
