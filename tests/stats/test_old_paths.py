"""The statistics moved from ``bco_gym.reports`` to ``bco_gym.stats``; the old import
paths still give the same objects."""

from __future__ import annotations

import importlib

import pytest

MOVED = ("paired", "ranking", "slopes", "frontier", "scores")


@pytest.mark.parametrize("name", MOVED)
def test_the_old_module_gives_every_public_name_of_the_new(name):
    new = importlib.import_module(f"bco_gym.stats.{name}")
    old = importlib.import_module(f"bco_gym.reports.{name}")
    assert new.__all__, name
    assert set(old.__all__) == set(new.__all__)
    for attribute in new.__all__:
        assert getattr(old, attribute) is getattr(new, attribute), attribute


def test_the_summarys_old_names_are_the_statistics():
    from bco_gym.reports import summary
    from bco_gym.stats import exponents, groups

    for attribute in exponents.__all__:
        assert getattr(summary, attribute) is getattr(exponents, attribute)
    assert summary.comparator_text is groups.comparator_text
    assert summary.UNCERTIFIED_NOTE is groups.UNCERTIFIED_NOTE
