"""5. Scaling: rounds per second against the dimension for BBCG, FKM and BFW.

``BCO-Simplex-v0`` with linear losses for n = 10 ... 10^4, each agent through
``bco_gym.experiment.run`` with its default loop (BBCG: block fast path; FKM, BFW: lean
per-round loop). rounds/s is the runner's own figure, T over the loop's time (setup and
comparator left out); beside them the rate of drawing 2n standard normals per round
(the agent's direction and the linear adversary's noise), a floor for any one-point
method on these losses. Every agent gets the smoothing radius r/2: Theorem 1's c T^(-1/4)
is capped at r = 1/sqrt(n(n-1)) for large n, where FKM's projection onto K_delta = {c}
is trivial and would flatter it. T shrinks with n so that each run takes about a second.
Writes the log-log plot ``benchmarks/out/scaling.png``.

Run:  python benchmarks/bench_scaling.py
"""

from __future__ import annotations

import argparse
import time

from common import OUT, Load, Row, load_average, pin_blas_threads, table, write_json

pin_blas_threads()

import warnings  # noqa: E402

import numpy as np  # noqa: E402

import bco_gym  # noqa: E402, F401
from bco_gym.experiment import run  # noqa: E402
from bco_gym.sets import Simplex  # noqa: E402

DIMENSIONS = (10, 30, 100, 300, 1000, 3000, 10_000)
AGENTS = ("bbcg", "fkm", "bfw")
ROUND_BUDGET = {
    "bbcg": (2e7, 2_000, 200_000),
    "fkm": (2e6, 1_000, 20_000),
    "bfw": (2e6, 1_000, 20_000),
}


def horizon_for(agent: str, n: int) -> int:
    work, low, high = ROUND_BUDGET[agent]
    return int(min(high, max(low, work / n)))


def measure(dimensions: tuple[int, ...] = DIMENSIONS) -> tuple[list[Row], dict]:
    raw: dict[str, dict[int, dict]] = {agent: {} for agent in AGENTS}
    start = load_average()
    for n in dimensions:
        radius = Simplex(n).inner_radius
        for agent in AGENTS:
            horizon = horizon_for(agent, n)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                result = run(
                    "BCO-Simplex-v0",
                    agent,
                    horizon=horizon,
                    seed=0,
                    env_kwargs={"n": n},
                    agent_kwargs={"smoothing_radius": radius / 2},
                    checkpoints=[horizon],
                )
            raw[agent][n] = {
                "horizon": horizon,
                "rounds_per_second": result.rounds_per_second,
                "loop": result.loop,
            }
    raw["floor"] = {n: {"rounds_per_second": gaussian_floor(n)} for n in dimensions}
    load = Load(start, load_average())
    rows = [
        Row(
            "5 scaling",
            f"{agent} rounds/s at n={n} ({figures['loop']} loop)",
            figures["rounds_per_second"],
            "rounds/s",
            "",
            None,
            figures,
            load=load,
        )
        for agent, by_n in raw.items()
        for n, figures in by_n.items()
        if n in (dimensions[0], dimensions[-1]) and agent != "floor"
    ]
    plot(raw)
    return rows, raw


def gaussian_floor(n: int, rounds: int = 2_000) -> float:
    """Rounds/s of drawing 2n standard normals per round (1000 rounds at a time): one
    Gaussian direction for the agent and one noise vector for the linear adversary."""
    rng = np.random.default_rng(0)
    start = time.process_time()
    for _ in range(0, rounds, 1000):
        rng.standard_normal((1000, 2 * n))
    return rounds / max(time.process_time() - start, 1e-9)


def plot(raw: dict[str, dict[int, dict]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    OUT.mkdir(parents=True, exist_ok=True)
    figure, axes = plt.subplots(figsize=(6, 4))
    for agent, by_n in raw.items():
        dims = sorted(by_n)
        values = [by_n[n]["rounds_per_second"] for n in dims]
        if agent == "floor":
            axes.loglog(dims, values, "k--", label="2n Gaussians per round (floor)")
        else:
            axes.loglog(dims, values, "o-", label=agent)
    axes.set_xlabel("dimension n (simplex)")
    axes.set_ylabel("rounds per second")
    axes.set_title("BCO-Simplex-v0, linear losses, runner default loops")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(OUT / "scaling.png", dpi=120)
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args()
    rows, raw = measure()
    print(table(rows))
    for agent, by_n in raw.items():
        shown = ", ".join(f"n={n}: {f['rounds_per_second']:,.0f}" for n, f in by_n.items())
        print(f"{agent} rounds/s: {shown}")
    write_json("scaling", rows, {"series": raw})


if __name__ == "__main__":
    main()
