"""Figures: written, non-empty, readable back; a clear error without matplotlib."""

from __future__ import annotations

import dataclasses
import sys

import matplotlib.image
import pytest

from bco_gym.experiment.summary import fit_exponents
from bco_gym.plotting import plot_exponents, plot_regret


def test_regret_figure_is_written(tmp_path, tiny_results):
    path = plot_regret(tiny_results, tmp_path / "sub" / "regret.png")
    assert path.stat().st_size > 1000
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
    assert image[..., :3].std() > 0  # not a blank canvas


def test_exponents_figure_is_written(tmp_path, tiny_results):
    scaled = [
        dataclasses.replace(r, horizon=h, final_regret=abs(r.final_regret) * f + 1)
        for r in tiny_results
        for h, f in ((200, 1.0), (800, 3.0))
    ]
    path = plot_exponents(fit_exponents(scaled), tmp_path / "exponents.png")
    image = matplotlib.image.imread(path)
    assert path.stat().st_size > 1000 and image.shape[0] > 100


def test_missing_matplotlib_names_the_extra(tmp_path, tiny_results, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"pip install bco_gym\[plot\]"):
        plot_regret(tiny_results, tmp_path / "x.png")


def test_nothing_to_draw_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no results"):
        plot_regret([], tmp_path / "x.png")
