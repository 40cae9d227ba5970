"""The benchmark's report: verdicts, scores across scenarios, per-scenario rankings.

:func:`write_bench_report` writes ``report.md`` of ``bco-gym bench``
(:mod:`~bco_gym.reports.bench` runs the cells) and its figures beside it:

* in its first lines, the agents suspected of reading the losses (below the regret floor
  of a stationary scenario) and those whose fresh and public scores disagree; an
  Integrity section on how each agent played, the regret floor and the fresh seeds
  (:mod:`~bco_gym.reports.integrity`);
* its first lines (:mod:`~bco_gym.reports.bench_provenance`): the suite and the
  scenarios covered (a subset says so in the title), the reference archive's digest and
  where the reference cells came from, the library version, the evaluation seeds;
* a verdict per agent (:mod:`~bco_gym.reports.bench_verdicts`): the scenarios where it
  is separated from bbcg and from fkm, better or worse, tested within a fixed family: the
  agent against the scenario's reference rows, paired t-tests Holm-corrected within those
  tests only, so the other agents in the directory cannot move it; against each
  reference's tuned row (constants tuned on seeds disjoint from the evaluation seeds: as
  a rule the stronger version of the reference) where the scenario has one, else its
  theory row, and then against its theory row;
* the failed cells, and the agents a scenario's feedback did not suit;
* the headline figure (``headline.png``, as the main job's report draws it): per
  scenario, each agent's final regret minus random's on the same seeds;
* the IQM and mean score of every agent with stratified-bootstrap 95% intervals, its
  probability of improvement over bbcg and fkm (against the rows of the verdicts:
  :class:`~bco_gym.reports.bench_aggregates.ReferenceColumn`), and the probability of improvement of
  every agent over every other (a matrix; :mod:`~bco_gym.stats.scores`), with their
  figures and the performance profiles with their 95% bands
  (:mod:`bco_gym.plotting.bench`);
* per scenario: its comparator (a warning when uncertified), the ordered groups (the
  all-pairs ranking of its bandit rows, labelled as such), the "which method when"
  paragraph, the pairwise matrix and the paired tables against the scenario's references
  (a reference's tuned row where the scenario has one).

Full-information and two-point rows (:func:`~bco_gym.stats.paired.feedback_of`) are
marked wherever they are shown and kept out of the bandit rankings: a scores table of
their own, beside (not inside) a scenario's ordered groups, below a rule in the figures.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bco_gym.io import write_text
from bco_gym.reports.bench_aggregates import (
    PROFILE_TAUS,
    Aggregates,
    ReferenceColumn,
    aggregates,
)
from bco_gym.reports.bench_provenance import (
    BASELINE,
    Coverage,
    ScenarioRun,
    provenance_lines,
    scenario_count,
)
from bco_gym.reports.bench_tuning import tuned_constants_lines
from bco_gym.reports.bench_verdicts import (
    TUNED,
    VERDICT_REFERENCES,
    VERDICTS_NOTE,
    Judged,
    judgements,
    paired_reference,
    untuned_note,
    verdict,
    verdict_rows_lines,
)
from bco_gym.reports.integrity import FreshSeeds, flag_lines, integrity_lines
from bco_gym.reports.page import (
    Markdown,
    code_span,
    contents_lines,
    figure_lines,
    md_text,
    untitled,
    write_page,
)
from bco_gym.reports.report import HEADLINE_READING, matplotlib_missing
from bco_gym.reports.suites import SMOKE_TESTS, SUPERSEDED, centre_players
from bco_gym.stats.scores import (
    BOOTSTRAP_REPS,
    Estimate,
    ScoreRow,
)

#: The sentence under each figure of the scores: what to read in it.
READINGS = {
    "scores-aggregate": "Read the rows top down, best first: a lower score is a lower regret "
    "relative to random's on the same seeds (1 = random), and two agents whose intervals "
    "do not overlap differ beyond seed noise.",
    "scores-profile": "Read the height at each score tau: a curve above another has more "
    "runs scoring at most tau, so the curve that stays on top is the better agent across "
    "the suite.",
    "scores-improvement": "Read a cell as the probability that a run of the row agent scores "
    "lower than one of the column agent; above 0.5 with an interval clear of 0.5 is an "
    "improvement.",
}
# -- the report -----------------------------------------------------------------------------------
READING = (
    "How to read: a run's score is its final regret divided by random play's on the same "
    "scenario and seed (0: no regret, 1: random play's). IQM is the mean of the middle "
    "half of an agent's scores over all runs of all scenarios, *mean* the mean over "
    "scenarios of the scenario's mean score; both with stratified-bootstrap 95% intervals "
    "(runs resampled within each scenario; Agarwal et al., NeurIPS 2021). P(X < ref) is "
    "the probability that a run of X scores lower than a run of the reference, averaged "
    "over the scenarios (0.5: no difference), given for every pair of agents. The "
    "performance profile of an agent is the fraction of its runs with score <= tau "
    "(averaged over scenarios), its band the pointwise 95% stratified-bootstrap interval. "
    "Aggregates compare agents only over the "
    "same scenarios: the *scenarios* column says how many each has. Verdicts rest on the "
    "agent's paired t-tests against the scenario's reference rows, Holm-corrected within "
    "that fixed family; the per-scenario ordered groups on every pair of bandit rows' "
    "paired t-test with Holm's correction across all the pairs of the scenario "
    "(separated: adjusted p <= 0.05). Rows with more feedback than one loss value a round "
    "(full info, two-point) are marked and ranked apart from the bandit rows."
)


def _interval(estimate: Estimate) -> str:
    if not math.isfinite(estimate.value):
        return "-"
    if not math.isfinite(estimate.low):
        return f"{estimate.value:.3f}"
    return f"{estimate.value:.3f} [{estimate.low:.3f}, {estimate.high:.3f}]"


def _aggregate_table(stats: Aggregates, total: int) -> list[str]:
    from bco_gym.reports.summary import render_markdown

    columns = list(stats.against.values())
    header = ["agent", "scenarios", "runs", "IQM score [95% CI]", "mean score [95% CI]"]
    header += [column.header for column in columns]
    order = stats.order()
    body = []
    for agent in order:
        cells = [stats.shown(agent), f"{stats.scenarios[agent]}/{total}", str(stats.runs[agent])]
        cells += [_interval(stats.estimates[agent][name]) for name in ("iqm", "mean")]
        for column in columns:
            found = column.estimates.get(agent)
            cells.append("-" if found is None else _interval(found))
        body.append(cells)
    bandit = [cells for agent, cells in zip(order, body, strict=True) if stats.is_bandit(agent)]
    more = [cells for agent, cells in zip(order, body, strict=True) if not stats.is_bandit(agent)]
    by_method: dict[str, list[str]] = {}
    for agent in order:
        by_method.setdefault(stats.estimates[agent]["iqm"].method, []).append(agent)
    names = {"rliable": "rliable", "bco_gym": "bco_gym's own stratified bootstrap"}
    parts = [
        f"{names[method]} for {', '.join(map(md_text, agents))}"
        for method, agents in by_method.items()
        if method in names
    ]
    bands: dict[str, list[str]] = {}
    for agent in order:
        bands.setdefault(stats.profiles[agent].method, []).append(agent)
    profile_parts = [
        f"{names[method]} for {', '.join(map(md_text, agents))}"
        for method, agents in bands.items()
        if method in names
    ]
    note = (
        f"Intervals from {BOOTSTRAP_REPS:,} stratified-bootstrap resamples. IQM and mean: "
        + "; ".join(parts)
        + " (rliable where it is installed and the agent's scenarios hold equally many "
        "runs). Performance profiles' pointwise bands: "
        + "; ".join(profile_parts)
        + ". P(<): bco_gym's own."
    )
    tables = [render_markdown(header, bandit), ""] if bandit else []
    if more:
        tables += [
            "Agents with more feedback than one loss value a round (full information: "
            "gradients; two-point: two losses a round), **not ranked with the bandit "
            "agents** above: a lower reference, not a bandit result.",
            "",
            render_markdown(header, more),
            "",
        ]
    return [*tables, note, "", *_column_notes(columns)]


def _column_notes(columns: Sequence[ReferenceColumn]) -> list[str]:
    """What the P(agent < reference) columns are against (the verdicts' rows)."""
    if not columns:
        return []
    parts = []
    for column in columns:
        count, total, name = column.tuned, len(column.rows), column.reference
        if not count:
            parts.append(f"{name}: its theory row (no scenario has a tuned {name})")
        elif count == total:
            parts.append(f"{name}: its tuned row in every scenario ({total})")
        else:
            parts.append(
                f"{name}: its tuned row in the {scenario_count(count)} that "
                f"{'has' if count == 1 else 'have'} one, its theory row in the other "
                f"{total - count}"
            )
    text = (
        "The P(agent < reference) columns are against the rows the verdicts are against: "
        + "; ".join(parts)
        + "."
    )
    if any(column.tuned for column in columns):
        text += (
            " Against the theory rows (the published constants), read the rows "
            + ", ".join(column.reference for column in columns)
            + " of the probability of improvement of every pair."
        )
    return [text, ""]


def _improvement_table(stats: Aggregates) -> list[str]:
    """Every pair: the cell of row X, column Y is P(X < Y) [95% CI], in bold where the
    interval excludes 0.5; - where the two agents share no scenario."""
    from bco_gym.reports.summary import render_markdown

    order = stats.order()
    body = []
    for first in order:
        cells = [stats.shown(first)]
        for second in order:
            found = stats.improvements.get((first, second))
            if first == second or found is None:
                cells.append("-" if first != second else "")
                continue
            text = _interval(found)
            separated = found.low > 0.5 or found.high < 0.5
            cells.append(Markdown(f"**{text}**") if separated else text)
        body.append(cells)
    return [
        "### Probability of improvement, every pair",
        "",
        "Row X, column Y: P(X < Y), the probability that a run of X scores lower than a "
        "run of Y on the same scenario, averaged over the scenarios both ran, with its "
        "95% stratified-bootstrap interval (bco_gym's own; P(Y < X) = 1 - P(X < Y) on every "
        "resample); in bold where the interval excludes 0.5. It answers a different "
        "question from the verdicts above: a P of 1.000 [1.000, 1.000] (every run of X "
        "below every run of Y) can stand beside 'separated in no scenario' when each "
        "scenario has too few seeds for its own paired test to pass Holm's correction; the "
        "verdicts are per scenario, this is pooled over scenarios.",
        "",
        render_markdown(["P(row < column)", *map(stats.shown, order)], body),
        "",
    ]


def write_bench_report(
    path: Path,
    suite: str,
    given: Sequence[str],
    runs: Sequence[ScenarioRun],
    rows: Sequence[ScoreRow],
    *,
    command: str,
    reps: int = BOOTSTRAP_REPS,
    coverage: Coverage | None = None,
    fresh: FreshSeeds | None = None,
) -> Path:
    """``report.md`` and its figures beside it (module docstring), each written atomically
    and never through a symlink; without matplotlib, the report without its figures and a
    line saying why.

    ``given``: the agents this command benched (their verdicts first, then those of the
    other agents in ``runs``); ``coverage``: the scenarios of the suite the report
    covers (None: all of them); ``fresh``: what the fresh seeds found (``--fresh-seeds``)."""
    directory = path.parent
    ranked = judgements(runs)
    agents = list(dict.fromkeys(row.agent for row in rows))
    stats = aggregates(rows, agents, reps)
    played = {run.scenario.name: run.results for run in runs}
    head = [*_first_lines(suite, runs, coverage), f"Generated by {code_span(command)}.", ""]
    head += flag_lines(played, fresh)
    head += ["## Verdicts", "", VERDICTS_NOTE + untuned_note(ranked), ""]
    judged = list(dict.fromkeys([*given, *_user_agents(runs)]))
    head += [f"- {verdict(agent, ranked)}" for agent in judged] + [""]
    lines = integrity_lines(played, given, fresh)
    lines += ["## How to read", "", untitled(READING), ""]
    lines += ["## Failed cells", ""]
    lines += _failure_lines(runs)
    recomputed = [f"{run.scenario.name}: {line}" for run in runs for line in run.recomputed]
    if recomputed:
        lines += ["## Recomputed cells", "", RECOMPUTED_NOTE, ""]
        lines += [f"- {md_text(line)}" for line in recomputed] + [""]
    archive = [f"{run.scenario.name}: {line}" for run in runs for line in run.archive_notes]
    if archive:
        lines += ["## Reference cells recomputed", "", ARCHIVE_NOTE, ""]
        lines += [f"- {md_text(line)}" for line in archive] + [""]
    lines += _agents_lines(runs)
    lines += tuned_constants_lines(
        runs, {run.scenario.name: run.untuned for run in runs if run.untuned}
    )
    skipped = [(run.scenario.name, a, why) for run in runs for a, why in run.skipped.items()]
    if skipped:
        lines += ["Not run (the scenario's feedback does not suit the agent):", ""]
        lines += [f"- {md_text(f'{agent} on {name}: {why}')}" for name, agent, why in skipped]
        lines += [""]
    missing = matplotlib_missing()
    if not missing:
        lines += _headline_lines(directory, runs)
    lines += ["## Scores across scenarios", ""]
    lines += _aggregate_table(stats, len(runs))
    if missing:
        lines += [f"No figures: {missing}.", ""]
        if stats.improvements:
            lines += _improvement_table(stats)
    else:
        lines += _figure_lines(directory, stats, suite)
    for index, run in enumerate(runs, start=1):
        lines += _scenario_lines(directory, index, run, ranked.get(run.scenario.name))
    lines = head + contents_lines(head + lines) + lines
    text = "\n".join(lines).rstrip() + "\n"
    write_text(path, text)
    write_page(path)
    return path


def _user_agents(runs: Sequence[ScenarioRun]) -> list[str]:
    """The agents of ``runs`` that are not their scenario's reference agents, in order,
    each followed by ``agent (tuned)`` where it has tuned rows (``bench --tune``)."""
    found = []
    for run in runs:
        for result in run.results:
            if result.agent not in run.reference_agents:
                found.append(result.agent)
                if result.constants == "tuned":
                    found.append(result.agent + TUNED)
    ordered = list(dict.fromkeys(found))
    return sorted(
        ordered, key=lambda a: ordered.index(a.removesuffix(TUNED)) + a.endswith(TUNED) / 2
    )


def _figure_lines(directory: Path, stats: Any, suite: str) -> list[str]:
    """The aggregate and profile figures, the improvement table and figure, drawn."""
    from bco_gym.plotting import save
    from bco_gym.plotting.bench import aggregate_figure, improvement_figure, profile_figure

    lines: list[str] = []
    figures = [
        ("scores-aggregate", "IQM and mean score with 95% CIs", aggregate_figure(stats, suite)),
        (
            "scores-profile",
            "Performance profiles with 95% bands",
            profile_figure(stats, PROFILE_TAUS, suite),
        ),
    ]
    for stem, caption, figure in figures:
        name = save(figure, directory / f"{stem}.png").name
        lines += figure_lines(name, caption, READINGS[stem])
    if stats.improvements:
        lines += _improvement_table(stats)
        figure = save(improvement_figure(stats, suite), directory / "scores-improvement.png")
        caption = "Probability of improvement, every pair"
        lines += figure_lines(figure.name, caption, READINGS["scores-improvement"])
    return lines


ARCHIVE_NOTE = (
    "The shipped reference cells of these scenarios were not used, for the reason given; "
    "they were computed here, and the scores use them."
)

RECOMPUTED_NOTE = (
    "These cells were found on disk damaged or changed since they were written (their "
    "digest did not verify); they were computed again, and the scores use the new results."
)

CENTRE_NOTE = (
    "plays the centre: with theory constants its smoothing radius c T^(-a) is capped at "
    "the inner radius r, so K_delta = {c} and it plays the centre plus exploration"
)


def centre_rows(runs: Sequence[ScenarioRun]) -> dict[str, dict[str, float]]:
    """Scenario -> {agent: delta / r} for the agents of a run whose theory constants
    cap delta at r at the scenario's horizon (:func:`~bco_gym.reports.suites.centre_players`)."""
    found = {}
    for run in runs:
        horizons = {result.horizon for result in run.results}
        horizon = max(horizons) if horizons else run.scenario.horizon
        theory = tuple(
            agent
            for agent in run.agents
            if any(r.agent == agent and r.constants == "theory" for r in run.results)
        )
        if not theory:
            continue
        try:
            capped = centre_players(
                replace(run.scenario, agents=theory, agent_horizons={}), horizon
            )
        except (ValueError, TypeError, ImportError):
            continue  # an agent that cannot be built here has no radius to report
        if capped:
            found[run.scenario.name] = capped
    return found


def _first_lines(
    suite: str, runs: Sequence[ScenarioRun], coverage: Coverage | None = None
) -> list[str]:
    """The report's title, what a reviewer asks first
    (:func:`~bco_gym.reports.bench_provenance.provenance_lines`), the smoke-test and
    superseded notes, the centre-playing rows."""
    title = f"bco-gym bench: suite {suite}"
    if coverage is not None and coverage.subset:
        title += f", {coverage.note}"
    lines = [f"# {SMOKE_TESTS[suite]} ({title})" if suite in SMOKE_TESTS else f"# {title}", ""]
    lines += [*provenance_lines(suite, runs, coverage), ""]
    if suite in SUPERSEDED:
        lines += [f"**Superseded.** {SUPERSEDED[suite]}.", ""]
    centred = centre_rows(runs)
    if centred:
        lines += [
            "**Rows where theory constants make an agent play the centre** (delta capped at "
            "r, K_delta = {c}; such a row measures the centre plus exploration, not the "
            "method):",
            "",
        ]
        lines += [
            f"- {md_text(f'{name}: ' + ', '.join(agents))}" for name, agents in centred.items()
        ]
        lines += [""]
    return lines


def _failure_lines(runs: Sequence[ScenarioRun]) -> list[str]:
    """The failed cells grouped by reason: each error once, then the cells it covers
    (per scenario, agent and round, the seeds)."""
    by_reason: dict[str, dict[tuple[str, str, str], list[int]]] = {}
    first: dict[str, set[str]] = {}
    plain = []
    for run in runs:
        if not run.failed:
            plain += run.failures  # failures known only as lines
        for failure in run.failed:
            when = "before its first round" if failure.round is None else f"round {failure.round}"
            reason = re.sub(r"\d[\d.e+-]*", "#", failure.error)  # one reason, other numbers
            first.setdefault(reason, set()).add(failure.error)
            cells = by_reason.setdefault(reason, {})
            where = (run.scenario.name, failure.label, f"T={failure.horizon}, {when}")
            cells.setdefault(where, []).append(failure.seed)
    if not by_reason and not plain:
        return ["None.", ""]
    lines = []
    for reason, cells in by_reason.items():
        count = sum(len(seeds) for seeds in cells.values())
        texts = sorted(first[reason])
        shown = texts[0] + (" (its numbers differ from cell to cell)" if len(texts) > 1 else "")
        lines += [f"- {count} cell(s): {md_text(shown)}"]
        for (scenario, agent, when), seeds in cells.items():
            shown = ", ".join(str(seed) for seed in sorted(seeds))
            lines += [f"  - {md_text(f'{scenario}: {agent}, seed(s) {shown} ({when})')}"]
    lines += [f"- {md_text(failure)}" for failure in plain]
    return [*lines, ""]


def _agents_lines(runs: Sequence[ScenarioRun]) -> list[str]:
    """Per agent: its identity, the bco_gym version(s) that computed its runs and when."""
    from bco_gym.agents.registry import identity_of_result
    from bco_gym.reports.summary import render_markdown

    found: dict[str, dict[str, set[str]]] = {}
    for run in runs:
        for result in run.results:
            entry = found.setdefault(
                result.agent, {"identity": set(), "version": set(), "at": set()}
            )
            entry["identity"].add(identity_of_result(result))
            entry["version"].add(result.versions.get("bco_gym") or "?")
            entry["at"].add(result.computed_at or "?")
    if not found:
        return []
    body = []
    for agent, entry in found.items():
        times = sorted(entry["at"])
        when = times[0] if len(times) == 1 else f"{times[0]} to {times[-1]}"
        body.append(
            [
                agent,
                Markdown(", ".join(code_span(identity) for identity in sorted(entry["identity"]))),
                ", ".join(sorted(entry["version"])),
                when,
            ]
        )
    header = ["agent", "identity", "computed by bco_gym", "computed at (UTC)"]
    return [
        "## Agents",
        "",
        "Every agent computed into this directory for the suite (unless `--agents-only`), "
        "with the version of bco_gym that computed its runs and when ('?': a result saved "
        "before this was recorded).",
        "",
        render_markdown(header, body),
        "",
    ]


def _headline_lines(directory: Path, runs: Sequence[ScenarioRun]) -> list[str]:
    """Per scenario, every agent's final regret minus random's on the same seeds."""
    from bco_gym.plotting import overview_figure, save

    panels = [(run.scenario.title or run.scenario.name, run.results) for run in runs if run.results]
    if not panels:
        return []
    figure = save(overview_figure(panels), directory / "headline.png")
    caption = "Final regret minus random's on the same seeds, per scenario"
    return [
        "## Final regret per scenario",
        "",
        *figure_lines(figure.name, caption, HEADLINE_READING),
    ]


def _scenario_lines(
    directory: Path, index: int, run: ScenarioRun, judged: Judged | None
) -> list[str]:
    from bco_gym.plotting.style import loss_text, run_text, set_text
    from bco_gym.reports.report import _pairs_part, _table_part, comparator_lines, slug

    scenario = run.scenario
    lines = [f"## {index}. {scenario.name}: {md_text(scenario.title or scenario.env_id)}", ""]
    if not run.results:
        return [*lines, "No results.", ""]
    results = run.results
    setting = f"Setting: {set_text(results)}; {loss_text(results)}; {run_text(results)}."
    lines += [md_text(setting), ""]
    lines += comparator_lines(results)
    centred = centre_rows([run]).get(scenario.name, {})
    for agent in centred:
        lines += [f"**{md_text(agent)}** {CENTRE_NOTE}.", ""]
    stem = f"{index:02d}-{slug(scenario.name)}"
    if judged is not None:
        lines += verdict_rows_lines(judged)
        if not matplotlib_missing():
            lines += _curves_lines(directory, stem, run, judged)
        if judged.ranking is not None:
            lines += _pairs_part(directory, judged.ranking, stem, scenario.title, results)
    for reference in scenario.references:
        lines += _table_part(results, paired_reference(judged, reference))
    if run.timings is not None:
        from bco_gym.reports.bench_timing import timing_lines

        lines += timing_lines(run.timings)
    return lines


#: The sentence under a scenario's curves of the given agents against the references.
CURVES_READING = (
    "Read the left panel for the shape of each run's regret (mean over seeds, 95% band), "
    "the right one for the given agent's lead or lag on the verdicts' reference rows: the "
    "difference on the same seed, with its paired 95% band; a band clear of 0 at t = T is "
    "a separation before the verdict's multiplicity correction."
)


def _curves_lines(directory: Path, stem: str, run: ScenarioRun, judged: Judged) -> list[str]:
    """The given agents' regret curves against the references' verdict rows (their tuned
    rows where the scenario has them) and random's, with the paired differences."""
    from bco_gym.plotting import save
    from bco_gym.plotting.curves import against_references_figure
    from bco_gym.stats.paired import group_series

    groups = group_series(run.results)
    given = [label for label, g in groups.items() if g[0].agent not in run.reference_agents]
    rows = [paired_reference(judged, reference) for reference in VERDICT_REFERENCES]
    references = [row for row in dict.fromkeys(rows) if row in groups]
    if not given or not references:
        return []
    chosen = {*given, *references, *(label for label in groups if label == BASELINE)}
    results = [result for label in chosen for result in groups[label]]
    title = f"{run.scenario.name}: given agents against {' and '.join(references)}"
    figure = save(
        against_references_figure(results, given, references, title=title),
        directory / f"{stem}-curves.png",
    )
    caption = f"Regret against t: {', '.join(given)} against {', '.join(references)}"
    return ["### Regret curves", "", *figure_lines(figure.name, caption, CURVES_READING)]


__all__ = [
    "PROFILE_TAUS",
    "Aggregates",
    "ReferenceColumn",
    "aggregates",
    "centre_rows",
    "write_bench_report",
]
