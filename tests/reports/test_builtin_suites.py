"""The built-in suites are TOML files read by the loader of a user's suite file, and each
of their scenarios is, field by field, the Python definition it replaced.

``data/builtin_suites_python.json`` holds, for every built-in scenario, the ``repr`` of the
Python definition (every field, with its type: tuples, dicts, floats exactly) and its
definition digest, written before the Python definitions were deleted. The field added
since, ``agent_feedback``, is empty in all of them (and left out of their digests).
standard-v3, born a TOML file, is pinned against standard-v2 below.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from bco_gym.reports import references
from bco_gym.reports.references import DEFINING_FIELDS
from bco_gym.reports.suites import (
    BUILTIN_NAMES,
    SUITES,
    _read_suite,
    builtin_suite_path,
    load_suite_file,
)

PYTHON = json.loads((Path(__file__).parent / "data" / "builtin_suites_python.json").read_text())


def test_every_built_in_suite_is_a_shipped_toml_file():
    assert tuple(SUITES) == BUILTIN_NAMES == (*PYTHON, "standard-v3")
    for name in BUILTIN_NAMES:
        path = builtin_suite_path(name)
        assert path.is_file() and path.suffix == ".toml"
        assert _read_suite(path) == (name, SUITES[name])


@pytest.mark.parametrize("suite", tuple(PYTHON))
def test_each_scenario_is_the_python_definition_it_replaced(suite):
    scenarios = SUITES[suite]
    assert [s.name for s in scenarios] == [row["name"] for row in PYTHON[suite]]
    for scenario, row in zip(scenarios, PYTHON[suite], strict=True):
        assert scenario.agent_feedback == {}, scenario.name
        assert repr(scenario) == row["repr"].removesuffix(")") + ", agent_feedback={})"
        assert references.scenario_digest(scenario) == row["digest"], scenario.name


#: What standard-v3 adds to standard-v2's scenarios: rows, and their own feedback.
V3_ROWS = {
    "ball-quadratic-10": (("bandit-newton",), {}),
    "box-quadratic-100": (("bandit-newton",), {}),
    "ball-drift-10": (("pbgd", "pbgd2"), {"pbgd2": "two-point"}),
    "ball-switching-10": (("pbgd", "pbgd2"), {"pbgd2": "two-point"}),
}
#: The definition digests of standard-v3's scenarios with rows of their own feedback
#: (the others' are standard-v2's).
V3_DIGESTS = {
    "ball-drift-10": "18138b7513a113cec722c717d3dbb408c9263f276f75c240af6e58d6a7c02fc2",
    "ball-switching-10": "5ec31f36b9bcbcd02ab311ddf65aac3a7a599ec2be4b03efdd7ec50808d8fbce",
}


def test_standard_v3_is_standard_v2_with_rows_added():
    """The same 18 scenarios in the same order, every defining field unchanged (so the
    same reference cells, and standard-v2's digest wherever no row has its own
    feedback), the rows of V3_ROWS added after standard-v2's, and nothing else."""
    v2, v3 = SUITES["standard-v2"], SUITES["standard-v3"]
    assert [s.name for s in v3] == [s.name for s in v2] and len(v3) == 18
    for old, new in zip(v2, v3, strict=True):
        added, feedback = V3_ROWS.get(new.name, ((), {}))
        assert new.agents == (*old.agents, *added), new.name
        assert dict(new.agent_feedback) == feedback, new.name
        for name in DEFINING_FIELDS:
            assert getattr(new, name) == getattr(old, name), (new.name, name)
        for name in ("seeds", "references", "quick_horizon", "horizons", "title", "purpose"):
            assert getattr(new, name) == getattr(old, name), (new.name, name)
        digest = references.scenario_digest(new)
        if feedback:
            assert digest != references.scenario_digest(old)
            assert digest == V3_DIGESTS[new.name], new.name
        else:
            assert digest == references.scenario_digest(old), new.name
        if not added:
            assert new == replace(old), new.name  # every field, words included


def test_standard_v2_is_unchanged_by_standard_v3():
    """standard-v2's definition digests are the ones its archive records (standard-v3's
    rows went into a new version, not into it)."""
    pinned = {row["name"]: row["digest"] for row in PYTHON["standard-v2"]}
    assert {s.name: references.scenario_digest(s) for s in SUITES["standard-v2"]} == pinned
    assert all(not s.agent_feedback for s in SUITES["standard-v2"])
    assert "pbgd" not in {a for s in SUITES["standard-v2"] for a in s.agents}


def test_the_archives_definition_digests_are_the_toml_scenarios():
    """Every shipped archive records its scenarios' digests (standard-v3's is written by
    the lead's rebuild: until then it has none, and bench computes its references)."""
    root = references.root()
    shipped = [s for s in references.ARCHIVED if (root / s / references.INDEX).is_file()]
    assert {"quick-v2", "standard-v2"} <= set(shipped)
    for suite in shipped:
        index = json.loads((references.root() / suite / references.INDEX).read_text())
        scenarios = {scenario.name: scenario for scenario in SUITES[suite]}
        assert index["scenarios"]
        for name, recorded in index["scenarios"].items():
            assert references.scenario_digest(scenarios[name]) == recorded, (suite, name)


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
