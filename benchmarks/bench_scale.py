"""Scale: per-round latency, BBCG's background routine under the GIL, and scale limits.

``latency`` -- on the n x n nuclear-norm ball with matrix-completion losses, for n in
``--sizes``: BBCG with its conditional-gradient routine in the round (``background=False``),
BBCG with the routine in a worker thread (``background=True``) and FKM, each through the
Gymnasium loop (``fast=False``: every round is timed alone, so ``RunResult.latency_us`` is
the latency a live player sees), taking turns for ``--repeats`` repeats
(``common.interleaved``). All three get delta = r/2 (Theorem 1's delta is capped at r at
this dimension, where K_delta = {c} and there is nothing to project). Beside the
latencies: one LMO call (top singular pair) and one projection (full SVD) of the size,
timed alone. What it shows: the synchronous BBCG pays a block's LMO calls in the block's
last round (its max, and its p99 when blocks are short); with the worker thread that
round only joins the routine, which ran while the block was played -- if the routine
releases the GIL (LAPACK/ARPACK calls do, the Python between them does not). The CPU
seconds (both threads) against the wall seconds of the background runs say how much
truly overlapped: overlap = (CPU - wall) / routine CPU, 1 when fully parallel, 0 when
the GIL serialised it.

``limits`` -- BBCG and FKM on each family at growing sizes for ``--horizon`` rounds
(default 10^4), seconds per round and peak memory (tracemalloc) of the run, and the
projected time of a 10^5-round run (10^5 x the per-round seconds). ``--full NAME`` runs
one 10^5-round BBCG run on the 256 x 256 nuclear ball (or NAME's largest size) and
reports its time and memory per round.

``signal`` -- why a scenario at scale can or cannot separate from random play: for each
scenario of ``standard-v1`` with a tuning and of standard-v2's ``SCALE_V2``, play the
centre plus delta*u_t (delta = r/2, the tuned rows' radius; u_t uniform on the unit
sphere of the tangent space) for ``--horizon`` rounds (default 20,000) on seed 0 with
full feedback, and measure the mean loss's gradient at the centre, ||grad F(c)||
(tangent part; the squared norm of the rounds' mean gradient less its sampling variance
/ N, so unbiased), and the residual estimate's size E||g_t||^2 = E[((d/delta)(f_t(y_t) -
f_(t-1)(y_(t-1))))^2]. The sum of T estimates carries T grad F against noise of norm
sqrt(T E||g_t||^2), of which a share 1/d lies along grad F: the summed estimates point
down the gradient after about T_dir = E||g_t||^2 / (d ||grad F||^2) rounds, and estimate
the whole gradient (every direction) after T* = d T_dir. A horizon well below T_dir
cannot learn, whatever the constants; between T_dir and T* an agent that moves to the
LMO vertex of the summed estimates (BBCG, BFW) can gain while the estimate is still
mostly noise. The measurement is :func:`bco_gym.reports.signal.gradient_signal`, tested
against a direct simulation.

Run:  python benchmarks/bench_scale.py latency [--sizes 64,128,256] [--horizon 2500]
      python benchmarks/bench_scale.py limits [--horizon 10000]
      python benchmarks/bench_scale.py full [--size 256] [--horizon 100000]
      python benchmarks/bench_scale.py signal [--horizon 20000]
      python benchmarks/bench_scale.py tables --out DIR   (DIR/<scenario>/runs from run_demo)

``tables`` -- per scenario of ``SCALE_V2`` played into DIR/<name> (``run_demo(DIR/<name>,
scenarios=[spec])``), the table at its largest horizon: every series paired with random.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from functools import partial

from common import interleaved, load_average, pin_blas_threads, write_json

pin_blas_threads()

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import bco_gym  # noqa: E402, F401  (registers the env ids)
from bco_gym.engine import run  # noqa: E402

NUCLEAR = "BCO-NuclearBall-v0"
FAMILIES = {
    "nuclear": (NUCLEAR, lambda n: {"rows": n, "cols": n}, (64, 128, 256, 512)),
    "flow": ("BCO-ShortestPath-v0", lambda n: {"grid": n}, (23, 30, 40, 50)),
    "birkhoff": ("BCO-Birkhoff-v0", lambda n: {"n": n}, (32, 50, 70, 100)),
}


def half_radius(env_id: str, env_kwargs: dict) -> float:
    """delta = r/2 for the env's set."""
    env = gym.make(env_id, **env_kwargs)
    try:
        return env.unwrapped.set.inner_radius / 2
    finally:
        env.close()


def oracle_seconds(size: int, repeats: int = 5) -> tuple[float, float]:
    """(one LMO call, one projection) on the size x size nuclear ball, best of ``repeats``."""
    env = gym.make(NUCLEAR, rows=size, cols=size)
    convex_set = env.unwrapped.set
    env.close()
    rng = np.random.default_rng(0)
    direction = rng.standard_normal(convex_set.shape)
    outside = 3 * direction / np.linalg.norm(direction)
    lmo = project = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        convex_set.lmo(direction)
        lmo = min(lmo, time.perf_counter() - start)
        start = time.perf_counter()
        convex_set.project(outside)
        project = min(project, time.perf_counter() - start)
    return lmo, project


def latency(sizes: list[int], horizon: int, repeats: int) -> dict:
    figures = {}
    for size in sizes:
        env_kwargs = {"rows": size, "cols": size}
        delta = half_radius(NUCLEAR, env_kwargs)
        common = {"smoothing_radius": delta, "c": 1.0}
        setups = {
            "bbcg": ("bbcg", {**common, "background": False}),
            "bbcg-background": ("bbcg", {**common, "background": True}),
            "fkm": ("fkm", common),
        }
        calls = {
            name: partial(run, NUCLEAR, agent, horizon=horizon, env_kwargs=env_kwargs,
                          agent_kwargs=kwargs, fast=False)
            for name, (agent, kwargs) in setups.items()
        }  # fmt: skip
        timings = interleaved(calls, repeats)
        lmo, project = oracle_seconds(size)
        row = {"lmo_us": 1e6 * lmo, "projection_us": 1e6 * project, "load": str(timings.load)}
        for name in setups:
            result = timings.results[name]
            row[name] = {
                "latency_us": result.latency_us,
                "mean_us": 1e6 * (result.agent_seconds + result.env_seconds) / horizon,
                "cpu_s": float(np.median(timings.seconds[name])),
                "lmo_calls": result.lmo_calls,
                "projections": result.projections,
                "block_size": result.params.get("block_size"),
            }
        figures[size] = row
        print_latency(size, horizon, row)
    return figures


def print_latency(size: int, horizon: int, row: dict) -> None:
    print(
        f"\nnuclear ball {size}x{size}, completion, T={horizon}, {row['load']}; "
        f"one LMO {row['lmo_us']:.0f} us, one projection {row['projection_us']:.0f} us"
    )
    print("| agent | p50 µs | p90 µs | p99 µs | max µs | mean µs | CPU s | LMO calls | proj |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in ("bbcg", "bbcg-background", "fkm"):
        entry = row[name]
        lat = entry["latency_us"]
        print(
            f"| {name} | {lat['p50']:.0f} | {lat['p90']:.0f} | {lat['p99']:.0f} | "
            f"{lat['max']:.0f} | {entry['mean_us']:.0f} | {entry['cpu_s']:.2f} | "
            f"{entry['lmo_calls']} | {entry['projections']} |"
        )


def measured_run(env_id: str, env_kwargs: dict, agent: str, horizon: int) -> dict:
    """One run with delta = r/2: seconds per round (agent + env), peak traced memory."""
    kwargs = {"smoothing_radius": half_radius(env_id, env_kwargs), "c": 1.0}
    load = load_average()
    tracemalloc.start()
    start = time.perf_counter()
    result = run(env_id, agent, horizon=horizon, env_kwargs=env_kwargs, agent_kwargs=kwargs)
    wall = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    per_round = (result.agent_seconds + result.env_seconds) / horizon
    return {
        "env_id": env_id,
        "env_kwargs": env_kwargs,
        "agent": agent,
        "horizon": horizon,
        "us_per_round": 1e6 * per_round,
        "projected_1e5_minutes": 1e5 * per_round / 60,
        "wall_s": wall,
        "comparator_s": result.comparator_seconds,
        "peak_mb": peak / 2**20,
        "latency_us": result.latency_us,
        "load": f"{load:.1f}-{load_average():.1f}",
        "dim": result.problem["dim"],
    }


def limits(horizon: int, agents: list[str]) -> list[dict]:
    rows = []
    print(
        "| family | size | dim | agent | µs/round | projected 10^5 rounds (min) | peak MB | load |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for family, (env_id, kwargs_of, sizes) in FAMILIES.items():
        for agent in agents:
            for size in sizes:
                row = measured_run(env_id, kwargs_of(size), agent, horizon)
                rows.append({"family": family, "size": size, **row})
                print(
                    f"| {family} | {size} | {row['dim']} | {agent} | {row['us_per_round']:.0f} | "
                    f"{row['projected_1e5_minutes']:.1f} | {row['peak_mb']:.0f} | {row['load']} |",
                    flush=True,
                )
                if row["projected_1e5_minutes"] > 10:
                    break  # larger sizes of this family take longer still
    return rows


def gradient_signal(env_id: str, env_kwargs: dict, rounds: int, seed: int = 0) -> dict:
    """||grad F(c)||, E||g_t||^2 of the residual estimate at the centre, T_dir and T*
    (:func:`bco_gym.reports.signal.gradient_signal`)."""
    from dataclasses import asdict

    from bco_gym.reports.signal import gradient_signal as measure

    found = measure(env_id, env_kwargs, rounds, seed)
    return {"env_id": env_id, "env_kwargs": env_kwargs, **asdict(found)}


def signal(rounds: int) -> list[dict]:
    from bco_gym.reports.suites import SCALE_V2, SUITES

    rows = []
    print("| scenario | aff. dim d | delta | ‖∇F(c)‖ | rms ‖g_t‖ | T_dir | T* = d T_dir | load |")
    print("|---|---|---|---|---|---|---|---|")
    for spec in [*SUITES["standard-v1"], *SCALE_V2]:
        if spec.tuning is None:
            continue
        load = load_average()
        row = {"scenario": spec.name, **gradient_signal(spec.env_id, dict(spec.env_kwargs), rounds)}
        row["load"] = f"{load:.1f}-{load_average():.1f}"
        rows.append(row)
        print(
            f"| {spec.name} | {row['aff_dim']} | {row['delta']:.4g} | {row['gradient_norm']:.3g} "
            f"| {row['estimate_rms']:.3g} | {row['rounds_direction']:.2g} "
            f"| {row['rounds_needed']:.2g} | {row['load']} |",
            flush=True,
        )
    return rows


def tables(out: str, names: list[str] | None = None) -> list[dict]:
    """Per SCALE_V2 scenario played into ``out`` (``run_demo``): the table at its largest
    horizon, every series paired with random by seed (:func:`bco_gym.reports.ranking.rank`:
    95% Student-t interval, Holm-adjusted p-value over the scenario's pairs, seeds won),
    beside the Bonferroni interval at level 1 - 0.05/m (m pairs: simultaneous, so wider
    than Holm's test needs); and each series' CPU seconds per run."""
    from pathlib import Path

    from bco_gym.reports.paired import group_series, paired_differences, t_interval
    from bco_gym.reports.ranking import rank
    from bco_gym.reports.suites import SCALE_V2
    from bco_gym.sweeps import load_sweep

    rows = []
    for spec in SCALE_V2:
        if names and spec.name not in names:
            continue
        runs = Path(out) / spec.name / "runs"
        if not runs.is_dir():
            continue
        results = [r for d in sorted(runs.iterdir()) for r in load_sweep(d)]
        tuned = [r for d in sorted((Path(out) / spec.name / "tuning").glob("*"))
                 if d.is_dir() for r in load_sweep(d)]  # fmt: skip
        spent = sum(r.cpu_seconds + r.comparator_seconds for r in [*results, *tuned])
        print(f"\n{spec.name}: {len(results)} runs and {len(tuned)} tuning runs, "
              f"{spent:.0f} CPU s (agent + env; the comparator in wall seconds)")  # fmt: skip
        rows.append({"scenario": spec.name, "cpu_seconds": spent, "runs": len(results),
                     "tuning_runs": len(tuned)})  # fmt: skip
        final = [r for r in results if r.horizon == spec.horizon]
        if not final:
            print(f"\n{spec.name}: nothing at T = {spec.horizon:,} yet")
            continue
        ranking = rank(final)
        pairs = len(ranking.labels) * (len(ranking.labels) - 1) // 2
        groups = group_series(final)
        print(f"\n{spec.name}, T = {spec.horizon:,}, seeds {list(spec.seeds)}; {ranking.text()}")
        print("| series | R_T / T | minus random [95% CI] | Holm p | Bonferroni interval | "
              "seeds lower | CPU s/run |")  # fmt: skip
        print("|---|---|---|---|---|---|---|")
        for label in ranking.labels:
            group = groups[label]
            per_round = float(np.mean([r.final_regret for r in group])) / spec.horizon
            cpu = float(np.mean([r.cpu_seconds for r in group]))
            row = {"scenario": spec.name, "series": label, "per_round": per_round, "cpu": cpu}
            if label == "random" or "random" not in groups:
                cells = ["(reference)" if label == "random" else "-", "-", "-", "-"]
            else:
                pair = ranking.pairs[(label, "random")]
                _, differences = paired_differences(group, groups["random"])
                _, low, high = t_interval(differences[:, -1] / spec.horizon,
                                          level=1 - 0.05 / pairs)  # fmt: skip
                t = spec.horizon
                cells = [
                    f"{pair.mean / t:.4g} [{pair.low / t:.4g}, {pair.high / t:.4g}]",
                    f"{pair.adjusted:.2g}",
                    f"[{float(low):.4g}, {float(high):.4g}]",
                    f"{pair.wins}/{pair.pairs}",
                ]
                row.update(mean=pair.mean / t, low=pair.low / t, high=pair.high / t,
                           holm=pair.adjusted, wins=pair.wins, pairs=pair.pairs)  # fmt: skip
            print(f"| {label} | {per_round:.4g} | " + " | ".join(cells) + f" | {cpu:.3g} |")
            rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["latency", "limits", "full", "signal", "tables"])
    parser.add_argument("--out", default="results-scale", help="tables: run_demo's directory")
    parser.add_argument("--sizes", default="64,128,256")
    parser.add_argument("--horizon", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--agents", default="bbcg,fkm")
    parser.add_argument("--size", type=int, default=256)
    args = parser.parse_args()
    if args.what == "latency":
        sizes = [int(s) for s in args.sizes.split(",")]
        figures = latency(sizes, args.horizon or 2_500, args.repeats)
        print(f"wrote {write_json('scale_latency', [], {'latency': figures})}")
    elif args.what == "limits":
        rows = limits(args.horizon or 10_000, args.agents.split(","))
        print(f"wrote {write_json('scale_limits', [], {'limits': rows})}")
    elif args.what == "tables":
        rows = tables(args.out)
        print(f"wrote {write_json('scale_tables', [], {'tables': rows})}")
    elif args.what == "signal":
        rows = signal(args.horizon or 20_000)
        print(f"wrote {write_json('scale_signal', [], {'signal': rows})}")
    else:
        row = measured_run(NUCLEAR, {"rows": args.size, "cols": args.size}, "bbcg",
                           args.horizon or 100_000)  # fmt: skip
        print(row)
        print(f"wrote {write_json(f'scale_full_{args.size}', [], {'full': row})}")


if __name__ == "__main__":
    main()
