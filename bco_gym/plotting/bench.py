"""The benchmark's figures: scores across the scenarios of a suite.

Each takes the :class:`~bco_gym.reports.bench_report.Aggregates` of ``bco-gym bench``:

* :func:`aggregate_figure` -- per agent, the IQM and the mean of its normalised scores
  (final regret / random's on the same seed) with their stratified-bootstrap 95%
  intervals, two panels; 1 (random play) marked;
* :func:`profile_figure` -- performance profiles: the fraction of runs with a score
  at most tau, against tau (higher and further left is better);
* :func:`improvement_figure` -- the probability that a run of the agent scores lower
  than a run of bbcg (or fkm), with its interval; 0.5 marked (no difference).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bco_gym.plotting.style import agent_color, legend_outside, new_figure


def _color(agent: str, agents: list[str]) -> Any:
    return agent_color(agent, agents)


def aggregate_figure(stats: Any, suite: str) -> Any:
    """IQM and mean score per agent, 95% CIs (rows: agents by IQM, best on top)."""
    agents = sorted(
        stats.agents, key=lambda a: (-stats.scenarios[a], stats.estimates[a]["iqm"].value)
    )
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
        axes.set_xlabel(
            f"{heading} of normalised score (final regret / random's)", fontsize="small"
        )
        axes.grid(True, axis="x", alpha=0.3)
        axes.set_xlim(left=0)
    labels = [f"{a} ({stats.scenarios[a]} scen.)" for a in agents]
    panels[0].set_yticks(range(len(agents)), labels, fontsize="small")
    panels[0].set_ylim(len(agents) - 0.5, -0.5)
    figure.suptitle(
        f"Suite {suite}: normalised scores across scenarios (lower is better; 1 = random play)\n"
        "bar: stratified-bootstrap 95% CI, tick: point estimate",
        fontsize="medium",
    )
    return figure


def profile_figure(stats: Any, taus: np.ndarray, suite: str) -> Any:
    """Fraction of runs with score <= tau against tau, one line per agent."""
    figure = new_figure(7.5, 5.0)
    axes = figure.subplots()
    for agent in stats.agents:
        profile = stats.profiles[agent]
        if np.all(np.isnan(profile)):
            continue
        style = {"linestyle": ":"} if agent == "random" else {}
        axes.plot(
            taus, profile, color=_color(agent, stats.agents), label=agent, linewidth=1.6, **style
        )
    axes.axvline(1.0, color="0.4", linestyle=":", linewidth=1)
    axes.set_xlabel("tau (normalised score: final regret / random's)")
    axes.set_ylabel("fraction of runs with score <= tau")
    axes.set_ylim(-0.02, 1.02)
    axes.grid(True, alpha=0.3)
    axes.set_title(
        f"Suite {suite}: performance profiles (higher and further left: better)", fontsize="medium"
    )
    legend_outside(figure, axes)
    return figure


def improvement_figure(stats: Any, suite: str) -> Any:
    """P(agent's run scores lower than the reference's), 95% CI, one row per pair."""
    pairs = [pair for pair, estimate in stats.improvements.items() if math.isfinite(estimate.value)]
    figure = new_figure(7.5, 1.4 + 0.36 * max(1, len(pairs)))
    axes = figure.subplots()
    for row, (agent, reference) in enumerate(pairs):
        estimate = stats.improvements[(agent, reference)]
        color = _color(agent, stats.agents)
        axes.plot(
            [estimate.low, estimate.high],
            [row, row],
            color=color,
            linewidth=6,
            alpha=0.45,
            solid_capstyle="butt",
        )
        axes.plot([estimate.value], [row], marker="|", markersize=14, color="black")
    axes.axvline(0.5, color="0.4", linestyle=":", linewidth=1)
    axes.set_yticks(range(len(pairs)), [f"P({a} < {r})" for a, r in pairs], fontsize="small")
    axes.set_ylim(len(pairs) - 0.5, -0.5)
    axes.set_xlim(-0.02, 1.02)
    axes.set_xlabel(
        "probability that a run of the agent has a lower score than one of the reference"
    )
    axes.grid(True, axis="x", alpha=0.3)
    axes.set_title(
        f"Suite {suite}: probability of improvement (right of 0.5: better), 95% CI",
        fontsize="medium",
    )
    return figure
