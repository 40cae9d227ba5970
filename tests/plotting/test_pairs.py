"""The pairwise matrix: one cell per ordered pair, coloured by separation and direction."""

from __future__ import annotations

import pytest
from matplotlib.colors import to_rgb
from matplotlib.patches import Rectangle
from synthetic_results import comparison

from bco_gym.plotting import pairwise_figure, save
from bco_gym.plotting.pairs import NOT_SEPARATED
from bco_gym.stats.ranking import rank


def cells(figure):
    """(row, column) -> (face colour, text) of the matrix."""
    axes = figure.axes[0]
    colors = {
        (round(p.get_y() + 0.5), round(p.get_x() + 0.5)): p.get_facecolor()[:3]
        for p in axes.patches
        if isinstance(p, Rectangle)
    }
    texts = {
        (round(t.get_position()[1]), round(t.get_position()[0])): t.get_text() for t in axes.texts
    }
    return {key: (colors[key], texts[key]) for key in colors}


def test_each_cell_says_direction_size_wins_and_adjusted_p():
    ranking = rank(comparison())
    figure = pairwise_figure(ranking, title="Tiny")
    labels = list(ranking.labels)
    assert [t.get_text() for t in figure.axes[0].get_yticklabels()] == labels
    grid = cells(figure)
    assert len(grid) == len(labels) ** 2
    for (row, column), (color, text) in grid.items():
        if row == column:
            continue
        comparison_ = ranking.pairs[(labels[row], labels[column])]
        assert f"{comparison_.wins}/{comparison_.pairs}" in text
        assert "Holm p" in text
        red, _, blue = color
        if not comparison_.separated:
            assert color == pytest.approx(to_rgb(NOT_SEPARATED))
        elif comparison_.mean < 0:
            assert blue > red  # row better: blue
        else:
            assert red > blue  # row worse: red
    # the matrix is antisymmetric in colour: a separated pair is blue one way, red the other
    bbcg, random = labels.index("bbcg"), labels.index("random")
    assert grid[(bbcg, random)][0][2] > grid[(bbcg, random)][0][0]
    assert grid[(random, bbcg)][0][0] > grid[(random, bbcg)][0][2]
    assert grid[(bbcg, random)][1].startswith("-40.0")


def test_the_matrix_renders_and_needs_two_agents(tmp_path):
    ranking = rank(comparison(("random", "bbcg")))
    path = save(pairwise_figure(ranking), tmp_path / "pairs.png")
    assert path.read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ValueError, match="two agents"):
        pairwise_figure(rank(comparison(("random",))))
