"""Sweeps with agents from outside the library: by import path on every backend, a
registered name on the serial one only, and failing user agents that fail only their
own cells (recorded with agent, seed, round and error) while the other cells finish."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from bco_gym.agents import register, unregister
from bco_gym.engine import run
from bco_gym.sweeps import CellFailure, CellFailureWarning, load_failures, sweep
from bco_gym.sweeps.backends import check_agents_for_backend

ENV, SETTINGS = "BCO-Ball-v0", {"n": 3}


def _sweep(out, agents, **kwargs):
    return sweep(ENV, agents, 40, [0, 1, 2], out=out, env_kwargs=SETTINGS, progress=False, **kwargs)


# A user agent by import path on each backend, as run gives it alone: in
# tests/sweeps/test_sweep.py::test_backends_give_bit_identical_results (one grid of
# built-in and user agents per backend: each backend's start-up costs seconds of CPU).


def test_a_class_is_taken_by_its_import_path(tmp_path):
    from user_agents import Jitter

    assert check_agents_for_backend([Jitter, "fkm"], "process") == ["user_agents:Jitter", "fkm"]
    results = _sweep(tmp_path, Jitter)
    assert {r.agent for r in results} == {"jitter"}
    assert {r.agent_spec["identity"] for r in results} == {"user_agents:Jitter"}


def test_a_registered_name_runs_serially_and_is_refused_with_the_way_out_elsewhere(tmp_path):
    from user_agents import Jitter

    register("sweep-jitter", Jitter)
    try:
        results = _sweep(tmp_path / "serial", "sweep-jitter")
        assert {r.agent for r in results} == {"sweep-jitter"}
        for backend in ("process", "ray"):
            with pytest.raises(
                ValueError,
                match=r"registered only in this process.*'user_agents:Jitter'.*entry-point",
            ):
                _sweep(tmp_path / backend, "sweep-jitter", backend=backend)
    finally:
        unregister("sweep-jitter")
    with pytest.raises(ValueError, match="defined in a script or a function"):
        _sweep(tmp_path / "local", lambda problem: Jitter(problem))


EXPECTED = {
    "raise": "RuntimeError: faulty agent gives up in round 5",
    "nan": "InfeasibleActionError: round 5: action not in L2Ball(n=3, radius=1): non-finite",
    "shape": "InfeasibleActionError: round 5: action of shape (4,), expected (3,)",
    "outside": "InfeasibleActionError: round 5: action not in L2Ball(n=3, radius=1): Euclidean",
}


@pytest.mark.parametrize("fault", list(EXPECTED))
def test_a_failing_user_agent_fails_only_its_cells(tmp_path, fault):
    agents = ["user_agents:Faulty", "random"]
    kwargs = {"user_agents:Faulty": {"fault": fault, "at": 5}}
    with pytest.warns(CellFailureWarning, match=r"3 of 6 cells failed"):
        results = _sweep(tmp_path, agents, agent_kwargs=kwargs, failures="record")
    assert [r.agent for r in results] == ["random"] * 3
    failures = load_failures(tmp_path)
    assert len(failures) == 3 and all(isinstance(f, CellFailure) for f in failures)
    assert sorted(f.seed for f in failures) == [0, 1, 2]
    for failure in failures:
        assert (failure.agent, failure.env_id, failure.horizon) == ("user_agents:Faulty", ENV, 40)
        assert failure.round == 5, failure
        assert EXPECTED[fault] in failure.error, failure.error
        assert "in round 5" in failure.describe()
    # the random cells are what run gives
    for result in results:
        assert result.same_outcome(
            run(ENV, "random", horizon=40, seed=result.seed, env_kwargs=SETTINGS)
        )


def test_failures_raise_by_default_and_a_fixed_cell_loses_its_record(tmp_path):
    kwargs = {"user_agents:Faulty": {"fault": "raise", "at": 2}}
    with pytest.raises(RuntimeError, match="faulty agent gives up in round 2"):
        _sweep(tmp_path / "a", "user_agents:Faulty", agent_kwargs=kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CellFailureWarning)
        _sweep(tmp_path / "b", "user_agents:Faulty", agent_kwargs=kwargs, failures="record")
    assert len(load_failures(tmp_path / "b")) == 3
    with pytest.raises(ValueError, match="failures='keep'; allowed: raise, record"):
        _sweep(tmp_path / "c", "random", failures="keep")


def test_a_process_batch_with_one_failing_seed_keeps_the_others(tmp_path):
    """Seed-dependent failure: the batch falls back to cells one by one."""
    kwargs = {"user_agents:Faulty": {"fault": "nan", "at": 39}}
    with pytest.warns(CellFailureWarning):
        results = _sweep(
            tmp_path,
            "user_agents:Faulty",
            agent_kwargs=kwargs,
            failures="record",
            backend="process",
        )
    assert results == [] and [f.round for f in load_failures(tmp_path)] == [39, 39, 39]
    assert np.all([f.agent == "user_agents:Faulty" for f in load_failures(tmp_path)])


@pytest.mark.parametrize("backend", ["serial", "process"])
def test_progress_counts_rounds_as_they_are_played_inside_a_batch(backend):
    from bco_gym.sweeps import cells
    from bco_gym.sweeps.backends import batches, run_on

    grid = cells(ENV, ["fkm", "bbcg"], [9000, 30], 2, env_kwargs=SETTINGS)
    advances: list[int] = []
    delivered: list[int] = []

    def finished(cell, result):
        delivered.append(len(advances))

    run_on(backend, batches(grid, None, 1), finished, advance=advances.append)
    assert sum(advances) == sum(cell.horizon for cell in grid) == 2 * 2 * 9030
    if backend == "serial":  # the lean loop reports every LEAN_BUFFER = 4096 rounds
        assert advances[:3] == [2 * 4096, 2 * 4096, 2 * (9000 - 2 * 4096)]
        assert delivered[0] == 3  # all before the first batch's results arrived
