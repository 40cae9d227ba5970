"""Every benchmark of issue 7 in one run: ``make bench``.

Runs benchmarks 0-6 (each module's ``measure``) and the set-oracle table of
``bench_sets.py``, prints each figure beside its target, and writes
``benchmarks/out/<name>.json`` (machine-readable rows and raw measurements),
``benchmarks/out/summary.md`` (the markdown table) and ``benchmarks/out/scaling.png``.
51 minutes without benchmark 0 on the shared 2-core machine at load 12-22 (interleaved
repeats); ``--quick`` shrinks every horizon (a smoke test
of the scripts, not a measurement).

Run:  python benchmarks/run_all.py [--quick] [--only 0,2,...]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from common import OUT, machine, pin_blas_threads, table, write_json

pin_blas_threads()

import bench_batched  # noqa: E402
import bench_fast_path  # noqa: E402
import bench_memory  # noqa: E402
import bench_overhead  # noqa: E402
import bench_payoff  # noqa: E402
import bench_peer  # noqa: E402
import bench_scaling  # noqa: E402

HERE = Path(__file__).resolve().parent


def suite(quick: bool) -> dict[str, tuple[str, object]]:
    """Benchmark number -> (JSON name, a call returning (rows, raw))."""
    return {
        "0": (
            "peer",
            lambda: bench_peer.measure_all(4_000, 4_000, 8) if quick else bench_peer.measure_all(),
        ),
        "1": ("overhead", lambda: bench_overhead.measure(4_000 if quick else 20_000)),
        "2": ("fast_path", lambda: bench_fast_path.measure(quick)),
        "3": (
            "payoff",
            lambda: bench_payoff.measure(100, 1) if quick else bench_payoff.measure(2_000, 2),
        ),
        "4": (
            "memory",
            lambda: bench_memory.measure(100_000 if quick else 10_000_000, 10_000),
        ),
        "5": (
            "scaling",
            lambda: bench_scaling.measure((10, 100) if quick else bench_scaling.DIMENSIONS),
        ),
        # 6a/6b at T = 2*10^4 (per-run-round figures; the script's default is T = 10^5)
        "6": ("batched", lambda: bench_batched.measure(quick, horizon=20_000)),
    }


def set_oracles(quick: bool) -> str:
    """The LMO / projection table of bench_sets.py (its own process and output)."""
    finished = subprocess.run(
        [sys.executable, str(HERE / "bench_sets.py"), "--repeats", "5" if quick else "15"],
        capture_output=True,
        text=True,
        check=True,
    )
    return finished.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny horizons: a smoke test")
    parser.add_argument("--only", default=None, help="comma-separated benchmark numbers")
    args = parser.parse_args()
    chosen = None if args.only is None else set(args.only.split(","))
    rows, timings = [], {}
    for number, (name, measure) in suite(args.quick).items():
        if chosen is not None and number not in chosen:
            continue
        start = time.perf_counter()
        measured, raw = measure()
        timings[name] = time.perf_counter() - start
        write_json(name, measured, {"raw": raw})
        rows += measured
        print(table(measured), f"\n({name}: {timings[name]:.0f} s)\n", flush=True)
    oracles = set_oracles(args.quick) if chosen is None or "sets" in chosen else ""
    summary = render_summary(rows, timings, oracles, args.quick)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "summary.md").write_text(summary)
    print(summary)
    print(f"wrote {OUT / 'summary.md'} and the JSON files beside it")


def render_summary(rows: list, timings: dict, oracles: str, quick: bool) -> str:
    info = machine()
    lines = [
        "# bco_gym benchmarks (`make bench`)",
        "",
        f"Machine: {info['cpus']} CPUs, shared with other work (load average "
        f"{info['load_average']}); {info['platform']}; Python {info['python']}, "
        f"numpy {info['numpy']}, scipy {info['scipy']}; BLAS pinned to one thread.",
        "Times are CPU seconds of the benchmark process unless a row's JSON says otherwise "
        "(scaling uses the runner's own loop timers). Each ratio's two sides take turns "
        "over interleaved repeats; the figure is the median [min, max] of the per-repeat "
        "ratios, with the 1-minute load average at the start and end of its measurement.",
        "",
    ]
    if quick:
        lines += ["**--quick run: tiny horizons, not a measurement.**", ""]
    lines += [table(rows), ""]
    lines += ["Seconds per benchmark: " + ", ".join(f"{k} {v:.0f}" for k, v in timings.items())]
    if oracles:
        lines += ["", "## Set oracles (bench_sets.py)", "", "```", oracles.rstrip(), "```"]
    lines += ["", "Scaling plot: `benchmarks/out/scaling.png`.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
