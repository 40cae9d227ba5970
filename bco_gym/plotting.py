"""Figures from saved results (matplotlib, the optional extra ``plot``).

Figures are drawn on a bare ``matplotlib.figure.Figure`` with the Agg canvas: no
pyplot, so no global figure state and no GUI backend is touched.

* :func:`plot_regret` — the ``compare`` figure: for each agent, the mean regret over
  seeds at the checkpoints t with a band of ± one standard deviation, log-log (points
  where the mean is not positive are left out). Dashed, in the same colour, the
  agent's theoretical bound: the theorem bounds the regret of a horizon-T run by B(T)
  (``RunResult.regret_bound``, computed for the run's own T, whose parameters depend on
  T), drawn as B(T) (t/T)^alpha with alpha the agent's regret exponent, so the line
  ends at B(T) at t = T and has the theory's slope.
* :func:`plot_exponents` — the ``exponents`` figure: mean final regret against T with
  ± one standard deviation bars, the fitted power law (solid) and a line of the
  theory's slope through the same centre (dashed).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bco_gym.experiment.runner import THEORY_EXPONENTS, RunResult
from bco_gym.experiment.summary import ExponentFit


def _new_figure(width: float = 7.0, height: float = 4.8) -> Any:
    """A pyplot-free Figure with an Agg canvas; ImportError naming the extra if absent."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError(
            "plots need matplotlib: pip install bco_gym[plot] (or pip install matplotlib)"
        ) from error
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _colors(count: int) -> list[Any]:
    from matplotlib import colormaps

    palette = colormaps["tab10"]
    return [palette(i % 10) for i in range(count)]


def _save(figure: Any, path: str | os.PathLike) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    return path


def _grouped(results: Iterable[RunResult]) -> dict[tuple[str, str], list[RunResult]]:
    """Results by (agent, label): the label is the constants, plus the scale unless theory."""
    groups: dict[tuple[str, str], list[RunResult]] = {}
    for result in results:
        label = result.constants
        if result.constants != "theory" and result.scale_param is not None:
            label += f" {result.scale_param}={result.scale_value:.3g}"
        groups.setdefault((result.agent, label), []).append(result)
    return groups


def plot_regret(
    results: Sequence[RunResult], path: str | os.PathLike, *, title: str | None = None
) -> Path:
    """Mean regret curves with seed bands and dashed theoretical bounds (see module doc)."""
    groups = _grouped(results)
    if not groups:
        raise ValueError("plot_regret: no results to draw")
    figure = _new_figure()
    axes = figure.add_subplot()
    for (agent, constants), color in zip(groups, _colors(len(groups)), strict=True):
        group = groups[agent, constants]
        checkpoints = group[0].checkpoints
        if any(not np.array_equal(r.checkpoints, checkpoints) for r in group):
            raise ValueError(f"plot_regret: the {agent} runs have different checkpoints")
        regrets = np.stack([r.regret for r in group])
        mean = regrets.mean(axis=0)
        spread = regrets.std(axis=0, ddof=1) if len(group) > 1 else np.zeros_like(mean)
        shown = mean > 0
        label = f"{agent} ({constants})"
        axes.plot(checkpoints[shown], mean[shown], color=color, label=label)
        low = np.maximum(mean - spread, mean * 1e-3)
        axes.fill_between(
            checkpoints[shown], low[shown], (mean + spread)[shown], color=color, alpha=0.2
        )
        _draw_bound(axes, group[0], checkpoints, color)
    if any(r.regret_bound is not None for r in results):
        axes.plot([], [], color="gray", linestyle="--", linewidth=1, label="theorem bound")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("round t")
    axes.set_ylabel("regret (mean ± std over seeds)")
    first = results[0]
    seeds = len({r.seed for r in results})
    axes.set_title(title or f"{first.env_id}, T = {first.horizon}, {seeds} seeds")
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize="small")
    return _save(figure, path)


def _draw_bound(axes: Any, result: RunResult, checkpoints: np.ndarray, color: Any) -> None:
    exponent = THEORY_EXPONENTS.get(result.agent)
    if result.regret_bound is None or exponent is None or result.regret_bound <= 0:
        return
    curve = result.regret_bound * (checkpoints / result.horizon) ** exponent
    axes.plot(checkpoints, curve, color=color, linestyle="--", linewidth=1)


def plot_exponents(
    fits: Sequence[ExponentFit], path: str | os.PathLike, *, title: str | None = None
) -> Path:
    """Final regret against T per agent, the fitted power law and the theory's slope."""
    if not fits:
        raise ValueError("plot_exponents: no fits to draw")
    figure = _new_figure()
    axes = figure.add_subplot()
    for fit, color in zip(fits, _colors(len(fits)), strict=True):
        horizons = np.asarray(fit.horizons, dtype=float)
        mean = np.asarray(fit.regret_mean)
        spread = np.asarray(fit.regret_std)
        shown = mean > 0
        lower = np.minimum(spread, mean * (1 - 1e-3))
        axes.errorbar(
            horizons[shown],
            mean[shown],
            yerr=[lower[shown], spread[shown]],
            fmt="o",
            color=color,
            capsize=3,
        )
        label = f"{fit.agent} ({fit.constants}): slope {fit.slope:.3f}"
        if fit.theory is not None:
            label += f", theory {fit.theory:.3f}"
        if np.isfinite(fit.slope) and shown.all():
            centre_x = np.log(horizons).mean()
            centre_y = np.log(mean).mean()
            axes.plot(
                horizons,
                np.exp(centre_y + fit.slope * (np.log(horizons) - centre_x)),
                color=color,
                label=label,
            )
            if fit.theory is not None:
                axes.plot(
                    horizons,
                    np.exp(centre_y + fit.theory * (np.log(horizons) - centre_x)),
                    color=color,
                    linestyle="--",
                    linewidth=1,
                )
        else:
            axes.plot([], [], color=color, label=label)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("horizon T")
    axes.set_ylabel("final regret (mean ± std over seeds)")
    axes.set_title(title or f"{fits[0].env_id}: regret exponents (dashed: theory)")
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize="small")
    return _save(figure, path)
