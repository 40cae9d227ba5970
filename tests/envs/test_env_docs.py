"""The examples in the env and wrapper docstrings run as written."""

from __future__ import annotations

import doctest

import pytest

import bco_gym.envs.env
import bco_gym.envs.spaces
import bco_gym.wrappers.regret


@pytest.mark.parametrize(
    "module",
    [bco_gym.envs.env, bco_gym.envs.spaces, bco_gym.wrappers.regret],
    ids=lambda m: m.__name__,
)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted >= 3
