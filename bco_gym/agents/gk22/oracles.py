"""Infeasible projections of Garber & Kretzu (COLT 2022): Algorithms 2, 3 and 6.

Definition 3 of the paper: y~ is an *infeasible projection* of y onto a convex set C
when ||y~ - z|| <= ||y - z|| for every z in C. Online gradient descent run with such
points instead of exact projections keeps its (adaptive) regret bound (their Lemma 4);
the routines below compute them with a linear optimization oracle (LOO) or a
separation oracle (SO), never a projection.

In the paper the set contains the origin and K ⊆ R B. Here every set has a centre c in
its relative interior, r B(c) ∩ aff(K) ⊆ K ⊆ R B(c), and the routines work about c:
the paper's y / max{1, ||y||/R} (the projection onto R B) is
c + (y - c) / max{1, ||y - c||/R}, and its (1 - delta) K is c + (1 - delta)(K - c).

* :func:`close_infeasible_projection_rows` -- Algorithm 3 (with Algorithm 2, the
  separating hyperplane by Frank-Wolfe with exact line search, inside): from a feasible
  x_0 and any y_0, a pair (x, y~) with x in C, y~ an infeasible projection of y_0 onto C
  in R B(c), and ||x - y~||^2 <= 3 eps (their Lemmas 6 and 7). On S rows at once, row
  by row exact.
* :func:`separation_projection` -- Algorithm 6: from any y_0, a point y~ with
  c + (y~ - c)/(1 - delta'/r) in K (so y~ in K_{delta'/r}) that is an infeasible
  projection of y_0 onto K_{delta, delta'/r} = c + (1 - delta)(1 - delta'/r)(K - c)
  (their Lemmas 12 and 13). One row; :class:`SeparationSteps` runs it (and fejer-bgd's
  steps) on every row in one compiled call on the built-in sets, the same bits.

Both touch the set only through its oracle (and ``tangent``, the projector onto the
direction space V = aff(K) - c, for sets that are not full-dimensional).

References: D. Garber and B. Kretzu, "New projection-free algorithms for online convex
optimization with adaptive regret guarantees", COLT 2022 (PMLR 178), Algorithms 2, 3
and 6, Lemmas 5-8, 12 and 13.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bco_gym.agents.frank_wolfe import row_dot
from bco_gym.agents.kernels import agent_kernel_wanted, builtin_kind, read_only
from bco_gym.errors import UnsupportedSetError
from bco_gym.sets.balls import euclidean_norm
from bco_gym.sets.base import ConvexSet

#: The most LOO calls Lemmas 6 and 7 may allow one run of Algorithm 3 at its input
#: (:func:`lemma_loo_calls`): a run whose bound exceeds it is refused before its first call
#: (:class:`ProjectionBudgetError`). The bounds are loose (runs make 10^-5 to 10^-7 of
#: them), so this refuses only the hopeless: runs on the built-in sets with the theorem's
#: constants stay below 10^9, a ball of radius 10^-6 against the step reaches 10^17.
LOO_CALL_BUDGET = 10**12

#: Safety stop of :func:`close_infeasible_projection_rows`: a row's LOO calls beyond
#: LOO_SLACK times its Lemmas 6-7 bound (plus LOO_SLACK_CALLS, for rounding near the
#: stopping tests) signal an inexact oracle.
LOO_SLACK = 2
LOO_SLACK_CALLS = 100

#: Safety margin of :func:`separation_projection` (SO calls) over Lemma 13's count
#: dist^2(y_1, K_{delta,delta'/r}) / (delta (r - delta'))^2 + 1: beyond it, a bug.
SEPARATION_SLACK = 2

#: The tangent part of a unit separating normal is treated as zero below this norm: it
#: is then rounding noise (the violated constraint is orthogonal to aff(K)), and
#: normalising it would push the point out of aff(K).
TANGENT_FLOOR = 1e-9

#: The separation oracle's tolerance: a point within it of K counts as inside.
SEPARATION_ATOL = 1e-12


@dataclass(frozen=True)
class CloseProjectionRows:
    """Output of :func:`close_infeasible_projection_rows`, one row per problem.

    Attributes:
        points: x (S, *shape), in the LOO's set C (a convex combination of its answers).
        targets: y~ (S, *shape), an infeasible projection of the input y_0 onto C, in
            R B(c), with ||x - y~||^2 <= 3 eps.
        loo_calls: (S,) int64, the LOO calls of each row (0 when ||x_0 - y_0||^2 <= 3 eps).
        iterations: (S,) int64, the iterations of Algorithm 3's for loop, i.e. the runs
            of Algorithm 2 (0 when it returned before the loop).
        most_calls: (S,) int64, the most LOO calls one run of Algorithm 2 made.
    """

    points: np.ndarray
    targets: np.ndarray
    loo_calls: np.ndarray
    iterations: np.ndarray
    most_calls: np.ndarray


class ProjectionBudgetError(ValueError):
    """A run of Algorithm 3 whose LOO calls Lemmas 6 and 7 bound only by more than
    :data:`LOO_CALL_BUDGET`: the set is tiny against the step it must absorb."""


def lemma_6_calls(radius: float, tolerance: float) -> int:
    """ceil(27 R^2/eps - 2): Lemma 6's bound on the LOO calls of one run of Algorithm 2
    (Frank-Wolfe on ||x - y||^2/2, 1-smooth over a set of diameter 2R; Jaggi's dual
    convergence, their Theorem 2)."""
    return max(1, math.ceil(27 * radius**2 / tolerance - 2))


def lemma_7_iterations(
    distance_squared: float, tolerance: float, start: float | None = None
) -> float:
    """max{ceil(h (s - eps)/(4 eps^2)) + 1, 1} with h = ||x_0 - y_0||^2 and s = h (or
    ``start``, an upper bound of dist^2(y_1, C)): Lemma 7's bound on the iterations of
    Algorithm 3 (its for loop) for step gamma = 2 eps/h, as its proof gives it: each of
    the first k - 1 iterations lowers dist^2(y, C) by 4 eps^2/h from at most s, and the
    iteration after dist^2 <= eps is the last, so k - 1 <= ceil(h (s - eps)/(4 eps^2)).
    The proof starts from s = h; s = ||x_0 - y_1||^2 (y_1 the projection of y_0 onto
    R B(c), x_0 in C) bounds dist^2(y_1, C) as well and is at most min(h, 4R^2). The
    lemma prints the count without the ceiling, up to one iteration too few."""
    h = distance_squared
    s = h if start is None else min(h, start)
    return max(math.ceil(h * (s - tolerance) / (4 * tolerance**2)) + 1, 1.0)


def lemma_loo_calls(
    distance_squared: float, start: float, tolerance: float, radius: float
) -> float:
    """Lemmas 6 and 7: a run of Algorithm 3 makes at most (its iterations) x (the calls
    of one run of Algorithm 2) LOO calls (:func:`lemma_7_iterations`, :func:`lemma_6_calls`);
    none when ||x_0 - y_0||^2 <= 3 eps."""
    if distance_squared <= 3 * tolerance:
        return 0.0
    iterations = lemma_7_iterations(distance_squared, tolerance, start)
    return float(iterations) * lemma_6_calls(radius, tolerance)


def close_infeasible_projection_rows(
    lmo_many: Callable[[np.ndarray], np.ndarray],
    feasible: np.ndarray,
    initial: np.ndarray,
    tolerance: float,
    center: np.ndarray,
    radius: float,
) -> CloseProjectionRows:
    """Algorithm 3 (with Algorithm 2 inside) on S rows, row i exactly the run on row i.

    Row i, with C the set of ``lmo_many``, x_0 = ``feasible[i]`` in C, y_0 =
    ``initial[i]``, eps = ``tolerance``, R = ``radius``, c = ``center``:

        y_1 = c + (y_0 - c) / max{1, ||y_0 - c||/R}          (projection onto R B(c))
        if ||x_0 - y_0||^2 <= 3 eps: return (x_0, y_1)
        gamma = 2 eps / ||x_0 - y_0||^2                          (Lemma 7)
        for i = 1, 2, ...:
            x_i = Algorithm 2 (C, eps, start x_{i-1}, target y_i)
            if ||x_i - y_i||^2 > 3 eps: y_{i+1} = y_i - gamma (y_i - x_i)
            else: return (x_i, y_i)

    Algorithm 2 (C, eps, start x_1, target y), a Frank-Wolfe method on ||x - y||^2/2:

        for j = 1, 2, ...:
            v_j = LOO_C(x_j - y)                                 (one LOO call)
            if <x_j - y, x_j - v_j> <= eps or ||x_j - y||^2 <= 3 eps: return x_j
            sigma_j = argmin_{sigma in [0, 1]} ||y - x_j - sigma (v_j - x_j)||^2
                    = min(<x_j - y, x_j - v_j> / ||v_j - x_j||^2, 1)
            x_{j+1} = x_j + sigma_j (v_j - x_j)

    As in the pseudocode the LOO is called before the stopping test, so every run of
    Algorithm 2 makes at least one call. Before the first call, a row whose calls
    Lemmas 6 and 7 bound only by more than :data:`LOO_CALL_BUDGET`
    (:func:`lemma_loo_calls`) is refused (:class:`ProjectionBudgetError`, naming the
    bound); a row exceeding its bound (with :data:`LOO_SLACK`) raises RuntimeError: the
    oracle is inexact. The rows are advanced together, one LOO call
    per running row per step (one ``lmo_many`` call on the rows still running): each
    row's arithmetic is elementwise or a reduction along its own entries
    (:func:`~bco_gym.portable.row_dot`), so its iterates and counts are those
    of the routine run on that row alone.
    """
    x = np.array(feasible, dtype=float, copy=True)
    y0 = np.asarray(initial, dtype=float)
    rows = len(x)
    tail = (1,) * (x.ndim - 1)  # broadcasts a value per row against the points
    shape = (rows, *tail)
    offset = y0 - center
    scale = np.maximum(1.0, np.sqrt(row_dot(offset, offset)) / radius)
    y = center + offset / scale.reshape(shape)  # y_1
    start_gap = x - y0
    start = row_dot(start_gap, start_gap)  # ||x_0 - y_0||^2
    allowed = _allowed_calls(start, row_dot(x - y, x - y), tolerance, radius)
    gamma = np.divide(2 * tolerance, start, out=np.zeros(rows), where=start > 0)
    calls = np.zeros(rows, dtype=np.int64)
    iterations = np.zeros(rows, dtype=np.int64)
    most = np.zeros(rows, dtype=np.int64)
    run_calls = np.zeros(rows, dtype=np.int64)  # LOO calls of the current Algorithm 2 run
    active = np.flatnonzero(start > 3 * tolerance)
    iterations[active] = 1
    while len(active):
        xa, ya = x[active], y[active]
        residual = xa - ya  # x_j - y, the gradient of ||x - y||^2/2
        direction = lmo_many(residual) - xa  # v_j - x_j
        calls[active] += 1
        run_calls[active] += 1
        gap = -row_dot(residual, direction)  # <x_j - y, x_j - v_j>
        distance = row_dot(residual, residual)  # ||x_j - y||^2
        returned = (gap <= tolerance) | (distance <= 3 * tolerance)
        stepping = ~returned
        if stepping.any():  # Algorithm 2 continues: the exact line search step
            d = direction[stepping]
            sigma = np.minimum(gap[stepping] / row_dot(d, d), 1.0)
            x[active[stepping]] = xa[stepping] + sigma.reshape((len(d), *tail)) * d
        if returned.any():  # Algorithm 2 returned x_i = x_j to Algorithm 3
            finished = active[returned]
            most[finished] = np.maximum(most[finished], run_calls[finished])
            run_calls[finished] = 0
            far = distance[returned] > 3 * tolerance
            moving = finished[far]
            if len(moving):  # y_{i+1} = y_i - gamma (y_i - x_i), then a new run of Alg. 2
                step = gamma[moving].reshape((len(moving), *tail))
                y[moving] = y[moving] - step * (y[moving] - x[moving])
                iterations[moving] += 1
            active = np.concatenate((active[stepping], moving))
            active.sort()
        beyond = active[calls[active] > allowed[active]] if len(active) else active
        if len(beyond):
            raise RuntimeError(
                f"close_infeasible_projection_rows: rows {beyond.tolist()} made more LOO "
                f"calls than {LOO_SLACK} x their Lemmas 6-7 bound (at most "
                f"{allowed[beyond].max():.3g}); the oracle is likely inexact"
            )
    return CloseProjectionRows(x, y, calls, iterations, most)


def _allowed_calls(
    distance: np.ndarray, start: np.ndarray, tolerance: float, radius: float
) -> np.ndarray:
    """Per row, the LOO calls Algorithm 3 may make (its Lemmas 6-7 bound, with slack);
    ProjectionBudgetError when a row's bound exceeds :data:`LOO_CALL_BUDGET`."""
    bounds = np.array(
        [
            lemma_loo_calls(float(h), float(s), tolerance, radius)
            for h, s in zip(distance, start, strict=True)
        ]
    )
    worst = int(np.argmax(bounds)) if len(bounds) else 0
    if len(bounds) and bounds[worst] > LOO_CALL_BUDGET:
        h = float(distance[worst])
        raise ProjectionBudgetError(
            f"an infeasible projection (Garber & Kretzu's Algorithm 3) from a point at "
            f"squared distance {h:.3g} = {h / tolerance:.3g} eps from its feasible start "
            f"(eps = {tolerance:.3g}, the set within radius {radius:.3g}) may need up to "
            f"{bounds[worst]:.3g} LOO calls by Lemmas 6-7, more than the budget of "
            f"{LOO_CALL_BUDGET:,}: the set is tiny against the gradient step it must absorb; "
            "refused. Use a longer horizon, a larger constant c or step tolerance, or an "
            "agent without infeasible projections (bbcg, fkm)"
        )
    return LOO_SLACK * bounds + LOO_SLACK_CALLS


@dataclass(frozen=True)
class SeparationProjection:
    """Output of :func:`separation_projection`.

    Attributes:
        point: y~, with c + (y~ - c)/(1 - delta'/r) in K (within the oracle's tolerance).
        calls: the separation-oracle calls (>= 1: the last one answers "inside").
    """

    point: np.ndarray
    calls: int


def to_affine_hull(convex_set: ConvexSet, point: np.ndarray) -> np.ndarray:
    """c + P_V(point - c): the point itself in exact arithmetic when it lies in aff(K),
    and the rounding drift off aff(K) removed (a no-op for full-dimensional sets)."""
    if convex_set.aff_dim == convex_set.dim:
        return point
    center = convex_set.center
    return center + convex_set.tangent(point - center)


def separation_projection(
    convex_set: ConvexSet,
    initial: np.ndarray,
    squeeze: float,
    margin: float,
) -> SeparationProjection:
    """Algorithm 6 with squeeze parameters (delta, delta') = (``squeeze``, ``margin``).

    With c, r, R the set's centre and radii, s = 1 - delta'/r and y_0 = ``initial``:

        y_1 = c + (y_0 - c) / max{1, ||y_0 - c||/R}
        for i = 1, 2, ...:
            call SO_K at p_i = c + (y_i - c)/s
            if p_i is not in K: g_i = the normal it returns,
                                y_{i+1} = y_i - gamma_i g_i,  gamma_i = delta (r - delta')/||g_i||
            else: return y_i

    (Lemma 13's step size.) For a set that is not full-dimensional the normal is
    replaced by its part in V, P_V g_i: for p_i in aff(K) it separates as well
    (<p_i - x, g_i> = <p_i - x, P_V g_i> for x in K), and Lemma 12's ball of radius
    delta (r - delta') about a point of K_{delta,delta'/r} lies in K_{delta'/r} only
    within aff(K). The iterates are kept in aff(K) (:func:`to_affine_hull`, a no-op in
    exact arithmetic): otherwise the rounding drift of many steps grows until the
    oracle separates p_i by the affine constraint itself, whose normal has no part in V.
    A part of norm below ``TANGENT_FLOOR`` (the normal is a unit vector) is that case
    and raises, as does exceeding Lemma 13's count ||y_1 - c||^2/(delta (r - delta'))^2 + 1
    (c is in K_{delta,delta'/r}, so it bounds dist^2(y_1, K_{delta,delta'/r})) by more
    than ``SEPARATION_SLACK`` calls.

    Both norms are :func:`~bco_gym.sets.balls.euclidean_norm` (the square root of NumPy's
    pairwise sum of the squares, not a BLAS dot product, whose order is the BLAS
    build's), which the compiled steps reproduce (:class:`SeparationSteps`).
    """
    r, R = convex_set.inner_radius, convex_set.outer_radius
    center = convex_set.center
    shrink = 1.0 - margin / r
    step = squeeze * (r - margin)
    offset = initial - center
    norm = euclidean_norm(offset.ravel())
    y = center + offset / max(1.0, norm / R)
    limit = min(norm, R) ** 2 / step**2 + 1 + SEPARATION_SLACK
    full = convex_set.aff_dim == convex_set.dim
    if not full:
        y = to_affine_hull(convex_set, y)
    calls = 0
    while True:
        calls += 1
        answer = convex_set.separation(center + (y - center) / shrink, atol=SEPARATION_ATOL)
        if answer is None:
            return SeparationProjection(y, calls)
        normal = answer[0] if full else convex_set.tangent(answer[0])
        size = euclidean_norm(normal.ravel())
        if size <= TANGENT_FLOOR or calls > limit:
            raise RuntimeError(
                f"separation_projection: call {calls} (Lemma 13 allows {limit:.6g}) got a "
                f"normal whose part in aff(K) has norm {size:.3g}; the point left aff(K) "
                "or the oracle is wrong (bug)"
            )
        y = y - (step / size) * normal
        if not full:
            y = to_affine_hull(convex_set, y)


class SeparationSteps:
    """The separation-oracle steps of every row in one compiled call
    (:func:`bco_gym.agents.gk22.kernel.separation_rows`, numba): Algorithm 6
    (:func:`separation_projection`, so-bgd) or fejer-bgd's steps
    (:meth:`~bco_gym.agents.gk22.fejer_bgd.FejerBanditGD._fejer`), on the built-in sets.

    Calling it on targets (S, n) moves each row to the point the Python loop returns,
    bit for bit (the oracles' arithmetic in their order), and adds each row's calls and
    steps to the counters; it returns the rows it left, untouched, to the Python loop
    (which then gives the same point or raises its error: non-finite entries, a normal
    with no part in aff(K), the safety limit). Made by :meth:`for_set`, which says None where the
    kernel does not apply or is not wanted (``BCO_GYM_KERNELS``).
    """

    def __init__(
        self,
        convex_set: ConvexSet,
        shrink: float,
        step: float,
        *,
        fejer: bool,
        found: tuple[int, float, np.ndarray, np.ndarray],
    ):
        kind, radius, low, high = found
        n = convex_set.shape[0]
        self._arguments = (
            kind,
            radius,
            read_only(low),
            read_only(high),
            read_only(np.ascontiguousarray(convex_set.center, dtype=float)),
            convex_set.aff_dim == convex_set.dim,
            fejer,
            float(shrink),
            float(step),
            float(convex_set.outer_radius),
            float(SEPARATION_SLACK),
            TANGENT_FLOOR,
            SEPARATION_ATOL,
        )
        self._work = np.empty((6, n))
        self._left = np.empty(0, dtype=np.int64)  # the rows left to the Python loop
        self._kernel: Callable[..., int] | None = None

    @classmethod
    def for_set(
        cls, convex_set: ConvexSet, shrink: float, step: float, *, fejer: bool, run_rounds: int
    ) -> SeparationSteps | None:
        """The steps on ``convex_set`` (oracle at c + (y - c)/``shrink``, steps of
        ``step``), or None: a set the kernel does not know (not exactly L2Ball, L1Ball,
        Hypercube or Simplex), numba absent, or not wanted for ``run_rounds`` = T * S
        (``bco_gym.agents.kernels.agent_kernel_wanted``)."""
        found = builtin_kind(convex_set)
        if found is None or not agent_kernel_wanted(run_rounds):
            return None
        return cls(convex_set, shrink, step, fejer=fejer, found=found)

    def __call__(self, targets: np.ndarray, calls: np.ndarray, steps: np.ndarray) -> np.ndarray:
        """Step every row of ``targets`` (S, n; C-contiguous float64, in place), adding
        each row's oracle calls to ``calls`` and its steps (the calls that returned a
        normal) to ``steps`` (int64, (S,)); returns the rows left to the Python loop
        (untouched, their counters too)."""
        if self._kernel is None:
            from bco_gym.agents.gk22 import kernel as separation

            separation.announce_compile()
            self._kernel = separation.separation_rows
        if len(self._left) != len(targets):
            self._left = np.empty(len(targets), dtype=np.int64)
        count = self._kernel(*self._arguments, targets, calls, steps, self._left, self._work)
        return self._left[:count]

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "_kernel": None}  # the compiled function is not pickled


def require_separation(owner: str, convex_set: ConvexSet) -> None:
    """UnsupportedSetError (a ValueError) naming ``owner`` and the set unless the set has a
    separation oracle (``ConvexSet.separation``): the agents that step by it (so-bgd,
    fejer-bgd) need one."""
    if not convex_set.has_separation:
        raise UnsupportedSetError(
            f"{owner} needs a set with a separation oracle (ConvexSet.separation); "
            f"{convex_set!r} has none. Sets with one: L2Ball, L1Ball, Hypercube, Simplex"
        )
