"""saha-tewari: the compiled FTRL solve against the NumPy one (issue 32, "kernels where they pay").

Each row is one ``run`` of saha-tewari (quadratic losses, n = 10, T rounds, seed 0) with
``BCO_GYM_KERNELS=on`` (the solve of :mod:`bco_gym.agents.saha_tewari.kernel`) and with
``off`` (the NumPy solve), the two taking turns ``--repeats`` times (CPU seconds,
:func:`common.interleaved`); the row gives both sides' µs per round (median [min, max])
and the ratio NumPy / compiled of each turn, with the load average over the rows. The
two runs' outcomes are checked equal (plays, losses, regret and Newton step counts).
The kernel is compiled (or loaded from numba's cache) before any timing.

Run:  python benchmarks/bench_saha_tewari.py [--horizon 4000] [--repeats 5]
      [--only ball,box,simplex]
"""

from __future__ import annotations

import argparse
import functools
import os

from common import Row, interleaved, pin_blas_threads, table, write_json

pin_blas_threads()

from bco_gym.experiment import run  # noqa: E402

CASES = {
    "ball": ("BCO-Ball-v0", {"n": 10, "loss": "quadratic"}),
    "box": ("BCO-Hypercube-v0", {"n": 10, "loss": "quadratic"}),
    "simplex": ("BCO-Simplex-v0", {"n": 10, "loss": "quadratic"}),
}


def one_run(env_id: str, kwargs: dict, horizon: int, mode: str):
    """A single run with the kernels switched ``mode``."""
    os.environ["BCO_GYM_KERNELS"] = mode
    return run(env_id, "saha-tewari", horizon=horizon, seed=0, env_kwargs=kwargs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default=",".join(CASES))
    args = parser.parse_args()
    rows = []
    one_run("BCO-Ball-v0", {"n": 3}, 5, "on")  # compile, or load from the cache
    for name in args.only.split(","):
        env_id, kwargs = CASES[name]
        calls = {
            mode: functools.partial(one_run, env_id, kwargs, args.horizon, mode)
            for mode in ("on", "off")
        }
        timings = interleaved(calls, args.repeats)
        compiled, numpy_run = timings.results["on"], timings.results["off"]
        if not compiled.same_outcome(numpy_run) or compiled.stats != numpy_run.stats:
            raise SystemExit(f"{name}: the compiled and NumPy runs differ")
        per_round = 1e6 / args.horizon
        steps = numpy_run.stats["newton_steps"] / args.horizon
        for mode, label in (("off", "NumPy solve"), ("on", "compiled solve")):
            rows.append(
                Row.measured(
                    "saha-tewari",
                    f"{name} n=10 T={args.horizon}: {label}",
                    timings.spread(mode).scaled(per_round),
                    "us/round",
                    timings.load,
                    detail={"newton_steps_per_round": steps},
                )
            )
        rows.append(
            Row.measured(
                "saha-tewari",
                f"{name}: NumPy / compiled ({steps:.2f} Newton steps a round)",
                timings.ratio("off", "on"),
                "x",
                timings.load,
                target=">= 1.5",
                met=timings.ratio("off", "on").median >= 1.5,
            )
        )
        print(table(rows[-3:]), flush=True)
    write_json("bench_saha_tewari", rows, {"horizon": args.horizon, "repeats": args.repeats})


if __name__ == "__main__":
    main()
