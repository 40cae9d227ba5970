"""Fixtures of the plotting tests (shared with the other run-level suites)."""

from run_fixtures import quiet_capping_warnings, tiny_results  # noqa: F401
