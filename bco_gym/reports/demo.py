"""The main job (``make demo`` = ``bco-gym demo``): scenarios where the methods differ.

Each :class:`~bco_gym.reports.suites.Scenario` of ``standard-v1`` is a sweep
(resumable, its seeds played in batches by :func:`~bco_gym.engine.many.run_many`) into
``<out>/runs/<name>``; the results are
then written as ``<out>/report.md`` with its figures by
:func:`~bco_gym.reports.report.write_report`: paired tables against random and FKM,
final-regret dot plots, paired-difference curves, and a headline that ranks the agents
scenario by scenario. The scenarios, side by side:

* i.i.d. linear losses on the 10-ball and the 10-simplex (Theorem 1's setting; on the
  simplex its parameters stay cautious long, which the report shows);
* a drifting mean and the follow-the-leader trap (non-stationary adversaries);
* real data: online portfolio selection on the NYSE (O) series against the best
  constantly rebalanced portfolio;
* a structured set where a projection costs far more than an LMO: unit s-t flows
  (shortest paths) on a grid DAG, where the per-round cost separates the methods;
* three sets of dimension >= 1,000 (a 32x32 Birkhoff polytope, a 23x23 grid's flow
  polytope, a 64x64 nuclear-norm ball), each at several horizons with theory and tuned
  constants, and their compute frontier (:mod:`bco_gym.reports.scale`);
* stable-baselines3's PPO and TD3 learning online against BBCG and FKM on the ball, on
  an i.i.d. and on an adversarial sequence (short horizons: an RL round costs ~10^3
  bandit rounds).

``quick=True`` shrinks every horizon and seed count (the smoke test of the whole job).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from bco_gym.reports.report import Scenario as Section
from bco_gym.reports.report import write_report
from bco_gym.reports.scale import play_scenario, scale_parts
from bco_gym.reports.suites import STANDARD_V1, Scenario

COMMAND = "make demo  (= bco-gym demo --out results)"


#: The main job's scenarios: the ``standard-v1`` suite (:mod:`bco_gym.reports.suites`).
SCENARIOS = STANDARD_V1


def run_demo(
    out: str | os.PathLike,
    *,
    scenarios: Sequence[Scenario] = SCENARIOS,
    backend: str = "process",
    progress: bool | str | None = None,
    quick: bool = False,
    announce: Callable[[str], None] | None = None,
) -> Path:
    """Run every scenario into ``out/runs/<slug>`` (resumable) and write ``out/report.md``.

    Returns the report's path. ``announce`` (e.g. ``print``) is told each scenario's
    title before it runs.
    """
    out = Path(out)
    done = []
    for spec in scenarios:
        spec = spec.quick() if quick else spec
        if announce is not None:
            announce(f"scenario {len(done) + 1}/{len(scenarios)}: {spec.title}")
        horizons = [h if h is not None else own_horizon(spec) for h in spec.all_horizons]
        results, tunings = play_scenario(spec, out, horizons, backend=backend, progress=progress)
        parts = scale_parts(tunings, spec.seeds) if tunings else ()
        done.append(Section(spec.title, results, spec.description, spec.references, parts))
    return write_report(out / "report.md", done, command=COMMAND)


def own_horizon(spec: Scenario) -> int:
    """The env's own horizon (data sets: their number of days)."""
    import gymnasium as gym

    env = gym.make(spec.env_id, **dict(spec.env_kwargs))
    try:
        return int(env.unwrapped.problem.horizon)
    finally:
        env.close()
