"""Fixtures of the set tests: the cases of set_cases.py and a seeded generator."""

from __future__ import annotations

import numpy as np
import pytest
from set_cases import CASES, SHRUNK, Case


@pytest.fixture(params=CASES, ids=repr)
def case(request) -> Case:
    return request.param


@pytest.fixture(params=[c for c in CASES if c.name in SHRUNK], ids=repr)
def shrunk_case(request) -> Case:
    return request.param


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20200826)
