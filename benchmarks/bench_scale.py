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

``long`` -- the long-horizon study (issue 33, "horizons up to 10^6 where BBCG's round
allows"; standard-v2's scale scenarios keep their horizons so that scoring an agent on
the suite stays under 10 minutes): on each SCALE_V2 scenario's loss sequence and set,
tuned BBCG (the constants standard-v2's reference archive holds: c tuned with delta = r/2
and the residual estimator at the scenario's tuning horizon on seeds 100-101), random
(the scenario's vertex-mixture law) and theory BBCG, on seeds ``--seeds`` (0-7) at
LONG_HORIZONS (10^6 on the polytopes, 10^5 on the nuclear ball), checkpoints at
LONG_MARKS; resumable sweeps (``run_cells``) in DIR/<name>/{tuned,theory}, played in
order of importance (tuned everywhere, random everywhere, then theory BBCG), so a study
cut short holds the most telling part. ``long-tables`` prints its tables (every series
paired with random at the horizon; tuned BBCG minus random at each checkpoint, over the
whole prefix and over each window's own rounds); ``long-frontier --base DIR2`` redraws
each scenario's compute frontier (docs/figures/frontier_v2_*.png) from run_demo's runs
in DIR2 (every horizon; standard-v2's archive without it: the largest only) extended by
the study's final points.

Run:  OMP_NUM_THREADS=1 nice -n 10 python benchmarks/bench_scale.py long --out DIR
      python benchmarks/bench_scale.py long-tables --out DIR
      python benchmarks/bench_scale.py long-frontier --out DIR --base DIR2 [--figures F]
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
    horizon, every series paired with random by seed (:func:`bco_gym.stats.ranking.rank`:
    95% Student-t interval, Holm-adjusted p-value over the scenario's pairs, seeds won),
    beside the Bonferroni interval at level 1 - 0.05/m (m pairs: simultaneous, so wider
    than Holm's test needs); and each series' CPU seconds per run."""
    from pathlib import Path

    from bco_gym.reports.suites import SCALE_V2
    from bco_gym.stats.paired import group_series, paired_differences, t_interval
    from bco_gym.stats.ranking import rank
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


#: The long-horizon study's checkpoints besides the default log grid (``long``).
LONG_MARKS = (1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000)
#: The long study's horizon per scenario (``long``): 10^6 on the polytopes (35-61 us a
#: round of BBCG); 10^5 on the nuclear ball, where BBCG's round costs about 0.11 ms and
#: random's cost 0.27 ms before the sketch membership test; docs/scale.md adds 3 10^5
#: there (``--horizons scale-nuclear-64-lowrank=300000``) where the budget allowed.
LONG_HORIZONS = {
    "scale-birkhoff-32-lownoise": 1_000_000,
    "scale-flow-23-lownoise": 1_000_000,
    "scale-nuclear-64-lowrank": 100_000,
}


def tuned_bbcg(name: str) -> dict:
    """BBCG's tuned keyword arguments of a SCALE_V2 scenario, as standard-v2's shipped
    reference archive holds them (tuned at the scenario's tuning horizon on seeds
    100-101, :class:`~bco_gym.reports.suites.ScaleTuning`), with that tuning's seeds and
    horizon: {"kwargs", "seeds", "horizon"}."""
    from bco_gym.reports.references import load_scenario

    archived = load_scenario("standard-v2", name, check_version=False)
    if not archived:
        raise SystemExit(f"no standard-v2 reference archive for {name!r}")
    tuned = {str(c["agent_kwargs"]): c["agent_kwargs"]
             for c, _ in archived[f"runs/{name}-tuned"][1] if c["agent"] == "bbcg"}  # fmt: skip
    if len(tuned) != 1:
        raise SystemExit(f"{name}: expected one tuned BBCG, found {list(tuned)}")
    tuning = [c for c, _ in archived[f"tuning/{name}"][1] if c["agent"] == "bbcg"]
    return {
        "kwargs": next(iter(tuned.values())),
        "seeds": sorted({c["seed"] for c in tuning}),
        "horizon": sorted({c["horizon"] for c in tuning}),
    }


def long_cells(spec, horizon: int, seeds: list[int]) -> list:
    """Tuned BBCG, theory BBCG and random (the scenario's law) at ``horizon`` on
    ``seeds``, with checkpoints at LONG_MARKS and the default log grid."""
    from bco_gym.engine.tally import default_checkpoints
    from bco_gym.sweeps.sweep import cells

    marks = sorted({*default_checkpoints(horizon), *(m for m in LONG_MARKS if m <= horizon)})
    env_kwargs = dict(spec.env_kwargs)
    common = {"env_kwargs": env_kwargs, "checkpoints": marks}
    random_kwargs = dict(spec.agent_kwargs.get("random", {}))
    tuned = tuned_bbcg(spec.name)["kwargs"]
    return [
        *cells(spec.env_id, "bbcg", horizon, seeds, agent_kwargs={"bbcg": tuned},
               constants={"bbcg": "tuned"}, **common),
        *cells(spec.env_id, "random", horizon, seeds,
               agent_kwargs={"random": random_kwargs} if random_kwargs else None,
               constants={"random": "theory"}, **common),
        *cells(spec.env_id, "bbcg", horizon, seeds, **common),
    ]  # fmt: skip


def long_play(out: str, names: list[str] | None, horizons: dict[str, int], seeds: list[int],
              backend: str, batch_size: int | None) -> None:  # fmt: skip
    """Play the long study into ``out/<scenario>/{tuned,theory}`` (resumable sweeps), in
    order of importance, so that a study cut short holds the most telling part: tuned
    BBCG on every scenario, then random on every scenario, then theory BBCG."""
    from pathlib import Path

    from bco_gym.reports.suites import SCALE_V2
    from bco_gym.sweeps.sweep import run_cells

    specs = [spec for spec in SCALE_V2 if not names or spec.name in names]
    stages = (("tuned", "bbcg", "tuned"), ("theory", "random", "theory"),
              ("theory", "bbcg", "theory"))  # fmt: skip
    for stem, agent, constants in stages:
        for spec in specs:
            T = horizons.get(spec.name) or LONG_HORIZONS[spec.name]
            part = [cell for cell in long_cells(spec, T, seeds)
                    if cell.agent == agent and cell.constants == constants]  # fmt: skip
            load, wall = load_average(), time.perf_counter()
            results = run_cells(part, out=Path(out) / spec.name / stem, backend=backend,
                                batch_size=batch_size, progress="lines")  # fmt: skip
            for label, group in _by_label(results).items():
                cpu = [r.cpu_seconds for r in group]
                per_round = np.mean([r.final_regret for r in group]) / T
                print(f"{spec.name} T={T:,} {label}: R_T/T {per_round:.4g}, CPU s/run "
                      f"{np.mean(cpu):.1f} [{min(cpu):.1f}, {max(cpu):.1f}] "
                      f"({1e6 * np.mean(cpu) / T:.0f} us a round); "
                      f"{time.perf_counter() - wall:.0f} s wall, load "
                      f"{load:.1f}-{load_average():.1f}", flush=True)  # fmt: skip


def _by_label(results: list) -> dict:
    from bco_gym.stats.paired import group_series

    return group_series(results)


def long_results(out: str, name: str) -> list:
    """The long study's finished results of one scenario (tuned and theory sweeps) in
    ``out``, or in each of several directories separated by commas (one per horizon: a
    sweep holds one horizon)."""
    from pathlib import Path

    from bco_gym.sweeps import load_sweep

    found = []
    for root in out.split(","):
        for stem in ("tuned", "theory"):
            directory = Path(root) / name / stem
            if directory.is_dir():
                found += load_sweep(directory)
    return found


def long_tables(out: str, names: list[str] | None) -> list[dict]:
    """Per SCALE_V2 scenario of the long study (``long``): the table at its horizon, every
    series paired with random by seed (:func:`bco_gym.stats.ranking.rank`: the 95%
    Student-t interval of the mean difference of R_T / T, Holm's adjusted p over the
    scenario's three pairs, seeds lower), CPU seconds per run; then at each checkpoint of
    LONG_MARKS tuned BBCG minus random: the difference of R_t / t (cumulative) and of the
    window's own rounds, (R_t - R_s) / (t - s) since the previous mark (does the gap a
    round grow as BBCG learns?)."""
    from bco_gym.reports.suites import SCALE_V2
    from bco_gym.stats.paired import group_series, paired_differences, t_interval
    from bco_gym.stats.ranking import rank

    rows = []
    for spec in SCALE_V2:
        if names and spec.name not in names:
            continue
        results = long_results(out, spec.name)
        if not results:
            continue
        T = max(r.horizon for r in results)
        final = [r for r in results if r.horizon == T]
        groups = group_series(final)
        complete = {label: len(g) for label, g in groups.items()}
        ranking = rank(final)
        print(f"\n{spec.name}, T = {T:,}, seeds per series {complete}; {ranking.text()}")
        print("| series | R_T / T | minus random [95% CI] | Holm p | seeds lower | "
              "CPU s/run [min, max] | us a round |")  # fmt: skip
        print("|---|---|---|---|---|---|---|")
        for label in ranking.labels:
            group = groups[label]
            per_round = float(np.mean([r.final_regret for r in group])) / T
            cpu = [r.cpu_seconds for r in group]
            row = {"scenario": spec.name, "horizon": T, "series": label, "seeds": len(group),
                   "per_round": per_round, "cpu": float(np.mean(cpu)),
                   "cpu_min": min(cpu), "cpu_max": max(cpu)}  # fmt: skip
            if label == "random":
                cells = ["(reference)", "-", "-"]
            else:
                pair = ranking.pairs[(label, "random")]
                cells = [
                    f"{pair.mean / T:.4g} [{pair.low / T:.4g}, {pair.high / T:.4g}]",
                    f"{pair.adjusted:.2g}",
                    f"{pair.wins}/{pair.pairs}",
                ]
                row.update(mean=pair.mean / T, low=pair.low / T, high=pair.high / T,
                           holm=pair.adjusted, wins=pair.wins, pairs=pair.pairs)  # fmt: skip
            print(f"| {label} | {per_round:.4g} | " + " | ".join(cells)
                  + f" | {np.mean(cpu):.1f} [{min(cpu):.1f}, {max(cpu):.1f}] "
                  f"| {1e6 * np.mean(cpu) / T:.0f} |")  # fmt: skip
            rows.append(row)
        tuned = [label for label in groups if label.startswith("bbcg (tuned")]
        if not tuned or "random" not in groups:
            continue
        seeds, differences = paired_differences(groups[tuned[0]], groups["random"])
        points = list(groups["random"][0].checkpoints)
        print(f"\n{tuned[0]} minus random at the checkpoints ({len(seeds)} seeds): the "
              "difference of R_t / t, and of the regret per round in the window since the "
              "previous mark")  # fmt: skip
        print("| t | R_t / t minus random [95% CI] | seeds lower | window | "
              "window's rounds, per round [95% CI] |")  # fmt: skip
        print("|---|---|---|---|---|")
        previous = 0
        for mark in [m for m in LONG_MARKS if m <= T]:
            at = points.index(mark)
            mean, low, high = (float(v) for v in t_interval(differences[:, at] / mark))
            before = differences[:, points.index(previous)] if previous else 0.0
            window = (differences[:, at] - before) / (mark - previous)
            w_mean, w_low, w_high = (float(v) for v in t_interval(window))
            wins = int((differences[:, at] < 0).sum())
            print(
                f"| {mark:,} | {mean:.4g} [{low:.4g}, {high:.4g}] | {wins}/{len(seeds)} | "
                f"{previous + 1:,}-{mark:,} | {w_mean:.4g} [{w_low:.4g}, {w_high:.4g}] |"
            )
            rows.append({"scenario": spec.name, "checkpoint": mark, "mean": mean, "low": low,
                         "high": high, "wins": wins, "window_mean": w_mean,
                         "window_low": w_low, "window_high": w_high})  # fmt: skip
            previous = mark
    return rows


#: The docs' frontier figure of each SCALE_V2 scenario (docs/figures/frontier_v2_*.png).
FRONTIER_FIGURES = {
    "scale-birkhoff-32-lownoise": "frontier_v2_birkhoff32.png",
    "scale-flow-23-lownoise": "frontier_v2_flow23.png",
    "scale-nuclear-64-lowrank": "frontier_v2_nuclear64.png",
}


def archived_results(name: str, base: str | None = None) -> list:
    """The runs of a SCALE_V2 scenario (theory and tuned, every horizon; not the tuning
    runs) that ``run_demo(base/<name>, scenarios=[spec])`` played, or without ``base``
    standard-v2's shipped reference runs (the largest horizon only)."""
    from pathlib import Path

    from bco_gym.reports.references import load_scenario
    from bco_gym.sweeps import load_sweep

    if base:
        runs = Path(base) / name / "runs"
        return [r for d in sorted(runs.iterdir()) if d.is_dir() for r in load_sweep(d)]

    archived = load_scenario("standard-v2", name, check_version=False) or {}
    return [result for relative, (_, cells) in archived.items() if relative.startswith("runs/")
            for _, result in cells]  # fmt: skip


def long_frontier(
    out: str, names: list[str] | None, figures: str, base: str | None = None
) -> list[dict]:
    """Per SCALE_V2 scenario, the compute frontier of standard-v2's reference runs (every
    series at its horizons, FKM at its shorter ones) extended by the long study's final
    points (``long``: tuned and theory BBCG and random at 10^6, 10^5 and 3 10^5); the figure into
    ``figures`` and, within tuned FKM's budget and beyond it, what each series reaches."""
    from pathlib import Path

    from bco_gym.plotting import save
    from bco_gym.plotting.frontier import frontier_figure
    from bco_gym.reports.scale import reference_label
    from bco_gym.reports.suites import SCALE_V2
    from bco_gym.stats.frontier import frontier_points, reference_budget

    rows = []
    for spec in SCALE_V2:
        if names and spec.name not in names:
            continue
        results = archived_results(spec.name, base)
        results += long_results(out, spec.name)  # every horizon the study played
        reference = reference_label(sorted({*frontier_points(results)}), "fkm")
        budget = reference_budget(results, reference) if reference else None
        figure = frontier_figure(results, budget=budget)
        path = save(figure, Path(figures) / FRONTIER_FIGURES[spec.name])
        print(f"\n{spec.name}: {path} (budget {budget:.3g} CPU s per run, {reference})")
        print("| series | T | seeds | CPU s/run | R_T / T | x budget |")
        print("|---|---|---|---|---|---|")
        for label, points in frontier_points(results).items():
            for p in points:
                print(f"| {label} | {p.horizon:,} | {p.seeds} | {p.seconds:.3g} | "
                      f"{p.per_round:.4g} | {p.seconds / budget:.2g} |")  # fmt: skip
                rows.append({"scenario": spec.name, "series": label, "horizon": p.horizon,
                             "seeds": p.seeds, "seconds": p.seconds,
                             "per_round": p.per_round, "budget": budget})  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "what",
        choices=[
            "latency",
            "limits",
            "full",
            "signal",
            "tables",
            "long",
            "long-tables",
            "long-frontier",
        ],
    )
    parser.add_argument("--scenarios", default="", help="long: SCALE_V2 names (default all)")
    parser.add_argument("--horizons", default="", help="long: NAME=T,... (else LONG_HORIZONS)")
    parser.add_argument("--seeds", default="0-7", help="long: evaluation seeds, e.g. 0-7")
    parser.add_argument("--backend", default="process", help="long: the sweep backend")
    parser.add_argument("--base", default=None, help="long-frontier: run_demo's directory")
    parser.add_argument("--figures", default="docs/figures", help="long-frontier: where")
    parser.add_argument("--batch-size", type=int, default=1, help="long: seeds per batch")
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
    elif args.what == "long":
        first, _, last = args.seeds.partition("-")
        seeds = list(range(int(first), int(last or first) + 1))
        names = [n for n in args.scenarios.split(",") if n]
        horizons = {n: int(float(t)) for n, _, t in
                    (h.partition("=") for h in args.horizons.split(",") if h)}  # fmt: skip
        long_play(args.out, names, horizons, seeds, args.backend, args.batch_size)
    elif args.what == "long-frontier":
        names = [n for n in args.scenarios.split(",") if n]
        rows = long_frontier(args.out, names, args.figures, args.base)
        print(f"wrote {write_json('scale_long_frontier', [], {'frontier': rows})}")
    elif args.what == "long-tables":
        names = [n for n in args.scenarios.split(",") if n]
        rows = long_tables(args.out, names)
        print(f"wrote {write_json('scale_long', [], {'long': rows})}")
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
