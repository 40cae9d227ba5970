"""The main job (``make demo`` = ``bco-gym demo``): where the methods differ, in minutes.

:data:`SCENARIOS` is the demo's own short list (``bco-gym demo``; about 5 minutes on two
cores), computed, never loaded:

* the paper's claim on one large set: the 32x32 Birkhoff polytope (dimension 1,024),
  where a projection is a quadratic programme and an LMO an assignment problem. BBCG and
  FKM play with constants tuned beforehand (:data:`TUNED`) beside BBCG with Theorem 1's
  (which there plays the centre plus exploration: the row that learns nothing), and the
  report's compute frontier puts regret against CPU seconds, BBCG beside FKM;
* five 10-dimensional or real-data scenarios where the methods differ: i.i.d. losses on
  the ball and on the box (BBCG ahead of FKM on one, behind on the other), a switching
  mean (adaptive regret), the follow-the-leader trap, NYSE portfolios (real data);
* one RL baseline: stable-baselines3's PPO, learning online, beside BBCG and FKM.

Every cell of every scenario goes into one resumable sweep (``<out>/runs/demo``) played
by one pool (the process backend: every core), with one progress bar over the whole job
whose ETA weighs each cell by its estimated cost (:func:`estimated_seconds`); then the
results are split by scenario into ``<out>/report.md`` and ``<out>/index.html``
(:func:`~bco_gym.reports.report.write_report`).

The full suites stay available: ``bco-gym demo --suite standard-v1`` runs a suite of
:data:`~bco_gym.reports.suites.SUITES` scenario by scenario (with its tuning steps,
:mod:`bco_gym.reports.scale`) as before. ``quick=True`` shrinks every horizon and seed
count (the smoke test of the whole job).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bco_gym.engine.result import RunResult
from bco_gym.reports.report import ReportSection, write_report
from bco_gym.reports.scale import frontier_markdown, play_scenario, scale_parts
from bco_gym.reports.suites import BANDIT, Scenario
from bco_gym.sweeps.sweep import Cell, cells, run_cells

COMMAND = "make demo  (= bco-gym demo --out results)"

BIRKHOFF_RADIUS = 1 / 31  # the inner radius r of the 32x32 Birkhoff polytope
#: Constants tuned beforehand for the large set (the demo runs them; it does not tune):
#: standard-v1's scale-birkhoff-32 tuned c over {10, 100, 10^3, 10^4} with delta = r/2
#: and the residual estimator held fixed, BBCG at T = 10^5 on seeds 100-103 (c = 100),
#: FKM at T = 1,000 on seeds 100-103 (c = 10), seeds disjoint from the demo's 0-7.
TUNED: Mapping[str, Mapping[str, Mapping[str, Any]]] = {
    "claim-birkhoff-32": {
        "bbcg": {"c": 100.0, "smoothing_radius": BIRKHOFF_RADIUS / 2, "estimator": "residual"},
        "fkm": {"c": 10.0, "smoothing_radius": BIRKHOFF_RADIUS / 2, "estimator": "residual"},
    }
}

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        name="claim-birkhoff-32",
        title="The paper's claim: Birkhoff polytope 32x32, BBCG against FKM per CPU second",
        env_id="BCO-Birkhoff-v0",
        agents=("bbcg",),
        horizon=100_000,
        horizons=(10_000, 30_000),
        seeds=tuple(range(8)),
        env_kwargs={"n": 32},
        references=("bbcg",),
        description=(
            "Doubly stochastic 32x32 matrices (dimension 1,024, affine dimension 961, "
            "r = 1/31); i.i.d. assignment costs f_t(X) = <C_t, X>. The LMO is an assignment "
            "problem, the projection a quadratic programme: FKM projects every round "
            "(milliseconds), BBCG calls the LMO a few times per block. With Theorem 1's "
            "constants delta is capped at r and K_delta = {c}, so the theory row (bbcg) "
            "plays the centre plus exploration: the baseline that learns nothing. The "
            "tuned rows hold delta = r/2 and the residual estimator, with c tuned "
            "beforehand on seeds 100-103 (BBCG c = 100, FKM c = 10). FKM's rounds cost "
            "about 200 of BBCG's, so it plays T = 300 and 1,000 on the same seeds; the "
            "compute frontier puts every series' R_T / T against its CPU seconds per run."
        ),
        quick_horizon=100,
    ),
    Scenario(
        name="ball-iid",
        title="10-ball, i.i.d. linear losses",
        env_id="BCO-Ball-v0",
        agents=BANDIT,
        horizon=100_000,
        seeds=tuple(range(8)),
        description=(
            "Theorem 1's setting with a well-rounded set (r = R = 1). Every bandit agent "
            "learns; BBCG makes about one LMO call per thousand rounds and no projection, "
            "FKM one projection per round, BFW one LMO call per round."
        ),
    ),
    Scenario(
        name="ball-switching",
        title="10-ball, switching mean (linear-switching, 5 segments)",
        env_id="BCO-Ball-v0",
        agents=(*BANDIT, "so-bgd"),
        horizon=100_000,
        seeds=tuple(range(8)),
        env_kwargs={"loss": "linear-switching", "loss_kwargs": {"segments": 5}},
        description=(
            "The mean loss direction jumps to a fresh random direction at the start of each "
            "of 5 equal segments. The adaptive regret (the largest regret over the dyadic "
            "intervals and the whole run), the switching and the dynamic regret say how well "
            "an agent follows the change. so-bgd (Garber & Kretzu 2022, Algorithm 10) bounds "
            "the regret of every interval, with Theorem 15's constants, which are "
            "conservative at this horizon: its step size is about 1e-5, so it stays near "
            "the centre."
        ),
    ),
    Scenario(
        name="ball-adversarial",
        title="10-ball, follow-the-leader trap (linear-adversarial)",
        env_id="BCO-Ball-v0",
        agents=(*BANDIT, "ogd"),
        horizon=100_000,
        seeds=tuple(range(8)),
        env_kwargs={"loss": "linear-adversarial", "feedback": "full"},
        description=(
            "Signs alternate every round around a small bias: chasing the last losses is "
            "punished, the comparator is the bias direction. OGD (full information) is the "
            "lower reference."
        ),
    ),
    Scenario(
        name="portfolio-nyse",
        title="Online portfolio selection, NYSE (O) 1962-1984 (real data)",
        env_id="BCO-Portfolio-v0",
        agents=(*BANDIT, "ogd"),
        horizon=None,
        seeds=tuple(range(8)),
        env_kwargs={"dataset": "nyse_o", "feedback": "full"},
        description=(
            "f_t(x) = -log <r_t, x> on 36 stocks over 5,651 trading days; the comparator is "
            "the best constantly rebalanced portfolio. Regret is the log of the ratio of its "
            "final wealth to the agent's; only the agents' randomness differs across seeds."
        ),
    ),
    Scenario(
        name="box-iid",
        title="10-dimensional box, i.i.d. linear losses",
        env_id="BCO-Hypercube-v0",
        agents=BANDIT,
        horizon=100_000,
        seeds=tuple(range(8)),
        description=(
            "The same losses on the box [-1, 1]^10 (r = 1, R = sqrt(10)), whose LMO is a "
            "vertex: the order of BBCG and FKM is not the ball's, and BFW's LMO steps to "
            "vertices cost it most of its lead over random."
        ),
    ),
    Scenario(
        name="rl-ball-iid",
        title="RL baseline: PPO, 10-ball, i.i.d. linear losses",
        env_id="BCO-Ball-v0",
        agents=("sb3-ppo", "bbcg", "fkm", "random"),
        horizon=2_000,
        seeds=tuple(range(3)),
        description=(
            "stable-baselines3's PPO, learning online (actions mapped onto the ball by a "
            "radial map), against BBCG and FKM at a horizon an RL agent can afford: one of "
            "its rounds costs about a thousand bandit rounds."
        ),
        quick_horizon=64,
    ),
)

#: The large set's FKM horizons (its rounds cost ~200 of BBCG's; the same seeds).
FKM_HORIZONS = {"claim-birkhoff-32": (300, 1_000)}

#: Estimated CPU seconds per round of one run, by set family and agent, for the progress
#: bar's ETA only (measured once on this machine's kind; a wrong guess moves the ETA,
#: never a result). Anything not listed: ``DEFAULT_ROUND``.
ROUND_SECONDS: Mapping[tuple[str, str], float] = {
    ("BCO-Birkhoff-v0", "bbcg"): 3.5e-5,
    ("BCO-Birkhoff-v0", "fkm"): 6e-3,
    ("BCO-Ball-v0", "so-bgd"): 1e-5,  # its separation steps compiled (batched: ~5e-6)
    ("BCO-Ball-v0", "sb3-ppo"): 1e-3,
    ("BCO-Portfolio-v0", "*"): 1.5e-5,
}
DEFAULT_ROUND = 2e-6


def estimated_seconds(cell: Cell) -> float:
    """The cell's estimated CPU seconds (:data:`ROUND_SECONDS` times its horizon)."""
    per_round = ROUND_SECONDS.get((cell.env_id, cell.agent))
    if per_round is None:
        per_round = ROUND_SECONDS.get((cell.env_id, "*"), DEFAULT_ROUND)
    return per_round * cell.horizon


def run_demo(
    out: str | os.PathLike,
    *,
    scenarios: Sequence[Scenario] = SCENARIOS,
    backend: str = "process",
    progress: bool | str | None = None,
    quick: bool = False,
    announce: Callable[[str], None] | None = None,
) -> Path:
    """Run every scenario (resumable) and write ``out/report.md`` and ``out/index.html``.

    Scenarios without a tuning step are played together, one sweep ``out/runs/demo`` on
    one pool; those with one (the suites' scale scenarios) one after another, each in
    ``out/runs/<name>`` (:func:`~bco_gym.reports.scale.play_scenario`). Returns the
    report's path. ``announce`` (e.g. ``print``) is told what runs before it runs.
    """
    out = Path(out)
    specs = [spec.quick() if quick else spec for spec in scenarios]
    pooled = [spec for spec in specs if spec.tuning is None]
    sections: dict[str, ReportSection] = {}
    if pooled:
        grids = {spec.name: scenario_cells(spec, quick) for spec in pooled}
        grid = [cell for cells_of in grids.values() for cell in cells_of]
        if announce is not None:
            seconds = sum(map(estimated_seconds, grid))
            announce(
                f"{len(pooled)} scenarios, {len(grid)} runs in one pool ({backend} backend), "
                f"about {seconds:.0f} CPU seconds estimated"
            )
        results = run_cells(
            grid, out=out / "runs" / "demo", backend=backend, progress=progress,
            cost=estimated_seconds,
        )  # fmt: skip
        by_key = {cell.key: result for cell, result in zip(grid, results, strict=True)}
        for spec in pooled:
            found = [by_key[cell.key] for cell in grids[spec.name]]
            sections[spec.name] = _section(spec, found)
    for index, spec in enumerate(specs, start=1):
        if spec.name in sections:
            continue
        if announce is not None:
            announce(f"scenario {index}/{len(specs)}: {spec.title}")
        horizons = [h if h is not None else own_horizon(spec) for h in spec.all_horizons]
        results, tunings = play_scenario(spec, out, horizons, backend=backend, progress=progress)
        parts = scale_parts(tunings, spec.seeds) if tunings else ()
        sections[spec.name] = ReportSection(
            spec.title, results, spec.description, spec.references, parts
        )
    done = [sections[spec.name] for spec in specs]
    return write_report(out / "report.md", done, command=COMMAND)


def scenario_cells(spec: Scenario, quick: bool = False) -> list[Cell]:
    """The scenario's cells: every agent with its theory constants at every horizon (a
    row of its own feedback on the env with it), and the agents of :data:`TUNED` with
    those constants (label "tuned") at theirs."""
    horizons = [h if h is not None else own_horizon(spec) for h in spec.all_horizons]
    kwargs = dict(spec.env_kwargs)
    grid = [
        cell
        for agent in spec.agents
        for cell in cells(
            spec.env_id, agent, horizons, list(spec.seeds), env_kwargs=spec.env_kwargs_of(agent)
        )
    ]
    for agent, overrides in TUNED.get(spec.name, {}).items():
        own = FKM_HORIZONS.get(spec.name) if agent == "fkm" and not quick else None
        grid += cells(
            spec.env_id, agent, list(own or horizons), list(spec.seeds), env_kwargs=kwargs,
            agent_kwargs={agent: dict(overrides)}, constants={agent: "tuned"},
        )  # fmt: skip
    return grid


def _section(spec: Scenario, results: list[RunResult]) -> ReportSection:
    """The report's section of a pooled scenario; a large set's adds the compute frontier."""
    parts = (frontier_markdown,) if spec.name in TUNED else ()
    references = tuple(r for r in spec.references if r in spec.agents)
    return ReportSection(spec.title, results, spec.description, references, parts)


def own_horizon(spec: Scenario) -> int:
    """The env's own horizon (data sets: their number of days)."""
    import gymnasium as gym

    env = gym.make(spec.env_id, **dict(spec.env_kwargs))
    try:
        return int(env.unwrapped.problem.horizon)
    finally:
        env.close()
