"""Reports: the tables and documents made from results.

* :mod:`~bco_gym.reports.summary` -- per-agent summaries and exponent fits, rendered
  as text, Markdown or CSV;
* :mod:`~bco_gym.reports.report` -- ``report.md`` with its figures;
  :mod:`~bco_gym.reports.demo` -- the main job (``bco-gym demo``);
* :mod:`~bco_gym.reports.bench` -- the benchmark (``bco-gym bench``): suites, references,
  scores, verdicts.

The statistics they print (paired differences, rankings, exponents, scores) are in
:mod:`bco_gym.stats`, below both the reports and :mod:`bco_gym.plotting`; the reports
draw with plotting, and nothing below imports them (``docs/architecture.md``). This
package's ``__init__`` re-exports the statistics and tables it always did; the writers
(report, demo) are imported from their modules.
"""

from bco_gym.reports.summary import AgentSummary, ExponentFit, fit_exponents, summarize
from bco_gym.stats.paired import PairedRow, paired_differences, paired_table, t_interval

__all__ = [
    "AgentSummary",
    "ExponentFit",
    "PairedRow",
    "fit_exponents",
    "paired_differences",
    "paired_table",
    "summarize",
    "t_interval",
]
