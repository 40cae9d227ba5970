"""Shipped reference results: the reference agents' cells of the built-in suites since v2.

``bco-gym bench`` on ``quick-v2``, ``standard-v2`` or ``standard-v3`` reads the reference
agents' cells (theory constants, the tuning runs and the tuned constants) from the package
instead of computing them, so that scoring an agent computes only that agent's cells. The
archive of a suite is the directory ``bco_gym/data/references/<suite>/``:

* ``<scenario>.json.gz``, one per scenario: every sweep directory the scenario's
  reference agents fill (``runs/<name>``, ``runs/<name>-tuned``, ``tuning/<name>``), each
  with its manifest and its cells; a cell holds the cell it answers (env id and kwargs,
  agent, agent kwargs, constants label, horizon, seed), its result (final regret, the
  curves at the checkpoints, the loss digest, the agent's identity ``agent_spec``; not
  the per-round losses, which no report reads) and the library version that computed it;
* ``INDEX.json``: the format, the suite, the library version that computed it
  (``bco_gym.__version__``, recorded, not compared) and the digest of the code that
  determines results (:func:`bco_gym.provenance.result_code_digest`: the agents, engine, envs,
  losses, sets and sweeps packages, ``problem.py``, ``portable.py`` and the data), the
  command that rebuilt it, the signature of the machine that computed it
  (:func:`bco_gym.portable.machine_signature`: a recomputed cell is its bits on a machine
  of that signature, within 1e-12 elsewhere; docs/performance.md), whether it covers
  every scenario of the suite (``complete``; a scenario without a file is computed by
  ``bench``), the SHA-256 of every scenario file, and the digest of every scenario's
  definition (:func:`scenario_digest`).

An archive is used only when its format and code digest are this library's, every
file matches its SHA-256 and the scenario is defined as when it was archived (same env,
env keywords, horizons, tuning and agent keywords; a subset of its seeds or agents is
the same definition): otherwise :func:`load_scenario` raises
:class:`ArchiveVersionError` (or :class:`ArchiveCorruptError`) and ``bench`` recomputes
the reference cells locally, saying why. Never mixed in silently.

The archive is read with limits, as any file from outside would be: regular files only
(not a link to a device or a pipe), at most :data:`MAX_FILE_BYTES` read from a file and
:data:`MAX_DOCUMENT_BYTES` decompressed from a scenario's file (a gzip bomb stops there),
and every document checked for its shape before use. Whatever fails is an
:class:`ArchiveCorruptError`.

Rebuilding (the one documented command; minutes for quick-v2, about half an hour of
CPU for standard-v2)::

    python -m bco_gym.reports.references quick-v2 standard-v2 standard-v3 --backend process

writes the archives into this package's ``data/references`` (``--work DIR`` keeps the
computed sweeps for resuming; default a fresh temporary directory).

A cell is one computation whatever suite asks for it: its key is the digest of its
whole identity (env id and keywords, the agent's identity and keywords, constants label,
horizon, seed, checkpoints, loop), never the suite's name. So a suite whose scenario has
the definition of another archived suite's scenario of the same name (standard-v3's
scenarios are standard-v2's, with rows added) starts from that archive's cells when the
same code computed them (:func:`reuse_archived_cells`): only its new rows are computed.
Each suite's archive still holds all of its cells (its files are self-contained).
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import hashlib
import io
import json
import os
import stat
import sys
import tempfile
import warnings
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bco_gym.engine.result import RunResult
from bco_gym.io import canonical_json, json_digest, write_json
from bco_gym.portable import machine_signature
from bco_gym.provenance import result_code_digest
from bco_gym.reports.suites import SUITES, Scenario
from bco_gym.sweeps.results import (
    FORMAT_VERSION,
    MANIFEST_NAME,
    result_from_record,
    result_record,
)

FORMAT = 2
INDEX = "INDEX.json"
#: The built-in suites whose reference cells ship with the package.
ARCHIVED = ("quick-v2", "standard-v2", "standard-v3")
REBUILD = "python -m bco_gym.reports.references {suite} --backend process"
#: The fields of a Scenario that decide what its reference cells are (its seeds and agents
#: only choose which cells are read; its words none).
DEFINING_FIELDS = ("env_id", "env_kwargs", "horizon", "tuning", "agent_horizons", "agent_kwargs")
#: Defining fields added later: in the digest only where a scenario sets them, so every
#: earlier scenario's digest (and the archives recording it) stays as it was.
DEFINING_IF_SET = ("agent_feedback",)
#: The most bytes read from one archive file (the largest shipped is 0.14 MB).
MAX_FILE_BYTES = 16_000_000
#: The most bytes a scenario's file may decompress to (the largest shipped: 0.54 MB).
MAX_DOCUMENT_BYTES = 64_000_000


class ArchiveVersionError(ValueError):
    """The archive was computed by another library version or other code."""


class ArchiveCorruptError(ValueError):
    """An archive file does not match its SHA-256 in ``INDEX.json`` (or is unreadable)."""


class ReferenceArchiveWarning(UserWarning):
    """The shipped reference cells are not used (another version); they are recomputed."""


def root() -> Path:
    """``bco_gym/data/references``."""
    import bco_gym.data

    return Path(bco_gym.data.__file__).resolve().parent / "references"


def library_version() -> str:
    import bco_gym

    return str(bco_gym.__version__)


# -- reading --------------------------------------------------------------------------------------
def scenario_digest(scenario: Scenario) -> str:
    """SHA-256 of the fields of ``scenario`` that decide its reference cells
    (:data:`DEFINING_FIELDS`, and those of :data:`DEFINING_IF_SET` it sets), canonically
    serialised."""
    return _digest(scenario, (*DEFINING_FIELDS, *DEFINING_IF_SET))


def _digest(scenario: Scenario, names: Sequence[str]) -> str:
    """The digest of the fields ``names`` of ``scenario`` (one of DEFINING_IF_SET only
    where the scenario sets it)."""
    definition = {
        name: _jsonable(getattr(scenario, name))
        for name in names
        if name in DEFINING_FIELDS or getattr(scenario, name)
    }
    return json_digest(definition)


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _jsonable(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    return value


def read_index(suite: str, where: Path | None = None) -> dict[str, Any] | None:
    """The suite's ``INDEX.json``, or None when the suite has no archive.

    ArchiveCorruptError when it is there but not a regular file, too large, not JSON,
    or not an object whose ``files`` and ``scenarios`` map names to digests."""
    path = (where or root()) / suite / INDEX
    if not os.path.lexists(path):
        return None
    try:
        index = json.loads(_read_regular(path).decode("utf-8"))
    except ValueError as error:
        raise ArchiveCorruptError(f"{str(path)!r} is unreadable: {error}") from None
    if not isinstance(index, dict):
        raise ArchiveCorruptError(
            f"{str(path)!r} holds a {type(index).__name__}, not an object; it is not an index"
        )
    for name in ("files", "scenarios"):
        table = index.get(name, {})
        if not isinstance(table, dict) or not all(
            isinstance(key, str) and isinstance(value, str) for key, value in table.items()
        ):
            raise ArchiveCorruptError(
                f"{str(path)!r}: {name!r} is not an object of names and digests"
            )
    return index


def _read_regular(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``limit`` bytes
    (ArchiveCorruptError otherwise: a link to /dev/zero or a pipe is never read)."""
    try:  # O_NONBLOCK: opening a pipe must not wait for a writer
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise ArchiveCorruptError(f"{str(path)!r} is unreadable: {error}") from None
    with open(descriptor, "rb") as stream:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise ArchiveCorruptError(
                f"{str(path)!r} is not a regular file (a device, a pipe or a directory); "
                "an archive holds regular files only"
            )
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise ArchiveCorruptError(f"{str(path)!r} is larger than {limit:,} bytes")
    return data


def _gunzip(payload: bytes, path: Path, limit: int = MAX_DOCUMENT_BYTES) -> bytes:
    """``payload`` decompressed, stopping at ``limit`` bytes (ArchiveCorruptError beyond
    it, or for a payload that is not gzip)."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(payload)) as stream:
            data = stream.read(limit + 1)
    except (OSError, EOFError, zlib.error) as error:
        raise ArchiveCorruptError(f"{str(path)!r} is not a gzip file ({error})") from None
    if len(data) > limit:
        raise ArchiveCorruptError(
            f"{str(path)!r} decompresses to more than {limit:,} bytes; not read further"
        )
    return data


def check_index(index: dict[str, Any], suite: str) -> None:
    """ArchiveVersionError unless the index is this archive format's and this code's
    (:func:`~bco_gym.provenance.result_code_digest`). The library version that computed it is
    recorded, not compared: a release that leaves the result code unchanged keeps the
    archive valid (docs/versions.md)."""
    found = (index.get("format"), index.get("code_digest"))
    here = (FORMAT, result_code_digest())
    if found != here:
        raise ArchiveVersionError(
            f"the shipped reference cells of {suite!r} are stale: they were computed by "
            f"other code (code {str(found[1])[:12]}, archive format {found[0]}, bco_gym "
            f"{index.get('library_version')}); this is code {here[1][:12]}, format "
            f"{here[0]}, bco_gym {library_version()}. They are not used: the reference cells "
            f"are recomputed (rebuild the archive with `{REBUILD.format(suite=suite)}`)"
        )


def archive_digest(suite: str, where: Path | None = None) -> str | None:
    """SHA-256 of the suite's ``INDEX.json`` as shipped (it holds every scenario file's
    SHA-256, so it names the archive's whole content; ``sha256sum`` gives the same), or
    None when the suite has no archive."""
    path = (where or root()) / suite / INDEX
    if not path.is_file():
        return None
    return hashlib.sha256(path.read_bytes()).hexdigest()


def archive_status(suite: str, where: Path | None = None) -> str:
    """One line: whether ``bench`` can read the suite's archive with this code, and what
    to do when it cannot."""
    try:
        index = read_index(suite, where)
    except ArchiveCorruptError as error:
        return f"unreadable ({error})"
    if index is None:
        return "none shipped"
    if (index.get("format"), index.get("code_digest")) != (FORMAT, result_code_digest()):
        return (
            f"stale: computed by other code (code {str(index.get('code_digest'))[:12]}, "
            f"format {index.get('format')}; this is code {result_code_digest()[:12]}, format "
            f"{FORMAT}), so bench recomputes its reference cells; rebuild it with "
            f"`{REBUILD.format(suite=suite)}`"
        )
    complete = "complete" if index.get("complete") else "incomplete"
    return (
        f"valid for this code ({len(index.get('files', {}))} scenarios, {complete}; "
        f"computed by bco_gym {index.get('library_version')})"
    )


def load_scenario(
    suite: str,
    scenario: str,
    where: Path | None = None,
    *,
    check_version: bool = True,
    definition: Scenario | None = None,
) -> dict[str, tuple[dict[str, Any], list[tuple[dict[str, Any], RunResult]]]] | None:
    """Sweep directory (relative) -> (its manifest spec, [(cell dict, result)]) of one
    archived scenario; None when the suite or the scenario has no archive.

    ArchiveVersionError for another version or code (``check_version``), or when
    ``definition`` (the scenario as it will be played) is not the one archived;
    ArchiveCorruptError for a file that does not match its digest.
    """
    base = where or root()
    index = read_index(suite, base)
    if index is None:
        return None
    if check_version:
        check_index(index, suite)
    name = f"{scenario}.json.gz"
    expected = index.get("files", {}).get(name)
    if expected is None:
        return None
    if definition is not None:
        archived = index.get("scenarios", {}).get(scenario)
        if archived != scenario_digest(definition):
            raise ArchiveVersionError(
                f"the shipped reference cells of {suite!r} scenario {scenario!r} were "
                f"computed for another definition of it (digest {str(archived)[:12]}, now "
                f"{scenario_digest(definition)[:12]}: its env, env keywords, horizons, tuning "
                f"or agent keywords differ). They are not used: its reference cells are "
                f"recomputed (rebuild the archive with `{REBUILD.format(suite=suite)}`)"
            )
    path = base / suite / name
    payload = _read_regular(path)
    if hashlib.sha256(payload).hexdigest() != expected:
        raise ArchiveCorruptError(
            f"{str(path)!r} does not match its SHA-256 in {INDEX} (edited or truncated)"
        )
    try:
        document = json.loads(_gunzip(payload, path).decode("utf-8"))
    except ValueError as error:
        raise ArchiveCorruptError(f"{str(path)!r} is not JSON: {error}") from None
    try:
        return _sweeps_of(document)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        raise ArchiveCorruptError(
            f"{str(path)!r} does not hold a scenario's sweeps ({type(error).__name__}: {error})"
        ) from None


def _sweeps_of(
    document: Any,
) -> dict[str, tuple[dict[str, Any], list[tuple[dict[str, Any], RunResult]]]]:
    """The sweeps of a scenario's document, each cell checked (raises on a wrong shape)."""
    from bco_gym.sweeps.sweep import Cell

    sweeps = {}
    for relative, sweep in document["sweeps"].items():
        spec = sweep["spec"]
        if not isinstance(relative, str) or not isinstance(spec, dict):
            raise TypeError(f"sweep {relative!r}: expected a name and a spec object")
        if not isinstance(spec["cells"], list):
            raise TypeError(f"sweep {relative!r}: its spec's cells are not a list")
        cells = []
        for entry in sweep["cells"]:
            Cell.from_dict(entry["cell"])  # a cell dict of the sweep's form
            cells.append((entry["cell"], _result_of(entry["result"], entry["arrays"])))
        sweeps[relative] = (spec, cells)
    return sweeps


def _result_of(metadata: dict[str, Any], arrays: dict[str, Any]) -> RunResult:
    from bco_gym.sweeps.results import ARRAY_DTYPES

    values = {name: np.asarray(value, dtype=ARRAY_DTYPES[name]) for name, value in arrays.items()}
    return result_from_record(metadata, values)


def materialise(suite: str, scenario: Scenario, out: Path, where: Path | None = None) -> int:
    """Write the archived reference cells of ``scenario`` into the bench directory
    ``out`` as finished sweep cells (a sweep then computes only the others); the number
    of cells written. 0 when there is no archive for it; raises as :func:`load_scenario`."""
    from bco_gym.sweeps.store import SweepStore, merge_specs

    archived = load_scenario(suite, scenario.name, where, definition=scenario)
    if not archived:
        return 0
    written = 0
    for relative, (spec, cells) in archived.items():
        directory = out / relative
        store = SweepStore(directory)
        with store.lock():
            if store.manifest_path.exists():
                stored = store.read_manifest()["spec"]
                merged = merge_specs(stored, spec, directory)
                if merged != stored:
                    write_json(store.manifest_path, {"format": FORMAT_VERSION, "spec": merged})
            else:
                directory.mkdir(parents=True, exist_ok=True)
                write_json(store.manifest_path, {"format": FORMAT_VERSION, "spec": spec})
            store.cells_directory.mkdir(exist_ok=True)
            for cell, result in cells:
                from bco_gym.sweeps.sweep import Cell

                key = Cell.from_dict(cell).key
                if not store.cell_path(key).exists():
                    store.save(key, result, cell)
                    written += 1
    return written


# -- writing --------------------------------------------------------------------------------------
def _sweep_document(directory: Path) -> dict[str, Any]:
    from bco_gym.sweeps.store import SweepStore
    from bco_gym.sweeps.sweep import Cell

    store = SweepStore(directory)
    spec = store.read_manifest()["spec"]
    entries = []
    version = library_version()
    for cell in spec["cells"]:
        key = Cell.from_dict(cell).key
        result = store.load(key, cell)
        if result is None:
            raise ValueError(f"{str(directory)!r}: cell {key} is not finished; cannot archive")
        metadata, arrays = result_record(result)
        arrays.pop("round_losses", None)  # per-round losses: T floats a cell, not shipped
        metadata["round_losses"] = None
        entries.append(
            {
                "cell": cell,
                "library_version": version,
                "result": json.loads(json.dumps(metadata)),
                "arrays": {name: array.tolist() for name, array in arrays.items()},
            }
        )
    return {"spec": spec, "cells": entries}


def compute_scenario(
    scenario: Scenario,
    work: Path,
    *,
    backend: str = "serial",
    progress: bool | str | None = False,
) -> list[RunResult]:
    """The reference cells of ``scenario`` (theory, tuning, tuned) into ``work``."""
    from bco_gym.reports.demo import own_horizon
    from bco_gym.reports.scale import play_scenario

    horizon = scenario.horizon if scenario.horizon is not None else own_horizon(scenario)
    spec = scenario.as_benched()
    results, _ = play_scenario(spec, work, [horizon], backend=backend, progress=progress)
    return results


def build_archive(
    suite: str,
    work: Path,
    *,
    backend: str = "serial",
    where: Path | None = None,
    scenarios: Sequence[str] | None = None,
    announce: Callable[[str], None] | None = None,
    command: str = "",
) -> Path:
    """Compute every reference cell of ``suite`` into ``work`` (resumable) and write the
    archive ``<where>/<suite>/`` (default this package's); returns that directory."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}; allowed: {', '.join(SUITES)}")
    target = (where or root()) / suite
    target.mkdir(parents=True, exist_ok=True)
    chosen = [s for s in SUITES[suite] if scenarios is None or s.name in scenarios]
    old = read_index(suite, where) or {}
    same = (old.get("format"), old.get("code_digest")) == (FORMAT, result_code_digest())
    # rebuilding some scenarios keeps the others only when the same code computed them
    files = dict(old.get("files", {})) if scenarios is not None and same else {}
    digests = dict(old.get("scenarios", {})) if scenarios is not None and same else {}
    for scenario in chosen:
        directory = work / scenario.name
        reused = reuse_archived_cells(suite, scenario, directory, where)
        if announce is not None:
            announce(f"{suite}: {scenario.name}" + (f" ({reused} cells reused)" if reused else ""))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compute_scenario(scenario, directory, backend=backend)
        sweeps = {
            str(path.parent.relative_to(directory)): _sweep_document(path.parent)
            for path in sorted(directory.rglob(MANIFEST_NAME))
        }
        document = {
            "format": FORMAT,
            "suite": suite,
            "scenario": scenario.name,
            "library_version": library_version(),
            "code_digest": result_code_digest(),
            "sweeps": sweeps,
        }
        payload = gzip.compress(canonical_json(document), compresslevel=9, mtime=0)
        name = f"{scenario.name}.json.gz"
        (target / name).write_bytes(payload)
        files[name] = hashlib.sha256(payload).hexdigest()
        digests[scenario.name] = scenario_digest(scenario)
        _write_index(target, suite, files, digests, command, complete=False)  # resumable
    known = {f"{s.name}.json.gz" for s in SUITES[suite]}
    for stale in target.glob("*.json.gz"):
        if stale.name not in known or stale.name not in files:
            stale.unlink()
            files.pop(stale.name, None)
            digests.pop(stale.name.removesuffix(".json.gz"), None)
    _write_index(target, suite, files, digests, command, complete=set(files) == known)
    return target


def reuse_archived_cells(
    suite: str, scenario: Scenario, work: Path, where: Path | None = None
) -> int:
    """Write into ``work`` (a scenario's sweeps, as :func:`compute_scenario` fills them)
    the cells that another archived suite holds for a scenario of the same name and
    definition (:func:`scenario_digest`, rows of their own feedback aside: they only add
    cells), when this code computed them; the number written. Their keys are their
    identities, so a sweep then computes only the cells no archive holds."""
    plain = _digest(scenario, DEFINING_FIELDS)
    written = 0
    for other in ARCHIVED:
        if other == suite or other not in SUITES:
            continue
        same = [s for s in SUITES[other] if s.name == scenario.name]
        try:
            index = read_index(other, where)
            if not same or index is None or index.get("scenarios", {}).get(scenario.name) != plain:
                continue
            check_index(index, other)
            written += materialise(other, same[0], work, where)
        except (ArchiveVersionError, ArchiveCorruptError):
            continue  # another code's or a damaged archive: computed here instead
    return written


def _write_index(
    target: Path,
    suite: str,
    files: dict[str, str],
    digests: dict[str, str],
    command: str,
    *,
    complete: bool,
) -> None:
    index = {
        "format": FORMAT,
        "suite": suite,
        "library_version": library_version(),
        "code_digest": result_code_digest(),
        "command": command or REBUILD.format(suite=suite),
        "machine": machine_signature(),
        "complete": complete,
        "files": dict(sorted(files.items())),
        "scenarios": dict(sorted(digests.items())),
    }
    (target / INDEX).write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bco_gym.reports.references",
        description="Recompute the reference cells of built-in suites and write their "
        "archives into the package (bco_gym/data/references/<suite>/).",
    )
    parser.add_argument("suites", nargs="+", choices=ARCHIVED)
    parser.add_argument("--backend", choices=("serial", "process"), default="serial")
    parser.add_argument("--work", type=Path, default=None, help="keep the sweeps here")
    parser.add_argument("--scenarios", default=None, help="comma-separated: only these")
    args = parser.parse_args(argv)
    scenarios = args.scenarios.split(",") if args.scenarios else None

    def announce(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory() as scratch:
        work = args.work or Path(scratch)
        for suite in args.suites:
            command = "python -m bco_gym.reports.references " + " ".join(
                sys.argv[1:] if argv is None else argv
            )
            path = build_archive(
                suite,
                work / suite,
                backend=args.backend,
                scenarios=scenarios,
                announce=announce,
                command=command,
            )
            size = sum(p.stat().st_size for p in path.iterdir())
            print(f"wrote {path} ({size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


__all__ = [
    "ARCHIVED",
    "DEFINING_FIELDS",
    "DEFINING_IF_SET",
    "ArchiveCorruptError",
    "ArchiveVersionError",
    "ReferenceArchiveWarning",
    "archive_digest",
    "archive_status",
    "build_archive",
    "load_scenario",
    "materialise",
    "result_code_digest",
    "reuse_archived_cells",
    "scenario_digest",
]
