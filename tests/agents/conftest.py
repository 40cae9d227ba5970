"""Fixtures of the agent tests."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    """A fixed-seed generator: every statistical test is reproducible."""
    return np.random.default_rng(20200826)
