"""What the agents' compiled rounds share: one call plays a window of rounds of S rows.

The per-round kernels (fkm and fkm2: :mod:`bco_gym.agents.fkm.kernel`; bfw, ofw, ogd: the
``kernel`` module of their folder) are each the agent's NumPy update in its order of
operations, with the loss f_t(y) = <theta_t, y> + sign * offset_t evaluated inline, built
from this module's helpers; they follow its conventions.
The losses' parameters come row first, whole chunks ``theta`` (S, C, n) and ``offset``
(S, C) as :meth:`~bco_gym.losses.batch.LossBatch.row_chunk` stacks them, and so do the
directions, as the agents' direction streams draw them: with ``window = (origin,
out_origin, count)``, the window's round j < count of row s is ``theta[s, origin + j]``,
``directions[s, start + j]`` (the stream's chunk,
:meth:`~bco_gym.agents.estimators.DirectionStream.take_rows`), and its loss goes to
``losses[s, out_origin + j]``. Whole arrays and origins rather than a window's views: a
view's layout (contiguous or not) would make numba compile another version of a kernel.

The rounds make no array view: every row (a run's point, play, direction) is read and
written in place by its index, and the oracles (:mod:`bco_gym.agents.kernels.oracles`) are inlined
or called,
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

from bco_gym.agents.kernels.oracles import inline, inside, linear_value, lmo

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
