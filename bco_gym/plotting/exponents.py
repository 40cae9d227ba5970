"""The exponents figure: final regret against T with its fit, and the local slopes.

Left panel, per agent: the mean final regret at each horizon with its 95% Student-t
interval over seeds (from the fit's mean and standard deviation), the least-squares
power law (solid) with its 95% bootstrap band (shaded: pointwise quantiles of the
resampled fitted lines, :mod:`bco_gym.stats.slopes`), and a line of the theory's
slope through the same centre (dotted). Right panel: the local slope of log regret
between successive horizons, log(m_{i+1}/m_i) / log(T_{i+1}/T_i), placed at
sqrt(T_i T_{i+1}) with its 95% bootstrap interval, and the theory's exponent as a
dotted line: a slope that has settled is flat. The band and the local intervals need
the per-seed results (``results=``); without them the band is the fan of lines whose
slopes are the fit's interval ends, through the same centre, and the local slopes have
no intervals.
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
    FULL_INFO_LINESTYLE,
    agent_color,
    full_information_agent,
    legend_outside,
    new_figure,
    save,
    title_of,
)
from bco_gym.stats.exponents import ExponentFit
from bco_gym.stats.slopes import ExponentBand, exponent_bands, local_slopes


def _key(item: ExponentFit | ExponentBand) -> tuple[str, str, str, str]:
    return (item.env_id, item.agent, item.constants, item.scale)


def _interval_half_width(fit: ExponentFit) -> np.ndarray:
    if fit.seeds < 2:
        return np.zeros(len(fit.horizons))
    from scipy import stats  # here, not at import: reading results needs no SciPy

    quantile = stats.t.ppf((1 + fit.level) / 2, fit.seeds - 1)
    return quantile * np.asarray(fit.regret_std) / np.sqrt(fit.seeds)


def _full_information(fit: ExponentFit) -> bool:
    """Whether the fit's runs saw gradients: what they recorded, or the agent's name."""
    return fit.full_information or full_information_agent(fit.agent)


def _fit_label(fit: ExponentFit) -> str:
    label = fit.agent
    if fit.constants != "theory":
        label += f" ({fit.constants}{', ' + fit.scale if fit.scale not in ('', '-') else ''})"
    if _full_information(fit):
        label += " (full info)"
    slope = f"slope {fit.slope:.3f}" if np.isfinite(fit.slope) else "slope -"
    if np.isfinite(fit.low):
        slope += f" [{fit.low:.3f}, {fit.high:.3f}]"
    theory = f", theory {fit.theory:.3f}" if fit.theory is not None else ""
    return f"{label}: {slope}{theory}"


def _draw_fit(axes: Any, fit: ExponentFit, band: ExponentBand | None, style: dict) -> None:
    horizons = np.asarray(fit.horizons, dtype=float)
    mean = np.asarray(fit.regret_mean)
    half = _interval_half_width(fit)
    shown = mean > 0
    lower = np.minimum(half, mean * 0.99)
    axes.errorbar(
        horizons[shown],
        mean[shown],
        yerr=[lower[shown], half[shown]],
        fmt="o",
        color=style["color"],
        capsize=3,
        zorder=style["zorder"] + 0.5,
    )
    if not (np.isfinite(fit.slope) and shown.all()):
        axes.plot([], [], label=_fit_label(fit), **style)
        return
    centre_x, centre_y = np.log(horizons).mean(), np.log(mean).mean()

    def line(slope: float) -> np.ndarray:
        return np.exp(centre_y + slope * (np.log(horizons) - centre_x))

    axes.plot(horizons, line(fit.slope), label=_fit_label(fit), **style)
    if band is not None and np.isfinite(band.line_low).all():
        low, high = np.asarray(band.line_low), np.asarray(band.line_high)
    elif np.isfinite(fit.low):
        low, high = (
            np.minimum(line(fit.low), line(fit.high)),
            np.maximum(line(fit.low), line(fit.high)),
        )
    else:
        low = high = None
    if low is not None:
        axes.fill_between(
            horizons,
            low,
            high,
            color=style["color"],
            alpha=0.2,
            linewidth=0,
            zorder=style["zorder"] - 0.5,
        )
    if fit.theory is not None:
        axes.plot(
            horizons,
            line(fit.theory),
            color=style["color"],
            linestyle=":",
            linewidth=1.2,
            zorder=style["zorder"],
        )


def _draw_local(axes: Any, fit: ExponentFit, band: ExponentBand | None, style: dict) -> None:
    horizons = np.asarray(fit.horizons, dtype=float)
    midpoints = np.sqrt(horizons[:-1] * horizons[1:])
    slopes = local_slopes(fit.horizons, np.asarray(fit.regret_mean))
    error = None
    if band is not None and np.isfinite(band.local_low).all():
        error = [slopes - np.asarray(band.local_low), np.asarray(band.local_high) - slopes]
        error = np.maximum(error, 0)
    axes.errorbar(midpoints, slopes, yerr=error, marker="o", capsize=3, **style)


def _draw_theory_exponents(axes: Any, fits: Sequence[ExponentFit]) -> None:
    """One dotted line per distinct theory exponent, labelled with its agents."""
    agents_of: dict[float, list[str]] = {}
    for fit in fits:
        if fit.theory is not None:
            agents_of.setdefault(round(fit.theory, 6), []).append(fit.agent)
    for exponent, agents in agents_of.items():
        axes.axhline(exponent, color="black", linestyle=":", linewidth=1, zorder=0.5)
        text = f"theory {exponent:.3g}: {', '.join(dict.fromkeys(agents))}"
        axes.annotate(
            text,
            (1, exponent),
            xycoords=("axes fraction", "data"),
            xytext=(-4, 3),
            textcoords="offset points",
            ha="right",
            fontsize="x-small",
        )


def _no_labels() -> Any:
    from matplotlib.ticker import NullFormatter

    return NullFormatter()


def exponents_figure(
    fits: Sequence[ExponentFit],
    *,
    results: Sequence[RunResult] | None = None,
    title: str | None = None,
) -> Any:
    """Final regret against T with fits and bands, and the local-slope panel (module doc)."""
    if not fits:
        raise ValueError("plot_exponents: no fits to draw")
    bands = {_key(band): band for band in exponent_bands(results)} if results else {}
    ordered = sorted(fits, key=lambda fit: fit.agent != FIRST_AGENT)
    agents = [fit.agent for fit in ordered]
    figure = new_figure(11.0, 5.6)
    regret_axes, slope_axes = figure.subplots(1, 2, sharex=True)
    for order, fit in enumerate(ordered):
        style = {
            "color": agent_color(fit.agent, agents),
            "linestyle": FULL_INFO_LINESTYLE if _full_information(fit) else "-",
            "zorder": 1.0 if fit.agent == FIRST_AGENT else 3.0 + 2 * order,
        }
        band = bands.get(_key(fit))
        _draw_fit(regret_axes, fit, band, style)
        _draw_local(slope_axes, fit, band, style)
    _draw_theory_exponents(slope_axes, ordered)
    for axes in (regret_axes, slope_axes):
        axes.set_xscale("log")
        axes.xaxis.set_minor_formatter(_no_labels())
        axes.set_xlabel("horizon T")
        axes.grid(True, which="major", alpha=0.3)
    regret_axes.set_yscale("log")
    regret_axes.set_ylabel("final regret (mean, 95% CI; band: 95% bootstrap of the fit)")
    regret_axes.set_title(
        "fit: least squares of log mean regret on log T; dotted: theory slope", fontsize="small"
    )
    slope_axes.set_ylabel("local slope of log regret between successive T")
    slope_axes.set_title("local slopes (95% bootstrap); dotted: theory exponent", fontsize="small")
    default = f"Regret exponents, {fits[0].env_id}"
    figure.suptitle(
        title or (title_of("Regret exponents", results) if results else default), fontsize="medium"
    )
    legend_outside(figure, regret_axes, columns=2)
    return figure


def plot_exponents(
    fits: Sequence[ExponentFit],
    path: str | os.PathLike,
    *,
    title: str | None = None,
    results: Sequence[RunResult] | None = None,
) -> Path:
    """Save :func:`exponents_figure` to ``path`` (the ``exponents`` figure)."""
    return save(exponents_figure(fits, results=results, title=title), path)
