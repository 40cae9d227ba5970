"""The benchmark suites (``SUITES``), re-exported from :mod:`bco_gym.reports.suites`."""

from bco_gym.reports.suites import SUITES, Scenario

__all__ = ["SUITES", "Scenario"]
