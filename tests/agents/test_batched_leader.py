"""The worked BatchAgent of docs/your_own_agent.md: the page's code is the tested
class, row i of a batch is the single agent with seed s_i, and the cost-per-round
snippet runs."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np
from batched_leader import BatchedLeader

from bco_gym.experiment import run, run_many

PAGE = Path(__file__).resolve().parents[2] / "docs" / "your_own_agent.md"


def test_the_page_shows_the_tested_class():
    source = inspect.getsource(BatchedLeader).strip()
    page = PAGE.read_text()
    assert source in page
    # the snippet measuring the cost per round names the fields results have
    assert re.search(r"r\.agent_seconds for r in results", page)
    assert re.search(r"r\.cpu_seconds for r in results", page)


def test_row_i_is_the_single_agent_and_the_regrets_match_the_example():
    rows = run_many("BCO-Ball-v0", BatchedLeader, [0, 1, 2], horizon=300)
    alone = [run("BCO-Ball-v0", BatchedLeader, seed=s, horizon=300) for s in (0, 1, 2)]
    assert all(row.same_outcome(one) for row, one in zip(rows, alone, strict=True))
    assert rows[0].loop == "batched-lean" and rows[0].lmo_calls == 299
    import sys

    sys.path.insert(0, str(PAGE.parents[1] / "examples"))
    try:
        from your_own_agent import EstimatedLeader
    finally:
        sys.path.pop(0)
    single = [run("BCO-Ball-v0", EstimatedLeader, seed=s, horizon=300) for s in (0, 1, 2)]
    for row, one in zip(rows, single, strict=True):  # equal up to summation order
        np.testing.assert_allclose(row.regret, one.regret, rtol=1e-9)


def test_the_cost_per_round_is_measured_from_the_results():
    seeds, horizon = [0, 1], 200
    for agent in (BatchedLeader, "fkm"):
        results = run_many("BCO-Ball-v0", agent, seeds, horizon=horizon)
        per_round = sum(r.agent_seconds for r in results) / (len(seeds) * horizon)
        cpu = sum(r.cpu_seconds for r in results) / (len(seeds) * horizon)
        assert 0 < per_round < 1e-2 and 0 < cpu < 1e-2
