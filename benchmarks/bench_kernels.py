"""Kernels: the per-round agents against the bare generator calls of the same work.

Each figure is a ratio taken in one process run: the CPU time of a library call over the
CPU time of the bare generator calls the same runs make, measured in turns (library,
bare, library, bare, ...) ``--repeats`` times; the row shows the median ratio and
[min, max] over the pairs, and the load average before and after.

The bare calls of a run of T rounds on the ball (n = 10), with the library's seeding and
chunking (so the same number of generator calls and draws):

* the losses: per chunk of the loss sequence, ``default_rng([seed, 1, chunk])``, n
  normals and one uniform per round (``linear``'s noise, uniform in the unit ball);
* the directions (agents that explore: fkm, bfw, bbcg): n normals per round from the
  agent's generator, 256 rounds per call (bbcg: one block's worth per call).

Measured: ``run_many`` of fkm, bfw, ofw and ogd with 10 and 64 seeds (the compiled
kernels, ``BCO_GYM_KERNELS=on``, each agent warmed up first), a single ``run`` of fkm at T = 10^5,
and ``run_many`` of bbcg (its NumPy block path) with 10 seeds. Targets (issue 18): 10
seeds <= 3x, 64 seeds <= 2.5x, single fkm <= 5x, bbcg <= 2x. Each row also gives, for
its least-CPU turn, the library's and the bare calls' microseconds per run-round and
the part of the library's spent in the interval-regret trackers (the adaptive and
dynamic regret every linear run reports; :class:`TrackerClock`).

Run:  python benchmarks/bench_kernels.py [--repeats 5] [--scale 1.0] [--only fkm,...,bbcg]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from common import Load, Row, Spread, cpu_seconds, pin_blas_threads, table, verdict, write_json

pin_blas_threads()
os.environ["BCO_GYM_KERNELS"] = "on"

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

from bco_gym.experiment import run, run_many  # noqa: E402

ENV = "BCO-Ball-v0"
DIM = 10
EXPLORING = ("fkm", "bfw", "bbcg")


def loss_chunk_size() -> int:
    env = gym.make(ENV, horizon=10)
    try:
        return int(env.unwrapped.losses.chunk_size)
    finally:
        env.close()


def bare_draws(seeds: list[int], horizon: int, explores: bool, direction_chunk: int) -> float:
    """The generator calls of len(seeds) runs of ``horizon`` rounds (module docstring)."""
    chunk = loss_chunk_size.cached  # type: ignore[attr-defined]
    total = 0.0
    for seed in seeds:
        for index in range(-(-horizon // chunk)):
            rng = np.random.default_rng([seed, 1, index])
            total += rng.standard_normal((chunk, DIM))[0, 0] + rng.uniform(size=(chunk, 1))[0, 0]
        if explores:
            rng = np.random.default_rng(seed)
            buffer = np.empty((direction_chunk, DIM))
            for _ in range(-(-horizon // direction_chunk)):
                rng.standard_normal(out=buffer)
                total += buffer[0, 0]
    return total


class TrackerClock:
    """CPU seconds spent in the interval-regret trackers (their compiled update and the
    comparators' theta sums) during the library calls: the share of the figure that is
    the adaptive/dynamic regret the library reports on every linear run."""

    def __init__(self) -> None:
        from bco_gym.engine.metrics import ThetaSums
        from bco_gym.losses.intervals import IntervalRegret

        self.seconds = 0.0
        for kind, name in ((IntervalRegret, "update"), (ThetaSums, "add")):
            original = getattr(kind, name)

            def timed(*args, _original=original, **kwargs):  # type: ignore[no-untyped-def]
                start = time.process_time()
                try:
                    return _original(*args, **kwargs)
                finally:
                    self.seconds += time.process_time() - start

            setattr(kind, name, timed)


CLOCK = TrackerClock()


def paired(library, bare, repeats: int) -> dict:  # type: ignore[no-untyped-def]
    """Ratios library / bare over ``repeats`` turns, with the load average around them."""
    before = os.getloadavg()
    ratios, library_seconds, bare_seconds, tracker_seconds = [], [], [], []
    for _ in range(repeats):
        tracked = CLOCK.seconds
        seconds, _, _ = cpu_seconds(library)
        tracker_seconds.append(CLOCK.seconds - tracked)
        library_seconds.append(seconds)
        reference, _, _ = cpu_seconds(bare)
        bare_seconds.append(reference)
        ratios.append(seconds / reference)
    return {
        "median": statistics.median(ratios),
        "min": min(ratios),
        "max": max(ratios),
        "library_cpu_s": library_seconds,
        "bare_cpu_s": bare_seconds,
        "tracker_cpu_s": tracker_seconds,
        "load_before": [round(x, 2) for x in before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }


def row(name: str, figures: dict, target: float, run_rounds: int) -> Row:  # type: ignore[type-arg]
    best = min(range(len(figures["library_cpu_s"])), key=figures["library_cpu_s"].__getitem__)
    per = figures["library_cpu_s"][best] / run_rounds * 1e6
    bare = figures["bare_cpu_s"][best] / run_rounds * 1e6
    tracker = figures["tracker_cpu_s"][best] / run_rounds * 1e6
    detail = {
        **figures,
        "run_rounds": run_rounds,
        "library_us_per_run_round": per,
        "bare_us_per_run_round": bare,
        "tracker_us_per_run_round": tracker,
    }
    shown = f"{name} ({per:.3g} us/run-round, bare {bare:.3g}, of it the tracker {tracker:.3g})"
    return Row.measured(
        "kernels",
        shown,
        Spread(figures["median"], figures["min"], figures["max"]),
        "x bare",
        Load(figures["load_before"][0], figures["load_after"][0]),
        f"<= {target}",
        verdict(figures["median"], at_most=target),
        detail,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies every horizon")
    parser.add_argument(
        "--only",
        default="fkm,bfw,ofw,ogd,single,bbcg",
        help="the rows to measure, comma-separated: fkm, bfw, ofw, ogd (their run_many "
        "rows), single (fkm's single run), bbcg (default: all)",
    )
    args = parser.parse_args()
    only = set(args.only.split(","))
    unknown = only - {"fkm", "bfw", "ofw", "ogd", "single", "bbcg"}
    if unknown:
        parser.error(
            f"--only: unknown rows {sorted(unknown)}; allowed fkm, bfw, ofw, ogd, single, bbcg"
        )
    loss_chunk_size.cached = loss_chunk_size()  # type: ignore[attr-defined]
    for agent, feedback in (("fkm", "bandit"), ("bfw", "bandit"), ("ofw", "full"), ("ogd", "full")):
        run(ENV, agent, horizon=300, env_kwargs={"feedback": feedback})  # compile or load
    run_many(ENV, "bbcg", [0, 1], horizon=3000)  # the block path's compiled parts: load
    rows = []
    for seeds_count, horizon, target in ((10, 100_000, 3.0), (64, 20_000, 2.5)):
        horizon = int(horizon * args.scale)
        seeds = list(range(seeds_count))
        for agent in ("fkm", "bfw", "ofw", "ogd"):
            if agent not in only:
                continue
            feedback = "full" if agent in ("ofw", "ogd") else "bandit"
            figures = paired(
                lambda a=agent, f=feedback, s=seeds, h=horizon: run_many(
                    ENV, a, s, horizon=h, env_kwargs={"feedback": f}
                ),
                lambda a=agent, s=seeds, h=horizon: bare_draws(s, h, a in EXPLORING, 256),
                args.repeats,
            )
            name = f"{agent} run_many, {seeds_count} seeds, T={horizon}"
            rows.append(row(name, figures, target, seeds_count * horizon))
            print(table(rows[-1:]).splitlines()[-1], flush=True)
    horizon = int(100_000 * args.scale)
    if "single" in only:
        figures = paired(
            lambda: run(ENV, "fkm", horizon=horizon, seed=0),
            lambda: bare_draws([0], horizon, True, 256),
            args.repeats,
        )
        rows.append(row(f"fkm single run, T={horizon}", figures, 5.0, horizon))
        print(table(rows[-1:]).splitlines()[-1], flush=True)
    if "bbcg" in only:
        block = _bbcg_block(horizon)
        figures = paired(
            lambda: run_many(ENV, "bbcg", list(range(10)), horizon=horizon),
            lambda: bare_draws(list(range(10)), horizon, True, block),
            args.repeats,
        )
        name = f"bbcg run_many (block path), 10 seeds, T={horizon}"
        rows.append(row(name, figures, 2.0, 10 * horizon))
        print(table(rows[-1:]).splitlines()[-1], flush=True)
    print()
    print(table(rows))
    print(f"\nload average at the end: {os.getloadavg()}")
    name = "kernels" if len(only) == 6 else "kernels-" + "-".join(sorted(only))
    print(f"written: {write_json(name, rows)}")


def _bbcg_block(horizon: int) -> int:
    from bco_gym.agents import make_agent

    env = gym.make(ENV, horizon=horizon)
    try:
        agent = make_agent("bbcg", env.unwrapped.problem)
        return int(agent.params.get("block_size", 256))
    finally:
        env.close()


if __name__ == "__main__":
    main()
