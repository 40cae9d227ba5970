"""``report.md``: scenarios side by side, each with its paired tables and figures.

A :class:`ReportSection` is a titled group of results on one setting (one env, set and loss
family; one or several horizons) with a short text saying what it shows.
:func:`write_report` writes ``report.md``, beside it the PNG figures it links
relatively, and ``index.html``, the same content as one self-contained page to open in a
browser (:mod:`~bco_gym.reports.page`). Under each figure, one sentence says what to read
in it (:data:`READINGS`).

* at the top, the generated-by line (the command, passed in) and a headline: one row
  per scenario with its comparator (exact, certified with its gap, or uncertified:
  :func:`~bco_gym.reports.summary.comparator_text`) and the ordered groups of all
  pairs (:mod:`bco_gym.stats.ranking`: every pair's paired t-test, Holm's correction
  across the pairs of the scenario), and
  the overview figure (per scenario, each agent's final regret minus random's on the
  same seeds); then the table of contents and how to read the tables;
* per scenario: its text and setting (with a warning when its comparator is
  uncertified, :data:`~bco_gym.reports.summary.UNCERTIFIED_NOTE`); who beats whom (the
  ordered groups, a "which method when" paragraph generated from them and the costs by
  :mod:`~bco_gym.reports.advice`, and the pairwise matrix figure: difference, wins and
  adjusted p-value of every pair); with several horizons, the exponents table and
  figure (fitted slopes, bootstrap band, local slopes) of the series run at two
  horizons or more, the rest at the largest horizon; the paired table against each
  reference (random and FKM by default, where the scenario has them); the warnings
  the runs raised (a capped theory parameter explains many a tie); the plain regret
  against t (linear axes), the final-regret dot plot, the paired-difference curves, the
  normalised regret (regret / t^(3/4) and regret / t; left out for portfolio losses,
  whose log-wealth regret has no T^(3/4) claim), and the tuning figure where an agent
  ran with several values of its constant.

The report depends only on the results and the arguments (no time stamps, PNGs
without a software tag), so the same results give the same files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bco_gym.engine.result import RunResult
from bco_gym.losses.verification import UNCERTIFIED
from bco_gym.reports.advice import which_method
from bco_gym.reports.page import (
    Markdown,
    code_span,
    contents_lines,
    figure_lines,
    md_text,
    untitled,
    write_page,
)
from bco_gym.reports.summary import (
    UNCERTIFIED_NOTE,
    changing_columns,
    changing_rows,
    comparator_text,
    exponent_columns,
    fit_exponents,
    render_markdown,
)
from bco_gym.stats.paired import (
    group_series,
    is_bandit,
    paired_columns,
    paired_table,
    series_label,
)
from bco_gym.stats.ranking import Ranking, rank, ranking_text

DEFAULT_REFERENCES = ("random", "fkm")
READING_GUIDE = (
    "How to read: intervals are 95% Student-t intervals over seeds. Runs with the same "
    "seed see the same loss sequence, so each agent is compared with a reference on the "
    "same seeds: *minus X* is the mean of (regret − X's regret) over those seeds, *wins* "
    "k/n says on k of the n paired seeds the agent's final regret was below X's. "
    "Rankings rest on all pairs: every pair of agents is compared on its own common seeds "
    "(paired t-test), with Holm's correction across the pairs of a scenario; two agents "
    "are *separated* when the adjusted p-value is at most 0.05. The ranking shows ordered "
    "groups: agents in braces are not separated, and every agent of a group is separated "
    "from, and better than, every agent of each later group; an agent that fits no such "
    "place is listed after them with its own relations. The theorem bound is "
    "the agent's regret bound at the run's own parameters (- where the agent has none); "
    "LMO and projection counts are per round; µs/round is agent plus environment time "
    "per round (the mean), p50 µs and "
    "p99 µs the median and 99th percentile of one round's time (RunResult.latency_us; "
    "in a batch a round's time is shared among its seeds, in the block loop among the "
    "rounds of a slice)."
)


#: The sentence under the headline figure: what to read in it.
HEADLINE_READING = (
    "Read each panel left to right: a dot left of the zero line is an agent whose final regret "
    "is below random play's on the same seeds, and a bar that does not cross zero separates "
    "it from random (a panel without random shows the final regret itself: left is lower)."
)
#: The sentence under each kind of figure of a scenario: what to read in it.
READINGS = {
    "pairs": "Read a cell as row minus column: a negative difference with an adjusted p at "
    "most 0.05 says the row agent has the lower regret, on most of the paired seeds "
    "that the wins count.",
    "exponents": "Read the slopes: a line of slope 3/4 grows as T^(3/4) (Theorem 1's rate), "
    "slope 1 is linear regret (no learning); the local slopes say whether the rate is "
    "still settling at the largest T.",
    "intervals": "Read the height at each interval length: a lower curve is an agent whose "
    "worst regret over intervals of that length is smaller, that is, one that follows a "
    "change of the losses faster.",
    "regret": "Read the curves' ends and slopes: the lowest curve at the right edge has the "
    "lowest regret at T, and a curve that bends down is learning.",
    "final": "Read the dots per seed and the mean with its 95% interval: on the right, a "
    "paired difference whose interval lies left of zero beats the reference on the same "
    "seeds.",
    "paired": "Read the gap below zero: the curve is the agent's regret minus the reference's "
    "on the same seed, so a band below zero at the right edge means it beats the "
    "reference, and the right panel shows when the gap opens.",
    "normalized": "Read the flatness: regret / t^(3/4) flattening out is Theorem 1's rate, "
    "and regret / t falling to zero means the average regret per round vanishes.",
    "tuning": "Read the minimum: the constant with the lowest mean final regret is the tuned "
    "one, and a flat curve says the agent is insensitive to it.",
}


@dataclass(frozen=True)
class ReportSection:
    """A titled group of results on one setting, and what it shows.

    At each horizon the runs must share the env id, the set and the loss family (the
    same seed then means the same loss sequence); ValueError otherwise.
    """

    title: str
    results: Sequence[RunResult]
    description: str = ""
    references: tuple[str, ...] = DEFAULT_REFERENCES
    #: Further parts of the section: ``part(directory, results, stem)`` -> markdown lines.
    parts: tuple[Callable[[Path, list[RunResult], str], list[str]], ...] = ()

    def __post_init__(self) -> None:
        if not self.title.strip():
            raise ValueError("a scenario needs a non-empty title")
        if not self.results:
            raise ValueError(f"scenario {self.title!r} holds no results")
        for horizon in sorted({r.horizon for r in self.results}):
            settings = {_setting(r) for r in self.results if r.horizon == horizon}
            if len(settings) > 1:
                raise ValueError(
                    f"scenario {self.title!r} mixes {len(settings)} settings (env, set, "
                    f"losses) at T = {horizon}: {sorted(settings)}; make one scenario per setting"
                )


def _setting(result: RunResult) -> tuple[str, str, str]:
    """What the same seed must share for runs to be paired: env id, set and loss family
    (its parameters; the per-seed ``digest`` is checked when pairing)."""
    family = sorted((k, v) for k, v in result.loss.items() if k != "digest")
    return (result.env_id, str(result.problem.get("set")), repr(family))


def slug(text: str) -> str:
    """Lower-case words joined by "-" (a file-name stem)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "scenario"


def final_horizon(results: Sequence[RunResult]) -> list[RunResult]:
    """The results at the largest horizon."""
    horizon = max(r.horizon for r in results)
    return [r for r in results if r.horizon == horizon]


def ranking(results: Sequence[RunResult]) -> str:
    """The ordered groups of all pairs (:func:`~bco_gym.stats.ranking.ranking_text`)."""
    return ranking_text(rank(results))


# -- writing --------------------------------------------------------------------------------------
def write_report(
    path: str | os.PathLike,
    scenarios: Sequence[ReportSection],
    *,
    command: str,
    title: str = "bco_gym: where each method wins",
) -> Path:
    """Write ``report.md`` at ``path``, its figures and ``index.html`` beside it; returns
    ``path``."""
    if not scenarios:
        raise ValueError("write_report needs at least one scenario")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    stems = [f"{index:02d}-{slug(s.title)}" for index, s in enumerate(scenarios, start=1)]
    head = [f"# {md_text(title)}", "", f"Generated by {code_span(command)}.", ""]
    head += _headline(path.parent, scenarios, stems)
    body = ["## How to read", "", untitled(READING_GUIDE), ""]
    for index, (scenario, stem) in enumerate(zip(scenarios, stems, strict=True), start=1):
        body += _scenario_section(path.parent, index, scenario, stem)
    lines = head + contents_lines(head + body) + body
    path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    write_page(path)
    return path


def _headline(
    directory: Path, scenarios: Sequence[ReportSection], stems: Sequence[str]
) -> list[str]:
    from bco_gym.plotting import overview_figure, save
    from bco_gym.plotting.style import loss_text, run_text, set_text

    header = ["scenario", "set", "losses", "runs", "comparator", "ordered groups (all pairs, Holm)"]
    body = []
    for scenario, stem in zip(scenarios, stems, strict=True):
        final = final_horizon(scenario.results)
        link = f"[{md_text(scenario.title)}](#{_anchor(scenario, stems.index(stem) + 1)})"
        cells = [Markdown(link), set_text(final), loss_text(final), run_text(final)]
        cells += [comparator_text(scenario.results), ranking(final)]
        body.append(cells)
    panels = [(scenario.title, final_horizon(scenario.results)) for scenario in scenarios]
    figure = save(overview_figure(panels), directory / "headline.png")
    return [
        "## Headline",
        "",
        render_markdown(header, body),
        "",
        *figure_lines(
            figure.name,
            "Final regret minus random's on the same seeds, per scenario",
            HEADLINE_READING,
        ),
    ]


def _anchor(scenario: ReportSection, index: int) -> str:
    """GitHub's anchor of the scenario's heading."""
    heading = f"{index}. {scenario.title}".lower()
    return re.sub(r"[^\w\- ]", "", heading).replace(" ", "-")


def _scenario_section(directory: Path, index: int, scenario: ReportSection, stem: str) -> list[str]:
    from bco_gym.plotting.style import loss_text, run_text, set_text

    results = list(scenario.results)
    final = final_horizon(results)
    lines = [f"## {index}. {md_text(scenario.title)}", ""]
    if scenario.description:
        lines += [md_text(scenario.description), ""]
    setting = f"Setting: {set_text(results)}; {loss_text(results)}; {run_text(results)}."
    lines += [md_text(setting), ""]
    lines += comparator_lines(results)
    lines += _pairs_part(directory, rank(final), stem, scenario.title, final)
    if len({r.horizon for r in results}) > 1:
        lines += _exponents_part(directory, results, stem, final[0].horizon)
    for reference in scenario.references:
        lines += _table_part(final, reference)
    lines += _changing_part(directory, final, stem)
    for part in scenario.parts:
        lines += part(directory, results, stem)
    lines += _warnings_part(results)
    lines += _figures_part(directory, final, stem, scenario.references)
    return lines


def matplotlib_missing() -> str | None:
    """None when figures can be drawn, else why not (a report then goes without them)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return 'matplotlib is not installed (pip install "bco_gym[plot]")'
    return None


def comparator_lines(results: Sequence[RunResult]) -> list[str]:
    """The comparator of a section's regrets ("exact", "certified, gap <= g"), and in bold
    the warning of :data:`~bco_gym.reports.summary.UNCERTIFIED_NOTE` when uncertified."""
    status = comparator_text(results)
    if status == UNCERTIFIED:
        return [f"**Warning: {UNCERTIFIED_NOTE}.**", ""]
    return [f"Comparator: {status}.", ""]


def _pairs_part(
    directory: Path, ranking: Ranking, stem: str, title: str, results: Sequence[RunResult]
) -> list[str]:
    """Who beats whom: the ordered groups, which method when, and the pairwise matrix.

    ``ranking``: the all-pairs ranking of the rows of ``results`` it holds (the bench's
    holds the bandit rows only, :func:`bandit_ranking`); rows with more feedback left out
    of it are named apart, with their means."""
    groups = group_series(results)
    labels = ranking.labels
    pairs = len(labels) * (len(labels) - 1) // 2
    which = "bandit rows" if all(is_bandit(groups[label][0]) for label in labels) else "rows"
    lines = [
        "### Who beats whom",
        "",
        f"Ordered groups, the all-pairs ranking of the {len(labels)} {which} (paired t-tests "
        f"on common seeds, Holm-corrected over all {pairs} pairs, so it can change when rows "
        f"are added or removed): {md_text(ranking_text(ranking))}.",
        "",
    ]
    more = {
        label: group
        for label, group in groups.items()
        if label not in labels and not is_bandit(group[0])
    }
    if more:
        shown = ", ".join(
            f"{md_text(label)} {np.mean([r.final_regret for r in group]):.4g}"
            for label, group in more.items()
        )
        lines += [
            "Rows with more feedback than one loss value a round, not ranked with the bandit "
            f"rows (mean final regret): {shown}.",
            "",
        ]
    lines += [md_text(which_method(ranking, results)), ""]
    if len(ranking.labels) < 2 or matplotlib_missing():
        return lines
    from bco_gym.plotting import pairwise_figure, save

    figure = save(pairwise_figure(ranking, title=title), directory / f"{stem}-pairs.png")
    caption = "Every pair: difference, wins, Holm-adjusted p"
    return [*lines, *figure_lines(figure.name, caption, READINGS["pairs"])]


def bandit_ranking(results: Sequence[RunResult]) -> Ranking:
    """The all-pairs ranking of the bandit rows of ``results`` (one horizon): rows with
    more feedback (full information, two-point) are kept out (:func:`is_bandit`)."""
    return rank([result for result in results if is_bandit(result)])


def _exponents_part(
    directory: Path, results: list[RunResult], stem: str, largest: int
) -> list[str]:
    from bco_gym.plotting import exponents_figure, save

    horizons_of: dict[str, set[int]] = {}
    for result in results:
        horizons_of.setdefault(series_label(result), set()).add(result.horizon)
    results = [r for r in results if len(horizons_of[series_label(r)]) > 1]
    if not results:
        return []
    fits = fit_exponents(results)
    figure = save(exponents_figure(fits, results=results), directory / f"{stem}-exponents.png")
    return [
        "### Regret exponents",
        "",
        render_markdown(*exponent_columns(fits)),
        "",
        *figure_lines(
            figure.name,
            "Regret against T, fitted exponents and local slopes",
            READINGS["exponents"],
        ),
        f"The tables and figures below are at the largest horizon, T = {largest:,}.",
        "",
    ]


def _table_part(final: list[RunResult], reference: str) -> list[str]:
    rows = paired_table(final, reference)
    if not any(row.reference for row in rows):
        return [
            f"### Paired against {md_text(reference)}",
            "",
            md_text(f"No {reference} runs here."),
            "",
        ]
    heading = f"### Paired against {md_text(reference)}"
    return [heading, "", render_markdown(*paired_columns(rows)), ""]


def _changing_part(directory: Path, final: list[RunResult], stem: str) -> list[str]:
    """Static, adaptive, dynamic (and switching) regret per agent, who wins on each, and
    the interval-regret figure; nothing for families without interval regrets."""
    if not final or any(r.adaptive_regret is None for r in final):
        return []
    from bco_gym.plotting import interval_regret_figure, save

    rows = changing_rows(final)
    header, body, winners = changing_columns(rows)
    figure = save(interval_regret_figure(final), directory / f"{stem}-intervals.png")
    return [
        "### Static, adaptive and dynamic regret",
        "",
        render_markdown(header, body),
        "",
        f"Lowest mean on each yardstick: {md_text(winners)}. The static, switching and dynamic "
        "comparators do not depend on the agent, so on one seed two agents' regrets differ "
        "by the same amount (their cumulative losses') on all three, which always rank "
        "alike; the adaptive regret, a maximum over intervals, can rank them differently.",
        "",
        *figure_lines(
            figure.name,
            "Largest interval regret against interval length",
            READINGS["intervals"],
        ),
    ]


def _warnings_part(results: list[RunResult]) -> list[str]:
    """Each distinct warning the runs raised, once, with the agents and horizons concerned."""
    seen: dict[str, list[str]] = {}
    for result in results:
        for message in result.warnings:
            seen.setdefault(message, []).append(f"{result.agent} (T = {result.horizon:,})")
    if not seen:
        return []
    lines = ["### Warnings raised by the runs", ""]
    for message, runs in seen.items():
        where = ", ".join(dict.fromkeys(runs))
        count = f"{len(runs)} run{'s' if len(runs) > 1 else ''}"
        lines.append(f"- {md_text(f'{where}, {count}: {message}')}")
    return [*lines, ""]


def _figures_part(
    directory: Path, final: list[RunResult], stem: str, references: Sequence[str]
) -> list[str]:
    from bco_gym.plotting import (
        final_regret_figure,
        normalized_regret_figure,
        paired_difference_figure,
        regret_curve_figure,
        save,
        tuning_figure,
    )

    labels = group_series(final)
    present = [ref for ref in references if any(k.split(" ")[0] == ref for k in labels)]
    figures = [
        ("regret", "Regret against t", regret_curve_figure(final)),
        (
            "final",
            "Final regret per seed and paired differences",
            final_regret_figure(final, present[0] if present else "random"),
        ),
    ]
    figures += [
        (
            f"paired-{reference}",
            f"Regret minus {reference}'s on the same seed",
            paired_difference_figure(final, reference),
        )
        for reference in present
    ]
    if not _log_wealth(final):
        figures.append(
            ("normalized", "Regret / t^(3/4) and regret / t", normalized_regret_figure(final))
        )
    if _has_tuning(final):
        figures.append(("tuning", "Final regret against the scale constant", tuning_figure(final)))
    lines = ["### Figures", ""]
    for name, caption, figure in figures:
        written = save(figure, directory / f"{stem}-{name}.png")
        reading = READINGS["paired" if name.startswith("paired-") else name]
        lines += figure_lines(written.name, caption, reading)
    return lines


def _log_wealth(results: Sequence[RunResult]) -> bool:
    """Portfolio losses: the regret is a log-wealth ratio, for which no T^(3/4) rate is
    claimed; regret / t^(3/4) would suggest one, so that figure is left out."""
    return any(str(r.loss.get("name", "")).startswith("portfolio") for r in results)


def _has_tuning(results: Sequence[RunResult]) -> bool:
    """Whether some agent ran with at least two values of its scale constant."""
    values: dict[str, set] = {}
    for result in results:
        if result.scale_param is not None and result.scale_value is not None:
            values.setdefault(result.agent, set()).add(float(result.scale_value))
    return any(len(v) > 1 for v in values.values())
