"""Tuning a failing agent: its failed cells are recorded, the tuned value is chosen among
the values whose cells all finished, and an agent with none raises a typed error."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bco_gym.cli import main
from bco_gym.engine.preparation import agent_seed_for
from bco_gym.experiment import run
from bco_gym.sweeps import CellFailure, TuningFailedError, load_failures
from bco_gym.sweeps.tuning import load_tuned, save_tuned, tune

ENV, KWARGS, HORIZON = "BCO-Ball-v0", {"n": 3}, 40
FRAGILE = "user_agents:Fragile"
GRID = [0.1, 0.2, 0.4, 0.8]  # limit 0.5: 0.8 fails on every seed, 0.4 on the bad seed only
SEEDS = [7, 8]
BAD_SEED = agent_seed_for(8)  # the agent's seed in cell seed 8's run


def _tune(tmp_path, limit=0.5, failures="record"):
    return tune(
        ENV,
        [FRAGILE, "bbcg"],
        HORIZON,
        SEEDS,
        GRID,
        out=tmp_path / "runs",
        env_kwargs=KWARGS,
        progress=False,
        agent_kwargs={FRAGILE: {"limit": limit, "bad_seed": BAD_SEED}},
        failures=failures,
    )


def test_failed_cells_are_recorded_and_their_values_left_out(tmp_path):
    with pytest.warns(UserWarning, match="3 of 16 cells failed"):
        tuning = _tune(tmp_path)
    chosen = tuning.constants[FRAGILE]
    assert chosen.excluded == (0.4, 0.8)
    assert math.isnan(chosen.scores[2]) and math.isnan(chosen.scores[3])
    direct = [
        np.mean(
            [
                run(
                    ENV,
                    FRAGILE,
                    horizon=HORIZON,
                    seed=seed,
                    env_kwargs=KWARGS,
                    agent_kwargs={"spread": value, "limit": 0.5, "bad_seed": BAD_SEED},
                ).final_regret
                for seed in SEEDS
            ]
        )
        for value in GRID[:2]
    ]
    np.testing.assert_allclose(chosen.scores[:2], direct, rtol=1e-12)
    assert chosen.value == GRID[int(np.argmin(direct))] and chosen.mean_regret == min(direct)
    assert tuning.constants["bbcg"].excluded == ()  # the other agent is tuned as usual
    assert all(math.isfinite(score) for score in tuning.constants["bbcg"].scores)
    failed = {(f.cell["agent_kwargs"]["spread"], f.seed) for f in tuning.failures}
    assert failed == {(0.4, 8), (0.8, 7), (0.8, 8)}
    assert all(isinstance(f, CellFailure) and f.round == 2 for f in tuning.failures)
    assert all("RuntimeError: fragile agent breaks" in f.error for f in tuning.failures)
    assert {f.key for f in load_failures(tmp_path / "runs")} == {f.key for f in tuning.failures}
    loaded = load_tuned(save_tuned(tmp_path / "tuned.json", tuning))
    assert loaded.failures == tuning.failures
    assert loaded.constants[FRAGILE].excluded == chosen.excluded
    np.testing.assert_array_equal(loaded.constants[FRAGILE].scores, chosen.scores)  # nan too
    assert loaded.overrides() == tuning.overrides()


def test_an_agent_without_a_working_value_raises_naming_it(tmp_path):
    with pytest.warns(UserWarning, match="8 of 16 cells failed"):
        with pytest.raises(TuningFailedError) as caught:
            _tune(tmp_path, limit=0.01)
    error = caught.value
    assert list(error.failures) == [FRAGILE] and len(error.failures[FRAGILE]) == 8
    assert f"no tuned value for '{FRAGILE}': every grid value has a failed cell" in str(error)
    assert "failed in round 2: RuntimeError: fragile agent breaks" in str(error)
    assert f"recorded in {tmp_path / 'runs'}/failures" in str(error)
    assert list(error.tuning.constants) == [
        "bco_gym.agents.bbcg.agent:BlockBanditCG"
    ]  # the others were still chosen


def test_failures_raise_stops_at_the_first(tmp_path):
    with pytest.raises(RuntimeError, match="fragile agent breaks"):
        _tune(tmp_path, failures="raise")
    with pytest.raises(ValueError, match=r"failures='skip'; allowed: raise, record"):
        _tune(tmp_path, failures="skip")


def _cli(tmp_path, limit):
    tuned = tmp_path / "tuned.json"
    argv = ["tune", "--env", ENV, "--env-kwargs", '{"n": 3}', "--agents", FRAGILE]
    argv += ["--horizon", str(HORIZON), "--tune-seeds", "7:9", "--grid", "0.1:0.8"]
    argv += ["--points", "4", "--out", str(tuned), "--quiet"]
    argv += ["--fixed", f'{{"{FRAGILE}": {{"limit": {limit}, "bad_seed": {BAD_SEED}}}}}']
    return main(argv), tuned


def test_the_cli_writes_the_choice_and_exits_1_naming_the_failed_cells(tmp_path, capsys):
    status, tuned = _cli(tmp_path, 0.5)
    out, err = capsys.readouterr()
    assert status == 1 and tuned.exists()
    assert load_tuned(tuned).constants[FRAGILE].value in (0.1, 0.2)
    assert "fragile: spread = 0.4, 0.8 left out (a cell failed; score -)" in out  # its label
    assert f"error: agent 'fragile' seed 8 ({ENV}, T={HORIZON}) failed in round 2" in err
    assert f"recorded in {tmp_path / 'tuned_runs' / 'failures'}" in err
    assert err.count("error: agent") == 3


def test_the_cli_exits_1_and_writes_nothing_when_no_value_works(tmp_path, capsys):
    status, tuned = _cli(tmp_path, 0.01)
    err = capsys.readouterr().err
    assert status == 1 and not tuned.exists()
    assert f"bco-gym tune: error: tune: no tuned value for '{FRAGILE}'" in err
    assert err.count("error: agent") == 8 and f"wrote nothing to {tuned}" in err
