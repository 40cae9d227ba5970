"""The compute frontier: average regret R_T / T against agent-plus-environment CPU seconds.

:func:`frontier_figure` draws one line per series (agent and constants) through its
horizons, each point the mean over seeds of the seconds (log axis) and of R_T / T with
its 95% Student-t interval, the horizon written beside the last point (labels that
would overlap are stacked one under the other, :func:`place_labels`); a vertical line
marks a CPU budget when one is given. Lower at equal seconds: more learned for the same
compute; further left at equal height: the same regret for less compute.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bco_gym.engine.result import RunResult
from bco_gym.plotting.style import legend_outside, new_figure, series_of, title_of
from bco_gym.stats.frontier import frontier_points
from bco_gym.stats.paired import series_label

#: The font size of the horizon labels (points).
LABEL_SIZE = 7


def place_labels(
    axes: Any, labels: Sequence[tuple[float, float, str, Any]], *, fontsize: float
) -> list[tuple[float, float]]:
    """Write each (x, y, text, color) label just right of and above its point, moving a
    label down, a line at a time, while its box would overlap one already written (the
    highest points first); the offsets used, in points, in the order given.

    The boxes are estimated from the text's length (0.62 em a character, 1.15 em a
    line), in display coordinates, so the axes' scales and limits must be set first."""
    scale = 72.0 / axes.figure.dpi  # display pixels -> points
    placed: list[tuple[float, float, float, float]] = []
    offsets: list[tuple[float, float]] = [(0.0, 0.0)] * len(labels)
    order = sorted(range(len(labels)), key=lambda i: -labels[i][1])
    for i in order:
        x, y, text, color = labels[i]
        px, py = (scale * v for v in axes.transData.transform((x, y)))
        width, height = 0.62 * fontsize * len(text), 1.15 * fontsize
        dx, dy = 4.0, 3.0
        for _ in range(len(labels) + 1):
            box = (px + dx, py + dy, px + dx + width, py + dy + height)
            if not any(_overlap(box, other) for other in placed):
                break
            dy -= height
        placed.append(box)
        offsets[i] = (dx, dy)
        axes.annotate(
            text,
            (x, y),
            textcoords="offset points",
            xytext=(dx, dy),
            fontsize=fontsize,
            color=color,
        )
    return offsets


def _overlap(first: tuple[float, ...], second: tuple[float, ...]) -> bool:
    return not (
        first[2] <= second[0]
        or second[2] <= first[0]
        or first[3] <= second[1]
        or second[3] <= first[1]
    )


#: Below this many decades a log axis also labels its minor ticks at 2 and 5 times a power
#: of ten (above it the powers of ten alone are enough, and more would crowd).
MINOR_LABEL_DECADES = 2.0


def plain_log_ticks(axis: Any) -> None:
    """Label a log axis with plain numbers (0.3, 1, 20), not 3x10^-1: on a span under
    ``MINOR_LABEL_DECADES`` decades at 1, 2 and 5 times the powers of ten, else at the
    powers alone (matplotlib's default labels every minor tick of a short span in
    scientific notation, and they run into each other)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    low, high = sorted(axis.get_view_interval())
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    axis.set_major_formatter(plain)
    if low > 0 and np.log10(high / low) < MINOR_LABEL_DECADES:
        axis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))
        axis.set_minor_formatter(plain)
    else:
        axis.set_minor_formatter(NullFormatter())


def frontier_figure(results: Sequence[RunResult], *, budget: float | None = None) -> Any:
    """R_T / T (mean, 95% interval) against mean seconds per run, one line per series."""
    curves = frontier_points(results)
    figure = new_figure(7.5, 5.0)
    axes = figure.add_subplot()
    labels = []
    for series in series_of(results):
        points = curves[series_label(series.results[0])]
        seconds = np.array([p.seconds for p in points])
        per_round = np.array([p.per_round for p in points])
        low = np.array([p.regret_low / p.horizon for p in points])
        high = np.array([p.regret_high / p.horizon for p in points])
        error = None
        if np.all(np.isfinite(low)):
            error = np.vstack([per_round - low, high - per_round])
        axes.errorbar(
            seconds,
            per_round,
            yerr=error,
            color=series.color,
            linestyle=series.linestyle,
            marker="o",
            markersize=4,
            capsize=2,
            label=series.label,
            zorder=series.zorder,
        )
        labels.append((seconds[-1], per_round[-1], f"T={points[-1].horizon:,}", series.color))
    if budget is not None:
        axes.axvline(budget, color="0.4", linewidth=0.8, linestyle=":", label="CPU budget")
    axes.set_xscale("log")
    axes.autoscale_view()
    low, high = axes.get_xlim()
    axes.set_xlim(low, high * (high / low) ** 0.12)  # room for the last points' labels
    plain_log_ticks(axes.xaxis)
    place_labels(axes, labels, fontsize=LABEL_SIZE)
    axes.set_xlabel("agent + environment CPU seconds per run (log)")
    axes.set_ylabel("average regret R_T / T (mean over seeds, 95% CI)")
    axes.set_title(title_of("Compute frontier", results), fontsize=9)
    axes.grid(True, which="both", alpha=0.3)
    legend_outside(figure, axes, columns=3)
    return figure
