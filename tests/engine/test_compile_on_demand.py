"""A run compiles only what it needs: in "auto" the auxiliary kernels (the same bits as
NumPy) run once cached or for very large runs, and a process about to compile says so
once. Nothing is compiled here: the cache's answers are stood in for."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from bco_gym.agents import BanditFrankWolfe, FlaxmanAgent, OnlineGradientDescent
from bco_gym.agents.kernels import read_only
from bco_gym.engine import compiled
from bco_gym.engine.runner import single_stage

pytest.importorskip("numba")  # the `fast` extra; without it no kernel is ever wanted


def stage_of(horizon: int):  # type: ignore[no-untyped-def]
    env = gym.make("BCO-Ball-v0", horizon=horizon)
    env.reset(seed=0)
    return single_stage(env.unwrapped)


def test_auto_runs_the_auxiliary_kernels_once_cached_or_for_very_large_runs(monkeypatch):
    monkeypatch.setenv(compiled.SWITCH, "auto")
    small, large = stage_of(compiled.MIN_RUN_ROUNDS - 1), stage_of(compiled.MIN_RUN_ROUNDS)
    huge = stage_of(compiled.AUXILIARY_MIN_RUN_ROUNDS)
    monkeypatch.setattr(compiled, "auxiliary_cached", lambda: False)
    assert [compiled.auxiliary_wanted(s) for s in (small, large, huge)] == [False, False, True]
    assert compiled.tally_kernels(large) == {"rounds": None, "exact_add": None, "column_sums": None}
    monkeypatch.setattr(compiled, "auxiliary_cached", lambda: True)
    assert [compiled.auxiliary_wanted(s) for s in (small, large, huge)] == [False, True, True]
    assert compiled.tracker_rounds(large) is not None
    monkeypatch.setenv(compiled.SWITCH, "on")
    monkeypatch.setattr(compiled, "auxiliary_cached", lambda: False)
    assert compiled.auxiliary_wanted(stage_of(10))
    monkeypatch.setenv(compiled.SWITCH, "off")
    assert not compiled.auxiliary_wanted(huge)


def test_a_process_says_once_that_it_compiles_and_how_long_it_takes(monkeypatch, capsys):
    monkeypatch.setenv(compiled.SWITCH, "auto")
    monkeypatch.setattr(compiled, "_ANNOUNCED", set())
    monkeypatch.setattr(compiled, "auxiliary_cached", lambda: False)
    monkeypatch.setattr(compiled, "is_cached", lambda dispatcher: False)
    stage = stage_of(compiled.MIN_RUN_ROUNDS)
    compiled.announce_compile(FlaxmanAgent.KERNEL, stage)
    compiled.announce_compile(FlaxmanAgent.KERNEL, stage)
    seconds = FlaxmanAgent.KERNEL.compile_seconds
    expected = f"compiling kernels for fkm, once per machine: ~{seconds} s\n"
    assert capsys.readouterr().err == expected
    # with the auxiliary kernels wanted and not cached, their compile is counted too
    compiled.announce_compile(
        OnlineGradientDescent.KERNEL, stage_of(compiled.AUXILIARY_MIN_RUN_ROUNDS)
    )
    total = OnlineGradientDescent.KERNEL.compile_seconds + compiled.AUXILIARY_COMPILE_SECONDS
    assert capsys.readouterr().err == f"compiling kernels for ogd, once per machine: ~{total} s\n"
    monkeypatch.setattr(compiled, "is_cached", lambda dispatcher: True)
    monkeypatch.setattr(compiled, "auxiliary_cached", lambda: True)
    compiled.announce_compile(BanditFrankWolfe.KERNEL, stage)  # all cached: nothing to say
    assert capsys.readouterr().err == ""


def test_kernels_get_read_only_arrays_whatever_they_were_given():
    writable = np.arange(6.0).reshape(2, 3)
    view = read_only(writable)
    assert not view.flags.writeable and writable.flags.writeable
    assert np.shares_memory(view, writable) and np.array_equal(view, writable)
    assert read_only(view) is view
