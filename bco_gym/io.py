"""Files, at the bottom of the house: atomic writes, canonical JSON, content digests and
directory claims. Every module that writes or digests a file does it through here.

**Atomic writes.** :func:`atomic_write` writes a file all-or-nothing: the bytes go to a
temporary file beside the target (created ``O_EXCL | O_NOFOLLOW`` with mode 0666 minus
the user's umask), which is flushed, fsynced and moved into place with ``os.replace``
(atomic on POSIX; a symlink at the target is replaced, never followed), then the
directory is fsynced. A crash leaves the old file or the new one, never a torn one; a
leftover temporary ends in :data:`TMP_SUFFIX`.

**Canonical JSON.** :func:`canonical_json` is the one byte string a JSON document
digests to (sorted keys, no spaces); :func:`json_digest` is its SHA-256.
:func:`name_digest` is the short digest in file and directory names (sweep cells,
default output directories): its bytes are JSON with Python's default separators, the
form those names were first made with, so that stored files keep their names.

**Content digests.** :func:`file_sha256` (cached by path, modification time and size)
and :func:`file_set_digest`, the digest of a set of files by name and content.

**Directory claims.** :func:`claim_directory` marks a directory as one command's with a
small JSON marker file, written atomically; :func:`read_marker` reads such a marker
back without trusting it (a regular file, small, a JSON object).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

#: The suffix of a temporary file written by :func:`atomic_write`.
TMP_SUFFIX = ".tmp"
#: The largest marker file :func:`read_marker` reads.
MARKER_LIMIT = 4096


# -- atomic writes --------------------------------------------------------------------------------
def atomic_write(path: str | os.PathLike, write: Callable[[IO[bytes]], None]) -> None:
    """Write ``path`` all-or-nothing with ``write(stream)`` (see the module docstring);
    the parent directory is created; no symlink is followed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.parent / f"{path.name}.{secrets.token_hex(6)}{TMP_SUFFIX}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(temp, flags, 0o666)  # the kernel applies the user's umask
    try:
        with os.fdopen(descriptor, "wb") as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)


def write_bytes(path: str | os.PathLike, payload: bytes) -> None:
    """Atomically write ``payload`` to ``path``."""
    atomic_write(path, lambda stream: stream.write(payload))


def write_text(path: str | os.PathLike, text: str) -> None:
    """Atomically write ``text`` (UTF-8) to ``path``."""
    write_bytes(path, text.encode("utf-8"))


def write_json(path: str | os.PathLike, document: Any) -> None:
    """Atomically write ``document`` as indented, key-sorted JSON and a final newline."""
    write_text(path, json.dumps(document, indent=2, sort_keys=True) + "\n")


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


# -- canonical JSON -------------------------------------------------------------------------------
def canonical_json(document: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """The one byte string a JSON document digests to: sorted keys, no spaces, UTF-8.
    ``default`` serialises what JSON cannot (``repr`` for a digest that must take any
    object); without it such an object is a TypeError."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), default=default)
    return text.encode("utf-8")


def json_digest(document: Any, default: Callable[[Any], Any] | None = None) -> str:
    """SHA-256 (hex) of :func:`canonical_json` of ``document``."""
    return hashlib.sha256(canonical_json(document, default)).hexdigest()


def name_digest(document: Any, length: int) -> str:
    """The first ``length`` hex digits of the SHA-256 of ``document`` as key-sorted JSON
    with Python's default separators: the digest in a sweep cell's key and in a default
    output directory's name (these bytes name files already on disk: never change them)."""
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()[:length]


# -- content digests ------------------------------------------------------------------------------
_FILE_DIGESTS: dict[tuple[str, int, int], bytes] = {}


def file_sha256(path: str | os.PathLike) -> bytes:
    """SHA-256 (raw bytes) of a file's contents, cached by path, modification time and size."""
    status = os.stat(path)
    key = (os.fspath(path), status.st_mtime_ns, status.st_size)
    if key not in _FILE_DIGESTS:
        _FILE_DIGESTS[key] = hashlib.sha256(Path(path).read_bytes()).digest()
    return _FILE_DIGESTS[key]


def file_set_digest(
    files: Iterable[tuple[str, str | os.PathLike]], domain: bytes, separator: bytes = b""
) -> Any:
    """A SHA-256 object over ``domain`` and, for each ``(name, path)`` in the order given,
    ``name``, a NUL byte, the SHA-256 of the file's contents and ``separator``: two sets
    digest alike exactly when they hold the same names with the same contents. The
    caller may update it further (a version) before reading ``hexdigest()``; a name is
    the file's place in its set (a path relative to its root), so a moved tree keeps
    its digest."""
    digest = hashlib.sha256(domain)
    for name, path in files:
        digest.update(name.encode() + b"\0" + file_sha256(path) + separator)
    return digest


# -- directory claims -----------------------------------------------------------------------------
def claim_directory(directory: str | os.PathLike, marker: str, document: dict[str, Any]) -> Path:
    """Create ``directory`` if needed and mark it with ``marker`` (``document`` as one line
    of JSON, written atomically) unless a marker is already there; returns the path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / marker
    if not path.is_file():
        write_text(path, json.dumps(document) + "\n")
    return directory


def read_marker(directory: str | os.PathLike, marker: str) -> dict[str, Any] | None:
    """The JSON object in ``directory``'s ``marker``; None when there is no marker;
    ValueError when it is a symlink, not a small regular file, or not a JSON object."""
    path = Path(directory) / marker
    if not os.path.lexists(path):
        return None
    if path.is_symlink() or not path.is_file() or path.stat().st_size > MARKER_LIMIT:
        raise ValueError(f"{str(path)!r} is not a small regular file")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"{str(path)!r} is unreadable ({error})") from None
    if not isinstance(document, dict):
        raise ValueError(f"{str(path)!r} does not hold a JSON object")
    return document


__all__ = [
    "MARKER_LIMIT",
    "TMP_SUFFIX",
    "atomic_write",
    "canonical_json",
    "claim_directory",
    "file_set_digest",
    "file_sha256",
    "json_digest",
    "name_digest",
    "read_marker",
    "write_bytes",
    "write_json",
    "write_text",
]
