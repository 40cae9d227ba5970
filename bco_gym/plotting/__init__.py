"""Figures from results (matplotlib, the optional extra ``plot``).

Each figure is built by a ``*_figure`` function that returns a pyplot-free
``matplotlib.figure.Figure`` (see :mod:`bco_gym.plotting.style`), and saved by a
``plot_*`` function that returns the written path. Intervals are 95% Student-t
intervals over seeds unless a figure says bootstrap.

* :func:`regret_figure` / :func:`plot_regret` -- regret against t (the ``compare`` figure);
* :func:`regret_curve_figure` -- the plain regret against t (linear axes), per agent;
* :func:`normalized_regret_figure` -- regret / t^(3/4) and regret / t against t;
* :func:`paired_difference_figure` -- regret minus a reference agent's on the same seed;
* :func:`final_regret_figure` / :func:`plot_final_regret` -- final regret dot plot and
  paired final differences;
* :func:`overview_figure` -- one final-regret dot plot per scenario (the report's headline);
* :func:`tuning_figure` -- final regret against each agent's scale constant;
* :func:`pairwise_figure` -- who beats whom: every pair's paired difference, wins and
  Holm-adjusted p-value (the report's matrix per scenario);
* :func:`interval_regret_figure` -- the largest regret over the intervals of each
  length against the length (adaptive regret, changing environments);
* :func:`exponents_figure` / :func:`plot_exponents` -- regret against T, the fitted
  exponents with their bootstrap band, and the local slopes (the ``exponents`` figure).
"""

from bco_gym.plotting.curves import (
    normalized_regret_figure,
    paired_difference_figure,
    plot_regret,
    regret_curve_figure,
    regret_figure,
)
from bco_gym.plotting.dots import (
    final_regret_figure,
    overview_figure,
    plot_final_regret,
    tuning_figure,
)
from bco_gym.plotting.exponents import exponents_figure, plot_exponents
from bco_gym.plotting.intervals import interval_regret_figure
from bco_gym.plotting.pairs import pairwise_figure
from bco_gym.plotting.style import save

__all__ = [
    "exponents_figure",
    "final_regret_figure",
    "interval_regret_figure",
    "normalized_regret_figure",
    "overview_figure",
    "paired_difference_figure",
    "pairwise_figure",
    "plot_exponents",
    "plot_final_regret",
    "plot_regret",
    "regret_curve_figure",
    "regret_figure",
    "save",
    "tuning_figure",
]
