"""The report's figure fixes: labels inside the canvas, bands that leave the means
readable, random visible over an equal curve, the plain regret curve."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
from synthetic_results import FINALS, comparison, synthetic_result

from bco_gym.plotting import final_regret_figure, paired_difference_figure, regret_curve_figure
from bco_gym.stats.paired import t_interval


def inside_canvas(figure, artist):
    figure.canvas.draw()
    box = artist.get_window_extent(renderer=figure.canvas.get_renderer())
    width, height = figure.canvas.get_width_height()
    return box.x0 >= 0 and box.y0 >= 0 and box.x1 <= width and box.y1 <= height


def test_the_final_regret_figure_keeps_its_x_labels_inside_the_canvas():
    long_name = [dataclasses.replace(r, agent="random") for r in comparison(("random",))]
    results = long_name + comparison(("bbcg", "fkm", "ofw"))
    figure = final_regret_figure(results)
    for axes in figure.axes[:2]:
        assert inside_canvas(figure, axes.xaxis.label), axes.xaxis.label.get_text()


def test_the_plain_regret_curve_is_the_mean_with_its_band():
    results = comparison()
    figure = regret_curve_figure(results)
    axes = figure.axes[0]
    assert axes.get_xscale() == "linear" and axes.get_yscale() == "linear"
    lines = {
        line.get_label(): line for line in axes.get_lines() if not line.get_label().startswith("_")
    }
    np.testing.assert_allclose(
        lines["bbcg"].get_ydata(), np.mean(FINALS["bbcg"]) * np.array([0.01, 0.1, 1.0])
    )
    assert "Regret against t" in figure.get_suptitle()
    assert lines["random"].get_linestyle() == ":"


def test_random_stays_visible_over_an_agent_with_the_same_curve():
    same = [dataclasses.replace(r, agent="bfw") for r in comparison(("random",))]
    nudged = [dataclasses.replace(r, regret=r.regret * (1 + 1e-6)) for r in same]
    figure = paired_difference_figure(comparison(("random", "fkm")) + nudged, "fkm")
    lines = {
        l.get_label(): l for l in figure.axes[0].get_lines() if not l.get_label().startswith("_")
    }
    assert lines["random"].get_zorder() > lines["bfw"].get_zorder()
    assert lines["random"].get_linestyle() == ":" and lines["bfw"].get_linestyle() == "-"


def test_the_per_round_panel_is_not_filled_by_early_bands():
    """Huge spread in the first rounds, small at the end: the early band is clipped."""
    checkpoints = (1, 10, 100, 1000, 10_000)
    results = []
    rng = np.random.default_rng(0)
    for seed in range(4):
        early = rng.normal(0, 50)  # per-round differences of +-50 at t = 1
        base = np.array([5.0, 30.0, 200.0, 1500.0, 12_000.0])
        results.append(synthetic_result("random", seed, base, checkpoints=checkpoints))
        ours = base + np.array([early, early, -10.0, -100.0, -1000.0 + seed])
        results.append(synthetic_result("bbcg", seed, ours, checkpoints=checkpoints))
    figure = paired_difference_figure(results, "random")
    low, high = figure.axes[1].get_ylim()
    differences = np.array(
        [o.regret - r.regret for r, o in zip(results[::2], results[1::2], strict=True)]
    )
    _, early_low, early_high = t_interval(differences[:, 0])
    _, late_low, late_high = t_interval(differences[:, -1] / 10_000)
    assert high - low < (early_high - early_low) / 4  # the early band is clipped ...
    assert low < late_low < late_high < high  # ... the late one shown whole
    assert low <= differences[:, 0].mean() <= high  # and every mean


def test_an_agent_keeps_its_colour_across_the_overview_panels():
    """Spare colours follow the agents of the whole figure, not of each panel: an agent
    that is the second outside agent in one panel and the first in another (so-bgd
    beside a user agent) is drawn alike in both."""
    from bco_gym.plotting import overview_figure
    from bco_gym.plotting.style import series_of

    def panel(agents):
        return [
            synthetic_result(a, s, (1.0, 2.0, 3.0 + s + 10 * i))
            for i, a in enumerate(agents)
            for s in range(3)
        ]

    first, second = panel(["random", "bbcg", "mine:A"]), panel(["random", "so-bgd", "mine:A"])
    every = ["random", "bbcg", "mine:A", "so-bgd"]
    colours = [{s.agent: s.color for s in series_of(results, every)} for results in (first, second)]
    assert colours[0]["mine:A"] == colours[1]["mine:A"]
    assert colours[1]["so-bgd"] != colours[1]["mine:A"]
    alone = {s.agent: s.color for s in series_of(second)}  # without ``seen``: per panel
    assert alone["so-bgd"] == colours[0]["mine:A"]  # the first spare colour, taken twice
    figure = overview_figure([("one", first), ("two", second)])
    drawn = []
    for axes in figure.axes[:2]:
        labels = [tick.get_text() for tick in axes.get_yticklabels()]
        row = labels.index("mine:A")
        dots = [c for c in axes.collections if len(c.get_facecolor())]
        near = [c for c in dots if round(float(np.mean(c.get_offsets()[:, 1]))) == row]
        drawn.append(tuple(np.round(near[0].get_facecolor()[0], 6)))
    assert drawn[0] == drawn[1]


def test_the_frontier_stacks_horizon_labels_that_would_overlap():
    """Three series ending at the same seconds and regret: their "T=..." labels are
    written one under the other, none overlapping (the Birkhoff frontier's "T=100,000"
    labels were drawn over each other)."""
    from bco_gym.plotting.frontier import frontier_figure

    finals = (100.0, 104.0, 98.0, 102.0)
    results = [
        synthetic_result(agent, seed, (final / 100, final / 10, final), seconds=(0.01, 0.01))
        for agent in ("random", "bbcg", "fkm")
        for seed, final in enumerate(finals)
    ]
    figure = frontier_figure(results)
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    labels = [text for text in figure.axes[0].texts if text.get_text().startswith("T=")]
    assert len(labels) == 3
    boxes = [text.get_window_extent(renderer=renderer) for text in labels]
    for i, first in enumerate(boxes):
        for second in boxes[i + 1 :]:
            assert not first.overlaps(second), (first, second)
    assert all(inside_canvas(figure, text) for text in labels)


def test_a_short_log_axis_has_plain_tick_labels_that_do_not_overlap():
    """The demo's frontier spans 0.25-8 CPU seconds: matplotlib labelled every minor tick
    as 3x10^-1, 4x10^-1, ... and they ran into each other."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bco_gym.plotting.frontier import plain_log_ticks

    for low, high, expected in [(0.25, 8.0, {"0.5", "1", "2", "5"}), (0.01, 100.0, {"0.1", "1"})]:
        figure, axes = plt.subplots(figsize=(9, 5))
        axes.plot([low, high], [1, 2])
        axes.set_xscale("log")
        axes.set_xlim(low, high)
        plain_log_ticks(axes.xaxis)
        figure.canvas.draw()
        renderer = figure.canvas.get_renderer()
        shown = [
            label
            for label in axes.get_xticklabels(minor=False) + axes.get_xticklabels(minor=True)
            if label.get_text() and low <= label.get_position()[0] <= high
        ]
        texts = {label.get_text() for label in shown}
        assert expected <= texts, texts
        assert not any("^" in text or "times" in text for text in texts), texts
        boxes = sorted((label.get_window_extent(renderer) for label in shown), key=lambda b: b.x0)
        for left, right in itertools.pairwise(boxes):
            assert left.x1 <= right.x0, (texts, left, right)
        plt.close(figure)
