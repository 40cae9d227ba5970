"""What building envs will hold in memory, from ``gym.make``'s keywords alone, and the
check against the machine's: a size that cannot fit is refused before it is allocated.

Building S envs of a registered id holds, per row, a few points of K in float64 (its
set's centre and its action space's bounds: ``BUILD_VECTORS``), and the first step of
each row draws a chunk of its loss sequence's parameters (``chunk_size`` rounds of K's
dimension of floats for every family whose per-round parameters are a point of K, the
default). :func:`env_parts` counts both, from what
:func:`~bco_gym.envs.registration.build_parts` reads in the keywords alone;
:func:`check_build_memory` refuses, before anything is built, S envs whose count exceeds
the machine's physical memory (``gym.make_vec(..., num_envs=S)``), and
:mod:`bco_gym.engine.memory` adds the run's own parts (the agent, the directions) to the
same count before ``run``, ``run_many``, the sweeps and the CLI build anything.

The counts are orders of magnitude, lower bounds of what is held: they exist so that
``n = 10**9`` stops at once with a sentence instead of filling the machine.
"""

from __future__ import annotations

import os
from typing import Any

#: Points of K each row's env holds once built: its set's centre and its action space's
#: lower and upper bounds (a lower bound, in float64, for every built-in id).
BUILD_VECTORS = 3
FLOAT = 8
#: What lets a refused size through, for the Python API and ``bco-gym run``.
ALLOW_LARGE = "pass allow_large=True (bco-gym run: --allow-large) to run it anyway"


def machine_bytes() -> int | None:
    """The machine's physical memory in bytes (None where the platform does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX
        return None


def human_bytes(size: float) -> str:
    """``size`` bytes as "1.2 GB" (powers of 1000)."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:.3g} {unit}" if unit != "B" else f"{int(size)} B"
        size /= 1000
    return f"{size:.3g} TB"  # pragma: no cover


def env_parts(dim: int, per_round: int, rows: int) -> dict[str, int]:
    """The parts in bytes of ``rows`` envs whose K has dimension ``dim`` and whose loss
    sequences draw ``per_round`` floats a round (0: not known), built and stepped once."""
    from bco_gym.losses.base import chunk_size_for

    parts = {"the envs' copies of K": FLOAT * BUILD_VECTORS * rows * dim}
    if per_round:
        parts["loss chunks"] = FLOAT * chunk_size_for(per_round) * per_round * rows
    return parts


def check_build_memory(
    parts: dict[str, int],
    dim: int,
    rows: int,
    allow_large: bool,
    override: str = "pass allow_large=True to build them anyway",
) -> None:
    """Refuse, before anything is built, envs whose ``parts`` add up to more than the
    machine's memory, unless ``allow_large``.

    Raises:
        ValueError: naming the estimate, its largest parts, the machine's memory and
            ``override``; TypeError for an ``allow_large`` that is not a bool.
    """
    check_allow_large(allow_large)
    limit = machine_bytes()
    if allow_large or limit is None:
        return
    refuse_above(parts, limit, dim, rows, " (refused before building the env)", override)


def check_allow_large(allow_large: Any) -> None:
    if not isinstance(allow_large, bool):
        raise TypeError(f"allow_large={allow_large!r} must be True or False")


def refuse_above(
    parts: dict[str, int],
    limit: int,
    dim: int,
    rows: int,
    when: str,
    override: str = ALLOW_LARGE,
) -> None:
    """ValueError when the ``parts`` add up to more than ``limit`` bytes: the estimate,
    its three largest parts, K's dimension and the rows, the limit, then ``override``."""
    total = sum(parts.values())
    if total <= limit:
        return
    largest = sorted(parts.items(), key=lambda item: -item[1])[:3]
    shown = ", ".join(f"{name} {human_bytes(size)}" for name, size in largest)
    raise ValueError(
        f"this run would need about {human_bytes(total)} of memory ({shown}; K of dimension "
        f"{dim}, {rows} row(s)), more than this machine's {human_bytes(limit)}{when}; use a "
        f"smaller set or fewer seeds, or {override}"
    )


__all__ = [
    "BUILD_VECTORS",
    "check_build_memory",
    "env_parts",
    "human_bytes",
    "machine_bytes",
    "refuse_above",
]
