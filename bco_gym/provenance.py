"""What computed a result: the digest of the code that determines results.

A stored result (a sweep cell, a cell of the shipped reference archive) may be reused only
while the code that computed it has not changed. That code is :data:`RESULT_CODE`: the
packages whose files decide a cell's numbers (the agents, the engine that plays rounds,
the envs, the loss sequences and their comparators, the sets, the sweeps that batch
cells, the shipped data), ``problem.py`` and ``portable.py`` (the sums and elementary
functions results are computed with). Reports, plotting and the command line read
results and are left out, so editing a table does not invalidate a result.

:func:`code_digest` is SHA-256 over those files' relative paths and contents. The library
version is not part of it: under the versioning policy (docs/versions.md) a release that
leaves this code unchanged leaves every stored result valid, and a change to this code
invalidates them whatever the version number says.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

#: The packages (under bco_gym/) whose code determines a cell's result.
RESULT_CODE = ("agents", "engine", "envs", "losses", "sets", "sweeps", "data")
#: The file kinds read: sources and shipped data (the reference archive itself excluded).
SUFFIXES = (".py", ".npz", ".json", ".csv")

_DIGEST: dict[str, str] = {}


def code_digest() -> str:
    """SHA-256 (hex) over the source and data files that determine a cell's result
    (``problem.py``, ``portable.py`` and :data:`RESULT_CODE`), by relative path;
    ``data/references/`` excluded. Computed once per process."""
    package = Path(__file__).resolve().parent
    if str(package) in _DIGEST:
        return _DIGEST[str(package)]
    digest = hashlib.sha256(b"bco_gym-code/1\0")
    files = [package / "problem.py", package / "portable.py"]
    for name in RESULT_CODE:
        files += [
            path
            for path in (package / name).rglob("*")
            if path.is_file()
            and path.suffix in SUFFIXES
            and "references" not in path.relative_to(package).parts
            and "__pycache__" not in path.parts
        ]
    for path in sorted(files):
        digest.update(str(path.relative_to(package)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    _DIGEST[str(package)] = digest.hexdigest()
    return _DIGEST[str(package)]


__all__ = ["RESULT_CODE", "code_digest"]
