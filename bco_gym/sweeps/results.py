"""Results on disk: one JSON + one NPZ per result, bound together, read defensively.

A saved result is ``<name>.json`` (metadata) beside ``<name>.npz`` (its arrays). The
JSON holds the result's *key* (the cell it answers: env id, env kwargs, agent, agent
kwargs, horizon, seed, and for a sweep cell the rest of
:class:`~bco_gym.sweeps.cell.Cell`), the shape declared for every array, the metadata,
and one SHA-256 digest over the canonical JSON of all of that *and* the NPZ's bytes. So

* editing any value in the JSON (``final_regret``, the key, a declared shape),
* rewriting the NPZ, even together with an updated per-file checksum,
* copying one cell's files over another's (its key is not the expected one),

is detected when the result is read: the digest, the key and the shapes must all
agree. This is *integrity*, not authentication: whoever can write the directory and
knows this format can recompute the digest over forged files. An HMAC keyed by a
secret kept in the same directory would add nothing against such a writer, and one
keyed outside it would make results unreadable on any other machine, so none is
used; trust a results directory as much as you trust who could write it. What reading
does guarantee for any directory, forged or not: only regular files inside it are
opened (``O_NOFOLLOW``: no symlinks, no ``../`` or absolute names, no devices such as
``/dev/zero``), sizes are checked before anything is allocated (an array larger than
its declared shape, or a shape larger than the key allows, is refused), the NPZ is
parsed as plain stored ``.npy`` members (no decompression, no pickles).

Writing: every file is written atomically (:func:`bco_gym.io.atomic_write`), the JSON
last. A process killed mid-write (SIGKILL included) leaves at worst a ``*.tmp`` file or
an NPZ without its JSON, and the cell counts as not done. Nothing is ever pickled.

A sweep directory (:class:`~bco_gym.sweeps.store.SweepStore`) holds
``manifest.json`` (the cells), ``cells/`` (one result per finished cell, named by the
cell's key) and ``.lock`` (:class:`~bco_gym.sweeps.store.DirectoryLock`: one writer
at a time).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import zipfile
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

from bco_gym.agents.registry import current_agent_name
from bco_gym.engine.result import RunResult
from bco_gym.engine.tally import DEFAULT_CHECKPOINT_COUNT, ROUND_LOSSES_LIMIT
from bco_gym.io import canonical_json, write_bytes, write_json

FORMAT_VERSION = 2
MANIFEST_NAME = "manifest.json"
CELLS_DIR = "cells"
# A JSON document read from a results directory is refused above this many bytes.
JSON_LIMIT = 16 << 20
# Checkpoints a result without a checkpoint list in its key may declare (run(checkpoints=...)).
CURVE_LIMIT = 1 << 20
KEY_FIELDS = ("env_id", "env_kwargs", "agent", "agent_kwargs", "horizon", "seed")
CURVE_FIELDS = ("checkpoints", "cumulative_loss", "comparator_loss", "comparator_gap", "regret")
ARRAY_DTYPES = {name: "<f8" for name in RunResult.ARRAY_FIELDS} | {"checkpoints": "<i8"}
DIGEST_DOMAIN = b"bco_gym-result/2\0"


class SweepMismatchError(ValueError):
    """The output directory holds a different sweep (or something that is not a sweep)."""


class CorruptResultError(ValueError):
    """A saved result fails its checks: digest, key, shapes, or the files themselves."""


# -- reading and writing files --------------------------------------------------------------
def read_regular(path: str | os.PathLike, limit: int) -> bytes:
    """The bytes of ``path`` if it is a regular file (not a symlink) of at most ``limit``.

    OSError when it cannot be opened (missing, a symlink, ...); CorruptResultError when it
    is not a regular file or is larger than ``limit`` bytes. Nothing beyond ``limit`` is read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    descriptor = os.open(path, flags)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise CorruptResultError(f"{str(path)!r} is not a regular file")
        if info.st_size > limit:
            raise CorruptResultError(
                f"{str(path)!r} holds {info.st_size} bytes, more than the {limit} allowed"
            )
        with os.fdopen(descriptor, "rb", closefd=False) as stream:
            payload = stream.read(limit + 1)
    finally:
        os.close(descriptor)
    if len(payload) > limit:
        raise CorruptResultError(f"{str(path)!r} grew beyond the {limit} bytes allowed")
    return payload


def read_json(path: str | os.PathLike, limit: int = JSON_LIMIT) -> Any:
    """The JSON document in the regular file ``path`` (ValueError if it is not JSON)."""
    return json.loads(read_regular(path, limit).decode("utf-8"))


# -- one result ------------------------------------------------------------------------------
def result_record(result: RunResult) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Split a result into JSON metadata and named arrays."""
    arrays = {
        name: np.ascontiguousarray(getattr(result, name), dtype=ARRAY_DTYPES[name])
        for name in RunResult.ARRAY_FIELDS
        if getattr(result, name) is not None
    }
    metadata = {f.name: getattr(result, f.name) for f in fields(result) if f.name not in arrays}
    metadata["round_losses"] = None if result.round_losses is None else "npz"
    return metadata, arrays


def result_from_record(metadata: dict[str, Any], arrays: dict[str, np.ndarray]) -> RunResult:
    """Rebuild a result from :func:`result_record`'s two parts (an agent renamed since it
    was saved, e.g. the old "so-bgd", reads as its current name:
    :func:`~bco_gym.agents.moved.current_agent_name`)."""
    values = dict(metadata)
    spec = values.get("agent_spec")
    spec = dict(spec) if isinstance(spec, dict) else {}
    current = current_agent_name(values.get("agent"), spec.get("import_path"))
    if current != values.get("agent"):
        values["agent"] = current
        if spec:
            values["agent_spec"] = {**spec, "name": current}
    for name in RunResult.ARRAY_FIELDS:
        values[name] = arrays.get(name)
    known = {f.name for f in fields(RunResult)}
    return RunResult(**{key: value for key, value in values.items() if key in known})


def result_key(result: RunResult) -> dict[str, Any]:
    """The key of a standalone result: env id, env kwargs, agent, agent kwargs, T, seed."""
    return json.loads(json.dumps({name: getattr(result, name) for name in KEY_FIELDS}))


def _npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _digest(document: dict[str, Any], payload: bytes) -> str:
    body = {name: value for name, value in document.items() if name != "sha256"}
    return hashlib.sha256(DIGEST_DOMAIN + canonical_json(body) + b"\0" + payload).hexdigest()


def save_result(
    path: str | os.PathLike, result: RunResult, key: dict[str, Any] | None = None
) -> Path:
    """Save ``result`` as ``path`` (JSON, written last) and ``path`` with suffix .npz.

    ``key`` is the cell the result answers (default :func:`result_key`); it must agree
    with the result's env id, agent, horizon and seed.
    """
    path = Path(path)
    if path.suffix != ".json":
        raise ValueError(f"result path {str(path)!r} must end in .json")
    key = json.loads(json.dumps(result_key(result) if key is None else key))
    _check_result_matches_key(path, key, result.env_id, result.agent, result.horizon, result.seed)
    metadata, arrays = result_record(result)
    payload = _npz_bytes(arrays)
    document = {
        "format": FORMAT_VERSION,
        "key": key,
        "arrays": path.with_suffix(".npz").name,
        "shapes": {name: list(array.shape) for name, array in arrays.items()},
        "result": json.loads(json.dumps(metadata)),
    }
    document["sha256"] = _digest(document, payload)
    write_bytes(path.with_suffix(".npz"), payload)
    write_json(path, document)
    return path


def load_result(path: str | os.PathLike, expected_key: dict[str, Any] | None = None) -> RunResult:
    """Load and verify a result saved by :func:`save_result`.

    Raises FileNotFoundError when the JSON is absent, CorruptResultError (a ValueError)
    when anything fails: not a regular file, not JSON, another format, a key other than
    ``expected_key`` (when given), shapes the key does not allow, a digest mismatch.
    """
    path = Path(path)
    try:
        document = json.loads(read_regular(path, JSON_LIMIT).decode("utf-8"))
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CorruptResultError(
            f"result {str(path)!r} is unreadable or not JSON: {error}"
        ) from None
    shapes = _check_document(path, document, expected_key)
    npz_path = path.with_suffix(".npz")
    try:
        payload = read_regular(npz_path, _npz_limit(shapes))
    except OSError as error:
        raise CorruptResultError(f"result {str(path)!r}: its arrays file: {error}") from None
    if _digest(document, payload) != document.get("sha256"):
        raise CorruptResultError(
            f"result {str(path)!r}: its JSON and {npz_path.name} do not match their digest "
            "(edited, truncated or swapped files)"
        )
    arrays = parse_npz(payload, shapes, npz_path)
    try:
        return result_from_record(document["result"], arrays)
    except TypeError as error:
        raise CorruptResultError(f"result {str(path)!r}: malformed metadata: {error}") from None


def _check_document(
    path: Path, document: Any, expected_key: dict[str, Any] | None
) -> dict[str, tuple[int, ...]]:
    """The declared shapes, after checking the document's form, key and bounds."""
    if not isinstance(document, dict) or document.get("format") != FORMAT_VERSION:
        raise CorruptResultError(f"result {str(path)!r} is not a format-{FORMAT_VERSION} result")
    key, metadata = document.get("key"), document.get("result")
    if not isinstance(key, dict) or not isinstance(metadata, dict):
        raise CorruptResultError(f"result {str(path)!r} has no key or no metadata")
    if expected_key is not None and key != json.loads(json.dumps(expected_key)):
        raise CorruptResultError(
            f"result {str(path)!r} answers another cell ({describe_key(key)}), "
            f"not {describe_key(expected_key)}"
        )
    if document.get("arrays") != path.with_suffix(".npz").name:
        raise CorruptResultError(
            f"result {str(path)!r} names arrays {document.get('arrays')!r}; "
            f"only {path.with_suffix('.npz').name!r} beside it is read"
        )
    _check_result_matches_key(
        path, key, *(metadata.get(name) for name in ("env_id", "agent", "horizon", "seed"))
    )
    return _declared_shapes(path, document.get("shapes"), key)


def _check_result_matches_key(path: Path, key: dict[str, Any], *values: Any) -> None:
    names = ("env_id", "agent", "horizon", "seed")
    # A sweep cell with a label names its agent by the label (what the result carries).
    expected = {**key, "agent": key["label"]} if key.get("label") is not None else key
    wrong = [name for name, value in zip(names, values, strict=True) if expected.get(name) != value]
    if wrong:
        raise CorruptResultError(
            f"result {str(path)!r}: its {', '.join(wrong)} disagree with its key "
            f"({describe_key(key)})"
        )


def _declared_shapes(path: Path, shapes: Any, key: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """Shapes the key allows: curves of one length n <= min(T, checkpoints), losses (T,)."""
    horizon = key.get("horizon")
    if isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < 1:
        raise CorruptResultError(f"result {str(path)!r}: key horizon {horizon!r} is not valid")
    if not isinstance(shapes, dict) or set(shapes) - set(RunResult.ARRAY_FIELDS):
        raise CorruptResultError(f"result {str(path)!r}: malformed array shapes {shapes!r}")
    allowed = {name: _curve_limit(key) for name in CURVE_FIELDS}
    allowed["round_losses"] = horizon if horizon <= ROUND_LOSSES_LIMIT else 0
    declared = {}
    for name, shape in shapes.items():
        if not (isinstance(shape, list) and len(shape) == 1 and _count(shape[0])):
            raise CorruptResultError(f"result {str(path)!r}: {name} shape {shape!r} is not (n,)")
        if shape[0] > allowed[name] or (name == "round_losses" and shape[0] != horizon):
            raise CorruptResultError(
                f"result {str(path)!r}: {name} declares {shape[0]} entries; "
                f"the key allows {allowed[name]}"
            )
        declared[name] = (shape[0],)
    if {declared.get(name) for name in CURVE_FIELDS} != {declared.get("checkpoints")}:
        raise CorruptResultError(f"result {str(path)!r}: the curves' shapes differ")
    return declared


def _curve_limit(key: dict[str, Any]) -> int:
    horizon = key["horizon"]
    checkpoints = key.get("checkpoints")
    if "checkpoints" in key and checkpoints is None:
        return min(horizon, DEFAULT_CHECKPOINT_COUNT)
    if isinstance(checkpoints, list):
        return min(horizon, len(checkpoints) + 1)
    return min(horizon, CURVE_LIMIT)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _npz_limit(shapes: dict[str, tuple[int, ...]]) -> int:
    """Bytes an NPZ of these shapes may take: the data, plus headers (zip and .npy)."""
    return sum(8 * int(np.prod(shape)) + 1024 for shape in shapes.values()) + 4096


def parse_npz(
    payload: bytes, shapes: dict[str, tuple[int, ...]], where: str | os.PathLike = "npz"
) -> dict[str, np.ndarray]:
    """The arrays of an uncompressed NPZ holding exactly ``shapes`` (dtypes as saved).

    Each member must be stored (not compressed) and its ``.npy`` header must declare
    exactly the expected shape and dtype before any array is built.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(payload))
        members = {info.filename: info for info in archive.infolist()}
    except (zipfile.BadZipFile, ValueError, OSError) as error:
        raise CorruptResultError(f"{str(where)!r} is not an NPZ archive: {error}") from None
    if set(members) != {f"{name}.npy" for name in shapes}:
        raise CorruptResultError(
            f"{str(where)!r} holds {sorted(members)}, expected {sorted(shapes)} (.npy)"
        )
    arrays = {}
    for name, shape in shapes.items():
        info = members[f"{name}.npy"]
        if info.compress_type != zipfile.ZIP_STORED:
            raise CorruptResultError(f"{str(where)!r}: member {name} is compressed; refused")
        try:
            data = archive.read(info)
        except (zipfile.BadZipFile, ValueError, OSError) as error:
            raise CorruptResultError(f"{str(where)!r}: member {name}: {error}") from None
        arrays[name] = _parse_npy(data, shape, np.dtype(ARRAY_DTYPES[name]), f"{where}:{name}")
    return arrays


def _parse_npy(data: bytes, shape: tuple[int, ...], dtype: np.dtype, where: str) -> np.ndarray:
    stream = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(stream)
        reader = {
            (1, 0): np.lib.format.read_array_header_1_0,
            (2, 0): np.lib.format.read_array_header_2_0,
        }[version]
        found_shape, fortran, found_dtype = reader(stream)
    except (ValueError, KeyError, OSError) as error:
        raise CorruptResultError(f"{where!r}: not a .npy array: {error}") from None
    if tuple(found_shape) != shape or found_dtype != dtype or fortran:
        raise CorruptResultError(
            f"{where!r}: declares {found_dtype} {tuple(found_shape)}, expected {dtype} {shape}"
        )
    body = data[stream.tell() :]
    if len(body) != dtype.itemsize * int(np.prod(shape)):
        raise CorruptResultError(f"{where!r}: holds {len(body)} bytes of data for shape {shape}")
    return np.frombuffer(body, dtype=dtype).astype(dtype.newbyteorder("="), copy=True)


def try_load_result(path: str | os.PathLike, expected_key: dict[str, Any] | None = None):
    """The verified result at ``path``, or None when it is absent, half-written or corrupt."""
    try:
        return load_result(path, expected_key)
    except (ValueError, OSError):
        return None


def describe_key(key: Any) -> str:
    """A one-line summary of a result key (for messages)."""
    if not isinstance(key, dict):
        return "no key"
    parts = [f"{name}={key.get(name)!r}" for name in KEY_FIELDS if name in key]
    return ", ".join(parts) or "an empty key"
