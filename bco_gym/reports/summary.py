"""Tables from results: per-agent summaries over seeds, and the exponent fits' rows.

Over the seeds of one (env, agent, constants, horizon) group, the regret is reported as
the mean ± the sample standard deviation (:func:`~bco_gym.stats.groups.mean_std`). The
exponent fits are computed in :mod:`bco_gym.stats.exponents` and the comparator's words
in :mod:`bco_gym.stats.groups` (both re-exported here under their old names).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields

import numpy as np

from bco_gym.engine.result import RunResult
from bco_gym.losses.verification import EXACT
from bco_gym.reports.page import Markdown, md_text, sanitize_text
from bco_gym.stats.exponents import ExponentFit, fit_exponent, fit_exponents, theory_exponent
from bco_gym.stats.groups import (
    UNCERTIFIED_NOTE,
    comparator_text,
    group_results,
    mean_std,
    scale_column,
)
from bco_gym.stats.paired import group_series

SCALING_EXPONENT = 3 / 4


@dataclass(frozen=True)
class AgentSummary:
    """One row of a ``compare`` table: an agent's results over seeds at one horizon."""

    env_id: str
    agent: str
    constants: str
    scale: str
    horizon: int
    seeds: int
    regret_mean: float
    regret_std: float
    regret_bound: float | None
    lmo_per_round: float
    projections_per_round: float
    rounds_per_second: float
    adaptive_mean: float | None = None
    dynamic_mean: float | None = None
    comparator: str = EXACT

    @property
    def scaled_regret(self) -> float:
        """Mean regret / T^(3/4)."""
        return self.regret_mean / self.horizon**SCALING_EXPONENT


def summarize(results: Iterable[RunResult]) -> list[AgentSummary]:
    """One :class:`AgentSummary` per (env, agent, constants, horizon), in first-seen order."""
    rows = []
    for (env_id, agent, constants, _, horizon), group in group_results(results, True).items():
        mean, std = mean_std([r.final_regret for r in group])
        bounds = [r.regret_bound for r in group if r.regret_bound is not None]
        spent = sum(r.agent_seconds + r.env_seconds for r in group)
        rounds = horizon * len(group)
        rows.append(
            AgentSummary(
                env_id=env_id,
                agent=agent,
                constants=constants,
                scale=scale_column(group[0]),
                horizon=horizon,
                seeds=len(group),
                regret_mean=mean,
                regret_std=std,
                regret_bound=float(np.mean(bounds)) if bounds else None,
                lmo_per_round=sum(r.lmo_calls for r in group) / rounds,
                projections_per_round=sum(r.projections for r in group) / rounds,
                rounds_per_second=rounds / spent if spent > 0 else math.inf,
                adaptive_mean=_mean_or_none([r.adaptive_regret for r in group]),
                dynamic_mean=_mean_or_none([r.dynamic_regret for r in group]),
                comparator=comparator_text(group),
            )
        )
    return rows


def _mean_or_none(values: Sequence[float | None]) -> float | None:
    """The mean over seeds, or None when a seed has no value (a non-linear family)."""
    if not values or any(v is None for v in values):
        return None
    return float(np.mean(np.asarray(values, dtype=float)))


# -- rendering -----------------------------------------------------------------------------------
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _number(value: float | None, digits: int = 3) -> str:
    return format_column([value], digits)[0]


def format_column(values: Sequence[float | None], digits: int = 3) -> list[str]:
    """The numbers of one table column, formatted alike: all fixed-point with the same
    decimals (``digits`` significant digits for the smallest non-zero value), or, when
    the magnitudes span more than that can show, all in scientific notation. None and
    NaN are "-", infinities "inf"/"-inf"."""
    finite = [abs(float(v)) for v in values if v is not None and math.isfinite(float(v))]
    nonzero = [v for v in finite if v > 0]
    if nonzero and (min(nonzero) < 1e-3 or max(nonzero) >= 1e7):
        style = f".{digits - 1}e"
    elif not nonzero:
        style = ".0f"
    else:
        smallest = min(nonzero)
        decimals = max(0, digits - 1 - math.floor(math.log10(smallest)))
        style = f".{min(decimals, 6)}f"
    return [_formatted(value, style) for value in values]


def _formatted(value: float | None, style: str) -> str:
    if value is None or math.isnan(float(value)):
        return "-"
    if math.isinf(float(value)):
        return "inf" if value > 0 else "-inf"
    return format(float(value), style)


def compare_columns(rows: Sequence[AgentSummary]) -> tuple[list[str], list[list[str]]]:
    """Header and cells of the ``compare`` table (each numeric column formatted alike)."""
    header = [
        "agent",
        "constants",
        "scale",
        "T",
        "seeds",
        "regret (mean ± std)",
        "comparator",
        "regret/T^(3/4)",
        "adaptive",
        "dynamic",
        "bound",
        "LMO/round",
        "proj/round",
        "rounds/s",
    ]
    means = format_column([row.regret_mean for row in rows], 4)
    stds = format_column([row.regret_std for row in rows], 3)
    names = (
        "scaled_regret",
        "adaptive_mean",
        "dynamic_mean",
        "regret_bound",
        "lmo_per_round",
        "projections_per_round",
    )
    numbers = [format_column([getattr(row, name) for row in rows]) for name in names]
    body = [
        [
            row.agent,
            row.constants,
            row.scale,
            str(row.horizon),
            str(row.seeds),
            f"{means[i]} ± {stds[i]}",
            row.comparator,
            *(column[i] for column in numbers),
            f"{row.rounds_per_second:,.0f}" if math.isfinite(row.rounds_per_second) else "inf",
        ]
        for i, row in enumerate(rows)
    ]
    return header, body


@dataclass(frozen=True)
class ChangingSummary:
    """One agent's regrets on the yardsticks of a changing environment, over seeds.

    Each value is (mean, std) over the seeds; ``switching`` is None without segments.
    """

    label: str
    seeds: int
    static: tuple[float, float]
    adaptive: tuple[float, float]
    dynamic: tuple[float, float]
    switching: tuple[float, float] | None


def changing_rows(results: Iterable[RunResult]) -> list[ChangingSummary]:
    """One :class:`ChangingSummary` per series (agent, constants) of results whose
    adaptive and dynamic regrets are known (:mod:`bco_gym.losses.intervals`)."""
    rows = []
    for label, group in group_series(results).items():
        switching = [r.interval_regret.get("switching_regret") for r in group]
        rows.append(
            ChangingSummary(
                label=label,
                seeds=len(group),
                static=mean_std([r.final_regret for r in group]),
                adaptive=mean_std([float(r.adaptive_regret) for r in group]),
                dynamic=mean_std([float(r.dynamic_regret) for r in group]),
                switching=None if None in switching else mean_std(switching),
            )
        )
    return rows


def changing_columns(
    rows: Sequence[ChangingSummary],
) -> tuple[list[str], list[list[str]], str]:
    """Header, cells and the sentence naming the lowest mean on each yardstick."""
    yardsticks = [("static", "static regret"), ("adaptive", "adaptive regret")]
    yardsticks.append(("dynamic", "dynamic regret"))
    if all(row.switching is not None for row in rows):
        yardsticks.append(("switching", "switching regret"))
    header = ["agent", "seeds", *(f"{title} (mean ± std)" for _, title in yardsticks)]
    columns = []
    for name, _ in yardsticks:
        means = format_column([getattr(row, name)[0] for row in rows], 4)
        stds = format_column([getattr(row, name)[1] for row in rows], 3)
        columns.append([f"{m} ± {s}" for m, s in zip(means, stds, strict=True)])
    body = [
        [row.label, str(row.seeds), *(column[i] for column in columns)]
        for i, row in enumerate(rows)
    ]
    winners = "; ".join(
        f"{title}: {min(rows, key=lambda row: getattr(row, name)[0]).label}"
        for name, title in yardsticks
    )
    return header, body, winners


def exponent_columns(fits: Sequence[ExponentFit]) -> tuple[list[str], list[list[str]]]:
    """Header and cells of the ``exponents`` table."""
    level = f"{round(100 * fits[0].level)}%" if fits else "95%"
    header = [
        "agent",
        "constants",
        "scale",
        "horizons",
        "seeds",
        "slope",
        f"{level} CI",
        "theory",
        "LMO/round",
        "proj/round",
        "comparator",
    ]
    lmo = format_column([fit.lmo_per_round for fit in fits])
    projections = format_column([fit.projections_per_round for fit in fits])
    body = [
        [
            fit.agent,
            fit.constants,
            fit.scale,
            f"{fit.horizons[0]}..{fit.horizons[-1]} ({len(fit.horizons)})",
            str(fit.seeds),
            f"{fit.slope:.3f}" if math.isfinite(fit.slope) else "-",
            f"[{fit.low:.3f}, {fit.high:.3f}]" if math.isfinite(fit.low) else "-",
            f"{fit.theory:.3f}" if fit.theory is not None else "-",
            lmo[i],
            projections[i],
            fit.comparator,
        ]
        for i, fit in enumerate(fits)
    ]
    return header, body


def render_text(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    """An aligned plain-text table (control characters escaped)."""
    table = [[sanitize_text(cell) for cell in row] for row in [header, *body]]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in table
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(line.rstrip() for line in lines)


def render_markdown(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured Markdown table: every cell shown as text
    (:func:`~bco_gym.reports.page.md_text`: a label or a message cannot make a link, an
    image or HTML) unless it is :class:`~bco_gym.reports.page.Markdown` already (a link,
    a code span, bold numbers); control characters and ``|`` escaped in every cell."""

    def cell(text: str) -> str:
        shown = sanitize_text(text) if isinstance(text, Markdown) else md_text(text, in_table=True)
        return shown.replace("|", "\\|")

    def row(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell(c) for c in cells) + " |"

    lines = [row(header), "|" + "|".join("---" for _ in header) + "|"]
    lines += [row(cells) for cells in body]
    return "\n".join(lines)


def render_csv(rows: Sequence[AgentSummary | ExponentFit]) -> str:
    """CSV text of summary rows with full-precision numbers (one column per field).

    Text cells are sanitised: control characters escaped, and a cell a spreadsheet would
    run as a formula (longer than one character, starting with = + - @, tab or CR, and
    not a number) gets a leading apostrophe.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if not rows:
        return ""
    names = [f.name for f in fields(rows[0])]
    extra = ["scaled_regret"] if isinstance(rows[0], AgentSummary) else []
    writer.writerow(names + extra)
    for row in rows:
        values = [getattr(row, name) for name in names + extra]
        writer.writerow([_csv_value(value) for value in values])
    return buffer.getvalue()


def _csv_value(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, tuple):
        return " ".join(repr(v) for v in value)
    if isinstance(value, float | int):
        return repr(value)
    return csv_safe(str(value))


def csv_safe(text: str) -> str:
    """``text`` made inert for spreadsheets (see :func:`render_csv`)."""
    text = sanitize_text(text)
    try:
        float(text)
        return text
    except ValueError:
        pass
    return "'" + text if len(text) > 1 and text.startswith(_FORMULA_START) else text


__all__ = [
    "SCALING_EXPONENT",
    "UNCERTIFIED_NOTE",
    "AgentSummary",
    "ChangingSummary",
    "ExponentFit",
    "changing_columns",
    "changing_rows",
    "comparator_text",
    "compare_columns",
    "csv_safe",
    "exponent_columns",
    "fit_exponent",
    "fit_exponents",
    "format_column",
    "render_csv",
    "render_markdown",
    "render_text",
    "summarize",
    "theory_exponent",
]
