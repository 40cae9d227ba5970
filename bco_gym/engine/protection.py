"""Memory an isolated agent's process may not read: while a child runs, the parent
process makes itself non-dumpable on Linux (``prctl(PR_SET_DUMPABLE, 0)``, restored
afterwards), so that a process of the same user can neither attach to it (ptrace) nor
read ``/proc/<pid>/mem``. A process with ``CAP_SYS_PTRACE`` (root) still can: isolation
is a process boundary, not a sandbox (docs/benchmark.md, "Threat model")."""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import Any

_PR_GET_DUMPABLE, _PR_SET_DUMPABLE = 3, 4
_PROTECTION = {"depth": 0, "previous": None}
_PROTECTION_LOCK = threading.Lock()


def _prctl(option: int, value: int = 0) -> int | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0))
    except (OSError, AttributeError):
        return None


def protect() -> None:
    """Make this process non-dumpable (nested calls count; :func:`unprotect` undoes one)."""
    with _PROTECTION_LOCK:
        if _PROTECTION["depth"] == 0:
            _PROTECTION["previous"] = _prctl(_PR_GET_DUMPABLE)
            _prctl(_PR_SET_DUMPABLE, 0)
        _PROTECTION["depth"] += 1  # type: ignore[operator]


def unprotect() -> None:
    """Undo one :func:`protect`; the last one restores the flag the process had."""
    with _PROTECTION_LOCK:
        _PROTECTION["depth"] -= 1  # type: ignore[operator]
        previous = _PROTECTION["previous"]
        if _PROTECTION["depth"] == 0 and isinstance(previous, int) and previous > 0:
            _prctl(_PR_SET_DUMPABLE, previous)


@contextlib.contextmanager
def protected() -> Any:
    """This process non-dumpable for the ``with`` block (as while a child runs): what
    ``bco-gym bench --isolate`` holds for the whole bench, whose memory holds the fresh
    seeds and the reference results while the agents' processes run."""
    protect()
    try:
        yield
    finally:
        unprotect()


def dumpable() -> int | None:
    """This process's dumpable flag (Linux; None elsewhere): 0 while a child runs."""
    return _prctl(_PR_GET_DUMPABLE)


__all__ = ["dumpable", "protect", "protected", "unprotect"]
