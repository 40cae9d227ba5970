"""run_many: S seeds in lockstep, result i ``same_outcome`` as ``run(..., seed=seeds[i])``.

For every built-in agent on the ball and the simplex (small T); a block agent crossing
the round-loss storage limit; the cell helper; bad input. Also the runner's edges of
issue 10: a user-defined set that overstates its inner radius is checked play by play
(the block certificate would accept infeasible plays), and a NaN loss raises
InvalidLossError naming the round (and the row), not the agent.
"""

from __future__ import annotations

from typing import ClassVar

import gymnasium as gym
import numpy as np
import pytest

import bco_gym
from bco_gym import InfeasibleActionError
from bco_gym.engine import tally as tally_module
from bco_gym.engine.many import MAX_AUTOMATIC_BATCH_SIZE, batch_size_for, run_seed_batch
from bco_gym.envs import BanditConvexEnv, BanditConvexVectorEnv
from bco_gym.errors import InvalidLossError
from bco_gym.experiment import run, run_many
from bco_gym.losses import LinearLoss
from bco_gym.sets.base import ConvexSet
from bco_gym.sweeps.sweep import cells

SEEDS = [3, 0, 3, 8]
HORIZON = 120
ENVS = {"BCO-Ball-v0": {"n": 3}, "BCO-Simplex-v0": {"n": 4}}
AGENTS = {
    "bbcg": {},
    "fkm": {},
    "bfw": {},
    "random": {},
    "ofw": {"feedback": "full"},
    "ogd": {"feedback": "full"},
    "fkm2": {"feedback": "two-point"},
    "bbcg2": {"feedback": "two-point"},
    "loo-bbgd": {},
    "pbgd": {},
    "pbgd2": {"feedback": "two-point"},
    "bandit-newton": {"loss": "quadratic"},
}


def assert_rows_equal_runs(env_id, agent, seeds=SEEDS, **kwargs):
    batch = run_many(env_id, agent, seeds, **kwargs)
    assert len(batch) == len(seeds)
    for seed, result in zip(seeds, batch, strict=True):
        single = run(env_id, agent, seed=seed, **kwargs)
        assert result.seed == seed
        assert result.same_outcome(single), (agent, seed)
        assert result.loop.startswith("batched-")
    return batch


@pytest.mark.parametrize("env_id", list(ENVS))
@pytest.mark.parametrize("agent", list(AGENTS))
def test_every_agent_matches_single_runs(env_id, agent):
    env_kwargs = {**ENVS[env_id], **AGENTS[agent]}
    batch = assert_rows_equal_runs(env_id, agent, horizon=HORIZON, env_kwargs=env_kwargs)
    assert batch[0].same_outcome(batch[2])  # the same seed twice: the same run
    assert not batch[0].same_outcome(batch[1])


def test_block_agent_with_streamed_tallies_and_checkpoints(monkeypatch):
    monkeypatch.setattr(tally_module, "ROUND_LOSSES_LIMIT", 50)
    batch = assert_rows_equal_runs(
        "BCO-Ball-v0", "bbcg", [1, 2], horizon=300, env_kwargs={"n": 2}, checkpoints=[7, 100]
    )
    assert batch[0].round_losses is None and batch[0].checkpoints.tolist() == [7, 100, 300]


def test_overrides_and_labels_follow_run():
    batch = assert_rows_equal_runs(
        "BCO-Ball-v0", "fkm", [0, 1], horizon=60, env_kwargs={"n": 2}, agent_kwargs={"c": 0.5}
    )
    assert batch[0].constants == "custom" and batch[0].params["c"] == 0.5
    random = run_many("BCO-Ball-v0", "random", [0], horizon=20, env_kwargs={"n": 2})[0]
    assert random.constants == "default"  # no free constant: not "theory"
    fkm = run_many("BCO-Ball-v0", "fkm", [0], horizon=20, env_kwargs={"n": 2})[0]
    assert fkm.constants == "theory"


def test_fast_false_is_the_gymnasium_loop_with_the_same_outcome():
    kwargs = {"horizon": 40, "env_kwargs": {"n": 2}}
    reference = run_many("BCO-Ball-v0", "bfw", [0, 1], fast=False, **kwargs)
    batched = run_many("BCO-Ball-v0", "bfw", [0, 1], **kwargs)
    assert [r.loop for r in reference] == ["gym", "gym"]
    assert all(a.same_outcome(b) for a, b in zip(reference, batched, strict=True))


def test_a_vector_env_and_a_projecting_env():
    envs = gym.make_vec(
        "BCO-Simplex-v0", num_envs=2, vectorization_mode="vector_entry_point", horizon=30
    )
    batch = run_many(envs, "fkm", [4, 5])
    for seed, result in zip([4, 5], batch, strict=True):
        assert result.same_outcome(run("BCO-Simplex-v0", "fkm", seed=seed, horizon=30))
    assert_rows_equal_runs(
        "BCO-Ball-v0",
        "bbcg",
        [0, 1],
        horizon=50,
        env_kwargs={"n": 2, "on_infeasible": "project"},
    )


def test_seed_batch_of_sweep_cells():
    grid = cells("BCO-Ball-v0", "fkm", 40, [2, 0, 1], env_kwargs={"n": 2})
    results = run_seed_batch(grid)
    assert all(r.same_outcome(c.run()) for r, c in zip(results, grid, strict=True))
    mixed = cells("BCO-Ball-v0", ["fkm", "bbcg"], 40, [0], env_kwargs={"n": 2})
    with pytest.raises(ValueError, match="cell 1 differs from cell 0 in agent"):
        run_seed_batch(mixed)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: run_many("BCO-Ball-v0", "fkm", []), "non-empty sequence"),
        (lambda: run_many("BCO-Ball-v0", "fkm", 3), "non-empty sequence"),
        (lambda: run_many("BCO-Ball-v0", "fkm", [0, -1]), "seed=-1"),
        (lambda: run_many("CartPole-v1", "fkm", [0]), "unknown env id|BanditConvex"),
        (lambda: run_many(gym.make("CartPole-v1"), "fkm", [0]), "TimeLimit, whose step must run"),
        (lambda: run_many("BCO-Ball-v0", "nope", [0]), "unknown agent"),
        (lambda: run_many("BCO-Ball-v0", "fkm", [0], constants="lucky"), "constants='lucky'"),
    ],
)
def test_bad_input_is_refused(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


# -- issue 10: a set that overstates its inner radius -----------------------------------------
class Ellipsoid(ConvexSet):
    """{x : sum_i (x_i / a_i)^2 <= 1}: true inner radius min a_i, but ``claimed`` is reported."""

    def __init__(self, axes, claimed):
        self.axes = np.asarray(axes, dtype=float)
        self.shape = (len(self.axes),)
        self.claimed = claimed

    @property
    def center(self):
        return np.zeros(self.shape)

    @property
    def inner_radius(self):
        return self.claimed

    @property
    def outer_radius(self):
        return float(self.axes.max())

    def lmo(self, direction):
        weighted = self.axes**2 * np.asarray(direction, dtype=float)
        norm = float(np.sqrt(np.dot(weighted, direction)))
        return np.zeros(self.shape) if norm == 0 else -weighted / norm

    def contains(self, x, atol=1e-9):
        return float(np.sum((np.asarray(x) / self.axes) ** 2)) <= 1 + atol

    def __repr__(self):
        return f"Ellipsoid({self.axes.tolist()})"


def test_overstated_inner_radius_is_checked_play_by_play():
    """True r = 0.5, claimed 0.9: BBCG's plays leave K; every loop refuses the same play."""
    ellipsoid = Ellipsoid([1.0, 0.5], claimed=0.9)
    env = BanditConvexEnv(ellipsoid, "linear", 2000)
    with pytest.raises(InfeasibleActionError) as reference:
        run(env, "bbcg", seed=0, fast=False)
    with pytest.raises(InfeasibleActionError) as fast:
        run(env, "bbcg", seed=0)
    assert str(fast.value) == str(reference.value)
    assert str(reference.value).startswith("round 667: action not in Ellipsoid")
    assert "not in Ellipsoid" in str(reference.value)
    truthful = BanditConvexEnv(Ellipsoid([1.0, 0.5], claimed=0.5), "linear", 2000)
    assert run(truthful, "bbcg", seed=0).same_outcome(run(truthful, "bbcg", seed=0, fast=False))


# -- issue 10: a NaN loss names the round (and the row) ----------------------------------------
class NaNAfter(LinearLoss):
    """Linear losses, NaN from round ``nan_round`` on."""

    name = "nan-after"
    batch_evaluable: ClassVar[bool] = True
    nan_round = 37

    def _draw_chunk(self, rng, first, size):
        params = super()._draw_chunk(rng, first, size)
        rounds = np.arange(first, first + size)
        params["offset"] = np.where(rounds >= self.nan_round, np.nan, params["offset"])
        return params


@pytest.mark.parametrize("agent", ["fkm", "bbcg"])
def test_nan_loss_names_the_round_not_the_agent(agent):
    ball = bco_gym.sets.L2Ball(2)
    env = BanditConvexEnv(ball, NaNAfter(ball), 100)
    with pytest.raises(
        InvalidLossError, match=r"NaNAfter \('nan-after'\), round 37: the loss is nan"
    ):
        run(env, agent, seed=0)
    with pytest.raises(InvalidLossError) as fast:
        run(env, agent, seed=0)
    with pytest.raises(InvalidLossError) as reference:
        run(env, agent, seed=0, fast=False)
    assert str(fast.value) == str(reference.value)  # env.step's message
    envs = BanditConvexVectorEnv.from_env(BanditConvexEnv(ball, NaNAfter(ball), 100), 3)
    with pytest.raises(
        InvalidLossError,
        match=r"NaNAfter \(.nan-after.\), round 37, seed 0 \(row 0\): the loss is nan",
    ):
        run_many(envs, agent, [0, 1, 2])


def test_batch_size_for_shrinks_with_the_dimension():
    small = batch_size_for("BCO-Ball-v0", {"n": 10})
    large = batch_size_for("BCO-Ball-v0", {"n": 100_000})
    assert small == MAX_AUTOMATIC_BATCH_SIZE and 1 <= large < small
    assert batch_size_for("BCO-Ball-v0", {"n": 10}, budget_bytes=1) == 1
