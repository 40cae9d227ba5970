"""The per-run fixed costs of a batched run: each row's end-of-run work, before and after.

After the play, every row of ``run_many`` takes its checkpoint segments' exact loss sums
and its comparators at the checkpoints (about 40 of each by default). Measured here, in
one process, taking turns (``common.interleaved``), on the rows of ogd's 64-seed call of
``bench_kernels.py`` (the ball, n = 10, T = 2·10^4, the default checkpoints):

* **segment sums**: :class:`~bco_gym.engine.tally.LossTally`'s segment sums and total of
  T stored losses, by the one compiled call
  (:func:`~bco_gym.agents.kernels.sums.segment_terms`) against the earlier way, a fresh
  :class:`~bco_gym.engine.tally.ExactSum` per segment (compiled update) and its Python
  integers (``LossTally._scaled_sums``, still the path of sums at or above 2^942);
* **comparators**: :func:`~bco_gym.losses.linear.linear_comparators` of the summed
  vectors, one ``lmo_many`` and one ``np.vecdot`` against one ``lmo`` and one dot per
  checkpoint (the row loop, which a subclass of the ball takes).

Each figure is microseconds per run (median [min, max] over the repeats), with the
saving per run-round at T = 2·10^4.

With ``--whole``, the whole ogd 64-seed ``run_many`` call (``BCO_GYM_KERNELS=on``) is
timed in processes of its own at T = 4,096, 2·10^4 and 40,960 (CPU seconds, the least of
3 calls each after a warm-up), and a line CPU = 64 (fixed + T per_round) fitted through
them gives the per-run fixed cost and the per-run-round cost. ``--against DIR`` (a
checkout of an earlier commit, imported through ``PYTHONPATH``) does the same for DIR,
its processes taking turns with this checkout's, and adds the ratio this / DIR at
T = 2·10^4 and the difference per run-round.

Run:  python benchmarks/bench_fixed_costs.py [--repeats 20] [--whole] [--against DIR] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from common import Load, Row, Spread, interleaved, load_average, pin_blas_threads, table

pin_blas_threads()
os.environ["BCO_GYM_KERNELS"] = "on"

import numpy as np  # noqa: E402

from bco_gym.agents.kernels.sums import exact_add  # noqa: E402
from bco_gym.engine.tally import ExactSum, LossTally, default_checkpoints  # noqa: E402
from bco_gym.losses.linear import linear_comparators  # noqa: E402
from bco_gym.sets import L2Ball  # noqa: E402

HORIZON, SEEDS, DIM = 20_000, 64, 10
ROOT = Path(__file__).resolve().parent.parent

PLAY = """
import os, sys, time, warnings
warnings.simplefilter("ignore")
os.environ["BCO_GYM_KERNELS"] = "on"
import bco_gym
from bco_gym.experiment import run_many
def call(seeds, horizon):
    start = time.process_time()
    run_many("BCO-Ball-v0", "ogd", seeds, horizon=horizon, env_kwargs={"feedback": "full"})
    return time.process_time() - start
call([0, 1], 2000)
call(list(range(SEEDS)), 4096)
print(bco_gym.__file__)
for horizon in HORIZONS:
    print(min(call(list(range(SEEDS)), horizon) for _ in range(3)))
"""
#: The horizons of the whole calls: CPU = seeds (fixed + T per_round) fits the three.
HORIZONS = (4096, HORIZON, 40_960)


class RowLoopBall(L2Ball):
    """The ball, as a subclass: linear_comparators asks it one checkpoint at a time."""


def end_of_run_work() -> dict[str, object]:
    """The four calls, on one row's losses and summed vectors."""
    rng = np.random.default_rng(0)
    stops = default_checkpoints(HORIZON)
    losses = 0.3 * rng.standard_normal(HORIZON)
    totals = [np.sqrt(stop) * rng.standard_normal(DIM) for stop in stops]
    ball, row_loop = L2Ball(DIM), RowLoopBall(DIM)

    def one_call() -> tuple[list[float], float]:
        tally = LossTally(HORIZON, stops, losses, exact_add=exact_add)
        return tally.segment_sums(), tally.total()

    def per_segment() -> tuple[list[float], float]:
        scaled = LossTally(HORIZON, stops, losses, exact_add=exact_add)._scaled_sums(losses)
        assert scaled is not None
        return [ExactSum.rounded(s) for s in scaled], ExactSum.rounded(sum(scaled))

    return {
        "segment sums, one call": one_call,
        "segment sums, per segment": per_segment,
        "comparators, one lmo_many": lambda: linear_comparators(ball, stops, totals),
        "comparators, row loop": lambda: linear_comparators(row_loop, stops, totals),
    }


def fixed_cost_rows(repeats: int) -> list[Row]:
    calls = end_of_run_work()
    for call in calls.values():
        call()  # compile or load the kernel
    timings = interleaved(calls, repeats)
    names = list(calls)
    sums = timings.results[names[0]], timings.results[names[1]]
    assert np.array(sums[0][0]).tobytes() == np.array(sums[1][0]).tobytes()
    assert sums[0][1] == sums[1][1]
    rows = []
    for new, old in ((names[0], names[1]), (names[2], names[3])):
        for name in (old, new):
            spread = timings.spread(name).scaled(1e6)
            rows.append(Row.measured("fixed", name, spread, "us per run", timings.load))
        saved = Spread.of(
            (a - b) * 1e6 / HORIZON
            for a, b in zip(timings.seconds[old], timings.seconds[new], strict=True)
        )
        rows.append(Row.measured("fixed", f"{new}: saved", saved, "us per run-round", timings.load))
    return rows


def whole_calls(root: Path) -> list[float]:
    """CPU seconds of ogd's 64-seed run_many at each of HORIZONS, imported from ``root``
    in a process of its own (the least of 3 calls each, after a warm-up)."""
    code = PLAY.replace("SEEDS", str(SEEDS)).replace("HORIZONS", repr(HORIZONS))
    env = {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=root,  # python -c imports from its working directory first
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    if not Path(out[0]).resolve().is_relative_to(root.resolve()):
        raise RuntimeError(f"imported {out[0]}, not from {root}")
    return [float(value) for value in out[1:]]


def fitted(seconds: list[float]) -> tuple[float, float]:
    """(microseconds per run, per run-round) of the least-squares line through HORIZONS."""
    per_round, fixed = np.polyfit(np.array(HORIZONS, dtype=float), np.array(seconds), 1)
    return fixed / SEEDS * 1e6, per_round / SEEDS * 1e6


def whole_call_rows(roots: dict[str, Path], rounds: int) -> list[Row]:
    """ogd's 64-seed run_many in processes taking turns between the checkouts."""
    seconds: dict[str, list[list[float]]] = {label: [] for label in roots}
    start = load_average()
    for _ in range(rounds):
        for label, root in roots.items():
            seconds[label].append(whole_calls(root))
    load = Load(start, load_average())
    name = f"ogd run_many, {SEEDS} seeds"
    at = HORIZONS.index(HORIZON)
    rows = []
    for label, runs in seconds.items():
        fits = [fitted(run) for run in runs]
        for index, unit in ((0, "us per run"), (1, "us per run-round")):
            spread = Spread.of(fit[index] for fit in fits)
            rows.append(Row.measured("fixed", f"{name}, {label}: fitted", spread, unit, load))
    if len(roots) == 2:
        this, earlier = seconds["this"], seconds["earlier"]
        pairs = [(a[at], b[at]) for a, b in zip(this, earlier, strict=True)]
        rows.append(
            Row.measured(
                "fixed",
                f"{name}, T={HORIZON}: this / earlier",
                Spread.of(a / b for a, b in pairs),
                "x",
                load,
            )
        )
        saved = Spread.of((b - a) * 1e6 / (SEEDS * HORIZON) for a, b in pairs)
        rows.append(
            Row.measured("fixed", f"{name}, T={HORIZON}: saved", saved, "us per run-round", load)
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--whole", action="store_true", help="time the whole calls too")
    parser.add_argument("--against", type=Path, help="a checkout of an earlier commit")
    parser.add_argument("--rounds", type=int, default=5, help="processes per checkout")
    args = parser.parse_args()
    rows = fixed_cost_rows(args.repeats)
    print(table(rows), flush=True)
    if args.whole or args.against is not None:
        roots = {"this": ROOT} if args.against is None else {"earlier": args.against, "this": ROOT}
        print()
        print(table(whole_call_rows(roots, args.rounds)))
    print(f"\nload average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
