"""The offline comparator against independent solves, for full horizons and prefixes."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from losses_helpers import CASE_IDS, CASES, SETS, feasible_points, sequence, sum_over_rounds
from scipy.optimize import linprog, minimize

import bco_gym.losses.absolute as absolute_module
import bco_gym.losses.linear as linear_module
import bco_gym.losses.portfolio as portfolio_module
from bco_gym import portable
from bco_gym.losses import make_losses
from bco_gym.losses.linear import linear_comparators
from bco_gym.sets import BirkhoffPolytope, ConvexSet, L2Ball, Simplex

# -- properties every comparator has ----------------------------------------------------


@pytest.mark.parametrize(("family", "set_name"), CASES, ids=CASE_IDS)
def test_comparator_is_certified_on_prefixes(family: str, set_name: str):
    convex_set = SETS[set_name]
    losses = sequence(family, set_name, seed=11)
    stops = [1, 7, 60, losses.chunk_size + 5]  # the last prefix crosses a chunk boundary
    results = losses.comparator([60, stops[-1], 7, 1, 60])
    assert [r.horizon for r in results] == stops
    candidates = feasible_points(convex_set, np.random.default_rng(11), 25)
    for result in results:
        scale = result.horizon * losses.bound
        assert result.point.shape == convex_set.shape
        assert convex_set.contains(result.point, atol=1e-7)
        exact = sum_over_rounds(losses, result.point, result.horizon)
        assert result.value == pytest.approx(exact, rel=1e-9, abs=1e-9 * scale)
        assert 0.0 <= result.gap <= 1e-6 * scale
        others = [losses.cumulative_loss(x, [result.horizon])[0] for x in candidates]
        assert min(others) >= result.value - result.gap - 1e-9 * scale


def test_cumulative_loss_matches_round_by_round_sums():
    losses = sequence("quadratic", "ball", seed=2)
    point = np.array([0.3, -0.2, 0.5])
    stops = [3, 50, losses.chunk_size + 1]
    expected = [sum(losses.loss(t, point) for t in range(stop)) for stop in stops]
    np.testing.assert_allclose(losses.cumulative_loss(point, stops), expected, rtol=1e-12)


# -- linear families: brute force over vertices / closed forms ---------------------------


def _paths(convex_set) -> list[np.ndarray]:
    """Indicator vectors of every s-t path of a FlowPolytope (depth-first search)."""
    found = []

    def extend(node, used):
        if node == convex_set.sink:
            vector = np.zeros(len(convex_set.edges))
            vector[used] = 1.0
            found.append(vector)
            return
        for e, (tail, head) in enumerate(convex_set.edges):
            if tail == node:
                extend(head, [*used, e])

    extend(convex_set.source, [])
    return found


def _vertices(set_name: str) -> list[np.ndarray]:
    convex_set = SETS[set_name]
    if set_name == "simplex":
        return list(np.eye(4))
    if set_name == "l1":
        return [sign * 2.0 * e for e in np.eye(3) for sign in (1.0, -1.0)]
    if set_name == "box":
        return [
            np.array(corner)
            for corner in itertools.product(*zip(convex_set.low, convex_set.high, strict=True))
        ]
    if set_name == "flow":
        return _paths(convex_set)
    if set_name == "birkhoff":
        return [np.eye(3)[list(p)] for p in itertools.permutations(range(3))]
    raise AssertionError(set_name)


LINEAR_ON_POLYTOPES = [
    ("linear", "simplex"),
    ("linear", "l1"),
    ("linear", "box"),
    ("linear-switching", "flow"),
    ("linear", "birkhoff"),
    ("edge-costs", "flow"),
    ("assignment", "birkhoff"),
]


@pytest.mark.parametrize(("family", "set_name"), LINEAR_ON_POLYTOPES)
def test_linear_comparators_match_brute_force_over_vertices(family: str, set_name: str):
    losses = sequence(family, set_name, seed=5, **({"period": 13} if "switching" in family else {}))
    vertices = _vertices(set_name)
    assert len(vertices) >= 3
    for result in losses.comparator([9, 40]):
        best = min(sum_over_rounds(losses, v, result.horizon) for v in vertices)
        assert result.gap == 0.0
        assert result.value == pytest.approx(best, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("set_name", ["ball", "nuclear"])
def test_linear_comparator_matches_the_closed_form_on_balls(set_name: str):
    convex_set = SETS[set_name]
    losses = sequence("linear", set_name, seed=6)
    center = np.zeros(convex_set.shape)
    for result in losses.comparator([5, 33]):
        total = sum(losses.gradient(t, center) for t in range(result.horizon))
        if set_name == "ball":  # min over ||x|| <= rho of <S, x> is at -rho S/||S||
            best_point = -1.5 * total / np.linalg.norm(total)
        else:  # nuclear ball: -rho u_1 v_1^T
            u, _, vt = np.linalg.svd(total)
            best_point = -2.0 * np.outer(u[:, 0], vt[0])
        best = sum_over_rounds(losses, best_point, result.horizon)
        assert result.value == pytest.approx(best, rel=1e-10, abs=1e-10)


# -- smooth families: scipy's SLSQP with the set's constraints written here -------------


def _description(set_name: str):
    """K = {E z : A_eq z = b_eq, A_ub z <= b_ub, bounds}, written here independently.

    Returns (E, A_eq, b_eq, A_ub, b_ub, bounds); the ball is handled by the caller.
    """
    convex_set = SETS[set_name]
    dim = convex_set.dim
    none = (None, None, None, None)
    if set_name == "simplex":
        return np.eye(4), np.ones((1, 4)), np.ones(1), None, None, [(0, None)] * 4
    if set_name == "box":
        return np.eye(3), *none, list(zip(convex_set.low, convex_set.high, strict=True))
    if set_name == "l1":  # <s, x> <= rho for all 2^3 sign vectors s: no degenerate split
        signs = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))
        return np.eye(3), None, None, signs, np.full(8, 2.0), [(None, None)] * 3
    if set_name == "flow":
        nodes = sorted({node for edge in convex_set.edges for node in edge})
        incidence = np.zeros((len(nodes), dim))
        for e, (tail, head) in enumerate(convex_set.edges):
            incidence[nodes.index(tail), e] = 1.0
            incidence[nodes.index(head), e] = -1.0
        supply = np.zeros(len(nodes))
        supply[nodes.index(convex_set.source)] = 1.0
        supply[nodes.index(convex_set.sink)] = -1.0
        return np.eye(dim), incidence, supply, None, None, [(0, None)] * dim
    if set_name == "birkhoff":
        sums = np.vstack([np.kron(np.eye(3), np.ones(3)), np.kron(np.ones(3), np.eye(3))])
        return np.eye(9), sums, np.ones(6), None, None, [(0, None)] * 9
    raise AssertionError(set_name)


def _slsqp_minimum(losses, set_name: str, stop: int) -> float:
    """min over K of sum_{t < stop} f_t by SLSQP from three starts, with the exact summed
    gradient; only runs that report success and end feasible (within 1e-9 of every
    constraint written here, and in K by the set's own test) count, and one must."""
    convex_set = SETS[set_name]
    if set_name == "ball":
        expand, a_eq, b_eq, a_ub, b_ub, bounds = np.eye(3), None, None, None, None, None
        constraints = [{"type": "ineq", "fun": lambda z: 2.25 - z @ z, "jac": lambda z: -2 * z}]
    else:
        expand, a_eq, b_eq, a_ub, b_ub, bounds = _description(set_name)
        constraints = []
        if a_eq is not None:
            constraints.append(
                {"type": "eq", "fun": lambda z: a_eq @ z - b_eq, "jac": lambda z: a_eq}
            )
        if a_ub is not None:
            constraints.append(
                {"type": "ineq", "fun": lambda z: b_ub - a_ub @ z, "jac": lambda z: -a_ub}
            )

    def objective(z):
        return sum_over_rounds(losses, (expand @ z).reshape(convex_set.shape), stop)

    def gradient(z):
        x = (expand @ z).reshape(convex_set.shape)
        return expand.T @ sum(losses.gradient(t, x).ravel() for t in range(stop))

    values = []
    for start in feasible_points(convex_set, np.random.default_rng(0), 2)[:3]:
        solution = minimize(
            objective,
            start.ravel(),
            jac=gradient,
            method="SLSQP",
            constraints=constraints,
            bounds=bounds,
            options={"ftol": 1e-13, "maxiter": 500},
        )
        if not solution.success or not _feasible(solution.x, set_name, a_eq, b_eq, a_ub, b_ub):
            continue
        point = (expand @ solution.x).reshape(convex_set.shape)
        assert convex_set.contains(point, atol=1e-8)
        values.append(sum_over_rounds(losses, point, stop))
    assert values, f"no SLSQP run succeeded with a feasible point on {set_name}"
    return min(values)


def _feasible(z, set_name: str, a_eq, b_eq, a_ub, b_ub, atol: float = 1e-9) -> bool:
    """z satisfies the constraints written here (the ball's, or the description's)."""
    if set_name == "ball":
        return bool(z @ z <= 2.25 + atol)
    bounds = _description(set_name)[5]
    low = np.array([-np.inf if b[0] is None else b[0] for b in bounds])
    high = np.array([np.inf if b[1] is None else b[1] for b in bounds])
    checks = [np.all(z >= low - atol), np.all(z <= high + atol)]
    if a_eq is not None:
        checks.append(np.all(np.abs(a_eq @ z - b_eq) <= atol))
    if a_ub is not None:
        checks.append(np.all(a_ub @ z <= b_ub + atol))
    return bool(all(checks))


SMOOTH_CASES = [
    ("quadratic", "simplex"),
    ("quadratic", "box"),
    ("quadratic", "l1"),
    ("quadratic", "birkhoff"),
    ("regression", "simplex"),
    ("regression", "ball"),
    ("regression", "l1"),
    ("regression", "flow"),
    ("congestion", "flow"),
    ("portfolio", "simplex"),
]


@pytest.mark.parametrize(("family", "set_name"), SMOOTH_CASES)
def test_smooth_comparators_match_slsqp(family: str, set_name: str):
    losses = sequence(family, set_name, seed=8)
    for result in losses.comparator([12, 40]):
        independent = _slsqp_minimum(losses, set_name, result.horizon)
        scale = result.horizon * losses.bound
        assert result.value <= independent + 1e-7 * scale
        assert result.value - result.gap <= independent + 1e-12 * scale


def test_portfolio_ladder_of_warm_starts_matches_slsqp(monkeypatch):
    monkeypatch.setattr(portfolio_module, "LADDER_BASE", 50)
    losses = sequence("portfolio", "simplex", seed=9, drift=0.02, volatility=0.1)
    (result,) = losses.comparator([1500])
    independent = _slsqp_minimum(losses, "simplex", 1500)
    assert result.value == pytest.approx(independent, abs=1e-7 * 1500 * losses.bound)
    assert result.gap <= 1e-8 * 1500 * losses.bound


def _project_nuclear(x: np.ndarray, radius: float) -> np.ndarray:
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    if s.sum() <= radius:
        return x
    shifts = (np.cumsum(s) - radius) / np.arange(1, len(s) + 1)
    threshold = shifts[np.nonzero(s > shifts)[0][-1]]
    return (u * np.maximum(s - threshold, 0.0)) @ vt


def test_completion_comparator_matches_projected_gradient_written_here():
    losses = sequence("completion", "nuclear", seed=10, noise=2.0)
    zeros, ones = np.zeros((3, 4)), np.ones((3, 4))
    for result in losses.comparator([8, 150]):
        # The objective's data, read off the per-round gradients: grad at 0 is -y_t e_ij,
        # and grad at 1 minus grad at 0 is e_ij.
        counts = sum(
            losses.gradient(t, ones) - losses.gradient(t, zeros) for t in range(result.horizon)
        )
        sums = -sum(losses.gradient(t, zeros) for t in range(result.horizon))
        x = np.zeros((3, 4))
        for _ in range(3000):
            x = _project_nuclear(x - (counts * x - sums) / counts.max(), 2.0)
        independent = sum_over_rounds(losses, x, result.horizon)
        assert result.value == pytest.approx(independent, abs=1e-7 * result.horizon * losses.bound)


# -- absolute: the primal LP with one slack per round, written here -----------------------


def _absolute_lp_minimum(losses, set_name: str, stop: int) -> float:
    convex_set = SETS[set_name]
    center = np.asarray(convex_set.center, dtype=float)
    # Each loss is |s_t r_t| with s_t r_t(x) = f_t(c) + <g_t, x - c>, g_t = grad f_t(c).
    features = np.array([losses.gradient(t, center).ravel() for t in range(stop)])
    offsets = np.array([features[t] @ center.ravel() - losses.loss(t, center) for t in range(stop)])
    expand, a_eq, b_eq, a_ub, b_ub, bounds = _description(set_name)
    variables = expand.shape[1]
    rows = features @ expand
    slack = -np.eye(stop)
    upper = np.block([[rows, slack], [-rows, slack]])
    upper_rhs = np.concatenate([offsets, -offsets])
    if a_ub is not None:
        upper = np.vstack([upper, np.hstack([a_ub, np.zeros((len(a_ub), stop))])])
        upper_rhs = np.concatenate([upper_rhs, b_ub])
    equal = None if a_eq is None else np.hstack([a_eq, np.zeros((len(a_eq), stop))])
    cost = np.concatenate([np.zeros(variables), np.ones(stop)])
    solution = linprog(
        cost, upper, upper_rhs, equal, b_eq, bounds=[*bounds, *[(0, None)] * stop], method="highs"
    )
    assert solution.status == 0
    point = (expand @ solution.x[:variables]).reshape(convex_set.shape)
    return sum_over_rounds(losses, point, stop)


@pytest.mark.parametrize("set_name", ["simplex", "l1", "box", "flow", "birkhoff"])
def test_absolute_comparator_matches_the_primal_lp(set_name: str):
    losses = sequence("absolute", set_name, seed=12)
    for result in losses.comparator([15, 70]):
        independent = _absolute_lp_minimum(losses, set_name, result.horizon)
        assert result.value == pytest.approx(independent, abs=1e-8 * result.horizon * losses.bound)
        assert result.gap <= 1e-8 * result.horizon * losses.bound


@pytest.mark.parametrize("set_name", ["simplex", "flow"])
def test_absolute_trust_region_scheme_matches_the_primal_lp(monkeypatch, set_name: str):
    """Prefixes longer than EXACT_ROUNDS go through the ladder and the trust region."""
    monkeypatch.setattr(absolute_module, "EXACT_ROUNDS", 40)
    monkeypatch.setattr(absolute_module, "NEAR_ROUNDS", 60)
    losses = sequence("absolute", set_name, seed=13)
    results = losses.comparator([900, 2000])
    for result in results:
        independent = _absolute_lp_minimum(losses, set_name, result.horizon)
        scale = result.horizon * losses.bound
        assert result.value == pytest.approx(independent, abs=1e-7 * scale)
        assert result.gap <= 1e-7 * scale
        assert result.value - result.gap <= independent + 1e-12 * scale


# -- a set known only through its oracles ---------------------------------------------------


class OracleOnlySimplex(ConvexSet):
    """The simplex without a projection (as a user-defined set might be)."""

    def __init__(self, n: int):
        self.inner = Simplex(n)
        self.shape = self.inner.shape

    aff_dim = property(lambda self: self.inner.aff_dim)
    center = property(lambda self: self.inner.center)
    inner_radius = property(lambda self: self.inner.inner_radius)
    outer_radius = property(lambda self: self.inner.outer_radius)

    def tangent(self, v):
        return self.inner.tangent(v)

    def lmo(self, direction):
        return self.inner.lmo(direction)

    def contains(self, x, atol=1e-9):
        return self.inner.contains(x, atol)


@pytest.mark.parametrize("family", ["quadratic", "regression"])
def test_frank_wolfe_comparator_without_projection_agrees(family: str):
    plain = OracleOnlySimplex(4)
    assert not plain.has_projection
    with_projection = sequence(family, "simplex", seed=14)
    oracle_only = make_losses(family, plain)
    oracle_only.reset(np.random.default_rng(14))
    for a, b in zip(
        with_projection.comparator([30, 500]), oracle_only.comparator([30, 500]), strict=True
    ):
        scale = a.horizon * with_projection.bound
        assert b.value == pytest.approx(a.value, abs=1e-8 * scale)
        assert b.gap <= 1e-8 * scale


# -- linear_comparators: one lmo_many for all checkpoints, the single oracle's floats ---
def _one_by_one(convex_set: ConvexSet, stops: list[int], totals: list[np.ndarray]):
    """The definition: x* = lmo(S) and <S, x* - c> (the pairwise sum of the products, as
    every result's inner product: bco_gym/portable.py) for each summed vector S, one by one."""
    center = np.asarray(convex_set.center, dtype=float).ravel()
    answers = []
    for stop, total in zip(stops, totals, strict=True):
        point = np.asarray(convex_set.lmo(total.reshape(convex_set.shape)), dtype=float)
        answers.append((stop, point, portable.dot(total, point.ravel() - center)))
    return answers


def _summed_vectors(convex_set: ConvexSet, rng: np.random.Generator) -> list[np.ndarray]:
    """Random sums at scales 1e-300 .. 1e300, zero and -0 sums, and tied small integers."""
    dim = convex_set.dim
    totals = [rng.standard_normal(dim) * 10.0 ** rng.integers(-300, 301) for _ in range(30)]
    totals += [np.zeros(dim), np.full(dim, -0.0), np.ones(dim)]
    totals += [rng.integers(-2, 3, dim).astype(float) for _ in range(7)]
    return totals


BATCH_SETS = {
    **SETS,
    "birkhoff6": BirkhoffPolytope(6),
    "shrunk-ball": SETS["ball"].shrink(0.4),
    "shrunk-simplex": SETS["simplex"].shrink(0.1),
    "shrunk-flow": SETS["flow"].shrink(0.05),
}


@pytest.mark.parametrize("set_name", sorted(BATCH_SETS))
def test_linear_comparators_are_the_single_lmo_and_dot_bit_for_bit(set_name):
    convex_set = BATCH_SETS[set_name]
    totals = _summed_vectors(convex_set, np.random.default_rng(len(set_name)))
    stops = [3 * k + 1 for k in range(len(totals))]
    batched = linear_module._batchable_rows(convex_set, totals, len(stops)) is not None
    assert batched == ("nuclear" not in set_name)  # the nuclear ball answers one by one
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # sums near 1e300 overflow a norm
        found = linear_comparators(convex_set, stops, totals)
        expected = _one_by_one(convex_set, stops, totals)
    for result, (stop, point, value) in zip(found, expected, strict=True):
        assert result.horizon == stop and result.gap == 0.0
        assert result.point.shape == convex_set.shape
        assert result.point.tobytes() == point.tobytes()
        assert np.float64(result.value).tobytes() == np.float64(value).tobytes()
        assert type(result.value) is float


def test_linear_comparators_ask_a_subclass_its_own_lmo():
    class Lopsided(L2Ball):
        def lmo(self, direction):
            return np.zeros(self.n) + 0.5 * super().lmo(direction)

    convex_set = Lopsided(3, radius=1.5)
    totals = [np.array([1.0, 2.0, -2.0]), np.array([0.0, 0.0, 3.0])]
    found = linear_comparators(convex_set, [1, 2], totals)
    assert np.allclose(found[0].point, [-0.25, -0.5, 0.5])
    assert found[1].value == pytest.approx(-2.25)


def test_linear_comparators_keep_the_single_oracles_errors():
    ball = SETS["ball"]
    with pytest.raises(ValueError, match="finite"):
        linear_comparators(ball, [1, 2], [np.ones(3), np.array([1.0, np.nan, 0.0])])
    with pytest.raises(ValueError):  # one summed vector short
        linear_comparators(ball, [1, 2, 3], [np.ones(3), np.ones(3)])
    found = linear_comparators(ball, [2, 1], [np.array([3.0, 0.0, 4.0]), np.ones(3)])
    assert [r.horizon for r in found] == [1, 2]  # sorted stops, totals in their order
    assert found[0].value == pytest.approx(-7.5)
