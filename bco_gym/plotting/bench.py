"""The benchmark's figures: scores across the scenarios of a suite.

Each takes the :class:`~bco_gym.reports.bench_aggregates.Aggregates` of ``bco-gym bench``:

* :func:`aggregate_figure` -- per agent, the IQM and the mean of its normalised scores
  (final regret / random's on the same seed) with their stratified-bootstrap 95%
  intervals, two panels; 1 (random play) marked;
* :func:`profile_figure` -- performance profiles: the fraction of runs with a score
  at most tau, against tau (higher and further left is better), each with its
  pointwise stratified-bootstrap 95% band;
* :func:`improvement_figure` -- the matrix of every pair: the cell of row X, column Y
  holds P(X < Y), the probability that a run of X scores lower than a run of Y, with
  its 95% interval; blue where the interval lies above 0.5 (X better), red where
  below, grey where it holds 0.5, the shade growing with the distance from 0.5.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bco_gym.plotting.pairs import BETTER, NOT_SEPARATED, WORSE, draw_matrix
from bco_gym.plotting.style import (
    FULL_INFO_LINESTYLE,
    agent_color,
    legend_outside,
    lighter,
    new_figure,
)


def _color(agent: str, agents: list[str]) -> Any:
    return agent_color(agent, agents)


def aggregate_figure(stats: Any, suite: str) -> Any:
    """IQM and mean score per agent, 95% CIs (rows: agents by IQM, best on top)."""
    agents = stats.order()
    figure = new_figure(10.0, 1.4 + 0.42 * len(agents))
    panels = figure.subplots(1, 2, sharey=True)
    for axes, name, heading in ((panels[0], "iqm", "IQM"), (panels[1], "mean", "mean")):
        for row, agent in enumerate(agents):
            estimate = stats.estimates[agent][name]
            if not math.isfinite(estimate.value):
                continue
            color = _color(agent, stats.agents)
            if math.isfinite(estimate.low):
                axes.plot(
                    [estimate.low, estimate.high],
                    [row, row],
                    color=color,
                    linewidth=6,
                    alpha=0.45,
                    solid_capstyle="butt",
                )
            axes.plot([estimate.value], [row], marker="|", markersize=14, color="black")
        axes.axvline(1.0, color="0.4", linestyle=":", linewidth=1)
        _mark_more_feedback(axes, stats, agents)
        axes.set_xlabel(
            f"{heading} of normalised score (final regret / random's)", fontsize="small"
        )
        axes.grid(True, axis="x", alpha=0.3)
        axes.set_xlim(left=0)
    labels = [f"{stats.shown(a)} ({stats.scenarios[a]} scen.)" for a in agents]
    panels[0].set_yticks(range(len(agents)), labels, fontsize="small")
    panels[0].set_ylim(len(agents) - 0.5, -0.5)
    figure.suptitle(
        f"Suite {suite}: normalised scores across scenarios (lower is better; 1 = random play)\n"
        "bar: stratified-bootstrap 95% CI, tick: point estimate",
        fontsize="medium",
    )
    return figure


def _mark_more_feedback(axes: Any, stats: Any, agents: list[str]) -> None:
    """A rule above the agents with more feedback than one loss a round (listed last, ranked
    apart), with a note saying so."""
    first = next((row for row, agent in enumerate(agents) if not stats.is_bandit(agent)), None)
    if first is None:
        return
    axes.axhline(first - 0.5, color="0.3", linestyle="--", linewidth=1)
    axes.text(
        0.99,
        first - 0.45,
        "below: more feedback (full info / two-point), not ranked with the bandit agents",
        transform=axes.get_yaxis_transform(),
        ha="right",
        va="top",
        fontsize="x-small",
        color="0.3",
    )


def profile_figure(stats: Any, taus: np.ndarray, suite: str) -> Any:
    """Fraction of runs with score <= tau against tau, one line and band per agent."""
    figure = new_figure(7.5, 5.0)
    axes = figure.subplots()
    for agent in stats.agents:
        estimate = stats.profiles[agent]
        if np.all(np.isnan(estimate.value)):
            continue
        color = _color(agent, stats.agents)
        style = {"linestyle": ":"} if agent == "random" else {}
        if not stats.is_bandit(agent):
            style = {"linestyle": FULL_INFO_LINESTYLE}
        axes.fill_between(taus, estimate.low, estimate.high, color=color, alpha=0.18, linewidth=0)
        label = stats.shown(agent)
        axes.plot(taus, estimate.value, color=color, label=label, linewidth=1.6, **style)
    axes.axvline(1.0, color="0.4", linestyle=":", linewidth=1)
    axes.set_xlabel("tau (normalised score: final regret / random's)")
    axes.set_ylabel("fraction of runs with score <= tau")
    axes.set_ylim(-0.02, 1.02)
    axes.grid(True, alpha=0.3)
    axes.set_title(
        f"Suite {suite}: performance profiles (higher and further left: better)\n"
        "shaded: pointwise stratified-bootstrap 95% band",
        fontsize="medium",
    )
    legend_outside(figure, axes)
    return figure


def _improvement_color(estimate: Any) -> Any:
    if estimate.low <= 0.5 <= estimate.high:
        return NOT_SEPARATED
    strength = 0.25 + 0.75 * min(1.0, abs(estimate.value - 0.5) / 0.5)
    return lighter(BETTER if estimate.value > 0.5 else WORSE, 1 - strength)


def improvement_figure(stats: Any, suite: str) -> Any:
    """P(row agent's run scores lower than the column agent's), every pair (module docstring)."""
    agents = stats.order()
    count = len(agents)
    figure = new_figure(max(6.5, 1.25 * count + 2.2), 0.9 * count + 2.4)
    axes = figure.subplots()

    def cell(first: str, second: str) -> tuple[Any, str]:
        estimate = stats.improvements.get((first, second))
        if first == second or estimate is None:
            return "white", "—" if first == second else "no common\nscenario"
        text = f"{estimate.value:.2f}\n[{estimate.low:.2f}, {estimate.high:.2f}]"
        return _improvement_color(estimate), text

    draw_matrix(axes, agents, cell, row_label="row agent X", column_label="column agent Y")
    shown = [stats.shown(agent) for agent in agents]
    axes.set_xticks(range(count), shown, rotation=30, ha="right", fontsize="small")
    axes.set_yticks(range(count), shown, fontsize="small")
    figure.suptitle(
        f"Suite {suite}: probability of improvement P(X < Y), 95% CI\n"
        "a run of X scores lower than a run of Y, averaged over the scenarios both ran\n"
        "blue: above 0.5 (X better), red: below 0.5, grey: the interval holds 0.5",
        fontsize="small",
    )
    return figure
