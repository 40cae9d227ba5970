"""FKM's rounds, compiled: one-point (:func:`fkm_rounds`) and two-point (:func:`fkm2_rounds`).

The agents' NumPy updates (:mod:`bco_gym.agents.fkm.agent`, :mod:`bco_gym.agents.fkm.two_point`) in
their order of operations,
a window of rounds of S rows per call, played by the compiled lean loop
(:mod:`bco_gym.engine.compiled`) when the agent's ``KERNEL`` applies; the conventions
(windows, blocks, refused plays) are :mod:`bco_gym.agents.kernels.rounds`'.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bco_gym.agents.kernels import SHARED_KERNELS, drop_stale_cache
from bco_gym.agents.kernels.oracles import inside, kernel, linear_value, project
from bco_gym.agents.kernels.rounds import (
    BLOCK,
    keep,
    keep_values,
    one_point_play,
    one_point_round,
    restore,
    restore_values,
)

# Before this module's kernels are compiled or loaded: they inline the shared helpers
# (bco_gym.agents.kernels), whose edits numba's cache would not see.
drop_stale_cache(Path(__file__).parent, SHARED_KERNELS)


@kernel
def fkm_rounds(
    points, directions, start, theta, offset, sign, delta, scale, residual, previous,
    oracle, check, plays, losses, window, first, trusted, work, saved,
):  # fmt: skip  # pragma: no cover - compiled
    """FKM's rounds first.. of the window: y = u delta + x; f = f_t(y) (or f_t(y) -
    f_{t-1}(y_{t-1})); x <- Pi_{K_delta}(x - u (f * eta d/delta)). Returns the number of
    rounds of the window, or the index of a round whose plays need the env's check."""
    kind, radius, low, high, shrink, center, centered, shrunk = oracle
    rows, n = points.shape
    origin, out_origin, count = window
    for begin in range(first, count, BLOCK):
        limit = min(count, begin + BLOCK)
        keep(points, saved, 0)
        keep_values(previous, saved, 1)
        while True:
            refused = limit
            for s in range(rows):
                for j in range(begin, limit):
                    accepted, value = one_point_round(
                        points, directions, start, j, delta, theta, offset, sign, residual,
                        previous, check, plays, losses, s, origin, out_origin, trusted, work,
                    )  # fmt: skip
                    if not accepted:
                        refused = min(refused, j)
                        break
                    coefficient = value * scale
                    for i in range(n):
                        work[4, i] = points[s, i] - directions[s, start + j, i] * coefficient
                    project(
                        kind, radius, low, high, shrink, center, centered, shrunk, 4, points, s,
                        work,
                    )  # fmt: skip
            if refused == limit:
                break
            restore(points, saved, 0)  # play again up to the first refused round
            restore_values(previous, saved, 1)
            limit = refused
        if limit < min(count, begin + BLOCK):
            for s in range(rows):
                one_point_play(plays, s, directions, start, limit, delta, points)
            return limit
    return count


@kernel
def fkm2_rounds(
    points, directions, start, theta, offset, sign, delta, eta_d, oracle, check, plays, losses,
    window, first, trusted, work, saved,
):  # fmt: skip  # pragma: no cover - compiled
    """Two-point FKM: plays x + u delta and x - u delta; counted loss (f+ + f-)/2;
    x <- Pi_{K_delta}(x - u ((eta d) (f+ - f-)/2 / delta)). ``plays`` is (S, 2, n)."""
    kind, radius, low, high, shrink, center, centered, shrunk = oracle
    check_kind, check_radius, check_low, check_high, atol = check
    rows, n = points.shape
    origin, out_origin, count = window
    pairs = plays.reshape((2 * rows, n))  # row 2s: x + u delta, row 2s + 1: x - u delta
    for begin in range(first, count, BLOCK):
        limit = min(count, begin + BLOCK)
        keep(points, saved, 0)
        while True:
            refused = limit
            for s in range(rows):
                for j in range(begin, limit):
                    for i in range(n):
                        offset_i = directions[s, start + j, i] * delta
                        pairs[2 * s, i] = points[s, i] + offset_i
                        pairs[2 * s + 1, i] = points[s, i] - offset_i
                    if j != trusted and not (
                        inside(
                            check_kind, check_radius, check_low, check_high, atol, pairs, 2 * s,
                            work,
                        )
                        and inside(
                            check_kind, check_radius, check_low, check_high, atol, pairs,
                            2 * s + 1, work,
                        )
                    ):  # fmt: skip
                        refused = min(refused, j)
                        break
                    plus = linear_value(
                        theta, s, origin + j, pairs, 2 * s, offset[s, origin + j], sign, work
                    )
                    minus = linear_value(
                        theta, s, origin + j, pairs, 2 * s + 1, offset[s, origin + j], sign, work
                    )
                    losses[s, out_origin + j] = (plus + minus) / 2
                    coefficient = eta_d * ((plus - minus) / 2) / delta
                    for i in range(n):
                        work[4, i] = points[s, i] - directions[s, start + j, i] * coefficient
                    project(
                        kind, radius, low, high, shrink, center, centered, shrunk, 4, points, s,
                        work,
                    )  # fmt: skip
            if refused == limit:
                break
            restore(points, saved, 0)
            limit = refused
        if limit < min(count, begin + BLOCK):
            for s in range(rows):
                for i in range(n):
                    offset_i = directions[s, start + limit, i] * delta
                    pairs[2 * s, i] = points[s, i] + offset_i
                    pairs[2 * s + 1, i] = points[s, i] - offset_i
            return limit
    return count


def fkm_window(
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
    """One call of :func:`fkm_rounds` for the compiled loop's ``runner``
    (:class:`bco_gym.engine.compiled.KernelRunner`: the rows' arrays and the plan)."""
    agent, plan = runner.agent, runner.plan
    return fkm_rounds(
        runner.points, directions, start, theta, shifts, plan.sign,
        agent.params["smoothing_radius"], agent._estimate_scale, runner.residual,
        runner.previous, plan.oracle, plan.check, runner.plays, losses, window, first, trusted,
        runner.work, runner.saved,
    )  # fmt: skip


def fkm2_window(
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
    """One call of :func:`fkm2_rounds` for the compiled loop's ``runner``."""
    agent, plan = runner.agent, runner.plan
    eta_d = agent.params["step_size"] * agent._dimension
    return fkm2_rounds(
        runner.points, directions, start, theta, shifts, plan.sign,
        agent.params["smoothing_radius"], eta_d, plan.oracle, plan.check, runner.plays, losses,
        window, first, trusted, runner.work, runner.saved,
    )  # fmt: skip
