"""Compare agents over seeds: a sweep on the process pool, a table and a figure.

The library's ``bco-gym compare`` in a few lines: every (agent, seed) cell runs in a
worker process and lands in OUT as JSON + NPZ (re-running resumes), then the results
are summarised (mean ± std of the regret over seeds) and drawn (regret curves with
seed bands, theorem bounds dashed).

    python examples/compare_agents.py --env BCO-Ball-v0 --horizon 20000 --seeds 4
"""

import argparse
from pathlib import Path

from bco_gym.experiment import summarize, sweep
from bco_gym.plotting import plot_regret
from bco_gym.reports.summary import compare_columns, render_text

parser = argparse.ArgumentParser(description="Compare BCO agents over seeds.")
parser.add_argument("--env", default="BCO-Ball-v0", help="a registered BCO-*-v0 id")
parser.add_argument("--agents", default="bbcg,fkm,bfw,random", help="comma-separated names")
parser.add_argument("--horizon", type=int, default=10_000, help="T, the number of rounds")
parser.add_argument("--seeds", type=int, default=3, help="seeds 0..K-1 of the adversary")
parser.add_argument("--backend", default="process", help="serial, process or ray")
parser.add_argument(
    "--out",
    type=Path,
    default=Path("results/example_compare"),
    help="sweep directory (must be new, or hold this same sweep)",
)

if __name__ == "__main__":  # the process backend re-imports this file in its workers
    args = parser.parse_args()
    results = sweep(
        args.env,
        args.agents.split(","),
        args.horizon,
        args.seeds,
        out=args.out,
        backend=args.backend,
        progress=False,
    )
    print(render_text(*compare_columns(summarize(results))))
    print(f"figure: {plot_regret(results, args.out / 'regret.png')}")
