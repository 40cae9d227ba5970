"""The agents' rounds, compiled: one call plays a window of rounds of S rows.

Each function is the agent's NumPy update (bco_gym/agents/<name>.py) in its order of
operations, with the loss f_t(y) = <theta_t, y> + sign * offset_t evaluated inline.
The losses' parameters come row first, ``theta`` (S, k, n) and ``offset`` (S, k), as
:meth:`~bco_gym.losses.batch.LossBatch.row_chunk` stacks them; so do the directions, as
the agents' direction streams draw them: the window's round j of row s is
``directions[s, start + j]`` of the stream's chunk
(:meth:`~bco_gym.agents.estimators.DirectionStream.take_rows`).

The rounds make no array view: every row (a run's point, play, direction) is read and
written in place by its index, and the oracles (:mod:`.oracles`) are inlined, taking the
set's tuple unpacked once per call (``oracle``: the agent's K or K_delta, ``check``: the
env's K and ``atol``, both built by :mod:`bco_gym.engine.compiled`). ``work`` (6, n) is
scratch: rows 0-3 the oracles', 4 the step before its projection, 5 the LMO's vertex.
"""

from __future__ import annotations

from bco_gym.agents.kernels.oracles import inline, inside, kernel, linear_value, lmo, project


# -- the agents' rounds ------------------------------------------------------------------------
@kernel
def fkm_rounds(
    points, directions, start, theta, offset, sign, delta, scale, residual, previous,
    oracle, check, plays, losses, first, trusted, work,
):  # fmt: skip  # pragma: no cover - compiled
    """FKM's rounds first.. of the window: y = u delta + x; f = f_t(y) (or f_t(y) -
    f_{t-1}(y_{t-1})); x <- Pi_{K_delta}(x - u (f * eta d/delta)). Returns the number of
    rounds of the window, or the index of a round whose plays need the env's check."""
    kind, radius, low, high, shrink, center, centered, shrunk = oracle
    check_kind, check_radius, check_low, check_high, atol = check
    rows, n = points.shape
    for j in range(first, theta.shape[1]):
        accepted = True
        for s in range(rows):
            for i in range(n):
                plays[s, i] = directions[s, start + j, i] * delta + points[s, i]
            accepted = accepted and (
                j == trusted
                or inside(check_kind, check_radius, check_low, check_high, atol, plays, s, work)
            )
        if not accepted:
            return j
        for s in range(rows):
            value = linear_value(theta, s, j, plays, s, offset[s, j], sign, work)
            losses[s, j] = value
            if residual:
                value, previous[s] = value - previous[s], value
            coefficient = value * scale
            for i in range(n):
                work[4, i] = points[s, i] - directions[s, start + j, i] * coefficient
            project(kind, radius, low, high, shrink, center, centered, shrunk, 4, points, s, work)
    return theta.shape[1]


@kernel
def fkm2_rounds(
    points, directions, start, theta, offset, sign, delta, eta_d, oracle, check, plays, losses,
    first, trusted, work,
):  # fmt: skip  # pragma: no cover - compiled
    """Two-point FKM: plays x + u delta and x - u delta; counted loss (f+ + f-)/2;
    x <- Pi_{K_delta}(x - u ((eta d) (f+ - f-)/2 / delta)). ``plays`` is (S, 2, n)."""
    kind, radius, low, high, shrink, center, centered, shrunk = oracle
    check_kind, check_radius, check_low, check_high, atol = check
    rows, n = points.shape
    pairs = plays.reshape((2 * rows, n))  # row 2s: x + u delta, row 2s + 1: x - u delta
    for j in range(first, theta.shape[1]):
        accepted = True
        for s in range(rows):
            for i in range(n):
                offset_i = directions[s, start + j, i] * delta
                pairs[2 * s, i] = points[s, i] + offset_i
                pairs[2 * s + 1, i] = points[s, i] - offset_i
            accepted = accepted and (
                j == trusted
                or (
                    inside(
                        check_kind, check_radius, check_low, check_high, atol, pairs, 2 * s, work
                    )
                    and inside(
                        check_kind, check_radius, check_low, check_high, atol, pairs, 2 * s + 1,
                        work,
                    )
                )
            )  # fmt: skip
        if not accepted:
            return j
        for s in range(rows):
            plus = linear_value(theta, s, j, pairs, 2 * s, offset[s, j], sign, work)
            minus = linear_value(theta, s, j, pairs, 2 * s + 1, offset[s, j], sign, work)
            losses[s, j] = (plus + minus) / 2
            coefficient = eta_d * ((plus - minus) / 2) / delta
            for i in range(n):
                work[4, i] = points[s, i] - directions[s, start + j, i] * coefficient
            project(kind, radius, low, high, shrink, center, centered, shrunk, 4, points, s, work)
    return theta.shape[1]


@inline
def frank_wolfe_step(
    points, s, linear, anchor, weight, gradient, kind, radius, low, high, shrink, center,
    centered, shrunk, work,
):  # fmt: skip  # pragma: no cover - compiled
    """x <- x + sigma (lmo(b + 2(x - x_1)) - x) for x = points[s], b = linear[s], the
    gradient left in gradient[s], the vertex in ``work`` row 5."""
    n = points.shape[1]
    for i in range(n):
        gradient[s, i] = (points[s, i] - anchor[i]) * 2.0 + linear[s, i]
    lmo(kind, radius, low, high, shrink, center, centered, shrunk, gradient, s, work, 5, work)
    for i in range(n):
        points[s, i] = points[s, i] + weight * (work[5, i] - points[s, i])


@kernel
def bfw_rounds(
    points, directions, start, theta, offset, sign, delta, scale, eta, residual, previous, weights,
    estimate_sum, linear, gradient, anchor, oracle, check, plays, losses, first, trusted, work,
):  # fmt: skip  # pragma: no cover - compiled
    """Bandit Frank-Wolfe: y = u delta + x; G += u (f d/delta); b = G eta; one online
    Frank-Wolfe step of weight sigma_t on <b, x> + ||x - x_1||^2 over K_delta."""
    kind, radius, low, high, shrink, center, centered, shrunk = oracle
    check_kind, check_radius, check_low, check_high, atol = check
    rows, n = points.shape
    for j in range(first, theta.shape[1]):
        accepted = True
        for s in range(rows):
            for i in range(n):
                plays[s, i] = directions[s, start + j, i] * delta + points[s, i]
            accepted = accepted and (
                j == trusted
                or inside(check_kind, check_radius, check_low, check_high, atol, plays, s, work)
            )
        if not accepted:
            return j
        for s in range(rows):
            value = linear_value(theta, s, j, plays, s, offset[s, j], sign, work)
            losses[s, j] = value
            if residual:
                value, previous[s] = value - previous[s], value
            coefficient = value * scale
            for i in range(n):
                estimate_sum[s, i] += directions[s, start + j, i] * coefficient
                linear[s, i] = estimate_sum[s, i] * eta
            frank_wolfe_step(
                points, s, linear, anchor, weights[j], gradient, kind, radius, low, high,
                shrink, center, centered, shrunk, work,
            )  # fmt: skip
    return theta.shape[1]


@kernel
def ofw_rounds(
    points, theta, offset, sign, eta, weights, gradient_sum, linear, gradient, anchor,
    oracle, check, losses, first, trusted, work,
):  # fmt: skip  # pragma: no cover - compiled
    """Online Frank-Wolfe (full information): play x; b = eta (nabla_1 + ... + nabla_{t-1});
    one Frank-Wolfe step of weight sigma_t; then nabla_t = theta_t joins the sum."""
    kind, radius, low, high, shrink, center, centered, shrunk = oracle
    check_kind, check_radius, check_low, check_high, atol = check
    rows, n = points.shape
    for j in range(first, theta.shape[1]):
        for s in range(rows):
            if j != trusted and not inside(
                check_kind, check_radius, check_low, check_high, atol, points, s, work
            ):
                return j
        for s in range(rows):
            losses[s, j] = linear_value(theta, s, j, points, s, offset[s, j], sign, work)
            for i in range(n):
                linear[s, i] = gradient_sum[s, i] * eta
            frank_wolfe_step(
                points, s, linear, anchor, weights[j], gradient, kind, radius, low, high,
                shrink, center, centered, shrunk, work,
            )  # fmt: skip
            for i in range(n):
                gradient_sum[s, i] += theta[s, j, i]
    return theta.shape[1]


@kernel
def ogd_rounds(
    points, theta, offset, sign, eta, oracle, check, losses, first, trusted, work
):  # pragma: no cover - compiled
    """Projected online gradient descent: play x; x <- Pi_K(x - eta theta_t)."""
    kind, radius, low, high, shrink, center, centered, shrunk = oracle
    check_kind, check_radius, check_low, check_high, atol = check
    rows, n = points.shape
    for j in range(first, theta.shape[1]):
        for s in range(rows):
            if j != trusted and not inside(
                check_kind, check_radius, check_low, check_high, atol, points, s, work
            ):
                return j
        for s in range(rows):
            losses[s, j] = linear_value(theta, s, j, points, s, offset[s, j], sign, work)
            for i in range(n):
                work[4, i] = points[s, i] - eta * theta[s, j, i]
            project(kind, radius, low, high, shrink, center, centered, shrunk, 4, points, s, work)
    return theta.shape[1]
