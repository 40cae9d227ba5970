"""RunResult.cpu_seconds: process CPU time of the loop, shared in a batch, not an outcome."""

from __future__ import annotations

import dataclasses
import itertools
import time

import pytest

from bco_gym.engine.many import run_many
from bco_gym.engine.runner import run
from bco_gym.sweeps.results import load_result, result_from_record, result_record, save_result


@pytest.fixture
def cpu_clock(monkeypatch):
    """A process clock that advances 3.5 s per read, so the loop spans exactly 3.5 s."""
    readings = itertools.count(start=10.0, step=3.5)
    monkeypatch.setattr(time, "process_time", lambda: next(readings))


@pytest.mark.parametrize(("agent", "fast"), [("bbcg", None), ("fkm", None), ("fkm", False)])
def test_a_run_takes_the_process_clock_around_its_loop(cpu_clock, agent, fast):
    result = run("BCO-Ball-v0", agent, horizon=60, env_kwargs={"n": 3}, fast=fast)
    assert result.cpu_seconds == 3.5


@pytest.mark.parametrize("agent", ["bbcg", "random"])
def test_a_batch_shares_its_cpu_seconds_among_its_rows(cpu_clock, agent):
    results = run_many("BCO-Ball-v0", agent, [0, 1, 2, 3], horizon=40, env_kwargs={"n": 3})
    assert [r.cpu_seconds for r in results] == [3.5 / 4] * 4


def test_cpu_seconds_are_measured_for_real_and_are_a_timing_not_an_outcome():
    first = run("BCO-Ball-v0", "fkm", horizon=50, env_kwargs={"n": 2})
    again = run("BCO-Ball-v0", "fkm", horizon=50, env_kwargs={"n": 2})
    assert isinstance(first.cpu_seconds, float) and first.cpu_seconds >= 0.0
    assert "cpu_seconds" not in first.outcome()
    assert first.same_outcome(dataclasses.replace(again, cpu_seconds=123.0))


def test_cpu_seconds_survive_saving_and_read_back_none_from_older_files(tmp_path):
    result = dataclasses.replace(
        run("BCO-Ball-v0", "bbcg", horizon=30, env_kwargs={"n": 2}), cpu_seconds=0.25
    )
    assert load_result(save_result(tmp_path / "r.json", result)).cpu_seconds == 0.25
    metadata, arrays = result_record(result)
    del metadata["cpu_seconds"]  # a result saved before the field existed
    assert result_from_record(metadata, arrays).cpu_seconds is None
