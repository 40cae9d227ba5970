"""The bench's verdicts: each agent against the bbcg and fkm rows of every scenario.

A verdict counts the scenarios where an agent is separated from bbcg and from fkm,
better or worse. Its tests form a fixed family per scenario (:class:`Judged`,
:func:`~bco_gym.stats.ranking.compare_family`): the agent against each of the
scenario's reference rows (its reference agents' theory and tuned rows, random's
included), paired t-tests Holm-corrected within those tests only, so adding or removing
other agents in the directory cannot change it. Against each reference it is first
against the reference's tuned row (constants tuned on seeds disjoint from the evaluation
seeds: as a rule the stronger version of the reference) where the scenario has one,
else its theory row, and then against its theory row (:func:`reference_rows`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bco_gym.engine.result import RunResult
from bco_gym.reports.bench_provenance import ScenarioRun, scenario_count
from bco_gym.reports.page import md_text
from bco_gym.reports.report import bandit_ranking
from bco_gym.stats.paired import feedback_of, group_series
from bco_gym.stats.ranking import Family, Ranking, compare_family

VERDICT_REFERENCES = ("bbcg", "fkm")
#: How the verdicts name an agent's tuned rows (``bench --tune``): ``mine (tuned)``.
TUNED = " (tuned)"


@dataclass(frozen=True)
class Judged:
    """One scenario's statistics behind its verdicts and its ranking.

    ``means`` and ``feedback``: every series' mean final regret and feedback
    (:func:`~bco_gym.stats.paired.feedback_of`); ``references``: the reference rows
    (the theory and tuned rows of the scenario's reference agents, random's included);
    ``families``: every series against those rows, Holm-corrected within that fixed
    family only (:func:`~bco_gym.stats.ranking.compare_family`), the verdicts' tests,
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
    same agent, its own row; for ``agent (tuned)``, its tuned row), or None."""
    if agent.endswith(TUNED):
        tuned = [label for label in judged.labels if _is_tuned(label, agent[: -len(TUNED)])]
        return tuned[0] if len(tuned) == 1 else None
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
    (the families of :class:`Judged`: Holm over the agent against the reference rows)."""
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
            f" in {scenario_count(len(tuned_rows))}; theory constants in "
            f"{scenario_count(plain_count)} without a tuned row"
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
    (the families of :class:`Judged`), so the other agents in the directory never change it. A
    full-information or two-point agent says so first: it is not a bandit result."""
    ran = [name for name, judged in ranked.items() if _label_of(judged, agent) is not None]
    if not ran:
        return f"**{md_text(agent)}**: ran in no scenario"
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
    return f"**{md_text(agent)}**{mark} ({scenario_count(len(ran))}):" + "".join(
        f"\n  - {md_text(item)}" for item in items
    )


#: The verdict's mark of an agent with more feedback than one loss value a round.
FEEDBACK_NOTES = {
    "full": "full information: it sees gradients, a lower reference, not a bandit result",
    "two-point": "two-point feedback: it sees two losses a round, not a one-point bandit result",
}


def untuned_note(ranked: Mapping[str, Judged]) -> str:
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


def verdict_rows_lines(judged: Judged) -> list[str]:
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
    return [md_text(line + "."), ""]


def paired_reference(judged: Judged | None, reference: str) -> str:
    """The row a scenario's paired table is against: ``reference``'s tuned row where
    the scenario has one (as the verdicts), else ``reference`` itself."""
    if judged is None:
        return reference
    tuned, _ = reference_rows(judged, reference)
    return tuned or reference
