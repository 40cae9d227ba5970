"""Interval regret against interval length: how an agent fares on the windows of a run.

:func:`interval_regret_figure` draws, for each series, the mean over seeds (with the
95% Student-t band) of the largest regret over the dyadic cover's intervals of each
length 2^k (``RunResult.interval_regret["max_interval_regret"]``, see
:mod:`bco_gym.losses.intervals`), on log-log axes, with the identity line of a learner
that loses a constant per round. The right end of a curve is the adaptive regret's
longest intervals; a learner that tracks a changing optimum stays low at the lengths of
the adversary's segments, one that does not climbs with the length. A marker gives each
series' adaptive regret (the largest regret over the dyadic intervals and the whole run:
above the curve's maximum when the whole run, not a power of two long, attains it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bco_gym.engine.result import RunResult
from bco_gym.plotting.style import legend_outside, new_figure, series_of, single_horizon, title_of
from bco_gym.stats.paired import t_interval


def interval_regret_figure(results: Sequence[RunResult], *, title: str | None = None) -> Any:
    """Largest regret over the intervals of each length 2^k against 2^k (log-log), per agent."""
    usable = [r for r in results if r.adaptive_regret is not None]
    if not usable:
        raise ValueError(
            "interval_regret_figure: no result has interval regrets (they are computed for "
            "linear losses only; see RunResult.interval_regret['reason'])"
        )
    single_horizon(usable, "interval_regret_figure")
    figure = new_figure(7.5, 5.4)
    axes = figure.subplots()
    for one in series_of(usable):
        lengths = np.asarray(one.results[0].interval_regret["lengths"], dtype=float)
        values = np.stack([r.interval_regret["max_interval_regret"] for r in one.results])
        mean, low, high = t_interval(values, axis=0)
        shown = mean > 0
        axes.plot(
            lengths[shown],
            mean[shown],
            color=one.color,
            linestyle=one.linestyle,
            label=one.label,
            zorder=one.zorder,
        )
        band = shown & (low > 0)
        if len(one.results) > 1 and band.any():
            axes.fill_between(
                lengths[band], low[band], high[band], color=one.color, alpha=0.2, linewidth=0
            )
        adaptive = float(np.mean([r.adaptive_regret for r in one.results]))
        if adaptive > 0:
            at = lengths[int(np.argmax(mean))]
            axes.plot([at], [adaptive], marker="o", color=one.color, zorder=one.zorder)
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    axes.set_xlabel("interval length 2^k (the dyadic cover's intervals [s, s + 2^k))")
    axes.set_ylabel("largest regret over intervals of that length\n(mean over seeds, 95% CI)")
    axes.set_title(
        "dot: the adaptive regret (dyadic intervals and the whole run)", fontsize="small"
    )
    axes.grid(True, which="major", alpha=0.3)
    figure.suptitle(
        title or title_of("Interval regret against interval length", usable), fontsize="medium"
    )
    legend_outside(figure, axes)
    return figure
