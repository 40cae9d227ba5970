"""Cheap baselines at scale: random play against BBCG, and the nuclear comparator.

For each polytope scenario of standard-v2's scale scenarios (``SCALE_V2``), at its
largest horizon on seed 0: random play (``law="vertex-mixture"``, the scenario's) and
BBCG with the tuned rows' fixed arguments (delta = r/2, the residual estimator) and
c = ``--c``, each one ``run`` taking turns for ``--repeats`` repeats
(``common.interleaved``); the figure is random's CPU seconds over BBCG's, repeat by
repeat (target <= 2). Beside it, random with the set's own law (``law="set"``, every
result published before: standard-v1's) at ``--old-horizon`` rounds, per round, for the
speed-up of the new law.

On the nuclear-norm ball scenario: BBCG's run at the largest horizon, ``repeats`` times;
the figure is the comparator's share of the run's time, comparator_seconds /
(cpu_seconds + comparator_seconds) (target <= 10%): the comparator is summed while the
rounds are played (one LMO per checkpoint at the end), and beside it the CPU seconds of
drawing the sequence a second time (``losses.comparator``, what a run did before).

Run:  python benchmarks/bench_baselines.py [--repeats 3] [--horizon T] [--c 1000] [--only NAMES]
"""

from __future__ import annotations

import argparse
from functools import partial

from common import (
    Load,
    Row,
    Spread,
    interleaved,
    load_average,
    pin_blas_threads,
    table,
    verdict,
    write_json,
)

pin_blas_threads()

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import bco_gym  # noqa: E402, F401  (registers the env ids)
from bco_gym.engine import run  # noqa: E402
from bco_gym.engine.tally import default_checkpoints  # noqa: E402
from bco_gym.reports.suites import SCALE_V2  # noqa: E402

BENCHMARK = "baselines"


def _bbcg_kwargs(spec, c: float) -> dict:
    return {**dict(spec.tuning.fixed["bbcg"]), "c": c}


def random_against_bbcg(spec, horizon: int, repeats: int, c: float, old_horizon: int) -> Row:
    env_kwargs = dict(spec.env_kwargs)
    calls = {
        "random": partial(run, spec.env_id, "random", horizon=horizon, env_kwargs=env_kwargs,
                          agent_kwargs=dict(spec.agent_kwargs["random"])),
        "bbcg": partial(run, spec.env_id, "bbcg", horizon=horizon, env_kwargs=env_kwargs,
                        agent_kwargs=_bbcg_kwargs(spec, c)),
        "random-old": partial(run, spec.env_id, "random", horizon=old_horizon,
                              env_kwargs=env_kwargs),
    }  # fmt: skip
    timings = interleaved(calls, repeats)
    ratio = timings.ratio("random", "bbcg")
    per_round = {
        name: 1e6 * float(np.median(timings.seconds[name])) / h
        for name, h in (("random", horizon), ("bbcg", horizon), ("random-old", old_horizon))
    }
    detail = {
        "horizon": horizon,
        "us_per_round": per_round,
        "old_over_new": per_round["random-old"] / per_round["random"],
        "seconds": timings.seconds,
        "bbcg_c": c,
    }
    return Row.measured(
        BENCHMARK, f"{spec.name}: random (vertex-mixture) / tuned-form BBCG, T={horizon:,}",
        ratio, "x", timings.load, "<= 2", verdict(ratio.median, at_most=2.0), detail,
    )  # fmt: skip


def _in_pass_comparators(losses, checkpoints, horizon: int) -> float:
    """CPU seconds a run spends on its comparators now: the chunks' theta_t summed up to
    each checkpoint (ThetaSums, as the run's tracker does while it plays), then one LMO
    per checkpoint (``linear_comparators``). The chunks' draws are not counted (the run
    draws them to play)."""
    import time

    from bco_gym.engine.metrics import ThetaSums
    from bco_gym.losses.linear import linear_comparators

    sums, spent = ThetaSums(checkpoints), 0.0
    for start, end, params, part in losses.chunks(0, horizon):
        begin = time.process_time()
        sums.add(params["theta"], part.start, start, end)
        spent += time.process_time() - begin
    begin = time.process_time()
    linear_comparators(losses.set, sums.stops, sums.found)
    return spent + time.process_time() - begin


def comparator_share(spec, horizon: int, repeats: int, c: float) -> Row:
    """The comparator's share of BBCG's run: the CPU seconds of the comparators as the run
    computes them (:func:`_in_pass_comparators`; inside the run's ``cpu_seconds`` since
    they are summed in the pass) over the run's ``cpu_seconds``, run by run; beside it,
    drawing the sequence a second time (``losses.comparator``, what a run did before)."""
    env_kwargs = dict(spec.env_kwargs)
    env = gym.make(spec.env_id, horizon=horizon, **env_kwargs)
    env.reset(seed=0)
    losses = env.unwrapped.losses
    checkpoints = default_checkpoints(horizon)
    calls = {
        "run": partial(run, spec.env_id, "bbcg", horizon=horizon, env_kwargs=env_kwargs,
                       agent_kwargs=_bbcg_kwargs(spec, c)),
        "second-pass": partial(losses.comparator, checkpoints),
    }  # fmt: skip
    calls["in-pass"] = partial(_in_pass_comparators, losses, checkpoints, horizon)
    shares, results = [], []
    start = load_average()
    for _ in range(repeats):
        timings = interleaved(calls, 1)
        result = timings.results["run"]
        comparator = timings.results["in-pass"]
        shares.append(comparator / result.cpu_seconds)
        results.append((result.cpu_seconds, comparator, timings.seconds["second-pass"][0]))
    env.close()
    share = Spread.of(shares)
    detail = {
        "horizon": horizon,
        "checkpoints": len(checkpoints),
        "run_cpu_s, in_pass_comparator_cpu_s, second_pass_cpu_s": results,
    }
    return Row.measured(
        BENCHMARK, f"{spec.name}: comparator / BBCG's run, T={horizon:,}",
        share, "x", Load(start, load_average()), "<= 0.10", verdict(share.median, at_most=0.10),
        detail,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--horizon", type=int, default=None, help="default: each scenario's")
    parser.add_argument("--old-horizon", type=int, default=2_000)
    parser.add_argument("--c", type=float, default=1_000.0)
    parser.add_argument("--only", default="", help="scenario names, comma-separated")
    args = parser.parse_args()
    rows = []
    for spec in SCALE_V2:
        if args.only and spec.name not in args.only.split(","):
            continue
        horizon = args.horizon or spec.horizon
        if spec.env_id == "BCO-NuclearBall-v0":
            rows.append(comparator_share(spec, horizon, args.repeats, args.c))
        else:
            rows.append(random_against_bbcg(spec, horizon, args.repeats, args.c, args.old_horizon))
        print(table(rows[-1:]), flush=True)
        if "us_per_round" in rows[-1].detail:
            print({k: round(v, 1) for k, v in rows[-1].detail["us_per_round"].items()})
    print(table(rows))
    print(f"wrote {write_json('baselines', rows)}")


if __name__ == "__main__":
    main()
