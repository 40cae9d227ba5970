"""Who beats whom: the pairwise matrix of a scenario's ranking.

:func:`pairwise_figure` draws one cell per ordered pair (row agent, column agent) of a
:class:`~bco_gym.stats.ranking.Ranking`, agents in the order of their mean final
regret (best first):

* the text is the mean paired difference of final regret, row minus column, on their
  common seeds, with the seeds where the row agent had the lower regret (k/n) and
  Holm's adjusted p-value;
* the colour answers "how sure, which way, by how much": blue where the row agent is
  separated from the column agent and better, red where separated and worse (the
  shade grows with the difference relative to the pair's mean regret, full at 50%),
  pale grey where the pair is not separated after Holm's correction.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from bco_gym.plotting.style import lighter, new_figure
from bco_gym.stats.ranking import PairComparison, Ranking

BETTER = "tab:blue"
WORSE = "tab:red"
NOT_SEPARATED = "0.93"
FULL_SHADE_AT = 0.5  # |difference| / mean regret of the pair at which the colour is full
MIN_SHADE = 0.25


def _number(value: float) -> str:
    """Three significant digits, no exponent below 10^6."""
    if not math.isfinite(value):
        return "-"
    if value == 0:
        return "0"
    if abs(value) >= 1e6:
        return f"{value:.3g}"
    decimals = max(0, 2 - math.floor(math.log10(abs(value))))
    return f"{value:,.{decimals}f}"


def _p_text(value: float) -> str:
    return "Holm p<0.001" if value < 1e-3 else f"Holm p={value:.2g}"


def _cell_color(comparison: PairComparison) -> Any:
    if not comparison.separated:
        return NOT_SEPARATED
    size = abs(comparison.relative) if math.isfinite(comparison.relative) else 1.0
    strength = MIN_SHADE + (1 - MIN_SHADE) * min(1.0, size / FULL_SHADE_AT)
    return lighter(BETTER if comparison.mean < 0 else WORSE, 1 - strength)


def text_color(color: Any) -> str:
    """Black on pale cells, white on dark ones (the matrix figures of plotting)."""
    if isinstance(color, str):
        return "black"
    return "white" if sum(color) / 3 < 0.55 else "black"


def pairwise_figure(ranking: Ranking, *, title: str = "") -> Any:
    """The matrix of :class:`~bco_gym.stats.ranking.Ranking` ``ranking`` (module docstring)."""
    labels = list(ranking.labels)
    count = len(labels)
    if count < 2:
        raise ValueError(f"pairwise_figure needs two agents at least, got {labels}")
    size = 1.25 * count
    figure = new_figure(size + 2.2, 0.9 * count + 2.2)
    axes = figure.subplots()

    def cell(first: str, second: str) -> tuple[Any, str]:
        if first == second:
            return "white", "—"
        comparison = ranking.pairs[(first, second)]
        text = (
            f"{_number(comparison.mean)}\n{comparison.wins}/{comparison.pairs}, "
            f"{_p_text(comparison.adjusted)}"
        )
        return _cell_color(comparison), text

    draw_matrix(axes, labels, cell, row_label="row agent", column_label="column agent")
    heading = (
        "Row minus column: mean paired difference of final regret, seeds where the row is "
        f"lower, Holm-adjusted p\nblue: row better, red: row worse (separated at "
        f"{ranking.alpha:g} after Holm); grey: not separated"
    )
    figure.suptitle(f"{title}\n{heading}" if title else heading, fontsize="small")
    return figure


def draw_matrix(
    axes: Any,
    labels: list[str],
    cell: Callable[[str, str], tuple[Any, str]],
    *,
    row_label: str,
    column_label: str,
) -> None:
    """Fill ``axes`` with a square matrix over ``labels``: ``cell(row, column)`` gives each
    cell's colour and text (the pairwise and the probability-of-improvement figures)."""
    count = len(labels)
    for row, first in enumerate(labels):
        for column, second in enumerate(labels):
            color, text = cell(first, second)
            axes.add_patch(cell_rectangle(column, row, color))
            axes.text(
                column,
                row,
                text,
                ha="center",
                va="center",
                fontsize="x-small",
                color=text_color(color),
            )
    axes.set_xlim(-0.5, count - 0.5)
    axes.set_ylim(count - 0.5, -0.5)
    axes.set_xticks(range(count), labels, rotation=30, ha="right", fontsize="small")
    axes.set_yticks(range(count), labels, fontsize="small")
    axes.set_xlabel(column_label, fontsize="small")
    axes.set_ylabel(row_label, fontsize="small")
    axes.tick_params(length=0)
    for side in axes.spines.values():
        side.set_visible(False)


def cell_rectangle(column: int, row: int, color: Any) -> Any:
    """The unit square of a matrix figure's cell (row, column), filled with ``color``."""
    from matplotlib.patches import Rectangle

    return Rectangle((column - 0.5, row - 0.5), 1, 1, facecolor=color, edgecolor="white")
