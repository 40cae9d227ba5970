"""Tuning: the grid's winner is the argmin of mean regret on the tuning seeds only."""

from __future__ import annotations

import json

import numpy as np
import pytest
from experiment_helpers import ENV_ID, ENV_KWARGS, tiny_run

from bco_gym.sweeps.tuning import check_disjoint, load_tuned, log_grid, save_tuned, tune


def test_log_grid():
    assert log_grid(0.1, 10, 3) == [0.1, 1.0, 10.0]
    with pytest.raises(ValueError, match="0 < low < high"):
        log_grid(5, 1, 3)
    with pytest.raises(ValueError, match="at least 2 points"):
        log_grid(1, 5, 1)


def test_tune_picks_the_argmin_of_mean_regret_and_round_trips(tmp_path):
    grid = [0.1, 1.0, 10.0]
    tuning = tune(
        ENV_ID,
        ["bbcg", "random"],
        100,
        [7, 8],
        grid,
        out=tmp_path / "runs",
        env_kwargs=ENV_KWARGS,
        progress=False,
    )
    assert tuning.skipped == {
        "bco_gym.agents.random.agent:RandomAgent": "no free constant (SCALE_PARAM is None)"
    }
    assert "random" in tuning.skipped  # any spelling finds it
    choice = tuning.constants["bbcg"]
    assert choice.param == "c" and choice.grid == tuple(grid)
    direct = [
        np.mean(
            [tiny_run("bbcg", s, horizon=100, agent_kwargs={"c": v}).final_regret for s in (7, 8)]
        )
        for v in grid
    ]
    np.testing.assert_allclose(choice.scores, direct, rtol=1e-12)
    assert choice.value == grid[int(np.argmin(direct))]
    assert choice.mean_regret == min(choice.scores)
    assert choice.theory_value == pytest.approx(tiny_run("bbcg", horizon=100).params["c"])
    # keyed by identity, found by any spelling
    assert tuning.overrides() == {"bco_gym.agents.bbcg.agent:BlockBanditCG": {"c": choice.value}}
    assert tuning.overrides()["bbcg"] == {"c": choice.value}
    assert tuning.label("bco_gym.agents.bbcg.agent:BlockBanditCG") == "bbcg"
    path = save_tuned(tmp_path / "tuned.json", tuning)
    assert load_tuned(path) == tuning


def test_evaluating_on_tuning_seeds_is_refused(tmp_path):
    tuning = tune(
        ENV_ID,
        ["bbcg"],
        30,
        [3, 4],
        [0.5, 2.0],
        out=tmp_path / "runs",
        env_kwargs=ENV_KWARGS,
        progress=False,
    )
    check_disjoint(tuning, [0, 1, 2])
    with pytest.raises(ValueError, match=r"overlap the evaluation seeds at \[4\]"):
        check_disjoint(tuning, [4, 5])
    (tmp_path / "junk.json").write_text("{}")
    with pytest.raises(ValueError, match="not a tuned-constants file"):
        load_tuned(tmp_path / "junk.json")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"constants": None}, "constants is NoneType, expected dict"),
        ({"constants": {"bbcg": {"param": "c"}}}, "KeyError 'value'"),
        ({"constants": {"bbcg": {"param": "c", "value": "big"}}}, r"'big' \(str\), not a number"),
        ({"constants": {"bbcg": {"param": "c", "value": 0.0}}}, "not a positive number"),
        ({"tune_seeds": [1, -2]}, r"tune_seeds \[1, -2\] are not non-negative"),
        ({"horizon": "100"}, "horizon='100' must be a positive integer"),
        ({"env_kwargs": []}, "env_kwargs is list, expected dict"),
        ({"env_id": 3}, "env_id is int, expected str"),
    ],
)
def test_a_malformed_tuned_file_is_refused_naming_the_field(tmp_path, change, message):
    document = {
        "format": "bco_gym-tuned-constants/1",
        "env_id": ENV_ID,
        "env_kwargs": {},
        "horizon": 100,
        "tune_seeds": [1, 2],
        "constants": {},
        **change,
    }
    path = tmp_path / "tuned.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError, match="malformed tuned-constants file: .*" + message):
        load_tuned(path)
    with pytest.raises(ValueError, match="not a regular file"):
        load_tuned("/dev/zero")
