"""What computed a result: the digest of the code that determines results.

A stored result (a sweep cell, a cell of the shipped reference archive) may be reused only
while the code that computed it has not changed. That code is :data:`RESULT_CODE`: the
packages whose files decide a cell's numbers (the agents, the engine that plays rounds,
the envs, the loss sequences and their comparators, the sets, the sweeps that batch
cells, the shipped data), ``problem.py`` and ``portable.py`` (the sums and elementary
functions results are computed with). Reports, plotting and the command line read
results and are left out, so editing a table does not invalidate a result.

:func:`result_code_digest` is SHA-256 over those files' relative paths and contents. The library
version is not part of it: under the versioning policy (docs/versions.md) a release that
leaves this code unchanged leaves every stored result valid, and a change to this code
invalidates them whatever the version number says.
"""

from __future__ import annotations

from pathlib import Path

from bco_gym.io import file_set_digest

#: The packages (under bco_gym/) whose code determines a cell's result.
RESULT_CODE = ("agents", "engine", "envs", "losses", "sets", "sweeps", "data")
#: The modules at the package's root whose code determines a cell's result.
ROOT_MODULES = ("io.py", "portable.py", "problem.py")
#: The file kinds read: sources and shipped data (the reference archive itself excluded).
SUFFIXES = (".py", ".npz", ".json", ".csv")

_DIGEST: dict[str, str] = {}


def result_code_digest() -> str:
    """SHA-256 (hex) over the source and data files that determine a cell's result
    (``problem.py``, ``portable.py`` and :data:`RESULT_CODE`), by relative path;
    ``data/references/`` excluded. Computed once per process."""
    package = Path(__file__).resolve().parent
    if str(package) in _DIGEST:
        return _DIGEST[str(package)]
    files = [package / name for name in ROOT_MODULES]
    for name in RESULT_CODE:
        files += [
            path
            for path in (package / name).rglob("*")
            if path.is_file()
            and path.suffix in SUFFIXES
            and "references" not in path.relative_to(package).parts
            and "__pycache__" not in path.parts
        ]
    named = ((str(path.relative_to(package)), path) for path in sorted(files))
    _DIGEST[str(package)] = file_set_digest(named, b"bco_gym-code/1\0").hexdigest()
    return _DIGEST[str(package)]


#: The former name of :func:`result_code_digest` (deprecated: it read like the agents'
#: :func:`~bco_gym.agents.registry.code_digest`, which digests one agent's code).
code_digest = result_code_digest

__all__ = ["RESULT_CODE", "ROOT_MODULES", "code_digest", "result_code_digest"]
