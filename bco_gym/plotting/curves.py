"""Curves against the round t: regret, regret / t^(3/4) and regret / t, paired differences.

Every band is the 95% Student-t interval over seeds of the quantity drawn
(:func:`~bco_gym.stats.paired.t_interval`), at each checkpoint.

* :func:`regret_figure` (:func:`plot_regret` saves it) -- left, mean regret against
  t, log-log (where a lower 95% limit is at or below 0 the band is left out there, a
  log axis cannot show it); right, regret / t^(3/4) against log t, where the
  differences the log-log panel flattens show. The theorem bounds a horizon-T run's
  regret at t = T only, by B(T) (``RunResult.regret_bound``), so each bound is a short
  dotted tick at t = T in the agent's colour; a bound above the data's range is not
  drawn (it would squash the curves) but written in a note on the axes.
* :func:`regret_curve_figure` -- the plain curve: mean regret against t on linear
  axes with its band, one line per agent (the report's first figure per scenario);
* :func:`normalized_regret_figure` -- regret / t^(3/4) (flat for a T^(3/4) method)
  and regret / t (the average regret per round, flat for random play) against t.
* :func:`paired_difference_figure` -- for each series, the mean over seeds of
  R_s(t) - R^ref_s(t) against t, the reference (random by default) on the same seed.
  The per-round panel's y range holds the mean curves and, from t = T/100 on, their
  bands (the first rounds' bands are wide and uninformative, and would fill it).
* :func:`against_references_figure` -- the bench's curves of one scenario: left, the
  given agents' mean regret against t beside the references' rows (their tuned rows) and
  random's; right, each given agent minus each of those reference rows on the same seed,
  with its paired 95% band (below 0: the given agent is ahead at t).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bco_gym.engine.result import RunResult
from bco_gym.plotting.style import (
    FIRST_AGENT,
    RANDOM_LINE_ZORDER,
    Series,
    legend_outside,
    new_figure,
    save,
    series_of,
    single_horizon,
    title_of,
)
from bco_gym.stats.paired import (
    find_reference,
    paired_differences,
    series_label,
    t_interval,
)

BAND_ALPHA = 0.2


def _curves(series: Series) -> tuple[np.ndarray, np.ndarray]:
    """(checkpoints, regrets of shape (seeds, checkpoints)) of one series."""
    checkpoints = series.results[0].checkpoints
    if any(not np.array_equal(r.checkpoints, checkpoints) for r in series.results):
        raise ValueError(f"{series.label}: the runs have different checkpoints")
    return checkpoints.astype(float), np.stack([r.regret for r in series.results])


def _draw_band(
    axes: Any, series: Series, t: np.ndarray, values: np.ndarray, *, log: bool = False
) -> None:
    """Mean line and 95% band of ``values`` (seeds, points) at ``t``.

    With ``log`` (a log y axis) only points with a positive mean are drawn, and the
    band only where its lower limit is positive.
    """
    mean, low, high = t_interval(values, axis=0)
    shown = mean > 0 if log else np.ones_like(t, dtype=bool)
    banded = low[shown] > 0 if log else None
    axes.plot(
        t[shown],
        mean[shown],
        color=series.color,
        linestyle=series.linestyle,
        linewidth=1.8 if series.agent == FIRST_AGENT else 1.5,
        zorder=RANDOM_LINE_ZORDER if series.agent == FIRST_AGENT else series.zorder + 0.5,
        label=series.label,
    )
    if np.isfinite(low).any():
        axes.fill_between(
            t[shown],
            low[shown],
            high[shown],
            where=banded,
            color=series.color,
            alpha=BAND_ALPHA,
            linewidth=0,
            zorder=series.zorder,
        )


def _nonempty_series(results: Sequence[RunResult], figure: str) -> list[Series]:
    series = series_of(results)
    if not series:
        raise ValueError(f"{figure}: no results to draw")
    single_horizon(results, figure)
    return series


# -- regret ---------------------------------------------------------------------------------------
def regret_figure(results: Sequence[RunResult], *, title: str | None = None) -> Any:
    """Mean regret against t with 95% bands, log-log, bounds as ticks at T (module doc)."""
    series = _nonempty_series(results, "regret_figure")
    figure = new_figure(11.0, 5.4)
    axes, scaled = figure.subplots(1, 2)
    for one in series:
        t, regrets = _curves(one)
        _draw_band(axes, one, t, regrets, log=True)
        _draw_band(scaled, one, t, regrets / t**0.75)
    axes.set_yscale("log")
    for panel in (axes, scaled):
        panel.set_xscale("log")
        panel.set_xlabel("round t")
        panel.grid(True, which="major", alpha=0.3)
    _draw_bounds(axes, series)
    axes.set_ylabel("regret (mean over seeds, 95% CI)")
    scaled.set_ylabel("regret / t^(3/4) (mean over seeds, 95% CI)")
    axes.set_title("regret, log-log", fontsize="small")
    scaled.set_title("regret / t^(3/4): flat for a method with T^(3/4) regret", fontsize="small")
    figure.suptitle(title or title_of("Regret against t", results), fontsize="medium")
    legend_outside(figure, axes)
    return figure


def _draw_bounds(axes: Any, series: Sequence[Series]) -> None:
    """Each theorem bound as a dashed tick at t = T, or in a note when above the data."""
    axes.autoscale(False)
    high = axes.get_ylim()[1]
    left, right = axes.get_xlim()
    off_axes = []
    drawn = False
    for one in series:
        bounds = [r.regret_bound for r in one.results if r.regret_bound is not None]
        if not bounds:
            continue
        bound, horizon = float(np.mean(bounds)), one.results[0].horizon
        if bound > high:
            off_axes.append(f"{one.label} {bound:.3g}")
            continue
        tick = [horizon / 4, horizon]
        axes.plot(tick, [bound, bound], color=one.color, linestyle=":", linewidth=2)
        drawn = True
    if drawn:
        axes.plot([], [], color="0.3", linestyle=":", linewidth=2, label="theorem bound at T")
    if off_axes:
        note = "theorem bounds at T, above the axes: " + ", ".join(off_axes)
        axes.text(0.01, 0.99, note, transform=axes.transAxes, va="top", fontsize="x-small")
    axes.set_xlim(left, right)


def plot_regret(
    results: Sequence[RunResult], path: str | os.PathLike, *, title: str | None = None
) -> Path:
    """Save :func:`regret_figure` to ``path`` (the ``compare`` figure)."""
    return save(regret_figure(results, title=title), path)


def regret_curve_figure(results: Sequence[RunResult], *, title: str | None = None) -> Any:
    """Mean regret against t, linear axes, 95% bands: the plain curve of each agent."""
    series = _nonempty_series(results, "regret_curve_figure")
    figure = new_figure(10.0, 5.2)
    axes = figure.subplots()
    for one in series:
        t, regrets = _curves(one)
        _draw_band(axes, one, t, regrets)
    axes.axhline(0, color="black", linewidth=0.6, zorder=0)
    axes.set_xlabel("round t")
    axes.set_ylabel("regret R(t) (mean over seeds, 95% CI)")
    axes.grid(True, which="major", alpha=0.3)
    figure.suptitle(title or title_of("Regret against t", results), fontsize="medium")
    legend_outside(figure, axes)
    return figure


# -- normalised regret ----------------------------------------------------------------------------
def normalized_regret_figure(results: Sequence[RunResult], *, title: str | None = None) -> Any:
    """Two panels: regret / t^(3/4) and regret / t against t (log t), 95% bands."""
    series = _nonempty_series(results, "normalized_regret_figure")
    figure = new_figure(10.0, 5.0)
    scaled, average = figure.subplots(1, 2, sharex=True)
    for one in series:
        t, regrets = _curves(one)
        _draw_band(scaled, one, t, regrets / t**0.75)
        _draw_band(average, one, t, regrets / t)
    for axes, name in ((scaled, "regret / t^(3/4)"), (average, "regret / t")):
        axes.set_xscale("log")
        axes.set_xlabel("round t")
        axes.set_ylabel(f"{name} (mean over seeds, 95% CI)")
        axes.axhline(0, color="black", linewidth=0.6, zorder=0)
        axes.grid(True, which="major", alpha=0.3)
    scaled.set_title("flat for a method with T^(3/4) regret", fontsize="small")
    average.set_title("average regret per round; flat for random play", fontsize="small")
    figure.suptitle(title or title_of("Normalised regret against t", results), fontsize="medium")
    legend_outside(figure, scaled)
    return figure


def _fit_to_means(axes: Any, means: Sequence[float]) -> None:
    """Y limits from the mean curves (plus 10%): the first rounds' wide bands are clipped."""
    low, high = float(np.min(means)), float(np.max(means))
    pad = 0.1 * (high - low) or 1.0
    axes.set_ylim(low - pad, high + pad)


def _late_band(t: np.ndarray, values: np.ndarray) -> list[float]:
    """The finite 95% limits of ``values`` (seeds, points) at t >= T/100."""
    _, low, high = t_interval(values, axis=0)
    late = t >= t[-1] / 100
    limits = np.concatenate([low[late], high[late]])
    return list(limits[np.isfinite(limits)])


# -- paired differences ---------------------------------------------------------------------------
def paired_difference_figure(
    results: Sequence[RunResult], reference: str = "random", *, title: str | None = None
) -> Any:
    """Regret minus the reference's regret on the same seed: D(t) (linear t) and D(t) / t (log t).

    The differences open late (after the degenerate early rounds), so the left panel's
    linear t axis shows their size at the horizon and the right panel's log t axis shows
    when they open, per round; its y range is that of the mean curves (the bands of the
    first few rounds, wide and uninformative, are clipped).
    """
    series = _nonempty_series(results, "paired_difference_figure")
    # By the plain series label: a drawn label may say "fkm (= bbcg)" (identical curves).
    by_label = {series_label(one.results[0]): one for one in series}
    found = find_reference(by_label, reference)
    if found is None:
        raise ValueError(f"paired_difference_figure: no {reference!r} runs among {list(by_label)}")
    figure = new_figure(11.0, 5.4)
    total, per_round = figure.subplots(1, 2)
    for axes in (total, per_round):
        axes.axhline(0, color="black", linewidth=1, zorder=0.5, label=f"{found} (reference)")
    per_round_means = [0.0]
    for one in series:
        if one is by_label[found]:
            continue
        seeds, differences = paired_differences(one.results, by_label[found].results)
        if seeds:
            t = one.results[0].checkpoints.astype(float)
            _draw_band(total, one, t, differences)
            _draw_band(per_round, one, t, differences / t)
            per_round_means += list((differences / t).mean(axis=0))
            per_round_means += _late_band(t, differences / t)
    per_round.set_xscale("log")
    _fit_to_means(per_round, per_round_means)
    total.set_ylabel(f"regret minus {found}'s, same seed (mean, 95% CI)")
    per_round.set_ylabel(f"(regret minus {found}'s) / t (mean, 95% CI)")
    total.set_title("difference at t (below 0: better)", fontsize="small")
    per_round.set_title(
        "difference per round, log t (y range: the means, and the bands from t = T/100)",
        fontsize="small",
    )
    for axes in (total, per_round):
        axes.set_xlabel("round t")
        axes.grid(True, which="major", alpha=0.3)
    what = f"Paired regret difference to {found}"
    figure.suptitle(title or title_of(what, results), fontsize="medium")
    legend_outside(figure, total)
    return figure


# -- the bench: given agents against the references -----------------------------------------------
def against_references_figure(
    results: Sequence[RunResult],
    given: Sequence[str],
    references: Sequence[str],
    *,
    title: str | None = None,
) -> Any:
    """Given agents against reference rows (module docstring): ``given`` and
    ``references`` are series labels of ``results`` (:func:`series_label`); the left
    panel draws both (and random's, where it ran), the right one each given series minus
    each reference series, paired by seed, dashed for the second reference and beyond."""
    series = _nonempty_series(results, "against_references_figure")
    by_label = {series_label(one.results[0]): one for one in series}
    missing = [label for label in (*given, *references) if label not in by_label]
    if missing or not given or not references:
        raise ValueError(
            f"against_references_figure: given {list(given)} and references "
            f"{list(references)} must be series of the results ({list(by_label)})"
        )
    figure = new_figure(12.0, 5.4)
    curves, paired = figure.subplots(1, 2)
    shown = [*given, *references, *(label for label in by_label if label == "random")]
    for one in series:
        if series_label(one.results[0]) in shown:
            t, regrets = _curves(one)
            _draw_band(curves, one, t, regrets)
    paired.axhline(0, color="black", linewidth=1, zorder=0.5)
    styles = ("-", "--", ":", "-.")
    for label in given:
        ours = by_label[label]
        for index, reference in enumerate(references):
            seeds, differences = paired_differences(ours.results, by_label[reference].results)
            if not seeds:
                continue
            t = ours.results[0].checkpoints.astype(float)
            line = Series(
                label=f"{label} minus {reference}",
                agent=ours.agent,
                results=ours.results,
                color=ours.color,
                linestyle=styles[index % len(styles)],
                zorder=ours.zorder,
                full_information=ours.full_information,
            )
            _draw_band(paired, line, t, differences)
    curves.axhline(0, color="black", linewidth=0.6, zorder=0)
    curves.set_ylabel("regret R(t) (mean over seeds, 95% CI)")
    curves.set_title("regret against t", fontsize="small")
    paired.set_ylabel("regret minus the reference's, same seed (mean, paired 95% CI)")
    paired.set_title("paired difference (below 0: ahead of the reference)", fontsize="small")
    for axes in (curves, paired):
        axes.set_xlabel("round t")
        axes.grid(True, which="major", alpha=0.3)
    what = "Given agents against the reference rows"
    figure.suptitle(title or title_of(what, results), fontsize="medium")
    legend_outside(figure, curves)
    handles, labels = paired.get_legend_handles_labels()
    if handles:
        paired.legend(handles, labels, fontsize="x-small", loc="best", frameon=False)
    return figure
