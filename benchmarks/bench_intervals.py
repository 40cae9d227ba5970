"""Cost of the changing-environment metrics: a run with and without the interval regrets.

``run("BCO-Ball-v0", agent, loss="linear-switching")`` computes, beside the static regret,
the adaptive, dynamic and switching regret (:mod:`bco_gym.losses.intervals`: about 2T
linear minimisations over the dyadic cover, batched per level, O(log T) memory). The
"without" side runs the same call with the interval regrets' update
(``IntervalRegret.update``) and the result's fields replaced by no-ops; the tracker still
reads each chunk of the losses once, as it must for the comparators' sums (the one-pass
comparator, :class:`~bco_gym.engine.metrics.ThetaSums`, which a run without the tracker
would replace by a second pass over the adversary). The ratio of their CPU times is what
the metrics add to a whole run. Measured for BBCG (the
block loop, the cheapest agent per round, where the metrics weigh most) and FKM (the
per-round loop).

Target: at most 1.5x for BBCG, 1.2x for FKM. The two sides take turns for ``--repeats``
rounds; the figure is the median [min, max] of the per-repeat ratios, with the load
average (``common.interleaved``).

Run:  python benchmarks/bench_intervals.py [--horizon 100000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import warnings

from common import Row, interleaved, pin_blas_threads, table, verdict, write_json

pin_blas_threads()

from bco_gym.engine import metrics  # noqa: E402
from bco_gym.engine.runner import run  # noqa: E402

HORIZON = 100_000
KWARGS = {"n": 10, "loss": "linear-switching", "loss_kwargs": {"segments": 5}}


def one_run(agent: str, horizon: int, with_metrics: bool):
    def play() -> float | None:
        tracker, regret = metrics.ChangingTracker, metrics.IntervalRegret
        original = tracker.fields, regret.update
        if not with_metrics:  # the chunks are still read once, for the comparators' sums
            tracker.fields = lambda self: {}
            regret.update = lambda self, thetas, constants, played: None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                result = run("BCO-Ball-v0", agent, horizon=horizon, seed=0, env_kwargs=KWARGS)
        finally:
            tracker.fields, regret.update = original
        assert (result.adaptive_regret is None) != with_metrics
        return result.final_regret

    return play


def measure(horizon: int = HORIZON, repeats: int = 5) -> tuple[list[Row], dict]:
    rows, raw = [], {"horizon": horizon, "repeats": repeats}
    for agent, target in (("bbcg", 1.5), ("fkm", 1.2)):
        calls = {"with": one_run(agent, horizon, True), "without": one_run(agent, horizon, False)}
        timings = interleaved(calls, repeats)
        ratio = timings.ratio("with", "without")
        raw[agent] = {
            "with_cpu_s": timings.seconds["with"],
            "without_cpu_s": timings.seconds["without"],
        }
        rows.append(
            Row.measured(
                f"intervals {agent}",
                f"{agent} run with / without interval regrets (ball n=10, T={horizon:,})",
                ratio,
                "x",
                timings.load,
                f"<= {target}",
                verdict(ratio.median, at_most=target),
                raw[agent],
            )
        )
    return rows, raw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=HORIZON)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rows, _ = measure(args.horizon, args.repeats)
    print(table(rows))
    write_json("intervals", rows)


if __name__ == "__main__":
    main()
