"""Set oracles, set by set, measured in one run: LMO versus projection, and batched
oracles versus single calls.

Table 1, at realistic sizes: the CPU time per call of the LMO on independent standard
normal directions, of the LMO on a slowly drifting direction g_k = g + 0.05 z_k (as the
summed gradient estimates of BBCG drift between blocks; this is where the nuclear
ball's ARPACK warm start helps), and of the projection of points c + 2R z/||z|| outside
K, each a batch of ``--repeats`` calls; the three batches take turns for ``--turns``
rounds (``common.interleaved``) and the ratio projection / LMO is the median [min, max]
of the per-turn ratios. Every call is also checked (answers in K) so the timings are of
correct work.

Table 2, batched oracles: ``lmo_many`` on a batch of 64 rows against 64 calls of
``lmo`` on the same rows, and ``project_many`` against 64 calls of ``project`` (points
half inside, half outside K), at the sizes of table 1 and at the small sizes batched
agents use (10 coordinates, or the default size of the set's env; S = 64 rows every
round). CPU time of this process
(BLAS on one thread), both sides taking turns for ``--turns`` rounds; the speed-up is
(64 single calls) / (one batched call), the median [min, max] of the per-turn ratios,
and "us/row" is the median batched call's time divided by 64. The batched answers are
checked against the single ones (bit for bit; the nuclear ball's LMO above 128 x 128 to
1e-12, see its docstring). A set whose
``project_many`` is a row loop (the QP projections of the flow and Birkhoff polytopes)
is measured at the small sizes only.

Table 3, the fixed cost of a batched call at the small sizes: microseconds per call of
``lmo`` on one row and of ``lmo_many`` on 1, 8 and 64 rows (medians over the turns).

The load average over each table is printed under it.

Run:  python benchmarks/bench_sets.py [--repeats 30] [--turns 5]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from common import Load, Spread, interleaved, load_average, pin_blas_threads

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


def _calls(call: Callable[[np.ndarray], np.ndarray], inputs: list[np.ndarray]):
    return lambda: [call(value) for value in inputs]


def measure(convex_set: ConvexSet, repeats: int, turns: int, rng: np.random.Generator) -> dict:
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
    timings = interleaved(
        {
            "lmo": _calls(convex_set.lmo, independent),
            "lmo_drift": _calls(convex_set.lmo, drifting),
            "project": _calls(convex_set.project, outside),
        },
        turns,
    )
    per_lmo, per_projection = 1 / len(independent), 1 / len(outside)
    return {
        "lmo": timings.spread("lmo").scaled(per_lmo).median,
        "lmo_drift": timings.spread("lmo_drift").scaled(per_lmo).median,
        "project": timings.spread("project").scaled(per_projection).median,
        "ratio": timings.ratio("project", "lmo", scale=len(independent) / len(outside)),
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
    timings = interleaved(calls, turns)
    _check_rows(convex_set, timings.results)
    return timings


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
        timings = batched_against_single(convex_set, turns, rng, with_projection)
        cells = _pair(timings, "lmo", "lmo_many")
        if with_projection:
            cells += _pair(timings, "project", "project_many")
        else:
            cells += f"{'(by rows, not timed)':>52}"
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
        timings = interleaved(repeated, turns)
        cells = "".join(f"{timings.spread(key).scaled(1e6 / 20).median:>10.1f}" for key in repeated)
        print(f"{name:<27}{cells}")


def _repeated(call: Callable[[], object], times: int) -> Callable[[], None]:
    def run() -> None:
        for _ in range(times):
            call()

    return run


def _pair(timings, single: str, batched: str) -> str:
    ratio = f"{timings.ratio(single, batched)}x"
    one, many = timings.spread(single).median, timings.spread(batched).median
    return f"{_ms(one):>10}{_ms(many):>10}{ratio:>24}{1e6 * many / BATCH:>8.2f}"


def _ms(seconds: float) -> str:
    return f"{1e3 * seconds:.3f}"


def _load_line(start: float) -> str:
    return f"({Load(start, load_average())})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30, help="LMO calls per set (default 30)")
    parser.add_argument("--turns", type=int, default=5, help="interleaved turns of each timing")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    header = (
        f"{'set':<27}{'build':>9}{'LMO':>11}{'LMO drift':>11}{'project':>11}"
        f"{'proj/LMO median [min, max]':>30}{'tangent/row':>13}"
    )
    print(header)
    print("-" * len(header))
    start = load_average()
    for name, make in SETS:
        begin = time.perf_counter()
        convex_set = make()
        build = time.perf_counter() - begin
        result = measure(convex_set, args.repeats, args.turns, rng)
        ratio: Spread = result["ratio"]
        print(
            f"{name:<27}{_ms(build):>9}{_ms(result['lmo']):>11}{_ms(result['lmo_drift']):>11}"
            f"{_ms(result['project']):>11}{f'{ratio}x':>30}{_ms(result['tangent']):>13}"
        )
    print(
        f"CPU ms per call, medians over {args.turns} turns (build and tangent/row: one run, wall)"
    )
    print(_load_line(start))
    print()
    header = (
        f"{'set':<27}{'64 x lmo':>10}{'lmo_many':>10}{'speed-up':>24}{'us/row':>8}"
        f"{'64 x proj':>10}{'proj_many':>10}{'speed-up':>24}{'us/row':>8}"
    )
    print(f"batched oracles, {BATCH} rows: CPU ms, medians of {args.turns} turns taken in turn")
    print(header)
    print("-" * len(header))
    start = load_average()
    print_batched(SMALL_SETS + SETS, args.turns, rng)
    print("speed-up = 64 single calls / one batched call, median [min, max] over the turns;")
    print("us/row = the batched call / 64 " + _load_line(start))
    print()
    print("cost of one call in microseconds: lmo on one row, lmo_many on k rows")
    header = f"{'set':<27}{'lmo':>10}" + "".join(f"{f'k={k}':>10}" for k in OVERHEAD_SIZES)
    print(header)
    print("-" * len(header))
    start = load_average()
    print_overhead(args.turns, rng)
    print(_load_line(start))


if __name__ == "__main__":
    main()
