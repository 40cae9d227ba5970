"""Projected online gradient descent's rounds, compiled (:func:`ogd_rounds`).

The agent's NumPy update (:mod:`bco_gym.agents.ogd.agent`) in its order of operations, a window of
rounds
of S rows per call, played by the compiled lean loop (:mod:`bco_gym.engine.compiled`) when
the agent's ``KERNEL`` applies; the conventions (windows, blocks, refused plays) are
:mod:`bco_gym.agents.kernels.rounds`'.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bco_gym.agents.kernels import SHARED_KERNELS, drop_stale_cache
from bco_gym.agents.kernels.oracles import kernel, project
from bco_gym.agents.kernels.rounds import BLOCK, full_information_round, keep, restore

# Before this module's kernels are compiled or loaded: they inline the shared helpers
# (bco_gym.agents.kernels), whose edits numba's cache would not see.
drop_stale_cache(Path(__file__).parent, SHARED_KERNELS)


@kernel
def ogd_rounds(
    points, theta, offset, sign, eta, oracle, check, losses, window, first, trusted, work, saved
):  # pragma: no cover - compiled
    """Projected online gradient descent: play x; x <- Pi_K(x - eta theta_t)."""
    kind, radius, low, high, shrink, center, centered, shrunk = oracle
    rows, n = points.shape
    origin, out_origin, count = window
    for begin in range(first, count, BLOCK):
        limit = min(count, begin + BLOCK)
        keep(points, saved, 0)
        while True:
            refused = limit
            for s in range(rows):
                for j in range(begin, limit):
                    if not full_information_round(
                        points, theta, offset, sign, check, losses, s, j, origin, out_origin,
                        trusted, work,
                    ):  # fmt: skip
                        refused = min(refused, j)
                        break
                    for i in range(n):
                        work[4, i] = points[s, i] - eta * theta[s, origin + j, i]
                    project(
                        kind, radius, low, high, shrink, center, centered, shrunk, 4, points, s,
                        work,
                    )  # fmt: skip
            if refused == limit:
                break
            restore(points, saved, 0)
            limit = refused
        if limit < min(count, begin + BLOCK):
            return limit
    return count


def ogd_window(
    runner: Any,
    directions: Any,
    start: int,
    theta: Any,
    shifts: Any,
    weights: Any,
    losses: Any,
    window: Any,
    first: int,
    trusted: int,
) -> int:
    """One call of :func:`ogd_rounds` for the compiled loop's ``runner``
    (:class:`bco_gym.engine.compiled.KernelRunner`: the rows' arrays and the plan)."""
    agent, plan = runner.agent, runner.plan
    return ogd_rounds(
        runner.points, theta, shifts, plan.sign, agent.params["step_size"], plan.oracle,
        plan.check, losses, window, first, trusted, runner.work, runner.saved,
    )  # fmt: skip
