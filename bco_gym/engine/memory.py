"""What a run will hold in memory, estimated before it allocates, and the check against
the machine's.

A run holds, in float64: copies of the set K (the problem's, which agents are built
from, and the agent's own: :func:`~bco_gym.problem.own_copy`), the agent's state
(``AGENT_VECTORS`` points of K per row: iterates, estimates, scratch), its chunk of
exploration directions (:class:`~bco_gym.agents.estimators.DirectionStream`), the loss
sequence's recent chunks of parameters (``RECENT_CHUNKS`` chunks of ``chunk_size`` rounds
per row) and the per-round losses it keeps (:data:`~bco_gym.engine.tally.ROUND_LOSSES_LIMIT`).
:func:`check_run_memory` adds these up for a built env and a batch of S rows, before the
agent is built and before any chunk is drawn, and refuses (ValueError naming the
estimate, its parts and the limit) a run whose estimate exceeds the machine's physical
memory, unless the caller passes ``allow_large=True`` (the CLI's ``--allow-large``).
The estimate is an order of magnitude, not an accounting: it exists so that
``--env-kwargs '{"n": 100000000}'`` stops at once with a sentence instead of filling the
machine.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from bco_gym.agents.estimators import DIRECTION_BUDGET_FLOATS
from bco_gym.engine.tally import ROUND_LOSSES_LIMIT
from bco_gym.losses.base import RECENT_CHUNKS

#: Points of K per row an agent is assumed to hold (iterates, estimates, scratch).
AGENT_VECTORS = 16
#: Rounds of directions a stream draws at a time when the budget allows.
DIRECTION_ROUNDS = 256
FLOAT = 8


def machine_bytes() -> int | None:
    """The machine's physical memory in bytes (None where the platform does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX
        return None


def set_bytes(convex_set: Any) -> int:
    """The bytes of the arrays a set holds (its attributes, and a shrunk set's base's),
    at least one point of K."""
    total = 0
    for value in vars(convex_set).values():
        if isinstance(value, np.ndarray):
            total += value.nbytes
        elif hasattr(value, "dim") and hasattr(value, "lmo") and value is not convex_set:
            total += set_bytes(value)
    return max(total, FLOAT * int(convex_set.dim))


def estimate_run_bytes(env: Any, rows: int) -> dict[str, int]:
    """The parts of a run's memory (bytes) for ``env`` (a BanditConvexEnv or the vector env,
    built) played by ``rows`` rows (module docstring)."""
    convex_set, losses = env.set, _losses_of(env)
    dim = int(convex_set.dim)
    direction_rounds = max(1, min(DIRECTION_ROUNDS, DIRECTION_BUDGET_FLOATS // (rows * dim)))
    horizon = int(env.problem.horizon)
    chunk = int(losses.chunk_size) * max(1, int(losses._floats_per_round()))
    return {
        "copies of K": 2 * set_bytes(convex_set),
        "agent state": FLOAT * AGENT_VECTORS * rows * dim,
        "directions": FLOAT * direction_rounds * rows * dim,
        "loss chunks": FLOAT * RECENT_CHUNKS * chunk * rows,
        "round losses": FLOAT * rows * horizon if horizon <= ROUND_LOSSES_LIMIT else 0,
    }


def check_run_memory(env: Any, rows: int, allow_large: bool) -> None:
    """Refuse a run whose estimated memory exceeds the machine's (module docstring).

    Raises:
        ValueError: naming the estimate, its largest parts, the machine's memory and the
            override; TypeError for an ``allow_large`` that is not a bool.
    """
    if not isinstance(allow_large, bool):
        raise TypeError(f"allow_large={allow_large!r} must be True or False")
    limit = machine_bytes()
    if allow_large or limit is None:
        return
    parts = estimate_run_bytes(env, rows)
    total = sum(parts.values())
    if total <= limit:
        return
    largest = sorted(parts.items(), key=lambda item: -item[1])[:3]
    shown = ", ".join(f"{name} {human_bytes(size)}" for name, size in largest)
    raise ValueError(
        f"this run would need about {human_bytes(total)} of memory ({shown}; K of dimension "
        f"{int(env.set.dim)}, {rows} row(s)), more than this machine's "
        f"{human_bytes(limit)}; use a smaller set or fewer seeds, or pass allow_large=True "
        "(bco-gym: --allow-large) to run it anyway"
    )


def human_bytes(size: float) -> str:
    """``size`` bytes as "1.2 GB" (powers of 1000)."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:.3g} {unit}" if unit != "B" else f"{int(size)} B"
        size /= 1000
    return f"{size:.3g} TB"  # pragma: no cover


def _losses_of(env: Any) -> Any:
    """The loss sequence of a single env, or the first row's of a vector env."""
    losses = env.losses
    sequences = getattr(losses, "sequences", None)
    return sequences[0] if sequences else losses


__all__ = ["check_run_memory", "estimate_run_bytes", "human_bytes", "machine_bytes"]
