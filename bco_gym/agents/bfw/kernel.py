"""Bandit Frank-Wolfe's rounds, compiled (:func:`bfw_rounds`).

The agent's NumPy update (:mod:`bco_gym.agents.bfw.agent`) in its order of operations, a window of
rounds
of S rows per call, played by the compiled lean loop (:mod:`bco_gym.engine.compiled`) when
the agent's ``KERNEL`` applies; the conventions (windows, blocks, refused plays) are
:mod:`bco_gym.agents.kernels.rounds`'.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bco_gym.agents.kernels import SHARED_KERNELS, drop_stale_cache
from bco_gym.agents.kernels.oracles import kernel
from bco_gym.agents.kernels.rounds import (
    BLOCK,
    frank_wolfe_step,
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
def bfw_rounds(
    points, directions, start, theta, offset, sign, delta, scale, eta, residual, previous, weights,
    estimate_sum, linear, gradient, anchor, oracle, check, plays, losses, window, first, trusted,
    work, saved,
):  # fmt: skip  # pragma: no cover - compiled
    """Bandit Frank-Wolfe: y = u delta + x; G += u (f d/delta); b = G eta; one online
    Frank-Wolfe step of weight sigma_t on <b, x> + ||x - x_1||^2 over K_delta."""
    kind, radius, low, high, shrink, center, centered, shrunk = oracle
    rows, n = points.shape
    origin, out_origin, count = window
    for begin in range(first, count, BLOCK):
        limit = min(count, begin + BLOCK)
        keep(points, saved, 0)
        keep(estimate_sum, saved, 1)
        keep(linear, saved, 2)
        keep(gradient, saved, 3)
        keep_values(previous, saved, 4)
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
                        estimate_sum[s, i] += directions[s, start + j, i] * coefficient
                        linear[s, i] = estimate_sum[s, i] * eta
                    frank_wolfe_step(
                        points, s, linear, anchor, weights[j], gradient, kind, radius, low, high,
                        shrink, center, centered, shrunk, work,
                    )  # fmt: skip
            if refused == limit:
                break
            restore(points, saved, 0)
            restore(estimate_sum, saved, 1)
            restore(linear, saved, 2)
            restore(gradient, saved, 3)
            restore_values(previous, saved, 4)
            limit = refused
        if limit < min(count, begin + BLOCK):
            for s in range(rows):
                one_point_play(plays, s, directions, start, limit, delta, points)
            return limit
    return count


def bfw_window(
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
    """One call of :func:`bfw_rounds` for the compiled loop's ``runner``
    (:class:`bco_gym.engine.compiled.KernelRunner`: the rows' arrays and the plan)."""
    agent, plan = runner.agent, runner.plan
    params = agent.params
    return bfw_rounds(
        runner.points, directions, start, theta, shifts, plan.sign, params["smoothing_radius"],
        agent._estimate_scale, params["step_size"], runner.residual, runner.previous, weights,
        agent._estimate_sum, agent._linear, agent._gradient, agent._anchor, plan.oracle,
        plan.check, runner.plays, losses, window, first, trusted, runner.work, runner.saved,
    )  # fmt: skip
