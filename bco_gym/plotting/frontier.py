"""The compute frontier: average regret R_T / T against agent-plus-environment CPU seconds.

:func:`frontier_figure` draws one line per series (agent and constants) through its
horizons, each point the mean over seeds of the seconds (log axis) and of R_T / T with
its 95% Student-t interval, the horizon written beside the last point; a vertical line
marks a CPU budget when one is given. Lower at equal seconds: more learned for the same
compute; further left at equal height: the same regret for less compute.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bco_gym.engine.result import RunResult
from bco_gym.plotting.style import legend_outside, new_figure, series_of, title_of
from bco_gym.reports.frontier import frontier_points
from bco_gym.reports.paired import series_label


def frontier_figure(results: Sequence[RunResult], *, budget: float | None = None) -> Any:
    """R_T / T (mean, 95% interval) against mean seconds per run, one line per series."""
    curves = frontier_points(results)
    figure = new_figure(7.5, 5.0)
    axes = figure.add_subplot()
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
        axes.annotate(
            f"T={points[-1].horizon:,}",
            (seconds[-1], per_round[-1]),
            textcoords="offset points",
            xytext=(4, 3),
            fontsize=7,
            color=series.color,
        )
    if budget is not None:
        axes.axvline(budget, color="0.4", linewidth=0.8, linestyle=":", label="CPU budget")
    axes.set_xscale("log")
    axes.set_xlabel("agent + environment CPU seconds per run (log)")
    axes.set_ylabel("average regret R_T / T (mean over seeds, 95% CI)")
    axes.set_title(title_of("Compute frontier", results), fontsize=9)
    axes.grid(True, which="both", alpha=0.3)
    legend_outside(figure, axes, columns=3)
    return figure
