"""Whole runs equal, bit for bit, what the code produced before the speed work of issue 18.

The fingerprints in ``data/pinned_runs.json`` were written by ``pinned_runs.py`` from the
NumPy path (kernels off) and from the compiled kernels (kernels on) before the
interval-regret tracker, the adversary's chunk draws and the block path's comparator were
made cheaper; every float of the play a result reports (losses, comparator, regret) must
still be the same.

One deliberate change: the interval regrets on the ball. Their best values became the
closed form -r ||Theta|| with a pairwise norm (``ball_best_values`` in
bco_gym/losses/intervals.py), where they had been <Theta, lmo(Theta)> with the set's BLAS
norm, so that the compiled tracker needs no call back into NumPy. Their hash was pinned
again then (``intervals_sha256``); ``intervals_before`` keeps the values from before, and
every interval regret must stay within 1e-12 of them (relative to the run's scale).

Another CPU. The runs compute no result through BLAS or NumPy's per-CPU SIMD functions
(bco_gym/portable.py), so every x86-64 CPU with FMA gives the pinned bits under the same C
library: the bit-for-bit check applies wherever the C library's part of
:func:`bco_gym.portable.machine_signature` equals the pinned one (``machine`` in the
JSON). Elsewhere (a CPU without FMA, another C library) the curves must be within
``portable.RELATIVE_TOLERANCE`` = 1e-12 of the pinned ones, relatively to each curve's
largest magnitude. tests/engine/test_portable_settings.py plays these runs again under
other OpenBLAS kernels, NumPy's baseline SIMD, numba's generic CPU and glibc without FMA.
"""

from __future__ import annotations

import json
from typing import Any

import pinned_runs
import pytest

from bco_gym import portable

PINNED = json.loads(pinned_runs.PINNED_FILE.read_text())
#: These runs call no LAPACK: the C library's part of the signature decides whether they
#: must be the pinned bits or within portable.RELATIVE_TOLERANCE of them.
SAME_MACHINE = PINNED["machine"]["libm"] == portable.machine_signature()["libm"]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", pinned_runs.CASES, ids=pinned_runs.case_key)
def test_numpy_path_results_are_the_pinned_ones(monkeypatch, case) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("BCO_GYM_KERNELS", "off")
    check(pinned_runs.fingerprints(case), PINNED[f"off: {pinned_runs.case_key(case)}"])


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", pinned_runs.KERNEL_CASES, ids=pinned_runs.case_key)
def test_kernel_results_are_the_pinned_ones(monkeypatch, case) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("numba")
    monkeypatch.setenv("BCO_GYM_KERNELS", "on")
    check(pinned_runs.fingerprints(case), PINNED[f"on: {pinned_runs.case_key(case)}"])


def test_a_case_pinned_on_both_paths_has_one_fingerprint() -> None:
    """The kernels play what NumPy plays, the ball included (its norm in one order)."""
    both = [case for case in pinned_runs.KERNEL_CASES if case in pinned_runs.CASES]
    assert both
    for case in both:
        key = pinned_runs.case_key(case)
        assert PINNED[f"on: {key}"] == PINNED[f"off: {key}"], key


def check(found: list[dict[str, Any]], pinned: list[dict[str, Any]]) -> None:
    """The play bit for bit and the interval regrets' hash (on a machine of the pinned
    signature), the curves within 1e-12 (on any), and the interval regrets near the old."""
    assert len(found) == len(pinned)
    for run, pin in zip(found, pinned, strict=True):
        if SAME_MACHINE:
            assert (run["sha256"], run["final_regret"]) == (pin["sha256"], pin["final_regret"])
            assert run["intervals_sha256"] == pin["intervals_sha256"]
        for name in pinned_runs.CURVES:
            now, then = (leaves(fingerprint["curves"][name]) for fingerprint in (run, pin))
            assert portable.close(list(now.values()), list(then.values())), name
        now, before = leaves(run["intervals"]), leaves(pin["intervals_before"])
        assert now.keys() == before.keys()
        scale = max(abs(v) for v in before.values() if isinstance(v, float))
        for key, value in before.items():
            if isinstance(value, float):
                assert abs(now[key] - value) <= 1e-12 * scale, key
            else:  # lengths, the worst interval, segments, None
                assert now[key] == value, key


def leaves(values: Any, prefix: str = "") -> dict[str, Any]:
    """Every leaf of a nested dict or list keyed by its path, floats (hex or decimal) as
    floats."""
    found: dict[str, Any] = {}
    if isinstance(values, dict):
        for key, value in values.items():
            found.update(leaves(value, f"{prefix}/{key}"))
    elif isinstance(values, list):
        for index, value in enumerate(values):
            found.update(leaves(value, f"{prefix}/{index}"))
    elif isinstance(values, str) and "0x" in values:
        found[prefix] = float.fromhex(values)
    else:
        found[prefix] = values
    return found
