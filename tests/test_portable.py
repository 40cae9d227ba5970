"""Results that travel: bco_gym/portable.py's arithmetic, and the pinned runs and the reference
archive's recompute under other CPU code paths (docs/performance.md, "Results that travel").

The second half is the check a user meets on another machine, played on this one: the
pinned runs (tests/engine/test_pinned_runs.py) and the archive's recompute
(tests/reports/test_references.py) run again in a child process with OpenBLAS forced onto
other kernels, numba compiling for a generic x86-64 CPU, and glibc without its FMA code
paths. The first two must leave every result's bits as they are (no result goes through
BLAS, and numba contracts no multiply-add); the third changes the C library's last bits,
so the pinned runs and the archived cells are checked to 1e-12 there, as on a CPU without
FMA.
"""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bco_gym import portable

ROOT = Path(__file__).resolve().parents[1]
PINNED = "tests/engine/test_pinned_runs.py"
ARCHIVE = "tests/reports/test_references.py::test_archived_cells_recompute_bit_for_bit"


# -- the arithmetic ---------------------------------------------------------------------------
def test_the_sums_are_numpys_pairwise_sums_or_the_rows_in_order():
    rng = np.random.default_rng(0)
    matrix, vector = rng.standard_normal((7, 300)), rng.standard_normal(300)
    weights = rng.standard_normal(7)
    assert portable.dot(matrix[0], vector) == np.add.reduce(matrix[0] * vector)
    assert np.array_equal(portable.row_dot(matrix, matrix), np.add.reduce(matrix * matrix, 1))
    rows = [np.add.reduce(row * vector) for row in matrix]
    assert np.array_equal(portable.matvec(matrix, vector), rows)
    in_order = weights[0] * matrix[0]
    for weight, row in zip(weights[1:], matrix[1:], strict=True):
        in_order = in_order + weight * row
    assert np.array_equal(portable.vecmat(weights, matrix), in_order)
    column = matrix[:, :1] * np.ones((7, 1))
    pairwise = np.add.reduce(weights * column[:, 0])  # one column: contiguous, pairwise
    assert np.array_equal(portable.vecmat(weights, column), [pairwise])
    gram = portable.gram(matrix.T)  # 300 rows of 7
    assert np.array_equal(gram, gram.T)
    assert np.array_equal(gram[2], portable.vecmat(matrix[2], matrix.T))
    product = portable.matmul(matrix, matrix.T)
    assert np.array_equal(product[3], portable.vecmat(matrix[3], matrix.T))
    assert np.allclose(product, matrix @ matrix.T, rtol=1e-13, atol=1e-12)
    assert portable.matmul(np.empty((0, 3)), np.ones((3, 2))).shape == (0, 2)
    spd = matrix @ matrix.T + np.eye(7)
    inverse = portable.inverse_spd(spd)
    assert np.allclose(inverse @ spd, np.eye(7), atol=1e-12)


def test_the_elementary_functions_are_the_c_librarys():
    rng = np.random.default_rng(1)
    x = rng.uniform(size=(4, 50))
    assert np.array_equal(portable.power(x, 0.1), [[math.pow(v, 0.1) for v in r] for r in x])
    y = 30.0 * (x - 0.5)
    for ours, theirs in (
        (portable.exp, math.exp),
        (portable.cos, math.cos),
        (portable.sin, math.sin),
    ):
        assert np.array_equal(ours(y), [[theirs(v) for v in r] for r in y])
    assert np.array_equal(portable.log(x), [[math.log(v) for v in r] for r in x])
    assert portable.exp(1000.0) == math.inf and portable.exp(-1000.0) == 0.0
    assert portable.log(0.0) == -math.inf and math.isnan(portable.log(-1.0))
    assert math.isnan(portable.log(math.nan))
    assert isinstance(portable.exp(np.float64(0.5)), float)
    assert portable.power(np.zeros(0), 0.5).shape == (0,)


def test_close_is_relative_to_the_largest_magnitude():
    assert portable.close([1000.0, 1e-3], [1000.0, 1e-3 + 1e-10])  # 1e-10 <= 1e-12 * 1000
    assert not portable.close([1000.0, 1e-3], [1000.0, 1e-3 + 1e-8])
    assert portable.close(0.0, 0.0) and not portable.close(1e-300, 0.0)
    assert portable.close([math.inf, 1.0], [math.inf, 1.0])
    assert not portable.close([math.inf, 1.0], [1.0, 1.0])
    assert not portable.close([1.0, 2.0], [1.0])


def test_the_signature_names_behaviour_that_another_process_repeats():
    here = portable.machine_signature()
    assert set(here) == {"libm", "lapack"}
    child = signature_under({})
    assert child == here


def signature_under(settings: dict[str, str]) -> dict[str, str]:
    code = (
        "import json; from bco_gym import portable; print(json.dumps(portable.machine_signature()))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **settings},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(completed.stdout)


# -- the pinned runs and the archive under other code paths -----------------------------------
GLIBC_X86 = platform.libc_ver()[0] == "glibc" and platform.machine() in ("x86_64", "AMD64")
#: name -> (environment, the tests run under it, the part of the signature it must change).
SETTINGS = {
    "openblas-sandybridge": (
        {"OPENBLAS_CORETYPE": "Sandybridge"},
        [PINNED, "-k", "numpy_path", ARCHIVE],
        "lapack",
    ),
    "openblas-prescott": ({"OPENBLAS_CORETYPE": "Prescott"}, [PINNED, ARCHIVE], "lapack"),
    "numba-generic": ({"NUMBA_CPU_NAME": "generic"}, [PINNED, "-k", "kernel"], None),
    "glibc-without-fma": (
        {"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-FMA"},
        [PINNED, "-k", "numpy_path", ARCHIVE],
        "libm",
    ),
}


#: The child: its machine signature into the file named by argv[1], then pytest on the rest.
CHILD = (
    "import json, sys, pytest; from bco_gym import portable; "
    "open(sys.argv[1], 'w').write(json.dumps(portable.machine_signature())); "
    "sys.exit(pytest.main(sys.argv[2:]))"
)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_pinned_runs_and_archive_hold_under(name, tmp_path):
    """One child process per setting says its machine signature, then plays the pinned
    runs and the archive's recompute (one process where there were two); a setting that
    leaves the part of the signature it targets as this machine has it computes as this
    machine does: its run must pass, and is reported skipped, as nothing new was compared."""
    settings, tests, changed = SETTINGS[name]
    if name == "numba-generic":
        pytest.importorskip("numba")
    if name == "glibc-without-fma" and not GLIBC_X86:
        pytest.skip("glibc's tunables switch its FMA code paths on x86-64 only")
    environment = {**os.environ, **settings, "OMP_NUM_THREADS": "1"}
    if name == "numba-generic":
        # A cache of its own, so that the child provably compiled for the generic target
        # (asserted below) rather than loaded anything the xdist workers compiled.
        environment["NUMBA_CACHE_DIR"] = str(tmp_path / "numba-generic-cache")
    signature = tmp_path / "signature.json"
    pytest_args = ["-q", "-p", "no:cacheprovider", "-p", "no:xdist", *tests]
    completed = subprocess.run(
        [sys.executable, "-c", CHILD, str(signature), *pytest_args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    assert " passed" in completed.stdout.splitlines()[-1], completed.stdout[-2000:]
    child = json.loads(signature.read_text())
    assert set(child) == {"libm", "lapack"}
    if changed is not None and child[changed] == portable.machine_signature()[changed]:
        # e.g. a CPU without FMA, or whose OpenBLAS kernel is the one asked for
        pytest.skip(f"{name} computes as this machine does: nothing new compared")
    if name == "numba-generic":  # the kernels were compiled here, for the generic target
        assert any((tmp_path / "numba-generic-cache").rglob("*.nbi"))
