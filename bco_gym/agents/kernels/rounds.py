"""The agents' rounds, compiled: one call plays a window of rounds of S rows.

Each function is the agent's NumPy update (bco_gym/agents/<name>.py) in its order of
operations, with the loss f_t(y) = <theta_t, y> + sign * offset_t evaluated inline.
The losses' parameters come row first, ``theta`` (S, k, n) and ``offset`` (S, k), as
:meth:`~bco_gym.losses.batch.LossBatch.row_chunk` stacks them; the directions round
first, (k, S, n), as the agents' direction streams draw them.
"""

from __future__ import annotations

from bco_gym.agents.kernels.oracles import inside, jit, linear_value, lmo, project


# -- the agents' rounds ------------------------------------------------------------------------
@jit
def fkm_rounds(
    points, directions, theta, offset, sign, delta, scale, residual, previous,
    oracle, check, plays, losses, first, trusted, work,
):  # fmt: skip  # pragma: no cover - compiled
    """FKM's rounds first.. of the window: y = u delta + x; f = f_t(y) (or f_t(y) -
    f_{t-1}(y_{t-1})); x <- Pi_{K_delta}(x - u (f * eta d/delta)). Returns the number of
    rounds of the window, or the index of a round whose plays need the env's check."""
    rows, n = points.shape
    for j in range(first, directions.shape[0]):
        accepted = True
        for s in range(rows):
            for i in range(n):
                plays[s, i] = directions[j, s, i] * delta + points[s, i]
            accepted = accepted and (j == trusted or inside(check, plays[s], work))
        if not accepted:
            return j
        for s in range(rows):
            value = linear_value(theta[s, j], plays[s], offset[s, j], sign, work[0])
            losses[s, j] = value
            if residual:
                value, previous[s] = value - previous[s], value
            coefficient = value * scale
            step = work[4]
            for i in range(n):
                step[i] = points[s, i] - directions[j, s, i] * coefficient
            project(oracle, step, points[s], work)
    return directions.shape[0]


@jit
def fkm2_rounds(
    points, directions, theta, offset, sign, delta, eta_d, oracle, check, plays, losses,
    first, trusted, work,
):  # fmt: skip  # pragma: no cover - compiled
    """Two-point FKM: plays x + u delta and x - u delta; counted loss (f+ + f-)/2;
    x <- Pi_{K_delta}(x - u ((eta d) (f+ - f-)/2 / delta))."""
    rows, n = points.shape
    for j in range(first, directions.shape[0]):
        accepted = True
        for s in range(rows):
            for i in range(n):
                offset_i = directions[j, s, i] * delta
                plays[s, 0, i] = points[s, i] + offset_i
                plays[s, 1, i] = points[s, i] - offset_i
            accepted = accepted and (
                j == trusted
                or (inside(check, plays[s, 0], work) and inside(check, plays[s, 1], work))
            )
        if not accepted:
            return j
        for s in range(rows):
            plus = linear_value(theta[s, j], plays[s, 0], offset[s, j], sign, work[0])
            minus = linear_value(theta[s, j], plays[s, 1], offset[s, j], sign, work[0])
            losses[s, j] = (plus + minus) / 2
            coefficient = eta_d * ((plus - minus) / 2) / delta
            step = work[4]
            for i in range(n):
                step[i] = points[s, i] - directions[j, s, i] * coefficient
            project(oracle, step, points[s], work)
    return directions.shape[0]


@jit
def frank_wolfe_step(point, linear, anchor, weight, oracle, gradient, work):  # pragma: no cover
    """x <- x + sigma (lmo(b + 2(x - x_1)) - x), the gradient left in ``gradient``."""
    for i in range(point.size):
        gradient[i] = (point[i] - anchor[i]) * 2.0 + linear[i]
    vertex = work[5]
    lmo(oracle, gradient, vertex, work)
    for i in range(point.size):
        point[i] = point[i] + weight * (vertex[i] - point[i])


@jit
def bfw_rounds(
    points, directions, theta, offset, sign, delta, scale, eta, residual, previous, weights,
    estimate_sum, linear, gradient, anchor, oracle, check, plays, losses, first, trusted, work,
):  # fmt: skip  # pragma: no cover - compiled
    """Bandit Frank-Wolfe: y = u delta + x; G += u (f d/delta); b = G eta; one online
    Frank-Wolfe step of weight sigma_t on <b, x> + ||x - x_1||^2 over K_delta."""
    rows, n = points.shape
    for j in range(first, directions.shape[0]):
        accepted = True
        for s in range(rows):
            for i in range(n):
                plays[s, i] = directions[j, s, i] * delta + points[s, i]
            accepted = accepted and (j == trusted or inside(check, plays[s], work))
        if not accepted:
            return j
        for s in range(rows):
            value = linear_value(theta[s, j], plays[s], offset[s, j], sign, work[0])
            losses[s, j] = value
            if residual:
                value, previous[s] = value - previous[s], value
            coefficient = value * scale
            for i in range(n):
                estimate_sum[s, i] += directions[j, s, i] * coefficient
                linear[s, i] = estimate_sum[s, i] * eta
            frank_wolfe_step(points[s], linear[s], anchor, weights[j], oracle, gradient[s], work)
    return directions.shape[0]


@jit
def ofw_rounds(
    points, theta, offset, sign, eta, weights, gradient_sum, linear, gradient, anchor,
    oracle, check, losses, first, trusted, work,
):  # fmt: skip  # pragma: no cover - compiled
    """Online Frank-Wolfe (full information): play x; b = eta (nabla_1 + ... + nabla_{t-1});
    one Frank-Wolfe step of weight sigma_t; then nabla_t = theta_t joins the sum."""
    rows, n = points.shape
    for j in range(first, theta.shape[1]):
        for s in range(rows):
            if j != trusted and not inside(check, points[s], work):
                return j
        for s in range(rows):
            losses[s, j] = linear_value(theta[s, j], points[s], offset[s, j], sign, work[0])
            for i in range(n):
                linear[s, i] = gradient_sum[s, i] * eta
            frank_wolfe_step(points[s], linear[s], anchor, weights[j], oracle, gradient[s], work)
            for i in range(n):
                gradient_sum[s, i] += theta[s, j, i]
    return theta.shape[1]


@jit
def ogd_rounds(
    points, theta, offset, sign, eta, oracle, check, losses, first, trusted, work
):  # pragma: no cover - compiled
    """Projected online gradient descent: play x; x <- Pi_K(x - eta theta_t)."""
    rows, n = points.shape
    for j in range(first, theta.shape[1]):
        for s in range(rows):
            if j != trusted and not inside(check, points[s], work):
                return j
        for s in range(rows):
            losses[s, j] = linear_value(theta[s, j], points[s], offset[s, j], sign, work[0])
            step = work[4]
            for i in range(n):
                step[i] = points[s, i] - eta * theta[s, j, i]
            project(oracle, step, points[s], work)
    return theta.shape[1]
