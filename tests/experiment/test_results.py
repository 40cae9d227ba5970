"""Results on disk: round trips, atomic writes, half-written cells, manifests."""

from __future__ import annotations

import dataclasses
import json
import zipfile

import numpy as np
import pytest

from bco_gym.experiment.results import (
    SweepMismatchError,
    SweepStore,
    atomic_write,
    load_result,
    save_result,
    try_load_result,
)


def test_results_load_back_equal(tmp_path, tiny_results):
    for index, result in enumerate(tiny_results):
        path = save_result(tmp_path / f"r{index}.json", result)
        loaded = load_result(path)
        assert loaded == result
        assert loaded.round_losses.dtype == np.float64
        assert loaded.checkpoints.dtype == np.int64
        assert loaded.params == result.params and loaded.versions == result.versions


def test_a_result_without_per_round_losses_round_trips(tmp_path, tiny_results):
    trimmed = dataclasses.replace(tiny_results[0], round_losses=None)
    assert load_result(save_result(tmp_path / "t.json", trimmed)) == trimmed


def test_arrays_are_plain_numeric_npz_and_json_names_them(tmp_path, tiny_results):
    path = save_result(tmp_path / "r.json", tiny_results[0])
    document = json.loads(path.read_text())
    assert document["arrays"] == "r.npz"
    with np.load(tmp_path / "r.npz", allow_pickle=False) as archive:
        assert set(archive.files) == {
            "checkpoints",
            "cumulative_loss",
            "comparator_loss",
            "comparator_gap",
            "regret",
            "round_losses",
        }
        assert all(archive[name].dtype.kind in "if" for name in archive.files)


def test_atomic_write_leaves_the_old_file_when_the_writer_fails(tmp_path):
    target = tmp_path / "file.bin"
    atomic_write(target, lambda stream: stream.write(b"old"))

    def crash(stream):
        stream.write(b"half")
        raise RuntimeError("killed mid-write")

    with pytest.raises(RuntimeError, match="killed"):
        atomic_write(target, crash)
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["file.bin"]


def test_half_written_cells_are_not_done(tmp_path, tiny_results):
    result = tiny_results[0]
    store = SweepStore(tmp_path).open({"cells": []})
    # NPZ without JSON (killed between the two renames)
    save_result(store.cell_path("a"), result)
    store.cell_path("a").unlink()
    assert store.load("a") is None
    # JSON truncated
    save_result(store.cell_path("b"), result)
    text = store.cell_path("b").read_text()
    store.cell_path("b").write_text(text[: len(text) // 2])
    assert store.load("b") is None
    # NPZ truncated after the JSON was written: the checksum catches it
    save_result(store.cell_path("c"), result)
    npz = store.cell_path("c").with_suffix(".npz")
    npz.write_bytes(npz.read_bytes()[:100])
    assert store.load("c") is None
    with pytest.raises(ValueError, match="checksum"):
        load_result(store.cell_path("c"))
    # an intact cell is done
    save_result(store.cell_path("d"), result)
    assert store.load("d") == result
    assert zipfile.is_zipfile(store.cell_path("d").with_suffix(".npz"))
    assert try_load_result(tmp_path / "missing.json") is None


def test_reopening_removes_temporaries_and_keeps_cells(tmp_path, tiny_results):
    spec = {"cells": [{"env_id": "x", "seed": 1}]}
    store = SweepStore(tmp_path).open(spec)
    store.save("done", tiny_results[1])
    stray = store.cells_directory / "done.npz.1234.tmp"
    stray.write_bytes(b"partial")
    SweepStore(tmp_path).open(spec)
    assert not stray.exists()
    assert store.load("done") == tiny_results[1]


def test_a_different_sweep_is_refused(tmp_path):
    SweepStore(tmp_path).open({"cells": [{"env_id": "A", "agent": "bbcg", "seed": 0}]})
    SweepStore(tmp_path).open({"cells": [{"env_id": "A", "agent": "bbcg", "seed": 0}]})
    with pytest.raises(SweepMismatchError, match="holds a different sweep"):
        SweepStore(tmp_path).open({"cells": [{"env_id": "A", "agent": "fkm", "seed": 0}]})


def test_a_foreign_directory_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(SweepMismatchError, match=r"not empty and has no manifest\.json"):
        SweepStore(tmp_path).open({"cells": []})
    (tmp_path / "manifest.json").write_text("{broken")
    with pytest.raises(SweepMismatchError, match="not a bco_gym sweep"):
        SweepStore(tmp_path).open({"cells": []})


def test_load_result_explains_what_is_wrong(tmp_path):
    with pytest.raises(ValueError, match="missing or not valid JSON"):
        load_result(tmp_path / "nothing.json")
    (tmp_path / "other.json").write_text('{"format": 99}')
    with pytest.raises(ValueError, match="not a format-1 bco_gym result"):
        load_result(tmp_path / "other.json")
    with pytest.raises(ValueError, match=r"must end in \.json"):
        save_result(tmp_path / "x.npz", None)
