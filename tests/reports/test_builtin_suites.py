"""The built-in suites are TOML files read by the loader of a user's suite file, and each
of their scenarios is, field by field, the Python definition it replaced.

``data/builtin_suites_python.json`` holds, for every built-in scenario, the ``repr`` of the
Python definition (every field, with its type: tuples, dicts, floats exactly) and its
definition digest, written before the Python definitions were deleted.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bco_gym.reports import references
from bco_gym.reports.suites import (
    BUILTIN_NAMES,
    SUITES,
    _read_suite,
    builtin_suite_path,
    load_suite_file,
)

PYTHON = json.loads((Path(__file__).parent / "data" / "builtin_suites_python.json").read_text())


def test_every_built_in_suite_is_a_shipped_toml_file():
    assert tuple(SUITES) == BUILTIN_NAMES == tuple(PYTHON)
    for name in BUILTIN_NAMES:
        path = builtin_suite_path(name)
        assert path.is_file() and path.suffix == ".toml"
        assert _read_suite(path) == (name, SUITES[name])


@pytest.mark.parametrize("suite", BUILTIN_NAMES)
def test_each_scenario_is_the_python_definition_it_replaced(suite):
    scenarios = SUITES[suite]
    assert [s.name for s in scenarios] == [row["name"] for row in PYTHON[suite]]
    for scenario, row in zip(scenarios, PYTHON[suite], strict=True):
        assert repr(scenario) == row["repr"], scenario.name
        assert references.scenario_digest(scenario) == row["digest"], scenario.name


@pytest.mark.parametrize("suite", references.ARCHIVED)
def test_the_archives_definition_digests_are_the_toml_scenarios(suite):
    index = json.loads((references.root() / suite / references.INDEX).read_text())
    scenarios = {scenario.name: scenario for scenario in SUITES[suite]}
    assert index["scenarios"]
    for name, recorded in index["scenarios"].items():
        assert references.scenario_digest(scenarios[name]) == recorded, name


def test_a_copy_of_a_built_in_file_reads_as_a_users_suite(tmp_path):
    """The same loader: a user's copy, renamed, gives the same scenarios."""
    text = builtin_suite_path("quick-v2").read_text(encoding="utf-8")
    copy = tmp_path / "mine.toml"
    copy.write_text(text.replace('name = "quick-v2"', 'name = "mine"'), encoding="utf-8")
    assert load_suite_file(copy) == ("mine", SUITES["quick-v2"])


def test_a_users_file_may_not_take_a_built_in_name(tmp_path):
    copy = tmp_path / "quick-v2.toml"
    shutil.copy(builtin_suite_path("quick-v2"), copy)
    with pytest.raises(ValueError, match="built-in suite's"):
        load_suite_file(copy)
