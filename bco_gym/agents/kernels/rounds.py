"""The agents' rounds, compiled: one call plays a window of rounds of S rows.

Each function is the agent's NumPy update (bco_gym/agents/<name>.py) in its order of
operations, with the loss f_t(y) = <theta_t, y> + sign * offset_t evaluated inline.
The losses' parameters come row first, whole chunks ``theta`` (S, C, n) and ``offset``
(S, C) as :meth:`~bco_gym.losses.batch.LossBatch.row_chunk` stacks them, and so do the
directions, as the agents' direction streams draw them: with ``window = (origin,
out_origin, count)``, the window's round j < count of row s is ``theta[s, origin + j]``,
``directions[s, start + j]`` (the stream's chunk,
:meth:`~bco_gym.agents.estimators.DirectionStream.take_rows`), and its loss goes to
``losses[s, out_origin + j]``. Whole arrays and origins rather than a window's views: a
view's layout (contiguous or not) would make numba compile another version of a kernel.

The rounds make no array view: every row (a run's point, play, direction) is read and
written in place by its index, and the oracles (:mod:`.oracles`) are inlined or called,
taking the set's tuple unpacked once per call (``oracle``: the agent's K or K_delta,
``check``: the env's K and ``atol``, both built by :mod:`bco_gym.engine.compiled`).
``work`` (6, n) is scratch: rows 0-3 the oracles', 4 the step before its projection, 5
the LMO's vertex.

Blocks. The rows are independent runs, so a kernel plays ``BLOCK`` rounds of one row
before the next row (its rows of theta and of the directions are then read in order,
about 1.6x faster than every row round by round at S = 64). The result is what
round-by-round play gives: a kernel stops at the first round j at which some row's play
is refused (j != ``trusted``), with every row's state as it was before round j and every
row's play of round j in ``plays`` (fkm, fkm2, bfw; ofw and ogd play their points), and
returns j for the env's own check. For that, each block starts by keeping the rows'
state in ``saved`` (5, S, n); a refusal sends the block back to it, and the rounds
before the first refused round are played again (the same operations, so the same bits).
"""

from __future__ import annotations

from bco_gym.agents.kernels.oracles import inline, inside, kernel, linear_value, lmo, project

#: Rounds of one row played before the next row's.
BLOCK = 32


@inline
def keep(rows, saved, k):  # pragma: no cover - compiled
    """saved[k] = rows, an (S, n) state (a block's start)."""
    for s in range(rows.shape[0]):
        for i in range(rows.shape[1]):
            saved[k, s, i] = rows[s, i]


@inline
def restore(rows, saved, k):  # pragma: no cover - compiled
    """rows = saved[k] (:func:`keep`)."""
    for s in range(rows.shape[0]):
        for i in range(rows.shape[1]):
            rows[s, i] = saved[k, s, i]


@inline
def keep_values(values, saved, k):  # pragma: no cover - compiled
    """saved[k, :, 0] = values, an (S,) state."""
    for s in range(values.shape[0]):
        saved[k, s, 0] = values[s]


@inline
def restore_values(values, saved, k):  # pragma: no cover - compiled
    """values = saved[k, :, 0] (:func:`keep_values`)."""
    for s in range(values.shape[0]):
        values[s] = saved[k, s, 0]


@inline
def one_point_play(plays, s, directions, start, j, delta, points):  # pragma: no cover - compiled
    """plays[s] = u delta + x: row s's play of the window's round j (fkm, bfw)."""
    for i in range(points.shape[1]):
        plays[s, i] = directions[s, start + j, i] * delta + points[s, i]


@inline
def one_point_round(
    points, directions, start, j, delta, theta, offset, sign, residual, previous, check, plays,
    losses, s, origin, out_origin, trusted, work,
):  # fmt: skip  # pragma: no cover - compiled
    """Row s's round j of an agent that plays one point x + u delta (fkm, bfw): the play,
    its test against K (unless ``trusted``), its loss f_t(y) recorded. Returns (whether
    the play was accepted, the value the update uses: f_t(y), or f_t(y) - f_{t-1}(y_{t-1})
    with the residual estimator)."""
    check_kind, check_radius, check_low, check_high, atol = check
    one_point_play(plays, s, directions, start, j, delta, points)
    if j != trusted and not inside(
        check_kind, check_radius, check_low, check_high, atol, plays, s, work
    ):
        return False, 0.0
    value = linear_value(theta, s, origin + j, plays, s, offset[s, origin + j], sign, work)
    losses[s, out_origin + j] = value
    if residual:
        value, previous[s] = value - previous[s], value
    return True, value


@inline
def full_information_round(
    points, theta, offset, sign, check, losses, s, j, origin, out_origin, trusted, work
):  # pragma: no cover - compiled
    """Row s's round j of an agent that plays its point x (ofw, ogd): the test against K
    (unless ``trusted``) and the loss f_t(x) recorded; returns whether x was accepted."""
    check_kind, check_radius, check_low, check_high, atol = check
    if j != trusted and not inside(
        check_kind, check_radius, check_low, check_high, atol, points, s, work
    ):
        return False
    losses[s, out_origin + j] = linear_value(
        theta, s, origin + j, points, s, offset[s, origin + j], sign, work
    )
    return True


# -- the agents' rounds ------------------------------------------------------------------------
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
