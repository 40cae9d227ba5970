"""Statistics of results, below both the reports and the figures.

* :mod:`~bco_gym.stats.paired` -- paired differences against a reference on the same
  seeds, their t intervals, the paired table's rows; how results group into series;
* :mod:`~bco_gym.stats.ranking` -- every pair's paired test, Holm's correction, the
  ordered groups;
* :mod:`~bco_gym.stats.exponents` and :mod:`~bco_gym.stats.slopes` -- fitted regret
  exponents with bootstrap intervals, local slopes and their bands;
* :mod:`~bco_gym.stats.frontier` -- the compute frontier (regret against CPU seconds);
* :mod:`~bco_gym.stats.scores` -- normalised scores across scenarios, IQM and mean with
  stratified-bootstrap intervals, probability of improvement, performance profiles;
* :mod:`~bco_gym.stats.groups` -- what a group of results shares, and how far its
  regrets can be trusted (the comparator's words).

Nothing here draws or writes: :mod:`bco_gym.plotting` and :mod:`bco_gym.reports` both
import this package, and it imports neither (``docs/architecture.md``). The reports'
old paths (``bco_gym.reports.paired``, ``.ranking``, ``.slopes``, ``.frontier``,
``.scores``) still import the same names.
"""

from bco_gym.stats.exponents import ExponentFit, fit_exponents
from bco_gym.stats.paired import PairedRow, paired_differences, paired_table, t_interval
from bco_gym.stats.ranking import Ranking, rank

__all__ = [
    "ExponentFit",
    "PairedRow",
    "Ranking",
    "fit_exponents",
    "paired_differences",
    "paired_table",
    "rank",
    "t_interval",
]
