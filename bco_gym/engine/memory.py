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

Before that, for a registered id, :func:`check_planned_memory` refuses from ``gym.make``'s
keywords alone (:func:`~bco_gym.envs.registration.build_parts`), before any env is built:
building the S envs of a batch alone holds S copies of K and of its action space's
bounds (``BUILD_VECTORS`` points per row), and their first step one chunk of losses per
row, which at n = 10^8 is gigabytes before the check above could run. It counts one
chunk per row where the built estimate counts ``RECENT_CHUNKS``, and only for families
whose per-round parameters are a point of K, so beside the envs' own copies of K (which
building them holds and the built estimate leaves out) it is a lower bound of the built
estimate. Every path that
builds an env from an id checks it first: ``run``, ``run_many``, the sweeps' batch size
(:func:`~bco_gym.engine.many.batch_size_for`), ``gym.make_vec`` and the CLI's checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from bco_gym.agents.estimators import DIRECTION_BUDGET_FLOATS
from bco_gym.engine.tally import ROUND_LOSSES_LIMIT
from bco_gym.envs import memory as envs_memory
from bco_gym.envs.memory import (
    ALLOW_LARGE,
    BUILD_VECTORS,
    FLOAT,
    check_allow_large,
    human_bytes,
    refuse_above,
)
from bco_gym.envs.registration import build_parts
from bco_gym.losses.base import RECENT_CHUNKS

#: Points of K per row an agent is assumed to hold (iterates, estimates, scratch).
AGENT_VECTORS = 16
#: Rounds of directions a stream draws at a time when the budget allows.
DIRECTION_ROUNDS = 256
#: What a refusal says where nothing lets a run too large through (sweeps, compare, bench).
NO_OVERRIDE = "run one such run alone: bco-gym run --allow-large (or allow_large=True)"


def machine_bytes() -> int | None:
    """The machine's physical memory in bytes (None where the platform does not say;
    :func:`bco_gym.envs.memory.machine_bytes`)."""
    return envs_memory.machine_bytes()


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
    chunk = int(losses.chunk_size) * max(1, int(losses._floats_per_round()))
    parts = _parts(int(convex_set.dim), rows, int(env.problem.horizon))
    return {
        "copies of K": 2 * set_bytes(convex_set),
        **parts,
        "loss chunks": FLOAT * RECENT_CHUNKS * chunk * rows,
    }


def _parts(dim: int, rows: int, horizon: int) -> dict[str, int]:
    """The parts that depend on K's dimension, the rows and the horizon alone."""
    direction_rounds = max(1, min(DIRECTION_ROUNDS, DIRECTION_BUDGET_FLOATS // (rows * dim)))
    return {
        "agent state": FLOAT * AGENT_VECTORS * rows * dim,
        "directions": FLOAT * direction_rounds * rows * dim,
        "round losses": FLOAT * rows * horizon if horizon <= ROUND_LOSSES_LIMIT else 0,
    }


def check_planned_memory(
    env_id: str,
    env_kwargs: Mapping[str, Any],
    rows: int,
    allow_large: bool,
    override: str = ALLOW_LARGE,
) -> None:
    """Refuse, before any env is built, a run of ``rows`` rows on ``gym.make(env_id,
    **env_kwargs)`` whose estimate from the keywords alone exceeds the machine's memory
    (module docstring). Ids whose size the keywords do not set pass; the check on the
    built env (:func:`check_run_memory`) follows in every case.

    Raises:
        ValueError: as :func:`check_run_memory`, the message saying nothing was built
            and ending with ``override`` (how to run it anyway, where there is a way);
            TypeError for an ``allow_large`` that is not a bool.
    """
    check_allow_large(allow_large)
    limit = machine_bytes()
    found = build_parts(env_id, env_kwargs, rows)
    if allow_large or limit is None or found is None:
        return
    dim, built = found
    horizon = env_kwargs.get("horizon")
    horizon = horizon if isinstance(horizon, int) and not isinstance(horizon, bool) else 0
    parts = {**built, "copies of K": FLOAT * 2 * dim, **_parts(dim, rows, horizon)}
    refuse_above(parts, limit, dim, rows, " (refused before building the env)", override)


def check_run_memory(env: Any, rows: int, allow_large: bool) -> None:
    """Refuse a run whose estimated memory exceeds the machine's (module docstring).

    Raises:
        ValueError: naming the estimate, its largest parts, the machine's memory and the
            override; TypeError for an ``allow_large`` that is not a bool.
    """
    check_allow_large(allow_large)
    limit = machine_bytes()
    if allow_large or limit is None:
        return
    refuse_above(estimate_run_bytes(env, rows), limit, int(env.set.dim), rows, "")


def _losses_of(env: Any) -> Any:
    """The loss sequence of a single env, or the first row's of a vector env."""
    losses = env.losses
    sequences = getattr(losses, "sequences", None)
    return sequences[0] if sequences else losses


__all__ = [
    "BUILD_VECTORS",
    "NO_OVERRIDE",
    "check_planned_memory",
    "check_run_memory",
    "estimate_run_bytes",
    "human_bytes",
    "machine_bytes",
]
