"""A sweep directory: its manifest, its verified cells, its lock, and how it grows.

``manifest.json`` lists the sweep's cells (the dicts of
:class:`~bco_gym.sweeps.cell.Cell`); ``cells/<key>.json`` + ``.npz`` hold each
finished cell, bound to it (see :mod:`~bco_gym.sweeps.results`); ``.lock`` is held
by the one process writing the directory (:class:`DirectoryLock`).

Growth. Opening a directory with cells it does not list yet is allowed when the new sweep is
the same experiment with more seeds or more agents: the same env ids, env kwargs, horizons,
checkpoints and loop choice, and for every agent already present the same agent kwargs,
constants label and feedback. The env's ``feedback`` keyword is an agent's, not the sweep's:
a row of more feedback (a two-point agent beside bandit ones, a suite's ``agent_feedback``)
plays the same env and losses with its own feedback. The manifest then lists the union (old
cells first) and only the new cells are computed. Anything else is refused with
:class:`SweepMismatchError` naming the fields that differ, unless no cell of the stored
sweep has a result yet (a mistyped command or an early crash): then the new sweep replaces
it.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import stat
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from bco_gym.engine.result import RunResult
from bco_gym.io import TMP_SUFFIX, canonical_json, write_json
from bco_gym.sweeps.results import (
    FORMAT_VERSION,
    MANIFEST_NAME,
    CorruptResultError,
    SweepMismatchError,
    load_result,
    read_json,
    save_result,
)

CELLS_DIR = "cells"
LOCK_NAME = ".lock"
# Fields every cell of one sweep shares (a sweep grows only along seeds and agents).
SHARED_FIELDS = ("env_id", "env_kwargs", "horizon", "checkpoints", "fast")
# Fields every cell of one agent shares ("feedback": its env's, see _value).
AGENT_FIELDS = ("agent_kwargs", "constants", "feedback")
# Fields a cell has since agents have identities (absent from older cells).
IDENTITY_FIELDS = ("label", "identity")
# Fields only some cells have (``isolate``: only a cell played in its own process).
OPTIONAL_FIELDS = (*IDENTITY_FIELDS, "isolate")


class SweepLockedError(ValueError):
    """Another process holds the sweep directory's lock."""


# -- the lock -------------------------------------------------------------------------------
_HELD: dict[str, list[int]] = {}  # real path -> [descriptor, depth] of the locks held here


class DirectoryLock:
    """An exclusive, non-blocking lock on a directory (``fcntl.flock`` on its ``.lock``).

    Re-entrant within a process; a second process gets :class:`SweepLockedError` naming
    the holder (pid, host, command, start time). The kernel releases the lock when its
    holder dies, even by SIGKILL, so a stale ``.lock`` file never blocks anything.
    """

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)

    def __enter__(self) -> DirectoryLock:
        self.directory.mkdir(parents=True, exist_ok=True)
        real = os.path.realpath(self.directory)
        if real in _HELD:
            _HELD[real][1] += 1
            return self
        path = os.path.join(real, LOCK_NAME)
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        descriptor = os.open(path, flags, 0o666)
        if not _try_lock(descriptor):
            holder = _read_holder(descriptor)
            os.close(descriptor)
            raise SweepLockedError(
                f"{str(self.directory)!r} is in use by {holder}; wait for it to finish "
                "or pick another output directory"
            )
        _write_holder(descriptor)
        _HELD[real] = [descriptor, 1]
        return self

    def __exit__(self, *_: Any) -> None:
        real = os.path.realpath(self.directory)
        held = _HELD[real]
        held[1] -= 1
        if held[1] == 0:
            del _HELD[real]
            os.ftruncate(held[0], 0)
            os.close(held[0])  # closing releases the flock


def _try_lock(descriptor: int) -> bool:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock
        return True
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        if error.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return False
        raise
    return True


def _write_holder(descriptor: int) -> None:
    holder = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": " ".join(sys.argv),
        "since": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, json.dumps(holder).encode(), 0)


def _read_holder(descriptor: int) -> str:
    try:
        holder = json.loads(os.pread(descriptor, 4096, 0).decode())
        return (
            f"pid {int(holder['pid'])} on {holder['host']} since {holder['since']} "
            f"({str(holder['command'])[:200]!r})"
        )
    except (ValueError, KeyError, TypeError, OSError):
        return "another process"


# -- the store ------------------------------------------------------------------------------
class SweepStore:
    """The files of one sweep: its manifest and one verified JSON + NPZ pair per cell.

    ``open`` writes the manifest when the directory is new, grows it (module docstring)
    or refuses a different sweep or files that are not a sweep. Hold :meth:`lock`
    while writing.
    """

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        self.cells_directory = self.directory / CELLS_DIR

    @property
    def manifest_path(self) -> Path:
        return self.directory / MANIFEST_NAME

    def lock(self) -> DirectoryLock:
        """The directory's lock (a context manager; one writer at a time)."""
        return DirectoryLock(self.directory)

    def open(self, spec: dict[str, Any], key: Callable[[dict], str] | None = None) -> SweepStore:
        """Create, grow or re-open the sweep ``spec`` (``{"cells": [cell dicts]}``);
        ``key`` says which cell dicts are one cell (default: equal dicts)."""
        spec = json.loads(json.dumps(spec))
        if os.path.lexists(self.manifest_path):
            stored = self.read_manifest()["spec"]
            # A sweep that never finished a cell (a typo, an early crash) blocks nothing.
            merged = merge_specs(stored, spec, self.directory, key) if self.has_results() else spec
            if merged != stored:
                write_json(self.manifest_path, {"format": FORMAT_VERSION, "spec": merged})
        else:
            strangers = [
                entry.name
                for entry in self.directory.glob("*")
                if not entry.name.endswith(TMP_SUFFIX) and entry.name != LOCK_NAME
            ]
            if strangers:
                raise SweepMismatchError(
                    f"{str(self.directory)!r} is not empty and has no {MANIFEST_NAME} "
                    f"(found {', '.join(sorted(strangers)[:5])}); refusing to mix a sweep "
                    "into it: pick a new or empty output directory"
                )
            write_json(self.manifest_path, {"format": FORMAT_VERSION, "spec": spec})
        self._check_cells_directory(create=True)
        self.remove_temporaries()
        return self

    def _check_cells_directory(self, create: bool) -> bool:
        """Whether ``cells/`` exists; refuses a symlink or a non-directory there."""
        try:
            mode = os.lstat(self.cells_directory).st_mode
        except FileNotFoundError:
            if create:
                self.cells_directory.mkdir()
            return create
        if not stat.S_ISDIR(mode):
            raise SweepMismatchError(
                f"{str(self.cells_directory)!r} is not a directory (a symlink or a file); "
                "refusing to read or write through it"
            )
        return True

    def has_results(self) -> bool:
        """Whether any cell's result file is present (finished or not, valid or not)."""
        try:
            return any(self.cells_directory.glob("*.json"))
        except OSError:
            return True

    def read_manifest(self) -> dict[str, Any]:
        """The manifest document, checked: format, and a list of cell dicts."""
        try:
            document = read_json(self.manifest_path)
        except (OSError, ValueError) as error:
            raise SweepMismatchError(
                f"{str(self.manifest_path)!r} is unreadable ({error}); not a bco_gym sweep"
            ) from None
        if not isinstance(document, dict) or document.get("format") != FORMAT_VERSION:
            found = document.get("format") if isinstance(document, dict) else None
            raise SweepMismatchError(
                f"{str(self.manifest_path)!r} is not a format-{FORMAT_VERSION} bco_gym manifest "
                f"(format {found!r}, written by another bco_gym version); delete it or pick a new "
                "output directory"
            )
        spec = document.get("spec")
        cells = spec.get("cells") if isinstance(spec, dict) else None
        if not isinstance(cells, list) or not all(isinstance(cell, dict) for cell in cells):
            raise SweepMismatchError(
                f"{str(self.manifest_path)!r} has no list of cells; not a bco_gym sweep"
            )
        return document

    def remove_temporaries(self) -> None:
        """Delete temp files left by a killed writer (they are never read; hold the lock)."""
        for folder in (self.directory, self.cells_directory):
            for entry in folder.glob("*" + TMP_SUFFIX):
                entry.unlink(missing_ok=True)

    def cell_path(self, key: str) -> Path:
        return self.cells_directory / f"{key}.json"

    def load(self, key: str, cell: dict[str, Any] | None = None) -> RunResult | None:
        """The verified result of cell ``key``; None if it is not there (or half-written).

        CorruptResultError when its files are there but fail verification (with ``cell``,
        the cell dict, its key must be that cell).
        """
        if not self._check_cells_directory(create=False):
            return None
        try:
            return load_result(self.cell_path(key), cell)
        except FileNotFoundError:
            return None

    def save(self, key: str, result: RunResult, cell: dict[str, Any] | None = None) -> Path:
        return save_result(self.cell_path(key), result, cell)

    def load_all(self, cells: Iterable[tuple[str, dict[str, Any]]]) -> list[RunResult]:
        """The finished results among ``(key, cell)`` pairs, in that order.

        CorruptResultError naming every cell whose files fail verification: a corrupt
        cell is never dropped silently.
        """
        results, corrupt = [], []
        for key, cell in cells:
            try:
                found = self.load(key, cell)
            except CorruptResultError as error:
                corrupt.append(f"{key}: {error}")
                continue
            if found is not None:
                results.append(found)
        if corrupt:
            raise CorruptResultError(
                f"{len(corrupt)} cell(s) of {str(self.directory)!r} fail verification; "
                f"re-run the sweep to recompute them. {' | '.join(corrupt[:3])}"
            )
        return results


# -- growth ---------------------------------------------------------------------------------
def merge_specs(
    stored: dict[str, Any],
    requested: dict[str, Any],
    where: Any = "",
    key: Callable[[dict], Any] | None = None,
) -> dict:
    """The stored spec grown by the requested cells, or SweepMismatchError naming the
    fields that differ (see the module docstring). ``key`` says which cells are one."""
    old, new = stored["cells"], requested["cells"]
    if not old:
        return requested
    key = key or canonical_json
    known = {key(cell) for cell in old}
    added = [cell for cell in new if key(cell) not in known]
    if not added:
        return stored
    differences = spec_differences(old, new)
    if differences:
        raise SweepMismatchError(
            f"{str(where)!r} holds a different sweep: {'; '.join(differences)}. A sweep "
            "grows only by seeds or agents; pick another output directory or delete it"
        )
    return {**stored, "cells": old + added}


def spec_differences(stored: Sequence[dict], requested: Sequence[dict]) -> list[str]:
    """``"field: stored X, requested Y"`` for every shared field whose values differ."""
    differences = []
    for name in SHARED_FIELDS:
        before, after = _values(stored, name), _values(requested, name)
        if before != after:
            differences.append(f"{name}: stored {_show(before)}, requested {_show(after)}")
    agents = dict.fromkeys(_agent(c) for c in requested if _agent(c) in _agents(stored))
    for agent in agents:
        for name in AGENT_FIELDS:
            if name == "agent_kwargs" and any(c.get("identity") == agent for c in requested):
                continue  # the identity holds the keyword arguments, however spelled
            before = _values([c for c in stored if _agent(c) == agent], name)
            after = _values([c for c in requested if _agent(c) == agent], name)
            if before != after:
                shown = next(
                    c.get("label") or c.get("agent") for c in requested if _agent(c) == agent
                )
                differences.append(
                    f"{name} of {shown}: stored {_show(before)}, requested {_show(after)}"
                )
    fields = {frozenset(set(c) - set(OPTIONAL_FIELDS)) for c in [*stored, *requested]}
    if not differences and len(fields) > 1:
        differences.append("the cells have different fields (another bco_gym version?)")
    return differences


def _agent(cell: dict) -> Any:
    """Who a cell's agent is: its identity (cells since identities), else its name."""
    return cell.get("identity") or cell.get("agent")


def _agents(cells: Sequence[dict]) -> set[Any]:
    return {_agent(cell) for cell in cells}


def _values(cells: Sequence[dict], name: str) -> list[str]:
    return sorted({json.dumps(_value(cell, name), sort_keys=True) for cell in cells})


def _value(cell: dict, name: str) -> Any:
    """A cell's field as growth compares it: the env's ``feedback`` keyword is the agent's
    (``"feedback"``, default "bandit"), not part of the shared ``env_kwargs``."""
    kwargs = cell.get("env_kwargs")
    if name == "feedback":
        return kwargs.get("feedback", "bandit") if isinstance(kwargs, dict) else "bandit"
    if name == "env_kwargs" and isinstance(kwargs, dict):
        return {key: value for key, value in kwargs.items() if key != "feedback"}
    return cell.get(name)


def _show(values: list[str]) -> str:
    shown = ", ".join(values[:6]) + (", ..." if len(values) > 6 else "")
    return shown if len(values) == 1 else "{" + shown + "}"
