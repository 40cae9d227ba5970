"""The shipped reference cells: read by bench, bit-identical when recomputed, versioned."""

from __future__ import annotations

import json
import random
import shutil
import warnings
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse.linalg

from bco_gym import portable
from bco_gym.agents.moved import current_import_path
from bco_gym.reports import bench, references
from bco_gym.reports.suites import SUITES, Scenario
from bco_gym.stats.ranking import rank
from bco_gym.sweeps.sweep import Cell, StaleCellWarning

COMPARED = ("checkpoints", "cumulative_loss", "comparator_loss", "comparator_gap", "regret")
#: Cells cheap enough to recompute in a test: CPU seconds of the archived run (its batch's
#: CPU time shared by its rows; its wall time depends on how loaded the machine that built
#: the archive was), and no data set or LP comparator to load.
CHEAP_SECONDS = 0.05
SHIPPED = references.root()


def archived_cells(suite):
    for scenario in SUITES[suite]:
        found = references.load_scenario(suite, scenario.name, check_version=False)
        for relative, (_, cells) in (found or {}).items():
            for cell, result in cells:
                yield scenario, relative, cell, result


def test_each_archive_is_small_and_matches_its_digests():
    total = 0
    for suite in references.ARCHIVED:
        index = references.read_index(suite)
        if index is None:
            continue
        assert index["suite"] == suite and index["library_version"]
        for name in index["files"]:
            total += (references.root() / suite / name).stat().st_size
        every = {f"{s.name}.json.gz" for s in SUITES[suite]}
        assert set(index["files"]) <= every  # no file of a scenario the suite lost
        assert set(index["files"]) == every or not index.get("complete", False)
        for scenario in SUITES[suite]:  # each file matches its digest (else this raises)
            references.load_scenario(suite, scenario.name, check_version=False)
    assert references.read_index("quick-v2")["complete"]
    assert 0 < total < 20e6


def _largest(values: object) -> float:
    return float(np.max(np.abs(np.asarray(values, dtype=float))))


def _numeric(value: object) -> bool:
    """A number, or a list of numbers: compared within the tolerance; anything else exactly."""
    if isinstance(value, list | tuple):
        return bool(value) and all(_numeric(entry) for entry in value)
    return isinstance(value, int | float) and not isinstance(value, bool)


def test_archived_cells_recompute_bit_for_bit(monkeypatch):
    """Three archived cells drawn at random each run (among the cheap ones) are computed
    again and must agree to the last bit: regrets, curves, loss digest, parameters.

    To the last bit on a machine of the archive's signature (``machine`` in INDEX.json):
    the same C library's functions, and for a cell that called LAPACK (the nuclear-norm
    ball, saha-tewari, the portfolio's comparator) or played on the flow polytope (whose
    tangent and projection solve with SuperLU's factors, through BLAS) the same BLAS
    kernels too; elsewhere within portable.RELATIVE_TOLERANCE (docs/performance.md,
    "Results that travel")."""
    pool = [
        (suite, cell, result)
        for suite in references.ARCHIVED
        for _, _, cell, result in archived_cells(suite)
        if result.cpu_seconds <= CHEAP_SECONDS and "Portfolio" not in cell["env_id"]
    ]
    assert len(pool) >= 20
    here = portable.machine_signature()
    for suite, cell, archived in random.Random().sample(pool, 3):
        calls = watch_lapack(monkeypatch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fresh = Cell.from_dict(cell).run()
        where = f"{cell['env_id']} {cell['agent']} {cell['constants']} seed {cell['seed']}"
        machine = references.read_index(suite)["machine"]
        through_blas = calls or cell["env_id"] in SPARSE_LU_ENVS
        parts = ("libm", "lapack") if through_blas else ("libm",)
        if all(here[part] == machine[part] for part in parts):
            assert fresh.final_regret == archived.final_regret, where
            for name in COMPARED:
                assert np.array_equal(getattr(fresh, name), getattr(archived, name)), (where, name)
            assert fresh.params == archived.params, where
        else:
            assert portable.close(fresh.final_regret, archived.final_regret), where
            for name in COMPARED:
                if name == "comparator_gap":  # a certificate in the loss's units, near 0
                    scale = portable.RELATIVE_TOLERANCE * max(
                        1.0, _largest(archived.comparator_loss)
                    )
                    assert np.allclose(fresh.comparator_gap, archived.comparator_gap, 0, scale), (
                        where
                    )
                    continue
                assert portable.close(getattr(fresh, name), getattr(archived, name)), (where, name)
            assert fresh.params.keys() == archived.params.keys(), where
            for key, value in fresh.params.items():
                if _numeric(value) and _numeric(archived.params[key]):
                    assert portable.close(value, archived.params[key]), (where, key)
                else:  # a mode or a flag (a string, None): equal
                    assert value == archived.params[key], (where, key)
        assert fresh.loss["digest"] == archived.loss["digest"], where
        # an archive written before the agents' folders names their old paths (moved.py)
        recorded = current_import_path(archived.agent_spec["import_path"])
        assert fresh.agent_spec["import_path"] == recorded, where


#: Envs whose set solves with SuperLU's sparse factors every round (BLAS inside).
SPARSE_LU_ENVS = ("BCO-ShortestPath-v0",)
#: NumPy's LAPACK entry points the library calls (and the nuclear ball's ARPACK ``svds``,
#: which it imports from scipy.sparse.linalg when it calls it: watched there).
LAPACK = ("svd", "eigh", "eigvalsh", "qr", "lstsq", "solve")


def watch_lapack(monkeypatch):
    """A list that grows by one name per LAPACK call made from now on."""
    calls = []

    def counting(function, name):
        def counted(*args, **kwargs):
            calls.append(name)
            return function(*args, **kwargs)

        return counted

    for name in LAPACK:
        monkeypatch.setattr(np.linalg, name, counting(getattr(np.linalg, name), name))
    monkeypatch.setattr(scipy.sparse.linalg, "svds", counting(scipy.sparse.linalg.svds, "svds"))
    return calls


def doctored(tmp_path, monkeypatch, **changes):
    copy = tmp_path / "references"
    shutil.copytree(SHIPPED / "quick-v2", copy / "quick-v2")
    path = copy / "quick-v2" / references.INDEX
    index = json.loads(path.read_text())
    index.update(changes)
    path.write_text(json.dumps(index))
    monkeypatch.setattr(references, "root", lambda: copy)
    return copy


def scenario_of(suite, name, seeds=2):
    (found,) = [s for s in SUITES[suite] if s.name == name]
    return replace(found, seeds=tuple(range(seeds)))


def test_an_archive_of_another_format_is_refused_and_recomputed(tmp_path, monkeypatch):
    doctored(tmp_path, monkeypatch, format=references.FORMAT - 1)
    with pytest.raises(references.ArchiveVersionError, match=r"stale: .*archive format 1"):
        references.load_scenario("quick-v2", "ball-iid")
    scenario = scenario_of("quick-v2", "ball-iid")
    out = tmp_path / "b"
    with pytest.warns(references.ReferenceArchiveWarning, match="recomputed"):
        assert bench._use_archive("quick-v2", scenario, out, None) == 0
    assert not out.exists()  # nothing of the other version's is mixed in
    step = (scenario, ("bbcg", "random"), {})
    monkeypatch.setattr(bench, "plan", lambda *a, **k: [step])  # the report is not the point
    monkeypatch.setattr(bench, "write_bench_report", lambda path, *a, **k: path)
    with pytest.warns(references.ReferenceArchiveWarning):
        outcome = bench.run_bench(["bbcg"], out, suite="quick-v2", progress=False)
    shipped = dict(references.load_scenario("quick-v2", "ball-iid", check_version=False))
    archived = {(c["agent"], c["seed"]): r for c, r in shipped["runs/ball-iid"][1]}
    for result in outcome.runs[0].results:  # computed here: the same regrets, other timings
        assert result.final_regret == archived[(result.agent, result.seed)].final_regret
        assert result.wall_seconds != archived[(result.agent, result.seed)].wall_seconds


def test_an_archive_of_other_code_or_edited_is_refused(tmp_path, monkeypatch):
    copy = doctored(tmp_path, monkeypatch, code_digest="0" * 64)
    with pytest.raises(references.ArchiveVersionError, match=r"stale: .*code 000000000000"):
        references.load_scenario("quick-v2", "ball-iid")
    assert references.archive_status("quick-v2").startswith("stale: computed by other code")
    assert "python -m bco_gym.reports.references quick-v2" in references.archive_status("quick-v2")
    doctored(tmp_path / "again", monkeypatch, code_digest=references.result_code_digest())
    copy = tmp_path / "again" / "references"
    (copy / "quick-v2" / "ball-iid.json.gz").write_bytes(b"not it")
    with pytest.raises(references.ArchiveCorruptError, match="does not match its SHA-256"):
        references.load_scenario("quick-v2", "ball-iid")


def test_an_archived_scenario_defined_otherwise_now_is_refused(tmp_path, monkeypatch):
    """A scenario redefined under its old name (the trap's block, a horizon, the tuning)
    does not read the cells archived for the old definition; fewer seeds or agents do."""
    doctored(tmp_path, monkeypatch, code_digest=references.result_code_digest())
    scenario = scenario_of("quick-v2", "ball-trap")
    fewer = replace(scenario, agents=scenario.agents[:2])
    assert references.scenario_digest(fewer) == references.scenario_digest(scenario)
    assert references.materialise("quick-v2", fewer, tmp_path / "fewer") > 0
    kwargs = dict(scenario.env_kwargs)
    loss_kwargs = {**dict(kwargs.get("loss_kwargs") or {}), "block": 7}
    changes = [
        {"env_kwargs": {**kwargs, "loss_kwargs": loss_kwargs}},
        {"horizon": scenario.horizon + 1},
        {"agent_kwargs": {"random": {"law": "vertex-mixture"}}},
    ]
    for change in changes:
        other = replace(scenario, **change)
        assert references.scenario_digest(other) != references.scenario_digest(scenario)
        out = tmp_path / str(len(str(change)))
        with pytest.raises(references.ArchiveVersionError, match="another definition"):
            references.materialise("quick-v2", other, out)
        with pytest.warns(references.ReferenceArchiveWarning, match="another definition"):
            assert bench._use_archive("quick-v2", other, out, None) == 0
        assert not out.exists()


def test_another_library_version_alone_keeps_the_archive(tmp_path, monkeypatch):
    """The versioning policy: the archive's format and code digest decide, the version
    that computed it is only recorded."""
    doctored(
        tmp_path, monkeypatch, code_digest=references.result_code_digest(), library_version="0.0.1"
    )
    assert references.load_scenario("quick-v2", "ball-iid")  # read, not refused
    assert references.archive_status("quick-v2").startswith("valid for this code")
    assert "computed by bco_gym 0.0.1" in references.archive_status("quick-v2")


@pytest.fixture(scope="module")
def fresh_archive(tmp_path_factory):
    """quick-v2's ball-trap archived by this code (the shipped archive may be of other code
    until it is rebuilt), then stamped as computed by another library version."""
    where = tmp_path_factory.mktemp("references")
    work = tmp_path_factory.mktemp("work")
    references.build_archive("quick-v2", work, where=where, scenarios=["ball-trap"])
    path = where / "quick-v2" / references.INDEX
    index = json.loads(path.read_text())
    path.write_text(json.dumps({**index, "library_version": "0.0.1"}))
    return where


def test_bench_computes_only_the_given_agents_cells(fresh_archive, tmp_path, monkeypatch):
    """Scoring an agent computes its cells alone: the reference cells are the archive's
    (computed by another library version of this code: valid), none stale or recomputed."""
    monkeypatch.setattr(references, "root", lambda: fresh_archive)
    given = "explore_commit:ExploreCommit"
    scenario = scenario_of("quick-v2", "ball-trap")
    out = tmp_path / "b"
    shipped = dict(references.load_scenario("quick-v2", "ball-trap"))
    archived = {(c["agent"], c["seed"]): r for c, r in shipped["runs/ball-trap"][1]}
    assert bench._use_archive("quick-v2", scenario, out, None) == len(archived)
    agents = (*scenario.agents, given)
    with warnings.catch_warnings():
        warnings.simplefilter("error", StaleCellWarning)
        results, failures = bench._run_scenario(
            scenario, agents, out, backend="serial", batch_size=None, progress=False
        )
    assert not failures
    label = "explore-commit"  # the given agent's label (its class's name)
    assert sorted(r.seed for r in results if r.agent == label) == [0, 1]
    for result in results:
        if result.agent != label:  # read from the archive: its own timings too
            known = archived[(result.agent, result.seed)]
            assert result.wall_seconds == known.wall_seconds
            assert result.final_regret == known.final_regret


def test_every_archived_standard_v2_scenario_separates():
    """In every scenario of standard-v2's archive (all of them once it is complete) the
    best reference bandit row beats random: Holm-corrected paired t-tests over every pair
    of the scenario's rows (theory and tuned) on its evaluation seeds, at its horizon."""
    checked = []
    for spec in SUITES["standard-v2"]:
        found = references.load_scenario("standard-v2", spec.name, check_version=False)
        if found is None:
            continue
        results = [
            result
            for relative, (_, cells) in found.items()
            if relative.startswith("runs/")
            for _, result in cells
            if result.seed in spec.seeds
        ]
        horizon = spec.horizon or max(result.horizon for result in results)
        ranking = rank([result for result in results if result.horizon == horizon])
        best = next(label for label in ranking.labels if label != "random")
        assert ranking.beats(best, "random"), (spec.name, ranking.text())
        checked.append(spec.name)
    assert checked, "standard-v2 has no shipped results"
    index = references.read_index("standard-v2")
    if index.get("complete", False):
        assert checked == [spec.name for spec in SUITES["standard-v2"]]


def test_a_suite_with_rows_added_reuses_the_other_archives_cells(tmp_path, monkeypatch):
    """standard-v3's way: a scenario of the same name and definition in another archived
    suite (of this code) gives its cells; only the added rows are computed, and the
    added suite's archive holds every cell (self-contained)."""
    base = Scenario(
        name="reuse-ball",
        env_id="BCO-Ball-v0",
        agents=("fkm", "random"),
        horizon=60,
        seeds=(0, 1),
        env_kwargs={"n": 3},
    )
    grown = replace(base, agents=(*base.agents, "fkm2"), agent_feedback={"fkm2": "two-point"})
    monkeypatch.setitem(SUITES, "tiny-a", (base,))
    monkeypatch.setitem(SUITES, "tiny-b", (grown,))
    monkeypatch.setattr(references, "ARCHIVED", ("tiny-a", "tiny-b"))
    where = tmp_path / "references"
    references.build_archive("tiny-a", tmp_path / "work-a", where=where)
    assert references.reuse_archived_cells("tiny-a", base, tmp_path / "x", where) == 0  # itself
    references.build_archive("tiny-b", tmp_path / "work-b", where=where)
    a = references.load_scenario("tiny-a", "reuse-ball", where)
    b = references.load_scenario("tiny-b", "reuse-ball", where, definition=grown)
    stamps = {
        suite: {(c["agent"], c["seed"]): r.computed_at for c, r in found["runs/reuse-ball"][1]}
        for suite, found in (("a", a), ("b", b))
    }
    assert set(stamps["b"]) == {(agent, seed) for agent in grown.agents for seed in (0, 1)}
    for key, stamp in stamps["a"].items():
        assert stamps["b"][key] == stamp  # the same computation, not a second one
    fkm2 = [r for c, r in b["runs/reuse-ball"][1] if c["agent"] == "fkm2"]
    assert {r.problem["feedback"] for r in fkm2} == {"two-point"}
    # another definition (another horizon) reuses nothing
    other = replace(grown, horizon=70)
    assert references.reuse_archived_cells("tiny-b", other, tmp_path / "y", where) == 0
