"""Figures: their content (titles, legends, series, bands, order, markings) and the files."""

from __future__ import annotations

import dataclasses
import sys

import matplotlib.image
import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.container import ErrorbarContainer
from synthetic_results import FINALS, comparison, synthetic_result

from bco_gym.plotting import (
    exponents_figure,
    final_regret_figure,
    normalized_regret_figure,
    overview_figure,
    paired_difference_figure,
    plot_exponents,
    plot_final_regret,
    plot_regret,
    regret_figure,
    tuning_figure,
)
from bco_gym.reports.summary import fit_exponents

LABELS = ["random", "bbcg", "fkm", "ofw (full info)"]


@pytest.fixture
def results():
    """The comparison with random last in the input: figures must still draw it first."""
    ordered = comparison()
    return [r for r in ordered if r.agent != "random"] + [r for r in ordered if r.agent == "random"]


def legend_labels(figure):
    return [text.get_text() for text in figure.legends[0].get_texts()]


def bands(axes):
    return [c for c in axes.collections if isinstance(c, PolyCollection)]


def data_lines(axes):
    return [line for line in axes.get_lines() if not line.get_label().startswith("_")]


def assert_title_names_the_setting(text):
    for part in (
        "L2Ball(n=3, radius=1)",
        "d = 3",
        "linear losses",
        "mean_norm=0.5",
        "noise=0.5",
        "T = 100",
        "4 seeds",
        "constants: theory",
    ):
        assert part in text, (part, text)


def test_regret_figure_content(results):
    figure = regret_figure(results)
    axes, scaled = figure.axes[:2]
    assert_title_names_the_setting(figure.get_suptitle())
    assert len(bands(scaled)) == 4 and len(data_lines(scaled)) == 4
    t = np.array([1.0, 10.0, 100.0])
    np.testing.assert_allclose(
        data_lines(scaled)[2].get_ydata(), np.mean(FINALS["fkm"]) * t / 100 / t**0.75
    )
    assert legend_labels(figure) == LABELS  # the bounds (>= 1000) are above the data
    lines = data_lines(axes)
    assert [line.get_label() for line in lines] == LABELS
    # random: band lowest, line dotted and on top (it hides no equal curve below it)
    assert lines[0].get_zorder() > max(line.get_zorder() for line in lines[1:])
    assert lines[0].get_linestyle() == ":"
    band_orders = [band.get_zorder() for band in bands(axes)]
    assert band_orders[0] == min(band_orders)
    assert lines[3].get_linestyle() == "--" and lines[1].get_linestyle() == "-"
    assert len(bands(axes)) == 4
    np.testing.assert_allclose(
        lines[1].get_ydata(), np.mean(FINALS["bbcg"]) * np.array([0.01, 0.1, 1])
    )
    assert axes.get_xscale() == "log" and axes.get_yscale() == "log"
    note = " ".join(text.get_text() for text in axes.texts)
    assert "above the axes" in note and "bbcg 1e+03" in note
    assert axes.get_ylim()[1] < 1000  # the bounds do not squash the data


def test_a_bound_within_the_data_is_a_tick_at_the_horizon(results):
    low_bound = [
        dataclasses.replace(r, regret_bound=90.0) if r.agent == "bbcg" else r for r in results
    ]
    figure = regret_figure(low_bound)
    assert "theorem bound at T" in legend_labels(figure)
    ticks = [line for line in figure.axes[0].get_lines() if list(line.get_ydata()) == [90.0, 90.0]]
    assert len(ticks) == 1 and ticks[0].get_xdata()[-1] == 100
    assert "bbcg" not in " ".join(text.get_text() for text in figure.axes[0].texts)


def test_normalized_regret_figure_divides_by_powers_of_t(results):
    figure = normalized_regret_figure(results)
    scaled, average = figure.axes[:2]
    assert_title_names_the_setting(figure.get_suptitle())
    t = np.array([1.0, 10.0, 100.0])
    mean = np.mean(FINALS["fkm"]) * t / 100
    by_label = {line.get_label(): line for line in data_lines(scaled)}
    np.testing.assert_allclose(by_label["fkm"].get_ydata(), mean / t**0.75)
    by_label = {line.get_label(): line for line in data_lines(average)}
    np.testing.assert_allclose(by_label["fkm"].get_ydata(), mean / t)
    assert len(bands(scaled)) == len(bands(average)) == 4
    assert legend_labels(figure) == LABELS


def test_paired_difference_figure_content(results):
    figure = paired_difference_figure(results, "random")
    total, per_round = figure.axes[:2]
    assert "Paired regret difference to random" in figure.get_suptitle()
    assert_title_names_the_setting(figure.get_suptitle())
    assert legend_labels(figure) == ["random (reference)", *LABELS[1:]]
    lines = {line.get_label(): line for line in data_lines(total)}
    expected = np.mean(np.subtract(FINALS["bbcg"], FINALS["random"]))
    assert lines["bbcg"].get_ydata()[-1] == pytest.approx(expected)
    assert lines["ofw (full info)"].get_linestyle() == "--"
    assert len(bands(total)) == len(bands(per_round)) == 3
    with pytest.raises(ValueError, match="no 'fkm' runs"):
        paired_difference_figure([r for r in results if r.agent != "fkm"], "fkm")


def test_paired_difference_against_fkm_draws_random_first(results):
    figure = paired_difference_figure(results, "fkm")
    lines = data_lines(figure.axes[0])
    assert [line.get_label() for line in lines] == [
        "fkm (reference)",
        "random",
        "bbcg",
        "ofw (full info)",
    ]
    assert lines[1].get_linestyle() == ":"  # random, dotted on top of the others
    assert lines[1].get_zorder() > max(line.get_zorder() for line in lines[2:])


def test_a_series_hidden_under_an_identical_one_says_so(results):
    bbcg = {r.seed: r for r in results if r.agent == "bbcg"}
    twins = [
        dataclasses.replace(r, regret=bbcg[r.seed].regret) if r.agent == "fkm" else r
        for r in results
    ]
    figure = normalized_regret_figure(twins)
    assert legend_labels(figure) == ["random", "bbcg", "fkm (= bbcg)", "ofw (full info)"]
    # a summation-order difference (1e-17) is still the same curve; 1e-6 of the scale is not
    nudged = [
        dataclasses.replace(r, regret=r.regret * (1 + 1e-15)) if r.agent == "fkm" else r
        for r in twins
    ]
    assert "fkm (= bbcg)" in legend_labels(normalized_regret_figure(nudged))
    apart = [
        dataclasses.replace(r, regret=r.regret * (1 + 1e-6)) if r.agent == "fkm" else r
        for r in twins
    ]
    assert "fkm" in legend_labels(normalized_regret_figure(apart))


def test_the_per_round_panel_is_scaled_to_the_means_and_late_bands(results):
    """y range: the mean curves and the bands from t = T/100 on, padded by 10% each side."""
    per_round = paired_difference_figure(results).axes[1]
    means = [np.asarray(line.get_ydata()) for line in data_lines(per_round)]
    limits = [value for band in bands(per_round) for value in band.get_paths()[0].vertices[:, 1]]
    values = [v for m in means for v in m] + limits  # here T/100 = 1: every band counts
    low, high = per_round.get_ylim()
    span = max(values) - min(values)
    assert low == pytest.approx(min(values) - 0.1 * span)
    assert high == pytest.approx(max(values) + 0.1 * span)


def test_final_regret_figure_is_a_dot_plot_with_intervals(results):
    figure = final_regret_figure(results)
    regret_axes, difference_axes = figure.axes[:2]
    assert_title_names_the_setting(figure.get_suptitle())
    assert [t.get_text() for t in regret_axes.get_yticklabels()] == LABELS
    regret_bars = [c for c in regret_axes.containers if isinstance(c, ErrorbarContainer)]
    difference_bars = [c for c in difference_axes.containers if isinstance(c, ErrorbarContainer)]
    assert len(regret_bars) == 4 and len(difference_bars) == 3  # no bar for the reference
    assert regret_bars[1].lines[0].get_xdata()[0] == pytest.approx(np.mean(FINALS["bbcg"]))
    expected = np.mean(np.subtract(FINALS["bbcg"], FINALS["random"]))
    assert difference_bars[0].lines[0].get_xdata()[0] == pytest.approx(expected)
    assert all(len(bar.lines[2]) == 1 for bar in regret_bars)  # an interval on each mean
    seed_dots = regret_axes.collections
    assert len(seed_dots) >= 4 and len(seed_dots[0].get_offsets()) == 4
    ofw_dots = seed_dots[3]
    assert ofw_dots.get_facecolor().size == 0 or ofw_dots.get_facecolor()[0][3] == 0  # hollow


def test_overview_pairs_with_random_where_a_panel_has_it(results):
    without_random = [r for r in results if r.agent != "random"]
    figure = overview_figure([("with random", results), ("without", without_random)])
    paired, raw = figure.axes[:2]
    assert paired.get_title().startswith("with random\nT = 100, 4 seeds")
    assert "minus random's" in paired.get_xlabel() and raw.get_xlabel() == "final regret R_T"
    paired_bars = [c for c in paired.containers if isinstance(c, ErrorbarContainer)]
    raw_bars = [c for c in raw.containers if isinstance(c, ErrorbarContainer)]
    assert len(paired_bars) == 3 and len(raw_bars) == 3
    expected = np.mean(np.subtract(FINALS["bbcg"], FINALS["random"]))
    assert paired_bars[0].lines[0].get_xdata()[0] == pytest.approx(expected)
    assert raw_bars[0].lines[0].get_xdata()[0] == pytest.approx(np.mean(FINALS["bbcg"]))
    assert [t.get_text() for t in paired.get_yticklabels()] == ["random (= 0)", *LABELS[1:]]


def test_tuning_figure_has_one_line_per_agent_and_marks_the_theory_value():
    results = [
        synthetic_result(
            agent,
            seed,
            (1.0, 10.0, 50.0 + (np.log(c) ** 2) * 10 + seed),
            constants="custom",
            scale=c,
        )
        for agent in ("bbcg", "fkm")
        for c in (0.3, 1.0, 3.0)
        for seed in range(3)
    ]
    results += [synthetic_result("bbcg", s, (1.0, 10.0, 55.0 + s), scale=1.7) for s in range(3)]
    results += [synthetic_result("random", s, (1.0, 10.0, 100.0 + s), scale=None) for s in range(3)]
    figure = tuning_figure(results)
    axes = figure.axes[0]
    assert "Final regret against the scale constant" in axes.get_title()
    labels = legend_labels(figure)
    assert labels[0] == "random (no constant)"
    assert labels[1:] == ["bbcg", "bbcg: theory value", "fkm"]
    lines = {line.get_label(): line for line in data_lines(axes)}
    assert list(lines["bbcg"].get_xdata()) == [0.3, 1.0, 1.7, 3.0]
    assert list(lines["bbcg: theory value"].get_xdata()) == [1.7]
    assert lines["random (no constant)"].get_zorder() < lines["bbcg"].get_zorder()
    assert len(bands(axes)) == 2 and len(axes.patches) == 1  # random's band is a span
    assert axes.get_xscale() == "log"


def exponent_results():
    return [
        synthetic_result(
            agent,
            seed,
            (1.0, 5.0, factor * horizon**exponent),
            checkpoints=(1, 10, horizon),
            feedback="full" if agent == "ofw" else "bandit",
        )
        for agent, exponent in (("bbcg", 0.8), ("ofw", 0.75), ("random", 1.0))
        for horizon in (100, 1000, 10000)
        for seed, factor in enumerate((1.0, 1.3, 0.8))
    ]


def test_exponents_figure_has_bands_and_local_slopes():
    results = exponent_results()
    figure = exponents_figure(fit_exponents(results), results=results)
    regret_axes, slope_axes = figure.axes[:2]
    labels = legend_labels(figure)
    assert labels[0].startswith("random: slope 1.000")
    assert labels[2].startswith("ofw (full info): slope 0.750")
    assert len(bands(regret_axes)) == 3
    local = [c for c in slope_axes.containers if isinstance(c, ErrorbarContainer)]
    assert len(local) == 3
    np.testing.assert_allclose(local[1].lines[0].get_ydata(), [0.8, 0.8], rtol=1e-9)
    np.testing.assert_allclose(local[1].lines[0].get_xdata(), [10**2.5, 10**3.5])
    notes = [text.get_text() for text in slope_axes.texts]
    assert "theory 0.75: bbcg, ofw" in notes and "theory 1: random" in notes
    assert "T = 100..10,000, 3 seeds" in figure.get_suptitle()


def test_exponents_figure_without_results_still_draws_a_band():
    figure = exponents_figure(fit_exponents(exponent_results()))
    assert len(bands(figure.axes[0])) == 3  # the fan of the slope interval


def test_regret_figure_is_written(tmp_path, tiny_results):
    path = plot_regret(tiny_results, tmp_path / "sub" / "regret.png")
    assert path.stat().st_size > 1000
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
    assert image[..., :3].std() > 0  # not a blank canvas


def test_saved_figures_do_not_depend_on_the_run(tmp_path, results):
    first = plot_final_regret(results, tmp_path / "a.png").read_bytes()
    assert first == plot_final_regret(results, tmp_path / "b.png").read_bytes()


def test_exponents_figure_is_written(tmp_path, tiny_results):
    scaled = [
        dataclasses.replace(r, horizon=h, final_regret=abs(r.final_regret) * f + 1)
        for r in tiny_results
        for h, f in ((200, 1.0), (800, 3.0))
    ]
    path = plot_exponents(fit_exponents(scaled), tmp_path / "exponents.png")
    image = matplotlib.image.imread(path)
    assert path.stat().st_size > 1000 and image.shape[0] > 100


def test_several_horizons_are_refused_where_one_is_needed(results):
    longer = [dataclasses.replace(r, horizon=200) for r in results[:4]]
    with pytest.raises(ValueError, match="share one horizon"):
        final_regret_figure(results + longer)


@pytest.mark.parametrize("module", ["matplotlib.figure", "matplotlib.colors"])
def test_missing_matplotlib_names_the_extra(tmp_path, tiny_results, monkeypatch, module):
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImportError, match=r"pip install bco_gym\[plot\]"):
        plot_regret(tiny_results, tmp_path / "x.png")
    with pytest.raises(ImportError, match=r"pip install bco_gym\[plot\]"):
        final_regret_figure(comparison())


def test_nothing_to_draw_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no results"):
        plot_regret([], tmp_path / "x.png")


def test_interval_regret_figure_draws_each_agents_maxima_per_length():
    from bco_gym.engine.many import run_many
    from bco_gym.plotting import interval_regret_figure

    kwargs = {"n": 3, "loss": "linear-switching", "loss_kwargs": {"segments": 2}}
    results = run_many("BCO-Ball-v0", "random", [0, 1], horizon=64, env_kwargs=kwargs)
    figure = interval_regret_figure(results)
    (axes,) = figure.axes
    line = axes.get_lines()[0]
    means = np.mean([r.interval_regret["max_interval_regret"] for r in results], axis=0)
    shown = means > 0
    assert np.allclose(line.get_ydata(), means[shown])
    assert np.allclose(line.get_xdata(), np.array([1, 2, 4, 8, 16, 32, 64])[shown])
    quadratic = run_many("BCO-Ball-v0", "random", [0], horizon=8, env_kwargs={"loss": "quadratic"})
    with pytest.raises(ValueError, match="linear losses only"):
        interval_regret_figure(quadratic)


def test_paired_difference_to_an_agent_whose_theory_curve_equals_another():
    """fkm's theory curve equals bbcg's (drawn "fkm (= bbcg)") beside a tuned fkm: the
    reference "fkm" is the theory series, found by its plain label."""
    made = []
    for seed in range(3):
        made.append(synthetic_result("bbcg", seed, [1.0, 5.0, 20.0 + seed]))
        made.append(synthetic_result("fkm", seed, [1.0, 5.0, 20.0 + seed]))
        made.append(
            synthetic_result("fkm", seed, [1.0, 4.0, 15.0 + seed], constants="tuned", scale=3.0)
        )
    figure = paired_difference_figure(made, "fkm")
    labels = figure.axes[0].get_legend_handles_labels()[1]
    assert "fkm (reference)" in labels and "fkm (tuned, c=3)" in labels
