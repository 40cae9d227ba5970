"""Sweeps computed in batches of seeds: grouping, and outcomes equal to one-by-one runs."""

from __future__ import annotations

import pytest
from experiment_helpers import ENV_ID, ENV_KWARGS

from bco_gym.experiment import cells, load_sweep, sweep
from bco_gym.sweeps.backends import MAX_REQUESTED_BATCH_SIZE, batches, check_batch_size

AGENTS = ["bbcg", "fkm", "ofw", "random"]


def grid(seeds=5, horizons=(40,)):
    return cells(
        ENV_ID,
        ["bbcg", "fkm"],
        list(horizons),
        seeds,
        env_kwargs=ENV_KWARGS,
        agent_kwargs={"fkm": {"c": 0.5}},
    )


def test_batches_hold_cells_that_differ_only_by_seed():
    found = batches(grid(seeds=5, horizons=(40, 60)), batch_size=2)
    assert [len(b) for b in found] == [2, 2, 1] * 4
    for batch in found:
        fields = {(c.agent, c.horizon, repr(c.agent_kwargs), c.constants) for c in batch}
        assert len(fields) == 1
    assert [c.key for b in found for c in b] == [c.key for c in grid(5, (40, 60))]


def test_an_automatic_batch_takes_every_seed_and_workers_split_it():
    assert [len(b) for b in batches(grid(seeds=5), None)] == [5, 5]
    assert [len(b) for b in batches(grid(seeds=5)[:5], None, workers=2)] == [3, 2]
    assert [len(b) for b in batches(grid(seeds=1)[:1], None, workers=4)] == [1]


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "4", MAX_REQUESTED_BATCH_SIZE + 1])
def test_a_bad_batch_size_is_refused(bad):
    with pytest.raises(ValueError, match="batch_size"):
        check_batch_size(bad)


@pytest.mark.parametrize("backend", ["serial", "process"])
def test_batched_sweeps_equal_one_run_per_cell(tmp_path, backend):
    kwargs = {"env_kwargs": {**ENV_KWARGS, "feedback": "full"}, "progress": False}
    one_by_one = sweep(ENV_ID, AGENTS, 50, 3, out=tmp_path / "one", batch_size=1, **kwargs)
    batched = sweep(ENV_ID, AGENTS, 50, 3, out=tmp_path / "many", backend=backend, **kwargs)
    alone = [cell.run() for cell in cells(ENV_ID, AGENTS, 50, 3, env_kwargs=kwargs["env_kwargs"])]
    for a, b, c in zip(one_by_one, batched, alone, strict=True):
        assert a.same_outcome(b) and a.same_outcome(c)
    assert {r.loop for r in batched} == {"batched-block", "batched-lean"}
    assert [r.seed for r in load_sweep(tmp_path / "many")] == [r.seed for r in batched]


def test_pools_get_the_largest_batches_first():
    from bco_gym.sweeps.backends import largest_first

    found = batches(grid(seeds=3, horizons=(40, 1000, 60)), batch_size=2)
    ordered = largest_first(found)
    rounds = [sum(c.horizon for c in b) for b in ordered]
    assert rounds == sorted(rounds, reverse=True) and rounds[0] == 2000
    assert sorted(map(id, ordered)) == sorted(map(id, found))  # the same batches
    # equal sizes keep the grid's order
    assert [b[0].agent for b in ordered[:2]] == ["bbcg", "fkm"]
