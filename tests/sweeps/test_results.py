"""Results on disk: round trips, atomic writes, tampering detected, hostile files refused."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import zipfile

import numpy as np
import pytest

from bco_gym.io import write_json
from bco_gym.sweeps.results import (
    CorruptResultError,
    _digest,
    load_result,
    parse_npz,
    save_result,
    try_load_result,
)
from bco_gym.sweeps.store import SweepMismatchError, SweepStore


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
    assert document["key"]["seed"] == 0 and document["key"]["agent"] == "bbcg"
    assert document["shapes"]["round_losses"] == [200]
    with np.load(tmp_path / "r.npz", allow_pickle=False) as archive:
        assert set(archive.files) == set(document["shapes"])
        assert all(archive[name].dtype.kind in "if" for name in archive.files)


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_files_are_created_with_the_users_umask(tmp_path, tiny_results, umask):
    previous = os.umask(umask)
    try:
        path = save_result(tmp_path / "r.json", tiny_results[0])
        write_json(tmp_path / "table.json", {"a": 1})
    finally:
        os.umask(previous)
    expected = 0o666 & ~umask
    for name in ("r.json", "r.npz", "table.json"):
        assert (tmp_path / name).stat().st_mode & 0o777 == expected, name
    assert path.exists()


# -- tampering ------------------------------------------------------------------------------
def _edit_json(path, edit):
    document = json.loads(path.read_text())
    edit(document)
    path.write_text(json.dumps(document))


def test_editing_any_value_in_the_json_is_detected(tmp_path, tiny_results):
    path = save_result(tmp_path / "r.json", tiny_results[0])
    _edit_json(path, lambda d: d["result"].__setitem__("final_regret", 1.0))
    with pytest.raises(CorruptResultError, match="digest"):
        load_result(path)
    path = save_result(tmp_path / "s.json", tiny_results[0])
    _edit_json(path, lambda d: d["key"].__setitem__("seed", 1) or d["result"].update(seed=1))
    with pytest.raises(CorruptResultError, match="digest"):
        load_result(path)


def test_rewriting_the_npz_with_its_old_style_checksum_is_detected(tmp_path, tiny_results):
    path = save_result(tmp_path / "r.json", tiny_results[0])
    npz = path.with_suffix(".npz")
    arrays = dict(np.load(npz))
    arrays["regret"] = arrays["regret"] * 0.5
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    npz.write_bytes(buffer.getvalue())
    # what an editor of the old format did: update a per-file checksum in the JSON
    _edit_json(
        path, lambda d: d.update(arrays_sha256=hashlib.sha256(buffer.getvalue()).hexdigest())
    )
    with pytest.raises(CorruptResultError, match="digest"):
        load_result(path)


def test_one_cells_files_copied_over_anothers_are_detected(tmp_path, tiny_results):
    first = save_result(tmp_path / "a.json", tiny_results[0])
    second = save_result(tmp_path / "b.json", tiny_results[1])
    second_key = json.loads(second.read_text())["key"]
    first_bytes = first.read_bytes()
    # the JSON alone: names a.npz, the digest covers b.npz's bytes
    second.write_bytes(first_bytes)
    with pytest.raises(CorruptResultError):
        load_result(second, second_key)
    # JSON and NPZ together: self-consistent, but the key is another cell's
    second.with_suffix(".npz").write_bytes(first.with_suffix(".npz").read_bytes())
    document = json.loads(first_bytes)
    document["arrays"] = "b.npz"
    document["sha256"] = _digest(document, second.with_suffix(".npz").read_bytes())
    second.write_text(json.dumps(document))
    with pytest.raises(CorruptResultError, match="answers another cell"):
        load_result(second, second_key)


def test_a_forged_but_consistent_result_disagreeing_with_its_key_is_refused(tmp_path, tiny_results):
    path = save_result(tmp_path / "r.json", tiny_results[0])
    document = json.loads(path.read_text())
    document["result"]["horizon"] = 999
    document["sha256"] = _digest(document, path.with_suffix(".npz").read_bytes())
    path.write_text(json.dumps(document))
    with pytest.raises(CorruptResultError, match="horizon disagree with its key"):
        load_result(path)


# -- hostile files --------------------------------------------------------------------------
def _forge(path, edit):
    """Apply ``edit`` to the JSON and recompute the digest (a writer who knows the format)."""
    document = json.loads(path.read_text())
    edit(document)
    npz = path.with_suffix(".npz")
    payload = npz.read_bytes() if npz.exists() and not npz.is_symlink() else b""
    document["sha256"] = _digest(document, payload)
    path.write_text(json.dumps(document))


@pytest.mark.parametrize("name", ["../r.npz", "/dev/zero", "/etc/passwd", "sub/r.npz"])
def test_the_arrays_field_names_only_the_file_beside_the_json(tmp_path, tiny_results, name):
    path = save_result(tmp_path / "r.json", tiny_results[0])
    _forge(path, lambda d: d.update(arrays=name))
    with pytest.raises(CorruptResultError, match=r"only 'r\.npz' beside it is read"):
        load_result(path)


@pytest.mark.parametrize("target", ["/dev/zero", "elsewhere.npz"])
def test_symlinked_files_are_not_followed(tmp_path, tiny_results, target):
    path = save_result(tmp_path / "r.json", tiny_results[0])
    npz = path.with_suffix(".npz")
    real = tmp_path / "elsewhere.npz"
    real.write_bytes(npz.read_bytes())
    npz.unlink()
    npz.symlink_to(target if target.startswith("/") else real)
    with pytest.raises(CorruptResultError, match="arrays file"):
        load_result(path)
    json_link = tmp_path / "link.json"
    json_link.symlink_to(path)
    with pytest.raises(CorruptResultError, match="unreadable"):
        load_result(json_link)


def test_a_device_in_place_of_the_json_is_refused(tmp_path):
    with pytest.raises(CorruptResultError, match="not a regular file"):
        load_result("/dev/zero")


def test_shapes_larger_than_the_key_allows_are_refused(tmp_path, tiny_results):
    path = save_result(tmp_path / "r.json", tiny_results[0])
    _forge(path, lambda d: d["shapes"].update(round_losses=[400_000_000]))
    with pytest.raises(CorruptResultError, match="the key allows 200"):
        load_result(path)
    path = save_result(tmp_path / "s.json", tiny_results[0])
    _forge(path, lambda d: d["shapes"].update(regret=[10**6]))
    with pytest.raises(CorruptResultError, match="regret declares 1000000 entries"):
        load_result(path)


def test_an_npy_header_declaring_a_huge_array_is_refused_before_allocating(tmp_path):
    header = {"descr": "<f8", "fortran_order": False, "shape": (400_000_000,)}
    stream = io.BytesIO()
    np.lib.format.write_array_header_1_0(stream, header)
    payload = io.BytesIO()
    with zipfile.ZipFile(payload, "w") as archive:
        archive.writestr("regret.npy", stream.getvalue() + b"\0" * 64)
    with pytest.raises(CorruptResultError, match=r"declares float64 \(400000000,\)"):
        parse_npz(payload.getvalue(), {"regret": (8,)})


def test_compressed_or_pickled_members_are_refused():
    payload = io.BytesIO()
    with zipfile.ZipFile(payload, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        stream = io.BytesIO()
        np.save(stream, np.zeros(8))
        archive.writestr("regret.npy", stream.getvalue())
    with pytest.raises(CorruptResultError, match="compressed"):
        parse_npz(payload.getvalue(), {"regret": (8,)})
    payload = io.BytesIO()
    with zipfile.ZipFile(payload, "w") as archive:
        stream = io.BytesIO()
        np.save(stream, np.array([{"a": 1}] * 8, dtype=object), allow_pickle=True)
        archive.writestr("regret.npy", stream.getvalue())
    with pytest.raises(CorruptResultError, match="declares object"):
        parse_npz(payload.getvalue(), {"regret": (8,)})


def test_an_oversized_npz_is_refused_before_it_is_read(tmp_path, tiny_results):
    path = save_result(tmp_path / "r.json", tiny_results[0])
    with open(path.with_suffix(".npz"), "ab") as stream:
        stream.truncate(3 << 20)  # 3 MB, far more than the declared shapes
    with pytest.raises(CorruptResultError, match="more than the"):
        load_result(path)


# -- sweep directories ----------------------------------------------------------------------
def test_half_written_cells_are_not_done_and_corrupt_ones_are_named(tmp_path, tiny_results):
    result = tiny_results[0]
    store = SweepStore(tmp_path).open({"cells": []})
    # NPZ without JSON (killed between the two renames): not done, silently
    store.save("a", result)
    store.cell_path("a").unlink()
    assert store.load("a") is None
    # JSON truncated or NPZ truncated: there but corrupt, never silently absent
    store.save("b", result)
    text = store.cell_path("b").read_text()
    store.cell_path("b").write_text(text[: len(text) // 2])
    with pytest.raises(CorruptResultError, match="not JSON"):
        store.load("b")
    store.save("c", result)
    npz = store.cell_path("c").with_suffix(".npz")
    npz.write_bytes(npz.read_bytes()[:100])
    with pytest.raises(CorruptResultError, match="digest"):
        store.load("c")
    store.save("d", result)
    assert store.load("d") == result
    with pytest.raises(CorruptResultError, match=r"2 cell\(s\).*b: .*c: "):
        store.load_all([(key, None) for key in "abcd"])
    assert try_load_result(tmp_path / "missing.json") is None
    assert try_load_result(store.cell_path("c")) is None


def test_a_symlinked_cells_directory_is_refused(tmp_path, tiny_results):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sweep_dir = tmp_path / "sweep"
    SweepStore(sweep_dir).open({"cells": []})
    (sweep_dir / "cells").rmdir()
    (sweep_dir / "cells").symlink_to(elsewhere)
    with pytest.raises(SweepMismatchError, match="not a directory"):
        SweepStore(sweep_dir).load("a")


def test_reopening_removes_temporaries_and_keeps_cells(tmp_path, tiny_results):
    spec = {"cells": [{"env_id": "x", "seed": 1}]}
    store = SweepStore(tmp_path).open(spec)
    store.save("done", tiny_results[1])
    stray = store.cells_directory / "done.npz.1234.tmp"
    stray.write_bytes(b"partial")
    SweepStore(tmp_path).open(spec)
    assert not stray.exists()
    assert store.load("done") == tiny_results[1]


def test_a_foreign_directory_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(SweepMismatchError, match=r"not empty and has no manifest\.json"):
        SweepStore(tmp_path).open({"cells": []})
    (tmp_path / "manifest.json").write_text("{broken")
    with pytest.raises(SweepMismatchError, match="not a bco_gym sweep"):
        SweepStore(tmp_path).open({"cells": []})
    (tmp_path / "manifest.json").write_text('{"format": 2, "spec": {"cells": 3}}')
    with pytest.raises(SweepMismatchError, match="no list of cells"):
        SweepStore(tmp_path).open({"cells": []})
    (tmp_path / "manifest.json").write_text('{"format": 1, "spec": {"cells": []}}')
    with pytest.raises(SweepMismatchError, match="format 1"):
        SweepStore(tmp_path).open({"cells": []})


def test_load_result_explains_what_is_wrong(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_result(tmp_path / "nothing.json")
    (tmp_path / "other.json").write_text('{"format": 99}')
    with pytest.raises(CorruptResultError, match="not a format-2 result"):
        load_result(tmp_path / "other.json")
    with pytest.raises(ValueError, match=r"must end in \.json"):
        save_result(tmp_path / "x.npz", None)
