"""Online Frank-Wolfe's rounds, compiled (:func:`ofw_rounds`).

The agent's NumPy update (:mod:`bco_gym.agents.ofw.agent`) in its order of operations, a window of
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
    full_information_round,
    keep,
    restore,
)

# Before this module's kernels are compiled or loaded: they inline the shared helpers
# (bco_gym.agents.kernels), whose edits numba's cache would not see.
drop_stale_cache(Path(__file__).parent, SHARED_KERNELS)


@kernel
def ofw_rounds(
    points, theta, offset, sign, eta, weights, gradient_sum, linear, gradient, anchor,
    oracle, check, losses, window, first, trusted, work, saved,
):  # fmt: skip  # pragma: no cover - compiled
    """Online Frank-Wolfe (full information): play x; b = eta (nabla_1 + ... + nabla_{t-1});
    one Frank-Wolfe step of weight sigma_t; then nabla_t = theta_t joins the sum."""
    kind, radius, low, high, shrink, center, centered, shrunk = oracle
    rows, n = points.shape
    origin, out_origin, count = window
    for begin in range(first, count, BLOCK):
        limit = min(count, begin + BLOCK)
        keep(points, saved, 0)
        keep(gradient_sum, saved, 1)
        keep(linear, saved, 2)
        keep(gradient, saved, 3)
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
                        linear[s, i] = gradient_sum[s, i] * eta
                    frank_wolfe_step(
                        points, s, linear, anchor, weights[j], gradient, kind, radius, low, high,
                        shrink, center, centered, shrunk, work,
                    )  # fmt: skip
                    for i in range(n):
                        gradient_sum[s, i] += theta[s, origin + j, i]
            if refused == limit:
                break
            restore(points, saved, 0)
            restore(gradient_sum, saved, 1)
            restore(linear, saved, 2)
            restore(gradient, saved, 3)
            limit = refused
        if limit < min(count, begin + BLOCK):
            return limit
    return count


def ofw_window(
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
    """One call of :func:`ofw_rounds` for the compiled loop's ``runner``
    (:class:`bco_gym.engine.compiled.KernelRunner`: the rows' arrays and the plan)."""
    agent, plan = runner.agent, runner.plan
    return ofw_rounds(
        runner.points, theta, shifts, plan.sign, agent.params["step_size"], weights,
        agent._gradient_sum, agent._linear, agent._gradient, agent._anchor, plan.oracle,
        plan.check, losses, window, first, trusted, runner.work, runner.saved,
    )  # fmt: skip
