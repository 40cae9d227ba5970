"""Helpers of the bench's tests (tests/reports)."""

from __future__ import annotations

from typing import Any


def plain_report(patch: Any) -> None:
    """Through ``patch`` (a pytest MonkeyPatch): bench reports without their figures, their
    intervals by bco_gym's vectorised bootstrap (rliable's takes a minute on a loaded
    machine), for tests of a report's rows and words, not its figures."""
    patch.setattr("bco_gym.reports.bench_report.matplotlib_missing", lambda: "no figures here")
    patch.setattr("bco_gym.reports.report.matplotlib_missing", lambda: "no figures here")
    patch.setattr("bco_gym.stats.scores.rliable_available", lambda: False)
