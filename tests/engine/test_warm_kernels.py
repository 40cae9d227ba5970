"""A batch's kernels are loaded before it is timed, once per process, deciding as it will."""

from __future__ import annotations

import pytest

from bco_gym.agents.kernels import agent_kernel_wanted, numba_available, planned_run_rounds
from bco_gym.engine import many
from bco_gym.sweeps import backends
from bco_gym.sweeps.backends import run_batch
from bco_gym.sweeps.sweep import Cell

BALL = {"n": 5}


def cells(horizon: int, seeds: int, agent: str = "fkm") -> list[Cell]:
    return [
        Cell(env_id="BCO-Ball-v0", agent=agent, horizon=horizon, seed=seed, env_kwargs=BALL)
        for seed in range(seeds)
    ]


def test_a_planned_run_decides_every_switch_as_its_own_size(monkeypatch):
    monkeypatch.setenv("BCO_GYM_KERNELS", "auto")
    with planned_run_rounds(10**6):
        assert agent_kernel_wanted(10) == numba_available()
    assert not agent_kernel_wanted(10)
    with planned_run_rounds(10):
        assert not agent_kernel_wanted(10**6)


def test_nothing_is_warmed_where_no_kernel_will_play(monkeypatch):
    monkeypatch.setattr(many, "_WARMED", set())
    monkeypatch.setenv("BCO_GYM_KERNELS", "auto")
    assert many.warm_kernels(cells(200, 2)) == 0.0  # T * S below the kernels' threshold
    monkeypatch.setenv("BCO_GYM_KERNELS", "off")
    assert many.warm_kernels(cells(10**5, 2)) == 0.0
    assert not many._WARMED


@pytest.mark.skipif(not numba_available(), reason="numba (the fast extra) is not installed")
@pytest.mark.parametrize("agent", ["fkm", "bbcg"])
def test_a_batch_is_warmed_once_and_its_results_do_not_move(monkeypatch, agent):
    """The warm-up is an untimed short run of the batch's first cell that plays its kernel
    (the planned size decides, not the short run's); once per process and kind of batch;
    the batch's results equal, to the last bit, those computed before anything was warmed
    (so nothing the warm-up leaves behind reaches the timed run)."""
    monkeypatch.setenv("BCO_GYM_KERNELS", "on")  # the kernels play at any size
    monkeypatch.setattr(many, "_WARMED", set())
    batch = cells(800, 2, agent)
    real_warm = backends.warm_kernels
    monkeypatch.setattr(backends, "warm_kernels", lambda cells_: 0.0)
    cold = run_batch(batch)
    monkeypatch.setattr(backends, "warm_kernels", real_warm)
    played = []
    real = many.run_many
    monkeypatch.setattr(
        many, "run_many", lambda *a, **k: played.append(k["horizon"]) or real(*a, **k)
    )
    assert many.warm_kernels(batch) > 0.0
    assert played == [min(800, many.WARM_HORIZON)]
    assert many.warm_kernels(batch) == 0.0 and len(played) == 1  # once per process
    warmed = run_batch(batch)
    assert played == [many.WARM_HORIZON, 800]  # run_batch's own warm-up found it done
    for one, other in zip(warmed, cold, strict=True):
        assert one.same_outcome(other)  # losses, regrets, counters: bit for bit
