"""The compiled kernels' cache is dropped when any kernel source changes (numba keys a
kernel on its own file only, so an edit of a helper it inlines would go unnoticed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bco_gym.agents.kernels import CACHE_STAMP, drop_stale_cache, sources_digest


def package(tmp_path):
    (tmp_path / "oracles.py").write_text("def helper():\n    return 1\n")
    (tmp_path / "rounds.py").write_text("from oracles import helper\n")
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    return cache


def cached(cache, name):
    (cache / f"{name}.nbi").write_bytes(b"index")
    (cache / f"{name}.nbc").write_bytes(b"code")


def test_a_first_run_drops_unstamped_kernels_and_stamps_the_digest(tmp_path):
    cache = package(tmp_path)
    cached(cache, "rounds.fkm_rounds-13.py311")
    (cache / "rounds.cpython-311.pyc").write_bytes(b"python")
    assert drop_stale_cache(tmp_path) is True
    assert not list(cache.glob("*.nb?"))
    assert (cache / "rounds.cpython-311.pyc").exists()  # Python's own cache is not ours
    assert (cache / CACHE_STAMP).read_text() == sources_digest(tmp_path)


def test_unchanged_sources_keep_the_cache(tmp_path):
    cache = package(tmp_path)
    drop_stale_cache(tmp_path)
    cached(cache, "rounds.fkm_rounds-13.py311")
    assert drop_stale_cache(tmp_path) is False
    assert (cache / "rounds.fkm_rounds-13.py311.nbc").exists()


def test_an_edit_of_any_source_drops_every_kernel(tmp_path):
    cache = package(tmp_path)
    drop_stale_cache(tmp_path)
    cached(cache, "rounds.fkm_rounds-13.py311")
    cached(cache, "oracles.helper-1.py311")
    before = sources_digest(tmp_path)
    (tmp_path / "oracles.py").write_text("def helper():\n    return 2\n")  # rounds.py untouched
    assert sources_digest(tmp_path) != before
    assert drop_stale_cache(tmp_path) is True
    assert not list(cache.glob("*.nb?"))
    assert (cache / CACHE_STAMP).read_text() == sources_digest(tmp_path)


def test_a_cache_that_cannot_be_written_is_left_alone(tmp_path):
    (tmp_path / "rounds.py").write_text("x = 1\n")
    (tmp_path / "__pycache__").write_text("a file where the directory would be")
    assert drop_stale_cache(tmp_path) is False


def test_the_package_is_stamped_once_its_kernels_are_imported():
    pytest.importorskip("numba")  # the `fast` extra (in `dev`)
    import bco_gym.agents.kernels as kernels
    import bco_gym.agents.kernels.oracles  # noqa: F401  (runs drop_stale_cache)

    directory = Path(kernels.__file__).parent
    if os.access(directory, os.W_OK):  # a read-only install has no stamp (docstring)
        assert (directory / "__pycache__" / CACHE_STAMP).read_text() == sources_digest(directory)


def test_an_algorithms_kernels_drop_when_the_shared_helpers_they_inline_change(tmp_path):
    shared, folder = tmp_path / "kernels", tmp_path / "fkm"
    shared.mkdir()
    folder.mkdir()
    package(shared)
    (folder / "kernel.py").write_text("from kernels.oracles import helper\n")
    cache = folder / "__pycache__"
    cache.mkdir()
    drop_stale_cache(folder, shared)
    cached(cache, "kernel.fkm_rounds-20.py311")
    assert drop_stale_cache(folder, shared) is False  # nothing changed
    (shared / "oracles.py").write_text("def helper():\n    return 2\n")  # the folder untouched
    assert drop_stale_cache(folder, shared) is True
    assert not list(cache.glob("*.nb?"))
    assert drop_stale_cache(folder, shared) is False


def test_every_algorithms_kernel_folder_is_stamped_once_its_kernel_is_imported():
    pytest.importorskip("numba")
    import importlib

    from bco_gym.agents import AGENTS

    for cls in AGENTS.values():
        kernel = vars(cls).get("KERNEL")
        if kernel is None:
            continue
        module = importlib.import_module(kernel.module)
        directory = Path(module.__file__).parent
        if os.access(directory, os.W_OK):
            assert (directory / "__pycache__" / CACHE_STAMP).is_file(), kernel.module
