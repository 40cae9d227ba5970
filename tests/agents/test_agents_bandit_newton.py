"""Regularized Bandit Newton (Suggala, Ravikumar & Netrapalli 2021, Algorithm 1):
feasibility, Proposition 1's estimates, the focus region (volume test, hit-and-run, the
barrier method), the OMD and restart steps, Theorem 7's parameters, batching."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from bco_gym.agents import BanditNewton, make_agent
from bco_gym.agents.bandit_newton.agent import _Run
from bco_gym.agents.bandit_newton.bounds import (
    C1,
    C2,
    lemma_22_margin,
    theorem_7,
    volume_samples,
)
from bco_gym.agents.bandit_newton.region import Domain, FocusRegion, minimize_over
from bco_gym.errors import UnsupportedSetError
from bco_gym.experiment import run, run_many
from bco_gym.problem import Problem
from bco_gym.sets import BirkhoffPolytope, FlowPolytope, Hypercube, L1Ball, L2Ball, Simplex

SUPPORTED = [
    L2Ball(3, radius=2.0),
    Hypercube(low=[-1.0, 0.0, 0.0], high=[1.0, 0.2, 3.0]),
    Simplex(4),
    BirkhoffPolytope(3),
    FlowPolytope.grid(3, 3),
]
#: Far from Theorem 7's eta_1 (~1e-30 here): x_t moves, the focus region shrinks.
MOVING = {
    "step_size": 1e-4,
    "focus_radius": 0.8,
    "restart_threshold": 1e-9,
    "rate_increment": 0.1,
    "samples": 40,
    "walk_steps": 20,
}


def quadratic_play(agent, convex_set, rounds, seed, scale=1.0, check=None):
    """f_t(x) = scale (||x - z||^2/2 - ||z - c||^2/2) with z three outer radii off c:
    plays, losses; ``check(agent)`` after every round."""
    rng = np.random.default_rng(0)
    center = np.asarray(convex_set.center, dtype=float).reshape(-1)
    step = convex_set.tangent(rng.standard_normal(convex_set.shape)).reshape(-1)
    target = center + 3 * convex_set.outer_radius * step / np.linalg.norm(step)
    agent.reset(seed=seed)
    plays = []
    for _ in range(rounds):
        y = agent.act(None).reshape(-1)
        agent.update(scale * 0.5 * (((y - target) ** 2).sum() - ((center - target) ** 2).sum()))
        plays.append(y)
        if check is not None:
            check(agent)
    return np.array(plays)


def _problem(convex_set, horizon):
    reach = 4 * convex_set.outer_radius
    return Problem(convex_set, horizon, reach, reach**2 / 2, "bandit")


@pytest.mark.parametrize("convex_set", SUPPORTED, ids=repr)
def test_every_play_is_feasible_at_theorem_7s_parameters(convex_set):
    agent = make_agent("bandit-newton", _problem(convex_set, 80))
    plays = quadratic_play(agent, convex_set, 80, seed=1)
    assert all(convex_set.contains(y.reshape(convex_set.shape), atol=1e-9) for y in plays)
    stats = agent.stats
    assert stats["lmo_calls"] == stats["projections"] == 0
    assert stats["outside_plays"] == stats["indefinite_rounds"] == 0  # Lemma 21, item 1
    assert stats["newton_steps"] == 80  # one mirror step a round, never skipped


@pytest.mark.parametrize("convex_set", [L2Ball(3), Simplex(4), BirkhoffPolytope(3)], ids=repr)
def test_the_focus_region_shrinks_and_holds_every_iterate(convex_set):
    """Far from the theorem's eta_1 (``MOVING``): the volume test fires, F_t shrinks, the
    rate grows by (1 + gamma) each time, and x_t stays inside F_t every round."""
    agent = make_agent("bandit-newton", _problem(convex_set, 120), **MOVING)
    inside = []

    def check(agent):
        run = agent._runs[0]
        inside.append(run.region.contains(run.point))

    plays = quadratic_play(agent, convex_set, 120, seed=2, scale=0.1, check=check)
    assert all(convex_set.contains(y.reshape(convex_set.shape), atol=1e-9) for y in plays)
    assert all(inside)
    updates = agent.stats["focus_updates"]
    assert updates >= 1
    run = agent._runs[0]
    assert len(run.region.centres) == updates
    assert run.rate == pytest.approx(MOVING["step_size"] * 1.1**updates)


def test_the_estimates_are_unbiased():
    """Proposition 1 with C = lambda M^(-1/2): E g^ = grad f(x_t), E H^ = hess f for a
    quadratic f. x_t is held at x_1 (the later steps patched out), so the estimates are
    i.i.d.; f(x) = (x - a)^T A (x - a)/2 on the 2-ball, A not a multiple of I."""
    ball, rounds = L2Ball(2), 12_000
    matrix = np.array([[2.0, 0.6], [0.6, 0.5]])
    shift = np.array([0.3, -0.2])
    agent = make_agent("bandit-newton", Problem(ball, rounds, 3.0, 2.0, "bandit"))
    estimates = []
    agent._restart_due = lambda row, run: False
    agent._omd_step = lambda row, run, gradient, steps: (run.point, None)
    agent._focus_step = lambda row, run, point, steps, derivatives: None
    original = _Run.absorb

    def absorb(run, gradient, hessian):
        estimates.append((gradient.copy(), hessian.copy()))
        original(run, gradient, hessian)

    _Run.absorb = absorb
    try:
        agent.reset(seed=5)
        for _ in range(rounds):
            y = agent.act(None)
            agent.update(float(0.5 * (y - shift) @ matrix @ (y - shift)))
    finally:
        _Run.absorb = original
    gradients = np.array([g for g, _ in estimates])
    hessians = np.array([h.reshape(-1) for _, h in estimates])
    for values, expected in ((gradients, matrix @ -shift), (hessians, matrix.reshape(-1))):
        error = values.mean(0) - expected
        standard_error = values.std(0) / math.sqrt(rounds)
        assert np.all(np.abs(error) <= 5 * standard_error), (error, standard_error)
        # a factor 2 off (the 1/2 of H^, or lambda^2 read as lambda) would be caught
        assert np.abs(expected).max() / 2 > 10 * standard_error.max()


def test_the_volume_test_counts_uniform_samples():
    """Hit-and-run on the unit 3-ball: the fraction of samples inside the concentric
    ellipsoid {y : y^T M y <= alpha^2}, M = I/0.8^2, alpha = 1, is 0.8^3 = 0.512; on the
    box [-1, 1]^3 cut by an ellipsoid, against plain uniform samples of the box."""
    rng = np.random.default_rng(0)
    count = 3000
    ball = FocusRegion(Domain(ball=(np.zeros(3), 1.0)), 1.0)
    samples = ball.walk(np.zeros((count, 3)), 60, rng)
    assert np.all(np.linalg.norm(samples, axis=1) <= 1.0)
    fraction = ball.fraction_inside(samples, np.zeros(3), np.eye(3) / 0.64)
    assert abs(fraction - 0.512) <= 4 * math.sqrt(0.25 / count)
    rows = np.vstack([np.eye(3), -np.eye(3)])
    box = FocusRegion(Domain(rows=rows, limits=np.ones(6)), 1.0)
    shape = np.diag([1.0, 4.0, 0.5])
    box.add(np.array([0.3, 0.0, 0.0]), shape)  # F = box intersected with an ellipsoid
    samples = box.walk(np.repeat([[0.3, 0.0, 0.0]], count, axis=0), 80, rng)
    assert all(box.contains(s) for s in samples[:50])
    probe = np.diag([2.0, 1.0, 1.0])
    uniform = rng.uniform(-1, 1, (200_000, 3))
    offsets = uniform - [0.3, 0.0, 0.0]
    in_f = np.einsum("ij,jk,ik->i", offsets, shape, offsets) <= 1.0
    in_probe = np.einsum("ij,jk,ik->i", uniform, probe, uniform) <= 1.0
    exact = np.count_nonzero(in_f & in_probe) / np.count_nonzero(in_f)
    fraction = box.fraction_inside(samples, np.zeros(3), probe)
    assert abs(fraction - exact) <= 4 * math.sqrt(0.25 / count) + 0.01


def test_the_barrier_method_matches_a_generic_solver():
    """min of a convex quadratic over the unit 3-ball cut by an ellipsoid (both
    constraints active at the minimiser) against scipy's SLSQP."""
    region = FocusRegion(Domain(ball=(np.zeros(3), 1.0)), 0.9)
    shape = np.diag([1.0, 3.0, 2.0])
    region.add(np.array([0.2, 0.1, 0.0]), shape)
    matrix = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 1.5]])
    target = np.array([2.0, -1.5, 1.0])

    def objective(w):
        return 0.5 * (w - target) @ matrix @ (w - target), matrix @ (w - target), matrix

    solve = minimize_over(objective, region, np.array([0.2, 0.1, 0.0]), 1e-10, 50)
    assert solve.converged and region.contains(solve.point)
    constraints = [
        {"type": "ineq", "fun": lambda w: 1.0 - w @ w},
        {"type": "ineq", "fun": lambda w: 0.81 - (w - [0.2, 0.1, 0]) @ shape @ (w - [0.2, 0.1, 0])},
    ]
    reference = minimize(
        lambda w: objective(w)[0], np.zeros(3), constraints=constraints, tol=1e-14
    ).x
    assert np.allclose(solve.point, reference, atol=1e-6)
    assert region.slacks(solve.point).min() < 1e-6  # a constraint binds


def test_the_mirror_step_solves_line_19():
    """x_(t+1) from ``_omd_step`` satisfies line 19's first-order condition over int X:
    eta g^ + grad R(x_(t+1)) - grad R(x_t) + S (x_(t+1) - x_t) = 0."""
    ball = L2Ball(3)
    agent = make_agent("bandit-newton", _problem(ball, 50), step_size=0.05, focus_radius=50.0)
    agent.reset(seed=0)
    run = agent._runs[0]
    rng = np.random.default_rng(1)
    gradient = rng.standard_normal(3)
    steps = np.diag([0.3, 0.1, 0.0])
    point, derivatives = agent._omd_step(0, run, gradient, steps)
    assert derivatives is None or np.array_equal(
        derivatives[1], agent._barrier_derivatives(point)[1]
    )
    assert np.linalg.norm(point - run.point) > 1e-3
    _, grad_at, _ = agent._barrier_derivatives(point)
    residual = run.rate * gradient + grad_at - run.barrier_gradient + steps @ (point - run.point)
    assert np.linalg.norm(residual) <= 1e-8


def test_the_restart_test_and_a_restart():
    """Line 16's sign (restart when the estimated regret is very negative, not when it is
    positive), and a restart: the rounds left are a new run of T - t rounds with Theorem
    7's parameters for that horizon, from x_1 with empty sums."""
    ball, horizon = L2Ball(3), 40
    agent = make_agent("bandit-newton", _problem(ball, horizon))
    agent.reset(seed=0)
    run = agent._runs[0]
    threshold = run.parameters.restart_threshold / run.parameters.step_size
    run.sum_values = -2 * threshold  # the iterates beat every fixed point by 2 beta/eta_1
    assert agent._restart_due(0, run)
    run.sum_values = 0.0
    assert not agent._restart_due(0, run)
    calls = iter([False] * 5 + [True] + [False] * horizon)
    agent._restart_due = lambda row, run: next(calls)
    agent.reset(seed=0)
    quadratic_play(agent, ball, 10, seed=0)
    fresh = agent._runs[0]
    assert agent.stats["restarts"] == 1
    assert fresh.parameters.horizon == horizon - 6
    expected = theorem_7(horizon - 6, 3, 1.0, agent.problem.bound)
    assert fresh.parameters.step_size == pytest.approx(expected["step_size"])
    assert fresh.parameters.focus_radius == pytest.approx(expected["focus_radius"])
    assert fresh.parameters.samples == volume_samples(horizon - 6)


def test_theorem_7s_parameters_and_constants():
    """The formulas, and the two constants the proofs pin: (1 + gamma)^(12 d log T) <= 10
    (c_2) and Lemma 22's restart inequality (c_1), over a grid of d, nu, T; with c_1 = 1000
    the inequality fails somewhere (so c_1 = 1600 is needed, not arbitrary)."""
    ball, T = L2Ball(10), 20_000
    agent = make_agent("bandit-newton", Problem(ball, T, 1.0, 2.0, "bandit"))
    d, nu, L, Ld = 10, 1.0, math.log(T), math.log(10 * T)
    alpha = C1 * (nu + d) * d * Ld**2
    p = agent.params
    assert p["exploration"] == 0.25
    assert p["focus_radius"] == pytest.approx(alpha)
    assert p["restart_threshold"] == pytest.approx(d * Ld)
    assert p["rate_increment"] == pytest.approx(C2 / (d * L))
    assert p["step_size"] == pytest.approx(1 / (d**7 * 2.0 * alpha**4 * math.sqrt(T) * L))
    assert p["samples"] == math.ceil(32 * L)
    assert agent.regret_bound() is None
    for d in (1, 2, 10, 100):
        for T in (2, 10, 1_000, 10**6, 10**9):
            gamma = theorem_7(T, d, 1.0, 1.0)["rate_increment"]
            assert (1 + gamma) ** (12 * d * math.log(max(T, 2))) <= 10 + 1e-9
            for nu in (1.0, 20.0, 200.0):
                assert lemma_22_margin(T, d, nu, 1.0) >= 0, (T, d, nu)
    assert min(lemma_22_margin(T, 1, 1.0, 1.0, c1=1000.0) for T in (2, 10, 100)) < 0


def test_batched_rows_are_the_single_agent_with_their_seed():
    convex_set, horizon = Simplex(4), 40
    problem = _problem(convex_set, horizon)
    batched = make_agent("bandit-newton", problem, batch_size=3, **MOVING)
    singles = [make_agent("bandit-newton", problem, **MOVING) for _ in range(3)]
    batched.reset(seed=[4, 5, 6])
    for seed, single in zip([4, 5, 6], singles, strict=True):
        single.reset(seed=seed)
    target = np.array([2.0, -1.0, 0.5, -0.5])
    for _ in range(horizon):
        plays = batched.act(None)
        losses = 0.05 * ((plays - target) ** 2).sum(axis=1)
        for row, single in enumerate(singles):
            assert np.array_equal(single.act(None), plays[row])
            single.update(float(losses[row]))
        batched.update(losses)
    for row, single in enumerate(singles):
        assert batched.row_stats(row) == single.stats
    assert sum(single.stats["focus_updates"] for single in singles) >= 1


def test_run_many_equals_single_runs():
    kwargs = {"n": 3, "loss": "quadratic"}
    many = run_many("BCO-Ball-v0", "bandit-newton", [0, 1], horizon=60, env_kwargs=kwargs)
    for seed, result in zip([0, 1], many, strict=True):
        single = run("BCO-Ball-v0", "bandit-newton", horizon=60, seed=seed, env_kwargs=kwargs)
        assert result.same_outcome(single)


def test_refusals():
    ball = L2Ball(2)
    problem = Problem(ball, 50, 1.0, 1.0, "bandit")
    with pytest.raises(UnsupportedSetError, match="needs a self-concordant barrier"):
        BanditNewton(Problem(L1Ball(3), 10, 1.0, 1.0))
    with pytest.raises(ValueError, match=r"exploration=0\.6 must be in \(0, 1/2\]"):
        make_agent("bandit-newton", problem, exploration=0.6)
    with pytest.raises(ValueError, match="samples=0 must be an integer >= 1"):
        make_agent("bandit-newton", problem, samples=0)
    with pytest.raises(ValueError, match="misspecification=-1 must be >= 0"):
        make_agent("bandit-newton", problem, misspecification=-1)
    with pytest.raises(ValueError, match="c3=0 must be finite and > 0"):
        make_agent("bandit-newton", problem, c3=0)
