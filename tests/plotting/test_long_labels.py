"""No figure or table clips an agent's label: the longest label a user can give
(--label, a variant with many keywords) is drawn whole, inside the saved image."""

from __future__ import annotations

import struct

import pytest

pytest.importorskip("matplotlib")

from bco_gym.agents import resolve_agent
from bco_gym.engine import run_many
from bco_gym.plotting import save
from bco_gym.plotting.curves import regret_figure
from bco_gym.plotting.style import DPI
from bco_gym.reports.summary import compare_columns, render_markdown, summarize

LONGEST = "Flaxman-Kalai-McMahan with the residual estimator, c=2, tuned on seeds 100-104 " * 2


def _png_size(path):
    with open(path, "rb") as stream:
        header = stream.read(24)
    return struct.unpack(">II", header[16:24])


def _results():
    long = resolve_agent("fkm[c=2,estimator=residual]").with_label(LONGEST.strip())
    results = []
    for agent in (long, "bbcg", "random"):
        results += run_many("BCO-Ball-v0", agent, [0, 1], horizon=40, env_kwargs={"n": 3})
    return results


def test_the_longest_label_is_whole_in_the_legend_and_inside_the_image(tmp_path):
    results = _results()
    figure = regret_figure(results)
    path = save(figure, tmp_path / "regret.png")
    legend = figure.legends[0]
    texts = [text.get_text() for text in legend.get_texts()]
    assert any(text.startswith(LONGEST.strip()) for text in texts), texts  # not cut
    assert legend._ncols == 1  # one label per row: it cannot share a row
    width, height = _png_size(path)
    renderer = figure.canvas.get_renderer()
    box = legend.get_window_extent(renderer)
    scale = DPI / figure.dpi
    assert box.width * scale <= width  # the saved image holds the whole legend
    assert box.height * scale <= height


def test_tables_keep_the_longest_label_whole():
    header, body = compare_columns(summarize(_results()))
    table = render_markdown(header, body)
    assert LONGEST.strip() in table


def test_a_long_set_and_loss_title_is_wrapped_inside_the_figure(tmp_path):
    """The title names every loss parameter; on the 64x64 nuclear ball with the low-rank
    family that line ran past the right edge of the frontier figure (issue 30: no clipping)."""
    from bco_gym.plotting.style import TITLE_WIDTH, title_of

    env_kwargs = {
        "rows": 8,
        "cols": 8,
        "loss": "linear-low-rank",
        "loss_kwargs": {"mean_norm": 0.5, "noise": 1.0, "rank": 1},
    }
    results = run_many("BCO-NuclearBall-v0", "random", [0, 1], horizon=20, env_kwargs=env_kwargs)
    title = title_of("Compute frontier", results)
    lines = title.split("\n")
    assert len(lines) > 3  # the set-and-losses line was longer than the width: wrapped
    assert all(len(line) <= TITLE_WIDTH for line in lines)
    assert "rank=1" in title.replace("\n", " ")  # wrapped, nothing dropped
    figure = regret_figure(results)
    figure.axes[0].set_title(title, fontsize=9)
    path = save(figure, tmp_path / "titled.png")
    width, _ = _png_size(path)
    box = figure.axes[0].title.get_window_extent(figure.canvas.get_renderer())
    assert box.width * DPI / figure.dpi <= width
