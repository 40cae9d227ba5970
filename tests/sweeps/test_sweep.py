"""Sweeps: the grid, resuming after a crash, refusing a different sweep, backends agree."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import time

import pytest
from experiment_helpers import ENV_ID, ENV_KWARGS

from bco_gym.experiment import (
    Cell,
    CorruptResultError,
    SweepLockedError,
    SweepMismatchError,
    cells,
    load_sweep,
    run,
    sweep,
)
from bco_gym.sweeps.store import SweepStore
from bco_gym.sweeps.sweep import CorruptCellWarning

sweep_module = importlib.import_module("bco_gym.sweeps.sweep")  # the name is the function
backends_module = importlib.import_module("bco_gym.sweeps.backends")

GRID = {"envs": ENV_ID, "agents": ["bbcg", "random"], "horizons": 60, "seeds": 2}


def small_sweep(out, **kwargs):
    return sweep(**GRID, out=out, env_kwargs=ENV_KWARGS, progress=False, **kwargs)


def test_the_grid_nests_envs_agents_horizons_seeds():
    grid = cells(ENV_ID, ["bbcg", "fkm"], [10, 20], [3, 1], agent_kwargs={"fkm": {"c": 0.5}})
    assert [(c.agent, c.horizon, c.seed) for c in grid] == [
        ("bbcg", 10, 3),
        ("bbcg", 10, 1),
        ("bbcg", 20, 3),
        ("bbcg", 20, 1),
        ("fkm", 10, 3),
        ("fkm", 10, 1),
        ("fkm", 20, 3),
        ("fkm", 20, 1),
    ]
    assert {c.constants for c in grid if c.agent == "fkm"} == {"custom"}
    assert {c.constants for c in grid if c.agent == "bbcg"} == {"theory"}
    assert [c.seed for c in cells(ENV_ID, "bbcg", 10, 3)] == [0, 1, 2]
    assert len({c.key for c in grid}) == len(grid)


def test_cell_keys_are_stable_and_depend_on_every_field():
    cell = Cell(ENV_ID, "bbcg", 100, 0)
    assert cell.key == Cell.from_dict(cell.to_dict()).key
    assert cell.key.startswith("BCO-Ball-v0_bbcg_T100_s0_")
    assert cell.key != Cell(ENV_ID, "bbcg", 100, 0, agent_kwargs={"c": 1.0}).key
    assert cell.key != Cell(ENV_ID, "bbcg", 100, 0, env_kwargs={"n": 4}).key


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"seeds": 0}, "seeds=0 must be a positive count"),
        ({"seeds": [1, 1]}, "contain duplicates"),
        ({"seeds": [-2]}, "seed -2 must be a non-negative integer"),
        ({"horizons": [0]}, "horizon=0 must be a positive integer"),
        ({"agents": []}, "at least one value"),
        ({"agent_kwargs": {"ogd": {"c": 1}}}, r"names agents \['ogd'\] that are not in"),
    ],
)
def test_bad_grids_are_refused(kwargs, message):
    arguments = {**GRID, **kwargs}
    with pytest.raises(ValueError, match=message):
        cells(arguments.pop("envs"), arguments.pop("agents"), **arguments)


def test_unknown_backend_is_refused(tmp_path):
    with pytest.raises(ValueError, match="backend='gpu'; allowed: serial, process, ray"):
        small_sweep(tmp_path, backend="gpu")


def test_resume_recomputes_only_unfinished_cells(tmp_path, monkeypatch):
    first = small_sweep(tmp_path)
    assert len(first) == 4
    cell_files = sorted((tmp_path / "cells").glob("*.json"))
    assert len(cell_files) == 4
    # Simulated crash: one cell left as an NPZ without its JSON, one with a truncated JSON,
    # and a temp file of an interrupted write.
    cell_files[0].unlink()
    cell_files[1].write_text(cell_files[1].read_text()[:40])
    (tmp_path / "cells" / "x.npz.99.tmp").write_bytes(b"\x00" * 10)
    untouched = {path: path.stat().st_mtime_ns for path in cell_files[2:]}

    computed = []
    original = backends_module.run_batch

    def counting_run_batch(batch, *options):
        computed.extend(cell.key for cell in batch)
        return original(batch, *options)

    monkeypatch.setattr(backends_module, "run_batch", counting_run_batch)
    second = small_sweep(tmp_path)
    assert sorted(computed) == sorted(path.stem for path in cell_files[:2])
    assert {path: path.stat().st_mtime_ns for path in cell_files[2:]} == untouched
    assert not list((tmp_path / "cells").glob("*.tmp"))
    assert all(a.same_outcome(b) for a, b in zip(first, second, strict=True))
    computed.clear()
    third = small_sweep(tmp_path)
    assert computed == []
    assert third == second == load_sweep(tmp_path)


def test_a_sweep_grows_by_seeds_and_agents_computing_only_new_cells(tmp_path, monkeypatch):
    first = small_sweep(tmp_path)
    stamps = {path: path.stat().st_mtime_ns for path in (tmp_path / "cells").glob("*.json")}
    computed = []
    original = backends_module.run_batch

    def counting_run_batch(batch, *options):
        computed.extend((cell.agent, cell.seed) for cell in batch)
        return original(batch, *options)

    monkeypatch.setattr(backends_module, "run_batch", counting_run_batch)
    grown = sweep(
        ENV_ID,
        ["bbcg", "random", "fkm"],
        60,
        3,
        out=tmp_path,
        env_kwargs=ENV_KWARGS,
        progress=False,
    )
    assert sorted(computed) == [("bbcg", 2), ("fkm", 0), ("fkm", 1), ("fkm", 2), ("random", 2)]
    assert {path: path.stat().st_mtime_ns for path in stamps} == stamps
    assert len(grown) == 9 and len(load_sweep(tmp_path)) == 9
    assert grown[0] == first[0]
    computed.clear()
    assert small_sweep(tmp_path) == first  # a subset: nothing computed, nothing rewritten
    assert computed == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"horizons": 80}, r"horizon: stored 60, requested 80"),
        ({"env_kwargs": {"n": 4}}, r'env_kwargs: stored \{"n": 3\}, requested \{"n": 4\}'),
        (
            {"constants": {"bbcg": "tuned"}},
            r'constants of bbcg: stored "theory", requested "tuned"',
        ),
    ],
)
def test_a_different_sweep_is_refused_naming_what_differs(tmp_path, change, message):
    small_sweep(tmp_path)
    arguments = {**GRID, "env_kwargs": ENV_KWARGS, "seeds": 3, **change}
    with pytest.raises(SweepMismatchError, match="holds a different sweep: " + message):
        sweep(**arguments, out=tmp_path, progress=False)


def test_a_tampered_cell_is_recomputed_with_a_warning_naming_it(tmp_path):
    first = small_sweep(tmp_path)
    victim = sorted((tmp_path / "cells").glob("*.json"))[1]
    document = json.loads(victim.read_text())
    document["result"]["final_regret"] = -1.0
    victim.write_text(json.dumps(document))
    with pytest.raises(CorruptResultError, match=victim.stem):
        load_sweep(tmp_path)
    with pytest.warns(CorruptCellWarning, match=f"recomputing cell {victim.stem}: .*digest"):
        again = small_sweep(tmp_path)
    assert all(a.same_outcome(b) for a, b in zip(first, again, strict=True))
    assert load_sweep(tmp_path) == again


def test_a_second_writer_is_refused_naming_the_holder(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from bco_gym.sweeps.store import DirectoryLock\n"
            f"with DirectoryLock({str(tmp_path)!r}):\n"
            "    print('held', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(SweepLockedError, match=f"in use by pid {holder.pid} on "):
            small_sweep(tmp_path)
        assert not (tmp_path / "manifest.json").exists()
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert len(small_sweep(tmp_path)) == 4  # the kernel released the lock


# The NumPy loop (BCO_GYM_KERNELS=off): a worker compiling numba kernels holds the GIL in
# LLVM for seconds, and its parent-watch thread would only act once that is done.
KILLED_SWEEP = """
import os, sys
os.environ["BCO_GYM_KERNELS"] = "off"
from bco_gym.experiment import sweep
if __name__ == "__main__":
    sweep("BCO-Ball-v0", "fkm", 10**7, 2, out=sys.argv[1], env_kwargs={"n": 3},
          backend="process", progress=False)
"""


def test_kill_9_of_the_sweeping_process_leaves_no_workers(tmp_path):
    psutil = pytest.importorskip("psutil")
    script = tmp_path / "killed_sweep.py"
    script.write_text(KILLED_SWEEP)
    parent = subprocess.Popen([sys.executable, str(script), str(tmp_path / "out")])
    try:
        process = psutil.Process(parent.pid)
        deadline = time.monotonic() + 60
        workers = []
        while time.monotonic() < deadline and len(workers) < 2:
            workers = [
                p
                for p in process.children(recursive=True)
                if "resource_tracker" not in " ".join(p.cmdline())
            ]
            time.sleep(0.2)
        assert len(workers) >= 2, "the pool's workers never started"
        everyone = process.children(recursive=True)
    finally:
        parent.kill()
        parent.wait(timeout=30)
    gone, alive = psutil.wait_procs(everyone, timeout=20)
    # A worker that exited but is not yet reaped by init (the orphans' new parent, not
    # ours to hurry: it took over 20 s at load 13) is a zombie: it ended, it runs nothing.
    ended = [p for p in alive if _zombie(p, psutil)]
    alive = [p for p in alive if p not in ended]
    assert alive == [], f"left behind: {[p.pid for p in alive]}"
    assert len(gone) + len(ended) == len(everyone)


def _zombie(process, psutil):
    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.fixture
def shutdown_ray():
    yield
    import ray

    if ray.is_initialized():
        ray.shutdown()


def test_backends_give_bit_identical_results(tmp_path, shutdown_ray):
    """Serial, process and Ray (a local instance the sweep starts and stops) give the same
    outcomes, for built-in agents and for a user's agent by import path, each as ``run``
    gives it alone. Workers get the path (tests/support is on sys.path only through
    conftest: the spawned pool and the local Ray instance import it from the driver's
    sys.path). One grid for both checks: a local Ray instance costs about 10 CPU-s to
    start and a pool of spawned workers about 4, the cells milliseconds."""
    grid = {**GRID, "agents": [*GRID["agents"], "user_agents:Jitter"]}
    found = {}
    for backend in ("serial", "process", "ray"):
        found[backend] = sweep(
            **grid, out=tmp_path / backend, env_kwargs=ENV_KWARGS, progress=False, backend=backend
        )
    import ray

    assert not ray.is_initialized()  # the local instance it started was shut down
    serial, process, on_ray = found["serial"], found["process"], found["ray"]
    for a, b, c in zip(serial, process, on_ray, strict=True):
        assert a.same_outcome(b) and a.same_outcome(c)
    assert load_sweep(tmp_path / "ray") == on_ray
    for backend, results in found.items():
        # the user's agent labelled by its class's own name, identified by its import path
        assert [r.agent for r in results] == [
            "bbcg",
            "bbcg",
            "random",
            "random",
            "jitter",
            "jitter",
        ]
        for result in results[4:]:
            alone = run(
                ENV_ID, "user_agents:Jitter", horizon=60, seed=result.seed, env_kwargs=ENV_KWARGS
            )
            assert result.same_outcome(alone), backend
            assert result.agent_spec["import_path"] == "user_agents:Jitter"
        assert [r.agent for r in load_sweep(tmp_path / backend)] == [r.agent for r in results]


def test_a_sweep_that_never_finished_a_cell_blocks_nothing(tmp_path):
    SweepStore(tmp_path).open({"cells": [Cell(ENV_ID, "bbcg", 60, 0, ENV_KWARGS).to_dict()]})
    results = sweep(ENV_ID, "random", 80, 1, out=tmp_path, env_kwargs=ENV_KWARGS, progress=False)
    assert [(r.agent, r.horizon) for r in load_sweep(tmp_path)] == [("random", 80)]
    assert results[0].same_outcome(load_sweep(tmp_path)[0])
