"""``bco-gym bench``: score agents on a suite, beside its reference agents, on the same seeds.

:func:`run_bench` runs every scenario of a suite (:data:`~bco_gym.reports.suites.SUITES`)
with the scenario's reference agents plus the given agents, on the scenario's seeds (or
seeds 0..K-1), as one resumable sweep per scenario under ``<out>/runs/<scenario>``: a
re-run with more agents computes only the new cells. Then it writes, in ``<out>``:

* ``scores.csv`` -- one row per run: ``suite, scenario, agent, seed, horizon, regret,
  score, adaptive_regret, dynamic_regret`` with score = final regret / random's on the
  same scenario and seed (:mod:`~bco_gym.reports.scores`); the last two empty where the
  loss family has no exact interval comparators (:mod:`bco_gym.losses.intervals`);
* ``report.md`` -- a verdict per given agent (the scenarios where it is separated from
  bbcg and from fkm, better or worse, by the all-pairs ranking of
  :mod:`~bco_gym.reports.ranking`: paired t-tests, Holm's correction per scenario); the
  IQM and mean score of every agent with stratified-bootstrap 95% intervals, the
  probability of improvement over bbcg and fkm, and their figures with the performance
  profile; the failed cells; and per scenario the ordered groups, the pairwise matrix
  and the paired tables against the scenario's references.

An agent is given by name or by anything :func:`~bco_gym.agents.registry.resolve_agent`
accepts as a string (a registered name, an entry point, ``"package.module:Class"``).
A given agent that needs full-information or two-point feedback is not run on a
scenario whose env gives bandit feedback (the report says where). ``<out>`` holds a
``bench.json`` naming its suite: a non-empty directory without one, or of another
suite, is refused.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from bco_gym.engine.result import RunResult
from bco_gym.reports.ranking import Ranking, rank
from bco_gym.reports.scores import (
    BOOTSTRAP_REPS,
    COLUMNS,
    Estimate,
    ScoreRow,
    aggregate,
    improvement,
    performance_profile,
    score_rows,
    scores_by_scenario,
)
from bco_gym.reports.suites import SUITES, Scenario

MARKER = "bench.json"
OWNER_FILE = ".bco-gym-owner.json"  # the CLI's mark of a command's directory (cli_checks)
FORMAT = 1
VERDICT_REFERENCES = ("bbcg", "fkm")
BASELINE = "random"
PROFILE_TAUS = np.linspace(0.0, 1.5, 151)


@dataclass(frozen=True)
class ScenarioRun:
    """One scenario as the bench ran it: its agents, the ones left out, its results."""

    scenario: Scenario
    agents: tuple[str, ...]
    skipped: Mapping[str, str]
    results: list[RunResult]
    failures: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class BenchOutcome:
    """What :func:`run_bench` wrote and found."""

    report: Path
    scores: Path
    rows: list[ScoreRow]
    failures: list[str]
    runs: list[ScenarioRun]


# -- the plan -------------------------------------------------------------------------------------
def _feedback_of(agent: str) -> str:
    from bco_gym.agents.registry import resolve_agent

    return resolve_agent(agent).feedback


def check_agents(agents: Sequence[str]) -> list[str]:
    """The given agents, resolved once each (ValueError/TypeError naming a bad one)."""
    if not agents:
        raise ValueError("bench needs at least one agent")
    duplicates = sorted({a for a in agents if list(agents).count(a) > 1})
    if duplicates:
        raise ValueError(f"agents listed twice: {', '.join(duplicates)}")
    for agent in agents:
        _feedback_of(agent)
    return list(agents)


def plan(
    suite: str, agents: Sequence[str], seeds: int | None = None
) -> list[tuple[Scenario, tuple[str, ...], dict[str, str]]]:
    """(scenario with its seeds, agents to run, given agents left out -> why) per scenario."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}; allowed: {', '.join(SUITES)}")
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 2):
        raise ValueError(f"seeds must be an integer >= 2 (paired intervals), got {seeds!r}")
    steps = []
    for scenario in SUITES[suite]:
        if seeds is not None:
            scenario = replace(scenario, seeds=tuple(range(seeds)))
        feedback = scenario.env_kwargs.get("feedback", "bandit")
        skipped = {}
        chosen = list(dict.fromkeys([*scenario.agents, BASELINE]))
        for agent in agents:
            needs = _feedback_of(agent)
            if agent in chosen:
                continue
            if needs != "bandit" and needs != feedback:
                skipped[agent] = f"needs feedback={needs!r}, the scenario gives {feedback!r}"
                continue
            chosen.append(agent)
        steps.append((scenario, tuple(chosen), skipped))
    return steps


# -- the directory --------------------------------------------------------------------------------
def claim_directory(out: Path, suite: str) -> None:
    """Create ``out`` or check it is this suite's bench directory; then mark it."""
    marker = out / MARKER
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is not a directory")
    if marker.is_file():
        try:
            document = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ValueError(f"{str(marker)!r} is unreadable ({error}); not a bench") from None
        if not isinstance(document, dict) or document.get("suite") != suite:
            found = document.get("suite") if isinstance(document, dict) else None
            raise ValueError(
                f"{str(out)!r} holds a bench of suite {found!r}, not {suite!r}; pick another "
                "directory"
            )
        return
    entries = list(out.iterdir()) if out.is_dir() else []
    strangers = [entry.name for entry in entries if entry.name != OWNER_FILE]
    if strangers:
        raise ValueError(
            f"{str(out)!r} is not empty and is not a bench directory (no {MARKER}; found "
            f"{', '.join(sorted(strangers)[:5])}); pick a new or empty directory"
        )
    out.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps({"format": FORMAT, "suite": suite}) + "\n", encoding="utf-8")


# -- running --------------------------------------------------------------------------------------
def _sweep_failures(directory: Path, scenario: Scenario, agents: Sequence[str]) -> list[str]:
    """The scenario's failed cells among ``agents`` and its seeds, one line each."""
    from bco_gym.sweeps import load_failures

    return [
        f"{scenario.name}: {failure.describe()}"
        for failure in load_failures(directory)
        if failure.agent in agents and failure.seed in scenario.seeds
    ]


def _run_scenario(
    scenario: Scenario,
    agents: Sequence[str],
    out: Path,
    *,
    backend: str,
    batch_size: int | None,
    progress: bool | str | None,
) -> tuple[list[RunResult], list[str]]:
    from bco_gym.reports.demo import own_horizon
    from bco_gym.sweeps.sweep import sweep

    directory = out / "runs" / scenario.name
    results = sweep(
        scenario.env_id,
        list(agents),
        [scenario.horizon if scenario.horizon is not None else own_horizon(scenario)],
        list(scenario.seeds),
        out=directory,
        backend=backend,
        env_kwargs=dict(scenario.env_kwargs),
        progress=progress,
        batch_size=batch_size,
        failures="record",
    )
    return list(results), _sweep_failures(directory, scenario, agents)


def run_bench(
    agents: Sequence[str],
    out: str | os.PathLike,
    *,
    suite: str = "quick-v1",
    seeds: int | None = None,
    backend: str = "serial",
    batch_size: int | None = None,
    progress: bool | str | None = None,
    announce: Callable[[str], None] | None = None,
    command: str | None = None,
) -> BenchOutcome:
    """Run ``agents`` on ``suite`` into ``out`` and write the scores and the report.

    ``seeds``: None for each scenario's own seeds, K for seeds 0..K-1 everywhere.
    ``announce`` (e.g. ``print``) is told each scenario before it runs. ``command`` is
    the line the report names as its origin.
    """
    given = check_agents(agents)
    steps = plan(suite, given, seeds)
    out = Path(out)
    claim_directory(out, suite)
    runs = []
    for index, (scenario, chosen, skipped) in enumerate(steps, start=1):
        if announce is not None:
            announce(f"scenario {index}/{len(steps)}: {scenario.name} ({', '.join(chosen)})")
        results, failures = _run_scenario(
            scenario, chosen, out, backend=backend, batch_size=batch_size, progress=progress
        )
        runs.append(ScenarioRun(scenario, chosen, skipped, results, failures))
    rows = [row for run in runs for row in score_rows(suite, run.scenario.name, run.results)]
    scores = write_scores(out / "scores.csv", rows)
    command = command or f"bco-gym bench --agents {','.join(given)} --suite {suite}"
    report = write_bench_report(out / "report.md", suite, given, runs, rows, command=command)
    failures = [failure for run in runs for failure in run.failures]
    return BenchOutcome(report, scores, rows, failures, runs)


def write_scores(path: Path, rows: Sequence[ScoreRow]) -> Path:
    """``scores.csv`` (:data:`~bco_gym.reports.scores.COLUMNS`), sorted, 17 significant digits."""
    ordered = sorted(rows, key=lambda r: (r.scenario, r.agent, r.seed))
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(COLUMNS)
        for row in ordered:
            writer.writerow(
                [
                    row.suite,
                    row.scenario,
                    row.agent,
                    row.seed,
                    row.horizon,
                    repr(row.regret),
                    "" if math.isnan(row.score) else repr(row.score),
                    "" if row.adaptive_regret is None else repr(row.adaptive_regret),
                    "" if row.dynamic_regret is None else repr(row.dynamic_regret),
                ]
            )
    return path


# -- the statistics of the report -----------------------------------------------------------------
def rankings(runs: Sequence[ScenarioRun]) -> dict[str, Ranking]:
    """Scenario name -> the all-pairs ranking of its agents (by agent name)."""
    return {run.scenario.name: rank(run.results) for run in runs if run.results}


def _label_of(ranking: Ranking, agent: str) -> str | None:
    """The ranking's series label of ``agent`` (its only series), or None."""
    labels = [label for label in ranking.labels if label.split(" ")[0] == agent]
    return labels[0] if len(labels) == 1 else None


def verdict(agent: str, ranked: Mapping[str, Ranking]) -> str:
    """One line: the scenarios where ``agent`` is separated from bbcg / fkm, and which way."""
    ran = [name for name, ranking in ranked.items() if _label_of(ranking, agent) is not None]
    if not ran:
        return f"**{agent}**: ran in no scenario"
    parts = []
    for reference in VERDICT_REFERENCES:
        if agent == reference:
            continue
        better, worse, tied = [], [], []
        for name in ran:
            ours, theirs = _label_of(ranked[name], agent), _label_of(ranked[name], reference)
            if theirs is None:
                continue
            if ranked[name].beats(ours, theirs):
                better.append(name)
            elif ranked[name].beats(theirs, ours):
                worse.append(name)
            else:
                tied.append(name)
        if not better + worse + tied:
            parts.append(f"against {reference}: no common scenario")
            continue
        shown = [
            f"{what} {', '.join(names)}"
            for what, names in (("better in", better), ("worse in", worse))
            if names
        ]
        summary = "; ".join(shown) if shown else "separated in no scenario"
        parts.append(f"against {reference}: {summary} ({len(tied)} not separated)")
    return f"**{agent}** ({len(ran)} scenarios): " + "; ".join(parts)


@dataclass(frozen=True)
class Aggregates:
    """Per agent: scenarios scored, IQM and mean estimates, P(improvement) per reference."""

    agents: list[str]
    scenarios: dict[str, int]
    runs: dict[str, int]
    estimates: dict[str, dict[str, Estimate]]
    improvements: dict[tuple[str, str], Estimate]
    profiles: dict[str, np.ndarray]


def aggregates(rows: Sequence[ScoreRow], agents: Sequence[str], reps: int) -> Aggregates:
    per_agent = {agent: scores_by_scenario(rows, agent) for agent in agents}
    estimates = {agent: aggregate(per_agent[agent], reps=reps) for agent in agents}
    improvements = {
        (agent, reference): improvement(per_agent[agent], per_agent[reference], reps=reps)
        for agent in agents
        for reference in VERDICT_REFERENCES
        if reference in per_agent and agent != reference
    }
    return Aggregates(
        agents=list(agents),
        scenarios={agent: len(per_agent[agent]) for agent in agents},
        runs={agent: sum(len(v) for v in per_agent[agent].values()) for agent in agents},
        estimates=estimates,
        improvements=improvements,
        profiles={agent: performance_profile(per_agent[agent], PROFILE_TAUS) for agent in agents},
    )


# -- the report -----------------------------------------------------------------------------------
READING = (
    "How to read: a run's score is its final regret divided by random play's on the same "
    "scenario and seed (0: no regret, 1: random play's). IQM is the mean of the middle "
    "half of an agent's scores over all runs of all scenarios, *mean* the mean over "
    "scenarios of the scenario's mean score; both with stratified-bootstrap 95% intervals "
    "(runs resampled within each scenario; Agarwal et al., NeurIPS 2021). P(X < ref) is "
    "the probability that a run of X scores lower than a run of the reference, averaged "
    "over the scenarios (0.5: no difference). Aggregates compare agents only over the "
    "same scenarios: the *scenarios* column says how many each has. Verdicts and the "
    "per-scenario groups rest on every pair's paired t-test on its common seeds with "
    "Holm's correction across the pairs of the scenario (separated: adjusted p <= 0.05)."
)


def _interval(estimate: Estimate) -> str:
    if not math.isfinite(estimate.value):
        return "-"
    if not math.isfinite(estimate.low):
        return f"{estimate.value:.3f}"
    return f"{estimate.value:.3f} [{estimate.low:.3f}, {estimate.high:.3f}]"


def _aggregate_table(stats: Aggregates, total: int) -> list[str]:
    from bco_gym.reports.summary import render_markdown

    references = [r for r in VERDICT_REFERENCES if r in stats.agents]
    header = ["agent", "scenarios", "runs", "IQM score [95% CI]", "mean score [95% CI]"]
    header += [f"P({'agent'} < {r}) [95% CI]" for r in references]
    order = sorted(
        stats.agents, key=lambda a: (-stats.scenarios[a], stats.estimates[a]["iqm"].value)
    )
    body = []
    for agent in order:
        cells = [agent, f"{stats.scenarios[agent]}/{total}", str(stats.runs[agent])]
        cells += [_interval(stats.estimates[agent][name]) for name in ("iqm", "mean")]
        for reference in references:
            found = stats.improvements.get((agent, reference))
            cells.append("-" if found is None else _interval(found))
        body.append(cells)
    by_method: dict[str, list[str]] = {}
    for agent in order:
        by_method.setdefault(stats.estimates[agent]["iqm"].method, []).append(agent)
    names = {"rliable": "rliable", "bco_gym": "bco_gym's own stratified bootstrap"}
    parts = [
        f"{names[method]} for {', '.join(agents)}"
        for method, agents in by_method.items()
        if method in names
    ]
    note = (
        f"Intervals from {BOOTSTRAP_REPS:,} stratified-bootstrap resamples. IQM and mean: "
        + "; ".join(parts)
        + " (rliable where it is installed and the agent's scenarios hold equally many "
        "runs). P(<): bco_gym's own."
    )
    return [render_markdown(header, body), "", note, ""]


def write_bench_report(
    path: Path,
    suite: str,
    given: Sequence[str],
    runs: Sequence[ScenarioRun],
    rows: Sequence[ScoreRow],
    *,
    command: str,
    reps: int = BOOTSTRAP_REPS,
) -> Path:
    """``report.md`` and its figures beside it (module docstring)."""
    from bco_gym.plotting import save
    from bco_gym.plotting.bench import aggregate_figure, improvement_figure, profile_figure

    directory = path.parent
    ranked = rankings(runs)
    agents = list(dict.fromkeys(row.agent for row in rows))
    stats = aggregates(rows, agents, reps)
    lines = [f"# bco-gym bench: suite {suite}", "", f"Generated by `{command}`.", "", READING, ""]
    lines += ["## Verdicts", ""]
    lines += [f"- {verdict(agent, ranked)}" for agent in given] + [""]
    failures = [failure for run in runs for failure in run.failures]
    lines += ["## Failed cells", ""]
    lines += [f"- {failure}" for failure in failures] if failures else ["None."]
    lines += [""]
    skipped = [(run.scenario.name, a, why) for run in runs for a, why in run.skipped.items()]
    if skipped:
        lines += ["Not run (the scenario's feedback does not suit the agent):", ""]
        lines += [f"- {agent} on {name}: {why}" for name, agent, why in skipped] + [""]
    lines += ["## Scores across scenarios", ""]
    lines += _aggregate_table(stats, len(runs))
    figures = [
        ("scores-aggregate", "IQM and mean score with 95% CIs", aggregate_figure(stats, suite)),
        ("scores-profile", "Performance profiles", profile_figure(stats, PROFILE_TAUS, suite)),
    ]
    if stats.improvements:
        figures.append(
            ("scores-improvement", "Probability of improvement", improvement_figure(stats, suite))
        )
    for stem, caption, figure in figures:
        lines += [f"![{caption}]({save(figure, directory / f'{stem}.png').name})", ""]
    for index, run in enumerate(runs, start=1):
        lines += _scenario_lines(directory, index, run, ranked.get(run.scenario.name))
    path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    return path


def _scenario_lines(
    directory: Path, index: int, run: ScenarioRun, ranking: Ranking | None
) -> list[str]:
    from bco_gym.plotting.style import loss_text, run_text, set_text
    from bco_gym.reports.report import _pairs_part, _table_part, slug

    scenario = run.scenario
    lines = [f"## {index}. {scenario.name}: {scenario.title or scenario.env_id}", ""]
    if not run.results:
        return [*lines, "No results.", ""]
    results = run.results
    lines += [f"Setting: {set_text(results)}; {loss_text(results)}; {run_text(results)}.", ""]
    if ranking is not None:
        stem = f"{index:02d}-{slug(scenario.name)}"
        lines += _pairs_part(directory, ranking, stem, scenario.title, results)
    for reference in scenario.references:
        lines += _table_part(results, reference)
    return lines
