"""Whole runs equal, bit for bit, what the code produced before the speed work of issue 18.

The fingerprints in ``data/pinned_runs.json`` were written by ``pinned_runs.py`` from the
NumPy path (kernels off) and from the compiled kernels (kernels on) before the
interval-regret tracker, the adversary's chunk draws and the block path's comparator were
made cheaper; every float a result reports must still be the same.
"""

from __future__ import annotations

import json
import pathlib

import pinned_runs
import pytest

PINNED = json.loads((pathlib.Path(__file__).parent / "data" / "pinned_runs.json").read_text())


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", pinned_runs.CASES, ids=pinned_runs.case_key)
def test_numpy_path_results_are_the_pinned_ones(monkeypatch, case) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("BCO_GYM_KERNELS", "off")
    assert pinned_runs.fingerprints(case) == PINNED[f"off: {pinned_runs.case_key(case)}"]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", pinned_runs.KERNEL_CASES, ids=pinned_runs.case_key)
def test_kernel_results_are_the_pinned_ones(monkeypatch, case) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("numba")
    monkeypatch.setenv("BCO_GYM_KERNELS", "on")
    assert pinned_runs.fingerprints(case) == PINNED[f"on: {pinned_runs.case_key(case)}"]
