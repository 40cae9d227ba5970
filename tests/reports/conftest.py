"""Fixtures of the reports tests (shared with the other run-level suites)."""

import pytest
from bench_fixtures import plain_report
from run_fixtures import quiet_capping_warnings, tiny_results  # noqa: F401


@pytest.fixture
def plain(monkeypatch):
    """Bench reports without figures or rliable (:func:`bench_fixtures.plain_report`)."""
    plain_report(monkeypatch)
