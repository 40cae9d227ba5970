"""The targets of issue 31: scoring an agent on standard-v2 with the shipped reference
cells, quick-v2 from scratch, and the CPU time of standard-v2's reference cells.

    python benchmarks/bench_suite.py score     # a plain Python agent on standard-v2
    python benchmarks/bench_suite.py quick     # quick-v2 from scratch (--recompute-references)
    python benchmarks/bench_suite.py cpu       # standard-v2's reference CPU time, per scenario
    python benchmarks/bench_suite.py rows      # tuned against theory rows, per scenario

``score`` runs ``bco-gym bench --agents bench_suite:PlainAgent --suite standard-v2
--backend process`` into a fresh directory: the reference agents' cells come from the
package's archive, so only :class:`PlainAgent`'s cells (a plain Python agent of about
25 us a round, no batched form, no kernels) are computed. Target: at most 10 minutes
wall on 2 idle cores. ``quick`` times ``bco-gym bench --suite quick-v2
--recompute-references`` with a built-in agent from an empty directory: at most 60 s.
``cpu`` sums, per scenario, what the archive records for every standard-v2 reference
cell: its rounds' CPU seconds (its share of its batch) plus its comparator's seconds (wall
clock: an overestimate on a loaded machine); no target. Every figure is printed with
the load average over its measurement (a shared machine's wall times are not idle ones).
``rows`` reads the archive too: per scenario, whether bbcg's and fkm's tuned row beats its
theory row at the scenario's horizon, by the scenario's ranking of the archive's rows
(all pairs, Holm; the computation of ``test_every_archived_standard_v2_scenario_separates``),
and the counts docs/benchmark.md quotes.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import load_average, pin_blas_threads

pin_blas_threads()

import numpy as np  # noqa: E402

from bco_gym.agents import Agent  # noqa: E402

HERE = Path(__file__).resolve().parent


class PlainAgent(Agent):
    """Plain Python: one-point estimates around the centre, a conditional-gradient step
    towards the LMO of their running sum every 100 rounds (an LMO call per 100 rounds)."""

    name = "plain"

    def __init__(self, problem: Any):
        super().__init__(problem)
        self.params = {"delta": 0.5 * self.set.inner_radius, "every": 100}

    def _reset(self) -> None:
        self.point = np.array(self.set.center, dtype=float)
        self.total = np.zeros(self.set.shape)
        self.direction = np.zeros(self.set.shape)
        self.played = 0

    def _act(self) -> np.ndarray:
        direction = self.set.tangent(self.rng.standard_normal(self.set.shape))
        self.direction = direction / np.linalg.norm(direction)
        centre = self.set.center
        shrink = 1.0 - self.params["delta"] / self.set.inner_radius  # keep x + delta u in K
        return centre + shrink * (self.point - centre) + self.params["delta"] * self.direction

    def _update(self, loss: float, info: Any) -> None:
        self.played += 1
        self.total += (self.set.aff_dim / self.params["delta"]) * loss * self.direction
        if self.played % self.params["every"] == 0:
            step = 2.0 / (2.0 + self.played / self.params["every"])
            target = np.asarray(self.set.lmo(self.total), dtype=float)
            self.point = self.point + step * (target - self.point)


def _bench(argv: list[str], env: dict[str, str]) -> tuple[float, float, float, int]:
    """(wall seconds, children's CPU seconds, load average, exit code) of one bench."""
    before = os.times()
    load = load_average()
    start = time.perf_counter()
    code = subprocess.call([sys.executable, "-m", "bco_gym.cli", "bench", *argv], env=env)
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu, 0.5 * (load + load_average()), code


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[name] = "1"
    return env


def score() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "bench"
        argv = ["--agents", "bench_suite:PlainAgent", "--suite", "standard-v2"]
        argv += ["--backend", "process", "--quiet", "--out", str(out)]
        wall, cpu, load, code = _bench(argv, _environment())
    print(
        f"score PlainAgent on standard-v2 (archive, process backend): {wall:.0f} s wall, "
        f"{cpu:.0f} s CPU, load average {load:.1f}, exit {code} (target: <= 600 s wall "
        "on 2 idle cores)"
    )


def quick() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "bench"
        argv = ["--agents", "loo-bbgd", "--suite", "quick-v2"]
        argv += ["--recompute-references", "--quiet", "--out", str(out)]
        wall, cpu, load, code = _bench(argv, _environment())
    print(
        f"quick-v2 from scratch (--recompute-references, serial): {wall:.1f} s wall, "
        f"{cpu:.1f} s CPU, load average {load:.1f}, exit {code} (target: <= 60 s)"
    )


def cpu() -> None:
    from bco_gym.reports import references
    from bco_gym.reports.suites import SUITES

    total, missing = 0.0, []
    for scenario in SUITES["standard-v2"]:
        found = references.load_scenario("standard-v2", scenario.name, check_version=False)
        if not found:
            missing.append(scenario.name)
            continue
        seconds = sum(  # the rounds' CPU time plus the comparator's (wall) time
            (result.cpu_seconds if result.cpu_seconds is not None else result.wall_seconds)
            + result.comparator_seconds
            for _, cells in found.values()
            for _, result in cells
        )
        cells = sum(len(cells) for _, cells in found.values())
        total += seconds
        print(f"  {scenario.name:28s} {cells:4d} cells {seconds:8.1f} s CPU")
    print(f"standard-v2 reference cells from scratch: {total / 60:.1f} CPU-minutes", end="")
    print(f" (not archived: {', '.join(missing)})" if missing else "")
    if not math.isfinite(total):
        raise SystemExit(1)


def rows() -> None:
    from bco_gym.reports import references
    from bco_gym.reports.suites import SUITES
    from bco_gym.stats.ranking import rank

    counts = {"tuned better": 0, "theory better": 0, "not separated": 0}
    for spec in SUITES["standard-v2"]:
        found = references.load_scenario("standard-v2", spec.name)
        results = [
            result
            for relative, (_, cells) in found.items()
            if relative.startswith("runs/")
            for _, result in cells
            if result.seed in spec.seeds
        ]
        horizon = spec.horizon or max(result.horizon for result in results)
        ranking = rank([result for result in results if result.horizon == horizon])
        for reference in ("bbcg", "fkm"):
            tuned = [label for label in ranking.labels if label.startswith(reference + " (tuned")]
            if not tuned or reference not in ranking.labels:
                continue  # one of the two rows does not play the scenario's horizon
            if ranking.beats(tuned[0], reference):
                verdict = "tuned better"
            elif ranking.beats(reference, tuned[0]):
                verdict = "theory better"
            else:
                verdict = "not separated"
            counts[verdict] += 1
            means = f"{ranking.means[tuned[0]]:,.1f} against {ranking.means[reference]:,.1f}"
            print(f"  {spec.name:28s} {reference:5s} {verdict:14s} (mean final regret {means})")
    print(
        f"{sum(counts.values())} (scenario, reference) pairs: "
        + ", ".join(f"{verdict} {count}" for verdict, count in counts.items())
    )


if __name__ == "__main__":
    which = sys.argv[1:] or ["quick", "cpu", "score"]
    for name in which:
        {"score": score, "quick": quick, "cpu": cpu, "rows": rows}[name]()
