"""The exported tables (:class:`Table`, filled by :mod:`~bco_gym.reports.export`) as
LaTeX and as Markdown.

LaTeX: ``longtable`` tables with ``booktabs`` rules (``\\usepackage{booktabs,longtable}``
in the preamble), a caption saying what the table shows and where it comes from (suite,
archive digest, versions, seeds), a ``\\label`` each (``tab:bco-gym-aggregate``,
``tab:bco-gym-scenarios``, ``tab:bco-gym-paired``). Every label, scenario name and
provenance text goes through :func:`~bco_gym.reports.citations.latex_text`. Markdown: a
section per table, its caption, the table (:func:`~bco_gym.reports.summary.render_markdown`
escapes every cell) and the provenance as a list.

Numbers: scores and probabilities with three decimals, regrets with four significant
digits at the scale of the table's largest value; an interval as ``v [low, high]``; the
rows of the best ordered group in bold.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from bco_gym.reports.citations import latex_text
from bco_gym.stats.paired import FEEDBACK_MARKS
from bco_gym.stats.scores import Estimate


@dataclass(frozen=True)
class Row:
    """One row of a table: the agent (scores.csv's label in the aggregate table, the
    report's series label in the others), what it learned from, its numbers."""

    scenario: str
    agent: str
    feedback: str
    values: dict[str, Estimate | float | int | None]
    group: int | None = None
    against: str = ""

    @property
    def ranked(self) -> str:
        return "bandit" if self.feedback == "bandit" else "apart"

    @property
    def shown(self) -> str:
        """``ogd (full info)`` for a row with more feedback than one loss value a round."""
        mark = FEEDBACK_MARKS.get(self.feedback)
        if mark is None or self.agent.endswith(f"({mark})"):  # a series label carries it
            return self.agent
        return f"{self.agent} ({mark})"


@dataclass(frozen=True)
class Table:
    """One exported table: its name, caption (what it shows) and rows."""

    name: str
    caption: str
    columns: tuple[str, ...]
    rows: list[Row]
    #: Headers of columns named by the data (the P(agent < reference) columns).
    headers: dict[str, str] = field(default_factory=dict)


#: Column headers (plain text; LaTeX and Markdown escape them as any text).
HEADERS = {
    "scenarios": "Scenarios",
    "runs": "Runs",
    "iqm_score": "IQM score [95% CI]",
    "mean_score": "Mean score [95% CI]",
    "seeds": "Seeds",
    "final_regret": "Mean final regret [95% CI]",
    "group": "Group",
    "pairs": "Seeds",
    "difference": "Difference [95% CI]",
    "wins": "Lower on",
}
APART = (
    "Full-information and two-point rows (more feedback than one loss value a round): "
    "not ranked with the bandit rows"
)
TITLES = {
    "aggregate": "Scores across scenarios",
    "scenarios": "Final regret per scenario",
    "paired": "Paired differences against the references",
}


def header(table: Table, column: str) -> str:
    return table.headers.get(column) or HEADERS[column]


def footer(provenance: Sequence[tuple[str, str]]) -> str:
    """The provenance as one sentence (a caption's last)."""
    names = {
        "suite": "Suite",
        "archive": "reference archive",
        "library": "",
        "seeds": "evaluation seeds",
    }
    parts = [f"{names[what]} {text}".strip() for what, text in provenance]
    return "; ".join(parts) + "."


# -- numbers --------------------------------------------------------------------------------------
def _decimals(table: Table, column: str) -> int:
    if column in ("iqm_score", "mean_score") or column.startswith("p_improvement:"):
        return 3
    values = [
        abs(number)
        for row in table.rows
        if isinstance(found := row.values.get(column), Estimate)
        for number in (found.value, found.low, found.high)
        if math.isfinite(number)
    ]
    largest = max(values, default=1.0)
    return max(0, min(6, 3 - math.floor(math.log10(largest)) if largest > 0 else 3))


def _number(value: object, decimals: int) -> str:
    if value is None:
        return "-"
    if isinstance(value, Estimate):
        if not math.isfinite(value.value):
            return "-"
        shown = f"{value.value:.{decimals}f}"
        if math.isfinite(value.low) and math.isfinite(value.high):
            shown += f" [{value.low:.{decimals}f}, {value.high:.{decimals}f}]"
        return shown
    if isinstance(value, float):
        return f"{value:.{decimals}f}" if math.isfinite(value) else "-"
    return str(value)


def _cells(table: Table, row: Row) -> list[str]:
    """The row's cells after its agent (and scenario): numbers formatted, ``group`` and
    ``scenarios`` as counts."""
    cells = []
    for column in table.columns:
        if column == "group":
            cells.append("" if row.group is None else str(row.group))
        elif column == "scenarios":
            cells.append(f"{row.values['scenarios']}/{_total(table)}")
        else:
            cells.append(_number(row.values.get(column), _decimals(table, column)))
    return cells


def _total(table: Table) -> int:
    return max((int(row.values["scenarios"] or 0) for row in table.rows), default=0)


def _lead(table: Table) -> list[str]:
    if table.name == "aggregate":
        return ["Agent"]
    if table.name == "paired":
        return ["Scenario", "Agent", "Reference"]
    return ["Scenario", "Agent"]


def _lead_cells(table: Table, row: Row) -> list[str]:
    if table.name == "aggregate":
        return [row.shown]
    if table.name == "paired":
        return [row.scenario, row.shown, row.against]
    return [row.scenario, row.shown]


def _parts(table: Table) -> list[tuple[str, list[Row]]]:
    """The aggregate table's bandit rows, then the rows ranked apart (with their heading)."""
    if table.name != "aggregate":
        return [("", table.rows)]
    bandit = [row for row in table.rows if row.ranked == "bandit"]
    apart = [row for row in table.rows if row.ranked != "bandit"]
    return [("", bandit)] + ([(APART, apart)] if apart else [])


# -- LaTeX ----------------------------------------------------------------------------------------
def latex(found: Sequence[Table], provenance: Sequence[tuple[str, str]]) -> str:
    """Every table as a ``longtable`` (module docstring)."""
    lines = [
        "% Tables exported by bco-gym export (bco_gym); preamble: \\usepackage{booktabs,longtable}",
        *(f"% {what}: {' '.join(text.split())}" for what, text in provenance),
        "",
    ]
    for table in found:
        lines += _latex_table(table, provenance)
    return "\n".join(lines)


def _latex_table(table: Table, provenance: Sequence[tuple[str, str]]) -> list[str]:
    heads = [*_lead(table), *(header(table, column) for column in table.columns)]
    spec = "l" * len(_lead(table)) + "r" * len(table.columns)
    caption = latex_text(f"{table.caption}. {footer(provenance)}")
    lines = [
        f"\\begin{{longtable}}{{{spec}}}",
        f"\\caption{{{caption}}}\\label{{tab:bco-gym-{table.name}}}\\\\",
        "\\toprule",
        " & ".join(latex_text(head) for head in heads) + " \\\\",
        "\\midrule",
        "\\endhead",
    ]
    best = {(row.scenario, row.agent) for row in table.rows if row.group == 1}
    for title, rows in _parts(table):
        if title:
            width = len(heads)
            lines += [
                "\\midrule",
                f"\\multicolumn{{{width}}}{{l}}{{\\emph{{{latex_text(title)}}}}} \\\\",
            ]
        previous = None
        for row in rows:
            if table.name != "aggregate" and previous is not None and row.scenario != previous:
                lines.append("\\midrule")
            previous = row.scenario
            cells = [latex_text(cell) for cell in [*_lead_cells(table, row), *_cells(table, row)]]
            if (row.scenario, row.agent) in best:
                cells = [f"\\textbf{{{cell}}}" if cell else cell for cell in cells]
            lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{longtable}", ""]
    return lines


# -- Markdown -------------------------------------------------------------------------------------
def markdown(found: Sequence[Table], provenance: Sequence[tuple[str, str]]) -> str:
    """Every table under its heading, with its caption and the provenance."""
    from bco_gym.reports.page import Markdown, md_text
    from bco_gym.reports.summary import render_markdown

    lines = ["Exported by `bco-gym export`. Provenance:", ""]
    lines += [f"- **{what}**: {md_text(text, in_table=True)}" for what, text in provenance]
    lines.append("")
    for table in found:
        heads = [*_lead(table), *(header(table, column) for column in table.columns)]
        lines += [f"### {TITLES[table.name]}", "", md_text(table.caption) + ".", ""]
        best = {(row.scenario, row.agent) for row in table.rows if row.group == 1}
        for title, rows in _parts(table):
            if title:
                lines += [f"*{md_text(title)}*", ""]
            body = []
            for row in rows:
                numbers = _cells(table, row)
                if (row.scenario, row.agent) in best:
                    numbers = [Markdown(f"**{cell}**") if cell else cell for cell in numbers]
                body.append([*_lead_cells(table, row), *numbers])
            lines += [render_markdown(heads, body), ""]
    return "\n".join(lines)


__all__ = ["APART", "HEADERS", "Row", "Table", "footer", "header", "latex", "markdown"]
