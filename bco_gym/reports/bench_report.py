"""The benchmark's report: verdicts, scores across scenarios, per-scenario rankings.

:func:`write_bench_report` writes ``report.md`` of ``bco-gym bench``
(:mod:`~bco_gym.reports.bench` runs the cells) and its figures beside it:

* its first lines (:func:`provenance_lines`): the suite and the scenarios covered (a
  subset says so in the title), the reference archive's digest and where the reference
  cells came from, the library version, the evaluation seeds (:func:`seeds_line`);
* a verdict per agent (:func:`verdict`): the scenarios where it is separated from bbcg
  and from fkm, better or worse, tested within a fixed family (:class:`Judged`): the
  agent against the scenario's reference rows, paired t-tests Holm-corrected within those
  tests only, so the other agents in the directory cannot move it; against each
  reference's tuned row (constants tuned on seeds disjoint from the evaluation seeds: as
  a rule the stronger version of the reference) where the scenario has one, else its
  theory row, and then against its theory row (:func:`reference_rows`);
* the failed cells, and the agents a scenario's feedback did not suit;
* the headline figure (``headline.png``, as the main job's report draws it): per
  scenario, each agent's final regret minus random's on the same seeds;
* the IQM and mean score of every agent with stratified-bootstrap 95% intervals, its
  probability of improvement over bbcg and fkm (against the rows of the verdicts:
  :class:`ReferenceColumn`), and the probability of improvement of
  every agent over every other (a matrix; :mod:`~bco_gym.reports.scores`), with their
  figures and the performance profiles with their 95% bands
  (:mod:`bco_gym.plotting.bench`);
* per scenario: its comparator (a warning when uncertified), the ordered groups (the
  all-pairs ranking of its bandit rows, labelled as such), the "which method when"
  paragraph, the pairwise matrix and the paired tables against the scenario's references
  (a reference's tuned row where the scenario has one).

Full-information and two-point rows (:func:`~bco_gym.reports.paired.feedback_of`) are
marked wherever they are shown and kept out of the bandit rankings: a scores table of
their own, beside (not inside) a scenario's ordered groups, below a rule in the figures.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from bco_gym.engine.result import RunResult
from bco_gym.reports.page import contents_lines, figure_lines, untitled, write_page
from bco_gym.reports.paired import FEEDBACK_MARKS, feedback_of, group_series
from bco_gym.reports.ranking import Family, Ranking, compare_family
from bco_gym.reports.report import HEADLINE_READING, bandit_ranking, matplotlib_missing
from bco_gym.reports.scores import (
    BOOTSTRAP_REPS,
    Estimate,
    ProfileEstimate,
    ScoreRow,
    aggregate,
    improvement,
    improvement_matrix,
    profile,
    scores_by_scenario,
)
from bco_gym.reports.suites import SMOKE_TESTS, SUPERSEDED, Scenario, centre_players
from bco_gym.sweeps.results import atomic_write

VERDICT_REFERENCES = ("bbcg", "fkm")
#: Random play: a reference row of every scenario (the score's baseline).
BASELINE = "random"
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
PROFILE_TAUS = np.linspace(0.0, 1.5, 151)


@dataclass(frozen=True)
class ScenarioRun:
    """One scenario as the bench ran it: its agents, the ones left out, its results."""

    scenario: Scenario
    agents: tuple[str, ...]
    skipped: Mapping[str, str]
    results: list[RunResult]
    failures: list[str] = field(default_factory=list)
    failed: list[Any] = field(default_factory=list)  # the CellFailure records
    #: Cells whose files were damaged or tampered with, computed again (one line each).
    recomputed: list[str] = field(default_factory=list)
    #: Read from the directory (an earlier bench's cells), not run by this command.
    earlier: bool = False
    #: Where the reference agents' cells came from: "archive" (the shipped one),
    #: "computed here", or "" (not known: a scenario of an earlier bench).
    references: str = ""

    @property
    def reference_agents(self) -> tuple[str, ...]:
        """The scenario's reference agents: its own and random play (the score's baseline)."""
        return tuple(dict.fromkeys([*self.scenario.agents, BASELINE]))


@dataclass(frozen=True)
class Coverage:
    """Which scenarios of its suite a report covers (a subset says so everywhere)."""

    suite: str
    scenarios: Sequence[str]
    total: int

    @property
    def subset(self) -> bool:
        return len(self.scenarios) < self.total

    @property
    def note(self) -> str:
        """``subset: 2 of 18 scenarios`` for a subset, else ``""``."""
        return f"subset: {len(self.scenarios)} of {self.total} scenarios" if self.subset else ""

    @property
    def label(self) -> str:
        """scores.csv's suite column: ``standard-v2``, ``quick-v2 (smoke test)``,
        ``standard-v2 (subset: 2 of 18 scenarios)``."""
        notes = [note for note in ("smoke test" * (self.suite in SMOKE_TESTS), self.note) if note]
        return f"{self.suite} ({'; '.join(notes)})" if notes else self.suite


# -- the statistics of the report -----------------------------------------------------------------
@dataclass(frozen=True)
class Judged:
    """One scenario's statistics behind its verdicts and its ranking.

    ``means`` and ``feedback``: every series' mean final regret and feedback
    (:func:`~bco_gym.reports.paired.feedback_of`); ``references``: the reference rows
    (the theory and tuned rows of the scenario's reference agents, random's included);
    ``families``: every series against those rows, Holm-corrected within that fixed
    family only (:func:`~bco_gym.reports.ranking.compare_family`), the verdicts' tests,
    which no other agent in the directory can move; ``ranking``: the all-pairs ranking of
    the bandit rows (Holm over all their pairs: it changes with the rows present), or
    None with fewer than one bandit row.
    """

    means: Mapping[str, float]
    feedback: Mapping[str, str]
    references: tuple[str, ...]
    families: Mapping[str, Family]
    ranking: Ranking | None

    @property
    def labels(self) -> tuple[str, ...]:
        """Every series, by mean final regret."""
        return tuple(sorted(self.means, key=lambda label: (self.means[label], label)))


def judge(results: Sequence[RunResult], reference_agents: Sequence[str]) -> Judged:
    """The :class:`Judged` of one scenario's results (at one horizon)."""
    groups = group_series(results)
    means = {label: float(np.mean([r.final_regret for r in g])) for label, g in groups.items()}
    feedback = {label: feedback_of(group[0]) for label, group in groups.items()}
    references = tuple(label for label in groups if groups[label][0].agent in reference_agents)
    families = {
        label: compare_family(results, label, references)
        for label in groups
        if [row for row in references if row != label]
    }
    ranking = bandit_ranking(results) if "bandit" in feedback.values() else None
    return Judged(means, feedback, references, families, ranking)


def judgements(runs: Sequence[ScenarioRun]) -> dict[str, Judged]:
    """Scenario name -> its :class:`Judged` (scenarios with results)."""
    return {
        run.scenario.name: judge(run.results, run.reference_agents) for run in runs if run.results
    }


def _label_of(judged: Judged | Ranking, agent: str) -> str | None:
    """The series label of the given ``agent`` (its only series; beside tuned rows of the
    same agent, its own row), or None."""
    labels = [label for label in judged.labels if label == agent or label.startswith(f"{agent} (")]
    if len(labels) > 1:  # a reference agent given: its own (theory) row beside its tuned one
        labels = [label for label in labels if not _is_tuned(label, agent)]
    return labels[0] if len(labels) == 1 else None


def _is_tuned(label: str, reference: str) -> bool:
    return label.startswith(f"{reference} (tuned")


def reference_rows(judged: Judged | Ranking, reference: str) -> tuple[str | None, str | None]:
    """(tuned row, theory row) of ``reference`` among one scenario's series, None where
    it has no such row.

    The tuned row has constants tuned on seeds disjoint from the evaluation seeds
    (``bbcg (tuned, c=100)``): as a rule the stronger version of the reference (not
    always: tuned on two seeds, it can lose to the theory row on the evaluation seeds),
    so the one the verdicts are against first. Should a scenario hold several tuned rows
    of one reference, the one with the lowest mean regret is taken (the harder test).
    """
    tuned = [label for label in judged.labels if _is_tuned(label, reference)]
    theory = [
        label
        for label in judged.labels
        if (label == reference or label.startswith(f"{reference} ("))
        and not _is_tuned(label, reference)
    ]
    strongest = min(tuned, key=lambda label: judged.means[label]) if tuned else None
    if reference in theory:
        return strongest, reference
    return strongest, theory[0] if len(theory) == 1 else None


def _tuned_text(labels: Sequence[str], reference: str) -> str:
    """``tuned, c=100`` (one constant everywhere) or ``tuned, c=10 to 1e+04 by scenario``."""
    inner = sorted({label[len(reference) + 2 :].split(")")[0] for label in labels})
    if len(inner) == 1:
        return inner[0]
    constants = [text.partition(", ")[2].partition("=") for text in inner]
    try:
        values = sorted(float(value) for _, _, value in constants)
    except ValueError:
        return "tuned, constants by scenario"
    names = {name for name, _, _ in constants}
    if len(names) != 1:
        return "tuned, constants by scenario"
    return f"tuned, {names.pop()}={values[0]:.3g} to {values[-1]:.3g} by scenario"


def _separations(agent: str, chosen: Mapping[str, str], judged: Mapping[str, Judged]) -> str:
    """ "better in 2 (a, b); worse in 1 (c); not separated in 4": ``agent`` against the
    row ``chosen[scenario]`` of each scenario, within its fixed family of tests there
    (:attr:`Judged.families`: Holm over the agent against the reference rows)."""
    better, worse, tied = [], [], []
    for name, theirs in chosen.items():
        family = judged[name].families[_label_of(judged[name], agent) or ""]
        if family.beats(theirs):
            better.append(name)
        elif family.beaten_by(theirs):
            worse.append(name)
        else:
            tied.append(name)
    if not better and not worse:
        return f"separated in none of {len(tied)}"
    parts = [
        f"{what} {len(names)} ({', '.join(names)})"
        for what, names in (("better in", better), ("worse in", worse))
        if names
    ]
    if tied:
        parts.append(f"not separated in {len(tied)}")
    return "; ".join(parts)


def _scenarios(count: int) -> str:
    return f"{count} scenario" + ("" if count == 1 else "s")


def _reference_items(
    agent: str, reference: str, ran: Sequence[str], ranked: Mapping[str, Judged]
) -> list[str]:
    """The verdict's items against one reference: against its tuned row where the
    scenario has one (its theory row elsewhere), then against its theory row when
    some scenario had a tuned one."""
    primary: dict[str, str] = {}  # scenario -> the row the verdict is against
    theory: dict[str, str] = {}
    for name in ran:
        ours = _label_of(ranked[name], agent)
        tuned, plain = reference_rows(ranked[name], reference)
        rows = ranked[name].references
        plain = plain if plain != ours and plain in rows else None
        tuned = tuned if tuned != ours and tuned in rows else None
        if tuned or plain:
            primary[name] = tuned or plain  # type: ignore[assignment]
        if plain:
            theory[name] = plain
    if not primary:
        return [f"against {reference}: no common scenario"]
    tuned_rows = [row for name, row in primary.items() if row != theory.get(name)]
    if not tuned_rows:
        return [f"against {reference} (theory constants): {_separations(agent, primary, ranked)}"]
    shown = _tuned_text(tuned_rows, reference)
    plain_count = len(primary) - len(tuned_rows)
    if plain_count:
        shown += (
            f" in {_scenarios(len(tuned_rows))}; theory constants in "
            f"{_scenarios(plain_count)} without a tuned row"
        )
    items = [f"against {reference} ({shown}): {_separations(agent, primary, ranked)}"]
    if theory:
        items.append(
            f"against {reference} (theory constants): {_separations(agent, theory, ranked)}"
        )
    return items


def verdict(agent: str, ranked: Mapping[str, Judged]) -> str:
    """The scenarios where ``agent`` is separated from bbcg / fkm, and which way: a line
    naming the agent, then one item per reference row (markdown, two-space indented).

    Against each reference, the first item is against its tuned row where the scenario
    has one (:func:`reference_rows`; the theory row where it has none) and names that
    row; the second, when some scenario had a tuned row, against its theory row (the
    published constants). Each test is within the agent's fixed family of the scenario
    (:attr:`Judged.families`), so the other agents in the directory never change it. A
    full-information or two-point agent says so first: it is not a bandit result."""
    ran = [name for name, judged in ranked.items() if _label_of(judged, agent) is not None]
    if not ran:
        return f"**{agent}**: ran in no scenario"
    items = [
        item
        for reference in VERDICT_REFERENCES
        if agent != reference
        for item in _reference_items(agent, reference, ran, ranked)
    ]
    kinds = sorted(
        {ranked[name].feedback[_label_of(ranked[name], agent) or ""] for name in ran} - {"bandit"}
    )
    mark = "".join(f" ({FEEDBACK_NOTES[kind]})" for kind in kinds)
    return f"**{agent}**{mark} ({_scenarios(len(ran))}):" + "".join(
        f"\n  - {item}" for item in items
    )


#: The verdict's mark of an agent with more feedback than one loss value a round.
FEEDBACK_NOTES = {
    "full": "full information: it sees gradients, a lower reference, not a bandit result",
    "two-point": "two-point feedback: it sees two losses a round, not a one-point bandit result",
}


def _untuned_note(ranked: Mapping[str, Judged]) -> str:
    """ " No scenario here has ... : ..." when no scenario has a tuned bbcg or fkm."""
    if any(
        reference_rows(judged, reference)[0]
        for judged in ranked.values()
        for reference in VERDICT_REFERENCES
    ):
        return ""
    return (
        " No scenario here has a tuned row of bbcg or fkm: every verdict below is against "
        "the theory rows."
    )


#: The paragraph under the report's "Verdicts" heading.
VERDICTS_NOTE = (
    "Each verdict counts the scenarios where the agent is separated from bbcg and from "
    "fkm, better or worse. The tests form a **fixed family** per scenario: the agent "
    "against each of the scenario's reference rows (its reference agents' theory and tuned "
    "rows and random's), paired t-tests on the scenario's seeds, Holm-corrected within "
    "those tests only, so adding or removing other agents in the directory never changes "
    "a verdict (the per-scenario ordered groups are the all-pairs ranking, which can). "
    "A verdict is against the reference's **tuned row** (constants tuned on seeds disjoint "
    "from the evaluation seeds) where the scenario has one, the real test, and the item "
    "names that row; the next item is against the reference's theory row (the theorem's "
    "published constants), a baseline. Where a scenario has no tuned row the verdict is "
    "against the theory row. An agent with more feedback than one loss value a round "
    "(full information, two-point) is marked: its verdict is not a bandit result."
)


@dataclass(frozen=True)
class Aggregates:
    """Per agent: scenarios scored, IQM and mean estimates, performance profile with its
    band; per ordered pair of agents sharing a scenario, P(first < second)."""

    agents: list[str]
    scenarios: dict[str, int]
    runs: dict[str, int]
    estimates: dict[str, dict[str, Estimate]]
    improvements: dict[tuple[str, str], Estimate]
    profiles: dict[str, ProfileEstimate]
    #: Per verdict reference (bbcg, fkm): its column of the scores table.
    against: dict[str, ReferenceColumn] = field(default_factory=dict)
    #: Per agent: what it learned from (scores.csv's ``feedback``; absent: bandit).
    feedback: dict[str, str] = field(default_factory=dict)

    def is_bandit(self, agent: str) -> bool:
        return self.feedback.get(agent, "bandit") == "bandit"

    def shown(self, agent: str) -> str:
        """The agent as tables and figures name it: ``ogd (full info)`` for an agent with
        more feedback than one loss value a round."""
        kind = self.feedback.get(agent, "bandit")
        return agent if kind not in FEEDBACK_MARKS else f"{agent} ({FEEDBACK_MARKS[kind]})"

    def order(self) -> list[str]:
        """The bandit agents, then those with more feedback (ranked apart); each most
        scenarios first, then by IQM (the tables' and figures' order)."""
        return sorted(
            self.agents,
            key=lambda a: (
                not self.is_bandit(a),
                -self.scenarios[a],
                self.estimates[a]["iqm"].value,
            ),
        )


@dataclass(frozen=True)
class ReferenceColumn:
    """P(agent < reference) for every agent, against the row of the reference the
    verdicts are against: per scenario its tuned row (scores.csv ``bbcg (tuned)``) where
    the scenario has one, else its theory row (``bbcg``)."""

    reference: str
    rows: dict[str, str]  # scenario -> the reference's scores.csv label there
    estimates: dict[str, Estimate]  # agent -> P(agent < that row)

    @property
    def tuned(self) -> int:
        """In how many scenarios the column is against a tuned row."""
        return sum(label != self.reference for label in self.rows.values())

    @property
    def header(self) -> str:
        """``P(agent < bbcg (tuned)) [95% CI]``; with tuned rows in some scenarios only,
        ``P(agent < bbcg (tuned in 3/11)) [95% CI]``; without any, ``P(agent < bbcg)``."""
        if not self.tuned:
            row = self.reference
        elif self.tuned == len(self.rows):
            row = f"{self.reference} (tuned)"
        else:
            row = f"{self.reference} (tuned in {self.tuned}/{len(self.rows)})"
        return f"P(agent < {row}) [95% CI]"


def reference_column(
    reference: str,
    per_agent: Mapping[str, Mapping[str, np.ndarray]],
    improvements: Mapping[tuple[str, str], Estimate],
    reps: int,
) -> ReferenceColumn | None:
    """``reference``'s :class:`ReferenceColumn` (None when it has no scores). A scenario
    where the chosen row is the agent's own is left out of that agent's P; where one
    row serves every scenario, P is the matrix's (the same resamples)."""
    tuned = f"{reference} (tuned)"
    scenarios = list(dict.fromkeys([*per_agent.get(tuned, {}), *per_agent.get(reference, {})]))
    if not scenarios:
        return None
    rows = {name: tuned if name in per_agent.get(tuned, {}) else reference for name in scenarios}
    estimates = {}
    for agent, ours in per_agent.items():
        shared = {name: row for name, row in rows.items() if name in ours and row != agent}
        if not shared:
            continue
        used = set(shared.values())
        if len(used) == 1 and (agent, *used) in improvements:
            estimates[agent] = improvements[(agent, *used)]
            continue
        theirs = {name: per_agent[row][name] for name, row in shared.items()}
        found = improvement({name: ours[name] for name in shared}, theirs, reps=reps)
        if math.isfinite(found.value):
            estimates[agent] = found
    return ReferenceColumn(reference, rows, estimates)


def aggregates(rows: Sequence[ScoreRow], agents: Sequence[str], reps: int) -> Aggregates:
    per_agent = {agent: scores_by_scenario(rows, agent) for agent in agents}
    improvements = improvement_matrix(per_agent, reps=reps)
    columns = {
        reference: reference_column(reference, per_agent, improvements, reps)
        for reference in VERDICT_REFERENCES
    }
    return Aggregates(
        agents=list(agents),
        scenarios={agent: len(per_agent[agent]) for agent in agents},
        runs={agent: sum(len(v) for v in per_agent[agent].values()) for agent in agents},
        estimates={agent: aggregate(per_agent[agent], reps=reps) for agent in agents},
        improvements=improvements,
        profiles={agent: profile(per_agent[agent], PROFILE_TAUS, reps=reps) for agent in agents},
        against={name: column for name, column in columns.items() if column is not None},
        feedback={row.agent: row.feedback for row in rows if row.feedback != "bandit"},
    )


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
        f"{names[method]} for {', '.join(agents)}"
        for method, agents in by_method.items()
        if method in names
    ]
    bands: dict[str, list[str]] = {}
    for agent in order:
        bands.setdefault(stats.profiles[agent].method, []).append(agent)
    profile_parts = [
        f"{names[method]} for {', '.join(agents)}"
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
                f"{name}: its tuned row in the {_scenarios(count)} that "
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
            cells.append(f"**{text}**" if separated else text)
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
) -> Path:
    """``report.md`` and its figures beside it (module docstring), each written atomically
    and never through a symlink; without matplotlib, the report without its figures and a
    line saying why.

    ``given``: the agents this command benched (their verdicts first, then those of the
    other agents in ``runs``); ``coverage``: the scenarios of the suite the report
    covers (None: all of them)."""
    directory = path.parent
    ranked = judgements(runs)
    agents = list(dict.fromkeys(row.agent for row in rows))
    stats = aggregates(rows, agents, reps)
    head = [*_first_lines(suite, runs, coverage), f"Generated by `{command}`.", ""]
    head += ["## Verdicts", "", VERDICTS_NOTE + _untuned_note(ranked), ""]
    judged = list(dict.fromkeys([*given, *_user_agents(runs)]))
    head += [f"- {verdict(agent, ranked)}" for agent in judged] + [""]
    lines = ["## How to read", "", untitled(READING), ""]
    lines += ["## Failed cells", ""]
    lines += _failure_lines(runs)
    recomputed = [f"{run.scenario.name}: {line}" for run in runs for line in run.recomputed]
    if recomputed:
        lines += ["## Recomputed cells", "", RECOMPUTED_NOTE, ""]
        lines += [f"- {line}" for line in recomputed] + [""]
    lines += _agents_lines(runs)
    skipped = [(run.scenario.name, a, why) for run in runs for a, why in run.skipped.items()]
    if skipped:
        lines += ["Not run (the scenario's feedback does not suit the agent):", ""]
        lines += [f"- {agent} on {name}: {why}" for name, agent, why in skipped] + [""]
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
    atomic_write(path, lambda stream: stream.write(text.encode("utf-8")))
    write_page(path)
    return path


def _user_agents(runs: Sequence[ScenarioRun]) -> list[str]:
    """The agents of ``runs`` that are not their scenario's reference agents, in order."""
    return list(
        dict.fromkeys(
            result.agent
            for run in runs
            for result in run.results
            if result.agent not in run.reference_agents
        )
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
    """The report's title, what a reviewer asks first (:func:`provenance_lines`), the
    smoke-test and superseded notes, the centre-playing rows."""
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
        lines += [f"- {name}: {', '.join(agents)}" for name, agents in centred.items()]
        lines += [""]
    return lines


def provenance_lines(
    suite: str, runs: Sequence[ScenarioRun], coverage: Coverage | None = None
) -> list[str]:
    """The suite and the scenarios covered, the reference archive's digest and where the
    reference cells came from, the library version, the evaluation seeds."""
    from bco_gym.reports.references import library_version

    names = [run.scenario.name for run in runs if run.results]
    covered = (
        f"; this report covers {len(names)} of its {coverage.total} scenarios: " + ", ".join(names)
        if coverage is not None and coverage.subset
        else f", {'all ' if coverage is not None else ''}{_scenarios(len(names))}"
    )
    return [
        f"- **Suite**: {suite}{covered}.",
        f"- **Reference archive**: {archive_line(suite, runs)}.",
        f"- **Library**: bco_gym {library_version()} wrote this report (the version that "
        "computed each agent's cells is in the Agents table).",
        f"- **Evaluation seeds**: {seeds_line(runs)}.",
    ]


def archive_line(suite: str, runs: Sequence[ScenarioRun]) -> str:
    """The shipped archive's digest (:func:`~bco_gym.reports.references.archive_digest`)
    and in how many scenarios its cells were read or the references computed here."""
    from bco_gym.reports.references import ARCHIVED, INDEX, archive_digest, read_index

    digest = archive_digest(suite) if suite in ARCHIVED else None
    if digest is None:
        return f"none ships for {suite}; the reference agents' cells were computed here"
    index = read_index(suite) or {}
    text = (
        f"`sha256:{digest}` (bco_gym/data/references/{suite}/{INDEX}: cells of bco_gym "
        f"{index.get('library_version', '?')}, code digest "
        f"`{str(index.get('code_digest', '?'))[:12]}`)"
    )
    counts = {
        source: sum(run.references == source for run in runs if run.results)
        for source in ("archive", "computed here", "")
    }
    parts = [
        f"{what} in {_scenarios(counts[source])}"
        for source, what in (
            ("archive", "its cells read"),
            ("computed here", "not used, the reference cells computed here"),
            ("", "from an earlier bench into this directory"),
        )
        if counts[source]
    ]
    return text + ("; " + "; ".join(parts) if parts else "")


def seeds_line(runs: Sequence[ScenarioRun]) -> str:
    """The evaluation seeds of every scenario (and the tuning seeds of the reference
    constants, disjoint from them): e.g. ``0-7 in every scenario; the references'
    constants tuned on seeds 100-101``."""
    evaluation: dict[str, list[str]] = {}
    tuning: dict[str, list[str]] = {}
    for run in runs:
        if not run.results:
            continue
        evaluation.setdefault(seed_text(run.scenario.seeds), []).append(run.scenario.name)
        if run.scenario.tuning is not None:
            tuning.setdefault(seed_text(run.scenario.tuning.seeds), []).append(run.scenario.name)
    count = sum(len(names) for names in evaluation.values())
    text = _grouped(evaluation, count)
    if tuning:
        text += f"; the references' constants tuned on seeds {_grouped(tuning, count)}"
    return text


def seed_text(seeds: Sequence[int]) -> str:
    """``0-7`` for a run of consecutive seeds, else the seeds listed."""
    ordered = sorted(seeds)
    if len(ordered) > 1 and ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"{ordered[0]}-{ordered[-1]}"
    return ", ".join(str(seed) for seed in ordered)


def _grouped(found: Mapping[str, Sequence[str]], total: int) -> str:
    if len(found) == 1:
        ((text, names),) = found.items()
        return f"{text} in {'every scenario' if len(names) == total else ', '.join(names)}"
    return "; ".join(f"{text} in {', '.join(names)}" for text, names in found.items())


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
        lines += [f"- {count} cell(s): {shown}"]
        for (scenario, agent, when), seeds in cells.items():
            shown = ", ".join(str(seed) for seed in sorted(seeds))
            lines += [f"  - {scenario}: {agent}, seed(s) {shown} ({when})"]
    lines += [f"- {failure}" for failure in plain]
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
                ", ".join(f"`{identity}`" for identity in sorted(entry["identity"])),
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
    lines = [f"## {index}. {scenario.name}: {scenario.title or scenario.env_id}", ""]
    if not run.results:
        return [*lines, "No results.", ""]
    results = run.results
    lines += [f"Setting: {set_text(results)}; {loss_text(results)}; {run_text(results)}.", ""]
    lines += comparator_lines(results)
    centred = centre_rows([run]).get(scenario.name, {})
    for agent in centred:
        lines += [f"**{agent}** {CENTRE_NOTE}.", ""]
    if judged is not None:
        lines += _verdict_rows_lines(judged)
        if judged.ranking is not None:
            stem = f"{index:02d}-{slug(scenario.name)}"
            lines += _pairs_part(directory, judged.ranking, stem, scenario.title, results)
    for reference in scenario.references:
        lines += _table_part(results, _paired_reference(judged, reference))
    return lines


def _verdict_rows_lines(judged: Judged) -> list[str]:
    """The rows of bbcg and fkm the verdicts are against in this scenario, e.g. "The
    verdicts are against bbcg (tuned, c=100) and fkm (tuned, c=10) here, then against
    the theory rows bbcg and fkm."."""
    primary, second = [], []
    for reference in VERDICT_REFERENCES:
        tuned, theory = reference_rows(judged, reference)
        if tuned or theory:
            primary.append(tuned or theory)
        if tuned and theory:
            second.append(theory)
    if not primary:
        return []
    line = f"The verdicts are against {' and '.join(primary)} here"
    if second:
        rows = "row" if len(second) == 1 else "rows"
        line += f", then against the theory {rows} {' and '.join(second)}"
    elif not any(_is_tuned(row, reference) for row in primary for reference in VERDICT_REFERENCES):
        line += " (theory constants: no tuned row here)"
    count = len(judged.references)
    line += (
        f"; each agent is tested against the {count} reference rows "
        f"({', '.join(judged.references)}), Holm-corrected within those {count} tests"
    )
    return [line + ".", ""]


def _paired_reference(judged: Judged | None, reference: str) -> str:
    """The row a scenario's paired table is against: ``reference``'s tuned row where
    the scenario has one (as the verdicts), else ``reference`` itself."""
    if judged is None:
        return reference
    tuned, _ = reference_rows(judged, reference)
    return tuned or reference
