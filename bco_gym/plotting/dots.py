"""Final regret per agent: dot plots against a reference, and regret against the constant.

* :func:`final_regret_figure` -- two horizontal dot plots, one row per series (random
  on top): left the final regret R_T, one small dot per seed and the mean with its 95%
  Student-t interval; right the paired difference R_T - R^ref_T on the same seeds,
  drawn the same way, with 0 marked (left of 0: better than the reference).
  Full-information agents have hollow markers and "(full info)" in their label.
* :func:`tuning_figure` -- mean final regret (95% band over seeds) against the value
  of each agent's scale constant (``SCALE_PARAM``, log axis), one line per agent; a
  star marks the theory value's run where the results hold one; an agent without a
  constant (random) is a horizontal line with its band, drawn first.
* :func:`overview_figure` -- one dot plot per scenario (the report's headline): the
  paired final difference to random where the scenario has random runs, else the
  final regret.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bco_gym.engine.result import RunResult
from bco_gym.plotting.style import (
    Series,
    agent_color,
    legend_outside,
    new_figure,
    save,
    series_of,
    single_horizon,
    title_of,
)
from bco_gym.stats.paired import find_reference, paired_differences, t_interval

JITTER = 0.18
OVERVIEW_MIN_ROWS = 4


def _dot_row(axes: Any, row: int, values: np.ndarray, series: Series) -> None:
    """One row of a dot plot: a dot per seed, then the mean with its 95% interval."""
    face = "none" if series.full_information else series.color
    offsets = np.linspace(-JITTER, JITTER, len(values)) if len(values) > 1 else np.zeros(1)
    axes.scatter(
        values,
        row + offsets,
        s=16,
        facecolors=face,
        edgecolors="white" if face != "none" else series.color,
        linewidths=0.6,
        alpha=0.8,
        zorder=series.zorder + 0.6,  # the seeds' dots stay visible over the mean's marker
    )
    mean, low, high = t_interval(values)
    error = None if not np.isfinite(low) else [[mean - low], [high - mean]]
    axes.errorbar(
        [mean],
        [row],
        xerr=error,
        fmt="D",
        markersize=7,
        color=series.color,
        markerfacecolor=face,
        capsize=4,
        linewidth=2,
        zorder=series.zorder + 0.5,
    )


def _label_rows(axes: Any, series: Sequence[Series]) -> None:
    axes.set_yticks(range(len(series)), [one.label for one in series])
    axes.locator_params(axis="x", nbins=5)  # long tick labels must not run into each other
    axes.set_ylim(len(series) - 0.5, -0.5)  # first series on top
    axes.grid(True, axis="x", alpha=0.3)


def final_regret_figure(
    results: Sequence[RunResult], reference: str = "random", *, title: str | None = None
) -> Any:
    """Final regret and paired difference to ``reference``, per seed and mean with 95% CI."""
    series = series_of(results)
    if not series:
        raise ValueError("final_regret_figure: no results to draw")
    single_horizon(results, "final_regret_figure")
    by_label = {one.label: one for one in series}
    found = find_reference(by_label, reference)
    figure = new_figure(10.0, 1.6 + 0.45 * len(series) + 1.2)
    regret_axes, difference_axes = figure.subplots(1, 2, sharey=True)
    for row, one in enumerate(series):
        _dot_row(regret_axes, row, np.array([r.final_regret for r in one.results]), one)
        if found is None or one.label == found:
            continue
        seeds, differences = paired_differences(one.results, by_label[found].results)
        if seeds:
            _dot_row(difference_axes, row, differences[:, -1], one)
    _label_rows(regret_axes, series)
    _label_rows(difference_axes, series)
    regret_axes.set_xlabel("final regret R_T\n(dots: seeds; diamond: mean, 95% CI)")
    difference_axes.axvline(0, color="black", linewidth=1, zorder=0.5)
    name = found or reference
    difference_axes.set_xlabel(f"R_T minus {name}'s R_T on the same seed\n(left of 0: better)")
    difference_axes.set_title(
        f"paired difference to {name}" if found else f"no {reference!r} runs to pair with",
        fontsize="small",
    )
    regret_axes.set_title("final regret", fontsize="small")
    figure.suptitle(title or title_of("Final regret", results), fontsize="medium")
    return figure


def plot_final_regret(
    results: Sequence[RunResult],
    path: str | os.PathLike,
    reference: str = "random",
    *,
    title: str | None = None,
) -> Path:
    """Save :func:`final_regret_figure` to ``path``."""
    return save(final_regret_figure(results, reference, title=title), path)


# -- tuning ---------------------------------------------------------------------------------------
def _by_scale(results: Sequence[RunResult]) -> dict[float, list[RunResult]]:
    groups: dict[float, list[RunResult]] = {}
    for result in results:
        groups.setdefault(float(result.scale_value), []).append(result)
    return dict(sorted(groups.items()))


def tuning_figure(results: Sequence[RunResult], *, title: str | None = None) -> Any:
    """Mean final regret against each agent's scale constant, 95% bands (module doc)."""
    if not results:
        raise ValueError("tuning_figure: no results to draw")
    single_horizon(results, "tuning_figure")
    agents = list(dict.fromkeys(r.agent for r in results))
    agents.sort(key=lambda agent: agent != "random")
    figure = new_figure(7.0, 5.4)
    axes = figure.add_subplot()
    axes.set_xscale("log")
    for order, agent in enumerate(agents):
        runs = [r for r in results if r.agent == agent]
        color = agent_color(agent, agents)
        if any(r.scale_param is None or r.scale_value is None for r in runs):
            _draw_flat_line(axes, agent, runs, color, order)
        else:
            _draw_tuning_line(axes, agent, runs, color, order)
    params = sorted({r.scale_param for r in results if r.scale_param})
    axes.set_xlabel(f"scale constant ({', '.join(params) or 'none'}), absolute value")
    axes.set_ylabel("final regret (mean over seeds, 95% CI)")
    axes.set_title(
        title or title_of("Final regret against the scale constant", results), fontsize="medium"
    )
    axes.grid(True, which="major", alpha=0.3)
    legend_outside(figure, axes)
    return figure


def _draw_flat_line(
    axes: Any, agent: str, runs: Sequence[RunResult], color: str, order: int
) -> None:
    """An agent without a constant: its mean final regret as a horizontal line and band."""
    mean, low, high = t_interval([r.final_regret for r in runs])
    axes.axhline(mean, color=color, zorder=1 + order, label=f"{agent} (no constant)")
    if np.isfinite(low):
        axes.axhspan(low, high, color=color, alpha=0.2, linewidth=0, zorder=order)


def _draw_tuning_line(
    axes: Any, agent: str, runs: Sequence[RunResult], color: str, order: int
) -> None:
    groups = _by_scale(runs)
    scales = np.array(list(groups))
    intervals = np.array([t_interval([r.final_regret for r in g]) for g in groups.values()])
    mean, low, high = intervals.T
    full = any(r.problem.get("feedback") == "full" for r in runs)
    label = agent + (" (full info)" if full else "")
    axes.plot(
        scales,
        mean,
        marker="o",
        color=color,
        linestyle="--" if full else "-",
        zorder=2 + order,
        label=label,
    )
    if np.isfinite(low).any():
        axes.fill_between(scales, low, high, color=color, alpha=0.2, linewidth=0, zorder=1 + order)
    theory = [r for r in runs if r.constants == "theory"]
    if theory:
        value = float(theory[0].scale_value)
        axes.plot(
            [value],
            [mean[scales == value].mean()],
            marker="*",
            markersize=14,
            color=color,
            markeredgecolor="black",
            linestyle="none",
            zorder=3 + order,
            label=f"{agent}: theory value",
        )


# -- overview -------------------------------------------------------------------------------------
def overview_figure(
    panels: Sequence[tuple[str, Sequence[RunResult]]],
    *,
    reference: str = "random",
    columns: int = 3,
) -> Any:
    """One dot plot per (title, results) panel: the report's headline figure.

    In a panel with ``reference`` runs, each other series' final regret minus the
    reference's on the same seeds (0 marked; left of 0: better), which removes the
    loss sequences' shared noise; in a panel without, the final regret itself. Each
    panel's results share one horizon and its x axis is its own (scales differ between
    scenarios); random is the top row, full-information agents hollow.
    """
    if not panels:
        raise ValueError("overview_figure: no panels to draw")
    columns = max(1, min(columns, len(panels)))
    rows = -(-len(panels) // columns)
    tallest = max(len(series_of(results)) for _, results in panels)
    every = list(dict.fromkeys(r.agent for _, results in panels for r in results))
    figure = new_figure(5.2 * columns, rows * (1.0 + 0.32 * tallest) + 0.6)
    grid = np.atleast_1d(figure.subplots(rows, columns, squeeze=False)).ravel()
    for axes, (panel_title, results) in zip(grid, panels, strict=False):
        _overview_panel(axes, panel_title, results, reference, every)
    for axes in grid[len(panels) :]:
        axes.set_visible(False)
    figure.suptitle(
        f"Final regret per agent, minus {reference}'s on the same seeds where the scenario "
        "has it\n(dots: seeds; diamond: mean, 95% CI; hollow: full information)",
        fontsize="medium",
    )
    return figure


TITLE_WIDTH = 48  # characters of a panel title per line


def _overview_panel(
    axes: Any, title: str, results: Sequence[RunResult], reference: str, seen: Sequence[str]
) -> None:
    horizon = single_horizon(results, f"overview_figure panel {title!r}")
    series = series_of(results, seen)  # one colour per agent across the panels
    by_label = {one.label: one for one in series}
    found = find_reference(by_label, reference)
    for row, one in enumerate(series):
        if found is None:
            _dot_row(axes, row, np.array([r.final_regret for r in one.results]), one)
        elif one.label != found:
            seeds, differences = paired_differences(one.results, by_label[found].results)
            if seeds:
                _dot_row(axes, row, differences[:, -1], one)
    _label_rows(axes, series)
    axes.set_ylim(max(len(series), OVERVIEW_MIN_ROWS) - 0.5, -0.5)
    if found is None:
        axes.set_xlabel("final regret R_T", fontsize="small")
    else:
        axes.axvline(0, color="black", linewidth=1, zorder=0.5)
        axes.set_xlabel(f"R_T minus {found}'s R_T (left of 0: better)", fontsize="small")
        labels = [one.label + (" (= 0)" if one.label == found else "") for one in series]
        axes.set_yticks(range(len(series)), labels)
    seeds = len({r.seed for r in results})
    heading = textwrap.fill(title, TITLE_WIDTH)  # long titles wrap instead of being clipped
    axes.set_title(f"{heading}\nT = {horizon:,}, {seeds} seeds", fontsize="small")
    axes.tick_params(labelsize="small")
