"""Reports: the tables, paired statistics and documents made from results.

* :mod:`~bco_gym.reports.summary` -- per-agent summaries and exponent fits, rendered
  as text, Markdown or CSV;
* :mod:`~bco_gym.reports.paired` -- paired differences against a reference on the
  same seeds (the paired table); :mod:`~bco_gym.reports.slopes` -- local slopes;
* :mod:`~bco_gym.reports.report` -- ``report.md`` with its figures;
  :mod:`~bco_gym.reports.demo` -- the main job (``bco-gym demo``).

The reports sit on the floor that faces the user, beside :mod:`bco_gym.plotting`: they
read results (engine) and sweeps, and draw with plotting; nothing below imports them
(``docs/architecture.md``). This package's ``__init__`` imports only the statistics and
tables, which plotting also uses; the writers (report, demo) are imported from their
modules.
"""

from bco_gym.reports.paired import PairedRow, paired_differences, paired_table, t_interval
from bco_gym.reports.summary import AgentSummary, ExponentFit, fit_exponents, summarize

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
