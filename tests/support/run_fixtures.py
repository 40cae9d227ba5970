"""Fixtures shared by the engine, sweeps, reports and plotting suites (their conftests import)."""

from __future__ import annotations

import warnings

import pytest
from experiment_helpers import tiny_run


@pytest.fixture(autouse=True)
def quiet_capping_warnings():
    """Theory parameters capped at tiny T warn by design; that is not what is tested here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


@pytest.fixture(scope="session")
def tiny_results():
    """bbcg and random on seeds 0 and 1 (computed once per session)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return [tiny_run(agent, seed) for agent in ("bbcg", "random") for seed in (0, 1)]
