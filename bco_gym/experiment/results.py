"""Results on disk: JSON metadata + NPZ arrays, written atomically, resumable.

A sweep directory holds

    manifest.json          the sweep's spec (its cells), written first
    cells/<key>.npz        a cell's arrays (np.savez; loaded with allow_pickle=False)
    cells/<key>.json       a cell's metadata, written last; names its NPZ and its sha256

Every file is written to a temporary file in the same directory, flushed, fsynced and
moved into place with ``os.replace`` (atomic on POSIX), then the directory is fsynced.
A cell counts as done only when its JSON exists and parses, and the NPZ it names has
the recorded sha256 and loads: a process killed mid-write (SIGKILL included) leaves at
worst a ``*.tmp`` file or an NPZ without JSON, and the cell is computed again. Nothing
is ever pickled.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import fields
from pathlib import Path
from typing import IO, Any

import numpy as np

from bco_gym.experiment.runner import RunResult

FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"
CELLS_DIR = "cells"
TMP_SUFFIX = ".tmp"


class SweepMismatchError(ValueError):
    """The output directory holds a different sweep (or something that is not a sweep)."""


# -- atomic files ---------------------------------------------------------------------------
def atomic_write(path: str | os.PathLike, write: Callable[[IO[bytes]], None]) -> None:
    """Write ``path`` all-or-nothing: temp file in the same dir, fsync, os.replace."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(prefix=path.name + ".", suffix=TMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)


def _fsync_directory(directory: Path) -> None:
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory handles
        return
    try:
        os.fsync(descriptor)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(descriptor)


def write_json(path: str | os.PathLike, document: Any) -> None:
    """Atomically write ``document`` as indented, key-sorted JSON."""
    text = json.dumps(document, indent=2, sort_keys=True) + "\n"
    atomic_write(path, lambda stream: stream.write(text.encode("utf-8")))


def read_json(path: str | os.PathLike) -> Any:
    with open(path, encoding="utf-8") as stream:
        return json.load(stream)


# -- one result ------------------------------------------------------------------------------
def result_record(result: RunResult) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Split a result into JSON metadata and named arrays."""
    arrays = {
        name: getattr(result, name)
        for name in RunResult.ARRAY_FIELDS
        if getattr(result, name) is not None
    }
    metadata = {f.name: getattr(result, f.name) for f in fields(result) if f.name not in arrays}
    metadata["round_losses"] = None if result.round_losses is None else "npz"
    return metadata, arrays


def result_from_record(metadata: dict[str, Any], arrays: dict[str, np.ndarray]) -> RunResult:
    """Rebuild a result from :func:`result_record`'s two parts."""
    values = dict(metadata)
    for name in RunResult.ARRAY_FIELDS:
        values[name] = arrays.get(name)
    known = {f.name for f in fields(RunResult)}
    return RunResult(**{key: value for key, value in values.items() if key in known})


def _npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def save_result(path: str | os.PathLike, result: RunResult) -> Path:
    """Save ``result`` as ``path`` (JSON, written last) and ``path`` with suffix .npz."""
    path = Path(path)
    if path.suffix != ".json":
        raise ValueError(f"result path {str(path)!r} must end in .json")
    metadata, arrays = result_record(result)
    payload = _npz_bytes(arrays)
    npz_path = path.with_suffix(".npz")
    atomic_write(npz_path, lambda stream: stream.write(payload))
    document = {
        "format": FORMAT_VERSION,
        "arrays": npz_path.name,
        "arrays_sha256": hashlib.sha256(payload).hexdigest(),
        "result": metadata,
    }
    write_json(path, document)
    return path


def load_result(path: str | os.PathLike) -> RunResult:
    """Load a result saved by :func:`save_result`; ValueError if incomplete or corrupt."""
    path = Path(path)
    try:
        document = read_json(path)
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"result {str(path)!r} is missing or not valid JSON: {error}") from error
    if not isinstance(document, dict) or document.get("format") != FORMAT_VERSION:
        raise ValueError(f"result {str(path)!r} is not a format-{FORMAT_VERSION} bco_gym result")
    npz_path = path.parent / str(document.get("arrays"))
    try:
        payload = npz_path.read_bytes()
    except OSError as error:
        raise ValueError(f"result {str(path)!r}: its arrays file is missing: {error}") from error
    if hashlib.sha256(payload).hexdigest() != document.get("arrays_sha256"):
        raise ValueError(f"result {str(path)!r}: {npz_path.name} does not match its checksum")
    with np.load(io.BytesIO(payload), allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    return result_from_record(document["result"], arrays)


def try_load_result(path: str | os.PathLike) -> RunResult | None:
    """The saved result at ``path``, or None when it is absent or half-written."""
    try:
        return load_result(path)
    except (ValueError, TypeError, KeyError, OSError):
        return None


# -- a sweep directory -------------------------------------------------------------------------
class SweepStore:
    """The files of one sweep: its manifest and one JSON + NPZ pair per cell.

    ``open`` writes the manifest when the directory is new and refuses (with
    :class:`SweepMismatchError`) a directory that holds a different sweep or files
    that are not a sweep. One process writes a sweep directory at a time.
    """

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        self.cells_directory = self.directory / CELLS_DIR

    @property
    def manifest_path(self) -> Path:
        return self.directory / MANIFEST_NAME

    def open(self, spec: dict[str, Any]) -> SweepStore:
        """Create the sweep (manifest first) or check that ``spec`` is the one stored."""
        document = json.loads(json.dumps({"format": FORMAT_VERSION, "spec": spec}))
        if self.manifest_path.exists():
            stored = self.read_manifest()
            if stored != document:
                raise SweepMismatchError(
                    f"{str(self.directory)!r} holds a different sweep "
                    f"({describe_spec(stored.get('spec'))}) than this one "
                    f"({describe_spec(spec)}); pick another output directory or delete it"
                )
        else:
            strangers = [
                entry.name
                for entry in self.directory.glob("*")
                if not entry.name.endswith(TMP_SUFFIX)
            ]
            if strangers:
                raise SweepMismatchError(
                    f"{str(self.directory)!r} is not empty and has no {MANIFEST_NAME} "
                    f"(found {', '.join(sorted(strangers)[:5])}); refusing to mix a sweep "
                    "into it: pick a new or empty output directory"
                )
            write_json(self.manifest_path, document)
        self.cells_directory.mkdir(parents=True, exist_ok=True)
        self.remove_temporaries()
        return self

    def read_manifest(self) -> dict[str, Any]:
        try:
            document = read_json(self.manifest_path)
        except (OSError, json.JSONDecodeError) as error:
            raise SweepMismatchError(
                f"{str(self.manifest_path)!r} is unreadable ({error}); not a bco_gym sweep"
            ) from error
        if not isinstance(document, dict) or document.get("format") != FORMAT_VERSION:
            raise SweepMismatchError(
                f"{str(self.manifest_path)!r} is not a format-{FORMAT_VERSION} bco_gym manifest"
            )
        return document

    def remove_temporaries(self) -> None:
        """Delete temp files left by a killed writer (they are never read)."""
        for folder in (self.directory, self.cells_directory):
            for entry in folder.glob("*" + TMP_SUFFIX):
                entry.unlink(missing_ok=True)

    def cell_path(self, key: str) -> Path:
        return self.cells_directory / f"{key}.json"

    def load(self, key: str) -> RunResult | None:
        """The finished result of cell ``key``, or None if it is not (completely) there."""
        return try_load_result(self.cell_path(key))

    def save(self, key: str, result: RunResult) -> Path:
        return save_result(self.cell_path(key), result)

    def load_all(self, keys: Iterable[str]) -> list[RunResult]:
        """The finished results among ``keys``, in that order."""
        loaded = (self.load(key) for key in keys)
        return [result for result in loaded if result is not None]


def describe_spec(spec: Any) -> str:
    """A one-line summary of a sweep spec (for error messages)."""
    if not isinstance(spec, dict) or not isinstance(spec.get("cells"), list):
        return "an unknown spec"
    cells = spec["cells"]

    def values(name: str) -> str:
        return ",".join(str(v) for v in sorted({str(cell.get(name)) for cell in cells}))

    return (
        f"{len(cells)} cells: envs {values('env_id')}; agents {values('agent')}; "
        f"horizons {values('horizon')}; seeds {values('seed')}"
    )
