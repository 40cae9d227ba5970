"""The compiled kernels' cache is dropped when any kernel source changes (numba keys a
kernel on its own file only, so an edit of a helper it inlines would go unnoticed), and
two processes saving kernels at once each keep their own code (numba's index is rewritten
without a lock; the kernels' saves take one)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bco_gym.agents.kernels import (
    CACHE_LOCK,
    CACHE_STAMP,
    compile_per_type,
    drop_stale_cache,
    numba_available,
    sources_digest,
)


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


# -- two processes saving one function's kernels at once ---------------------------------------
RACE_CHILD = Path(__file__).resolve().parents[1] / "support" / "cache_race_child.py"
#: doubled(x) = x[0] * 2 compiled with numba's own cache, and with the kernels' decorator.
RACE_TARGETS = {
    "race_unlocked": "import numba\n\n\n@numba.njit(cache=True)\n",
    "race_locked": "from bco_gym.agents.kernels.oracles import jit\n\n\n@jit\n",
}


def race(folder: Path) -> dict:
    """first (float64) and second (int64) save doubled's two kernels, of each module of
    RACE_TARGETS in turn, in the order that loses one under an unlocked cache
    (tests/support/cache_race_child.py); then a third process reads them from the cache."""
    for module, head in RACE_TARGETS.items():
        (folder / f"{module}.py").write_text(head + "def doubled(x):\n    return x[0] * 2\n")

    def child(role: str) -> subprocess.Popen:
        command = [sys.executable, str(RACE_CHILD), str(folder), role, "1.0", *RACE_TARGETS]
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    writers = [child("first"), child("second")]
    for writer in writers:
        _, err = writer.communicate(timeout=600)
        assert writer.returncode == 0, err[-2000:]
    reader = child("reader")
    out, err = reader.communicate(timeout=300)
    assert reader.returncode == 0, err[-2000:]
    return json.loads(out)


@pytest.mark.skipif(not numba_available() or os.name != "posix", reason="numba's cache on POSIX")
def test_two_processes_saving_one_kernels_signatures_at_once_keep_each_its_code(tmp_path):
    found = race(tmp_path)
    # numba's own cache, unlocked: the int64 key is filed with the float64 code, which reads
    # the bits of the integer 3 as a double (1.5e-323) and doubles them
    lost = found["race_unlocked"]
    assert lost["values"][0] != 6.0 and lost["values"][1] == 6.0, lost
    # the kernels' decorators (bco_gym.agents.kernels.lock_cache): the second save waits
    # for the first to end, reads the index it wrote, and files its code under a new name
    assert found["race_locked"] == {"values": [6.0, 6.0], "hits": 2}
    second_read, first_wrote = (
        (tmp_path / f"race_locked.{step}").stat().st_mtime_ns
        for step in ("second-read-index", "first-wrote-data")
    )
    assert second_read >= first_wrote
    assert any((tmp_path / "cache").rglob(CACHE_LOCK))


@pytest.mark.skipif(not numba_available(), reason="numba")
def test_a_kernel_called_with_constants_compiles_once_per_argument_types():
    """numba compiles a callee once per constant a compiled caller passes it (a literal
    type each); :func:`compile_per_type` makes it one compile for the int, as the kernels'
    decorators do."""
    import numba

    def built(plain: bool):  # type: ignore[no-untyped-def]
        callee = numba.njit(lambda values, row: values[row] * 2.0)
        if plain:
            callee = compile_per_type(callee)

        @numba.njit
        def caller(values):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
            return callee(values, 0) + callee(values, 2)

        return callee, caller

    for plain, compiled in ((False, 2), (True, 1)):
        callee, caller = built(plain)
        assert caller(np.array([1.0, 5.0, 3.0])) == 8.0
        assert len(callee.signatures) == compiled, callee.signatures
    assert str(callee.signatures[0][1]) == "int64"
