"""PBGD and PBGD2 (Zhao, Wang, Zhang & Zhou 2021): feasibility, the estimators, the
dynamic-regret bound against the best path of a given length (an LP), batching."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from agent_helpers import Permutahedron
from scipy.optimize import linprog

from bco_gym.agents import PBGD, PBGD2, make_agent
from bco_gym.agents.pbgd.bounds import dynamic_regret, prior_weights, step_size_grid
from bco_gym.experiment import run, run_many
from bco_gym.problem import Problem
from bco_gym.sets import (
    BirkhoffPolytope,
    FlowPolytope,
    Hypercube,
    L1Ball,
    L2Ball,
    NuclearNormBall,
    Simplex,
)

SUPPORTED = [
    L2Ball(3, radius=2.0),
    Hypercube(low=[-1.0, 0.0, 0.0], high=[1.0, 0.2, 3.0]),
    Simplex(5),
    L1Ball(3),
    BirkhoffPolytope(3),
    FlowPolytope.grid(3, 3),
    NuclearNormBall(2, 3),
]
NAMES = ("pbgd", "pbgd2")


def _problem(convex_set, horizon, name, theta_norm=1.0):
    """Linear losses <theta_t, x> with ||theta_t|| <= theta_norm: G and C on K."""
    reach = np.linalg.norm(convex_set.center) + convex_set.outer_radius
    feedback = "two-point" if name == "pbgd2" else "bandit"
    return Problem(convex_set, horizon, theta_norm, theta_norm * reach, feedback)


def play(agent, thetas, seed):
    """Play f_t(x) = <theta_t, x> (flat); returns the plays (T, k, n) and the losses (T,)
    the env counts (the mean of a pair)."""
    agent.reset(seed=seed)
    plays, losses = [], []
    for theta in thetas:
        y = np.asarray(agent.act(None))
        points = y.reshape(-1, theta.size) if agent.feedback == "two-point" else y.reshape(1, -1)
        values = points @ theta
        if agent.feedback == "two-point":
            agent.update(float(values.mean()), {"losses": values})
        else:
            agent.update(float(values[0]))
        plays.append(points)
        losses.append(values.mean())
    return np.array(plays), np.array(losses)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("convex_set", SUPPORTED, ids=repr)
def test_every_play_is_feasible(name, convex_set):
    """Costs pointing out of K in one fixed direction pull the experts towards the
    boundary of K_delta; every play (both points of a pair) stays in K."""
    horizon = 150
    rng = np.random.default_rng(0)
    direction = convex_set.tangent(rng.standard_normal(convex_set.shape)).reshape(-1)
    thetas = np.repeat(-direction[np.newaxis] / np.linalg.norm(direction), horizon, axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agent = make_agent(name, _problem(convex_set, horizon, name))
    plays, _ = play(agent, thetas, seed=1)
    for point in plays.reshape(-1, *convex_set.shape):
        assert convex_set.contains(point, atol=1e-9), (name, point)
    stats = agent.stats
    assert stats["lmo_calls"] == 0
    assert stats["projections"] == horizon * agent.params["experts"]
    assert math.isclose(sum(stats["weights"]), 1.0, rel_tol=1e-12)
    if name == "pbgd2":  # two points: little noise, the plays went the way costs point
        center = np.asarray(convex_set.center).reshape(-1)
        assert (plays[-20:].mean(axis=(0, 1)) - center) @ direction > 0


@pytest.mark.parametrize("name", NAMES)
def test_the_estimates_are_unbiased(name):
    """E[g_t] = grad f^(x) = grad f(x) for a quadratic f (the smoothing adds a constant):
    with every step size ~0 the experts stay at the centre and the estimates are i.i.d.;
    on the simplex (d = aff_dim = 3 of n = 4) an estimator scaled by n, or exploring off
    aff(K), fails."""
    convex_set, rounds = Simplex(4), 6000
    center = convex_set.center
    target = center + convex_set.tangent(np.array([1.0, -0.5, 0.25, 0.0]))
    problem = Problem(convex_set, rounds, 3.0, 2.0, "two-point" if name == "pbgd2" else "bandit")
    agent = make_agent(name, problem, min_step_size=1e-300, max_step_size=1e-300)
    estimates = []
    agent._learn = lambda g, record=agent._learn: (estimates.append(g[0].copy()), record(g))
    agent.reset(seed=3)
    for _ in range(rounds):
        points = np.asarray(agent.act(None)).reshape(-1, 4)
        values = 0.5 * ((points - target) ** 2).sum(axis=1)
        if name == "pbgd2":
            agent.update(float(values.mean()), {"losses": values})
        else:
            agent.update(float(values[0]))
    assert np.allclose(agent._experts, center)  # the experts stayed
    estimates = np.array(estimates)
    expected = convex_set.tangent(center - target)
    error = estimates.mean(0) - expected
    standard_error = estimates.std(0) / math.sqrt(rounds)
    assert np.all(np.abs(error) <= 5 * standard_error + 1e-12), (error, standard_error)
    assert np.allclose(estimates.sum(axis=1), 0.0, atol=1e-9)  # within V
    assert np.linalg.norm(expected) > 10 * standard_error.max()  # the test can fail


def best_path_loss(thetas, path_length):
    """min sum_t theta_t u_t over u_t in [-1, 1] with sum_t |u_t - u_(t-1)| <= P: an LP
    (HiGHS), exact to its tolerance; u = (u_1..u_T), s_t >= |u_t - u_(t-1)|."""
    T = len(thetas)
    cost = np.concatenate([thetas, np.zeros(T - 1)])
    rows = []
    for t in range(1, T):  # u_t - u_(t-1) - s_t <= 0 and -(u_t - u_(t-1)) - s_t <= 0
        for sign in (1.0, -1.0):
            row = np.zeros(2 * T - 1)
            row[t], row[t - 1], row[T + t - 1] = sign, -sign, -1.0
            rows.append(row)
    budget = np.concatenate([np.zeros(T), np.ones(T - 1)])
    a_ub = np.vstack([*rows, budget])
    b_ub = np.concatenate([np.zeros(2 * (T - 1)), [path_length]])
    bounds = [(-1.0, 1.0)] * T + [(0.0, None)] * (T - 1)
    result = linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs")
    assert result.status == 0
    return float(result.fun)


@pytest.mark.parametrize("name", NAMES)
def test_the_bound_exceeds_the_dynamic_regret_against_the_best_path(name):
    """On the segment [-1, 1] (d = 1, r = R = 1) at T = 1024, f_t(x) = theta_t x with
    theta_t = +-1 switching every 128 rounds (G = C = 1). For path budgets P = 0, 2, 8 and
    14 (the per-round minimisers' path: 7 switches across the segment), the best path of
    length <= P (an LP) has loss L*_P, and the mean over 4 seeds of sum f_t(y_t) - L*_P is
    at most regret_bound(P); against P = 14 the regret is positive (at small P the agent,
    which tracks the switches, beats the comparator)."""
    horizon = 1024
    thetas = np.where((np.arange(horizon) // 128) % 2 == 0, 1.0, -1.0)
    agent = make_agent(name, _problem(L2Ball(1), horizon, name))
    mean_loss = np.mean([play(agent, thetas[:, np.newaxis], seed)[1].sum() for seed in range(4)])
    regrets = {}
    for path_length in (0.0, 2.0, 8.0, 14.0):
        regrets[path_length] = mean_loss - best_path_loss(thetas, path_length)
        assert regrets[path_length] <= agent.regret_bound(path_length), path_length
    assert regrets[14.0] > 0.2 * agent.regret_bound(14.0) if name == "pbgd2" else regrets[14.0] > 0
    assert regrets[0.0] < regrets[2.0] < regrets[8.0] < regrets[14.0]


@pytest.mark.parametrize(
    ("name", "horizon", "path_length"), [("pbgd", 4096, 0.0), ("pbgd2", 1024, 14.0)]
)
def test_the_bound_is_below_half_the_trivial_bound(name, horizon, path_length):
    """On the segment with G = C = 1 the trivial bound is 2CT: PBGD's T^(3/4) bound is
    below half of it from T ~ 1,000 at P = 0, PBGD2's sqrt(T(1 + P)) already at T = 1024
    against the path of the test above."""
    agent = make_agent(name, _problem(L2Ball(1), horizon, name))
    assert agent.regret_bound(path_length) < 0.5 * 2 * 1.0 * horizon


def test_the_bound_is_the_stated_formula_at_the_default_parameters():
    """delta, the grid, the prior, the meta's rate and the bound by hand (the ball, d = 4)."""
    ball, T = L2Ball(4), 10_000
    problem = Problem(ball, T, 2.0, 3.0, "bandit")  # G = 2, C = 3
    agent = make_agent("pbgd", problem)
    d, R, C = 4, 1.0, 3.0
    delta = min(0.5, math.sqrt(d) * R * T**-0.25)
    assert agent.params["smoothing_radius"] == delta
    low = R * math.sqrt(7) / (math.sqrt(d) * C * T**0.75)
    high = R * math.sqrt(7 + 2 * T) / (math.sqrt(d) * C * T**0.75)
    grid = step_size_grid(low, high)
    assert grid[0] == pytest.approx(low) and grid[-2] <= high < grid[-1]
    assert agent.params["experts"] == len(grid) == math.ceil(math.log2(high / low)) + 1
    L, D = d * C / delta, 2 * R
    assert agent.params["meta_rate"] == pytest.approx(math.sqrt(8 / T) / (L * D))
    weights = prior_weights(len(grid))
    assert sum(weights) == pytest.approx(1.0)
    for path_length in (0.0, 5.0, 500.0):
        by_hand = (
            min(
                math.log(1 / w) / agent.params["meta_rate"]
                + agent.params["meta_rate"] * T * (L * D) ** 2 / 8
                + (R**2 + 2 * D * path_length) / (2 * eta)
                + eta * T * L**2 / 2
                for eta, w in zip(grid, weights, strict=True)
            )
            + (2 + 1) * 2.0 * delta * T
        )
        assert agent.regret_bound(path_length) == pytest.approx(by_hand, rel=1e-12)
    assert agent.regret_bound(10.0) > agent.regret_bound(1.0) > agent.regret_bound()
    two = make_agent("pbgd2", Problem(ball, T, 2.0, 3.0, "two-point"))
    assert two.params["smoothing_radius"] == pytest.approx(min(0.5, d * R / math.sqrt(T)))
    assert two.constants().estimate_norm == d * 2.0  # dG
    assert two.regret_bound() == pytest.approx(dynamic_regret(two.constants(), 0.0))


@pytest.mark.parametrize("name", NAMES)
def test_batched_rows_are_the_single_agent_with_their_seed(name):
    convex_set, horizon = Simplex(4), 60
    problem = _problem(convex_set, horizon, name)
    batched = make_agent(name, problem, batch_size=3)
    singles = [make_agent(name, problem) for _ in range(3)]
    batched.reset(seed=[4, 5, 6])
    for seed, single in zip([4, 5, 6], singles, strict=True):
        single.reset(seed=seed)
    theta = np.array([0.3, -0.2, 0.5, 0.1])
    for t in range(horizon):
        plays = batched.act(None)
        values = np.einsum("...i,i->...", plays, theta) + 0.01 * t
        for row, single in enumerate(singles):
            assert np.array_equal(single.act(None), plays[row])
            if name == "pbgd2":
                single.update(float(values[row].mean()), {"losses": values[row]})
            else:
                single.update(float(values[row]))
        if name == "pbgd2":
            batched.update(values.mean(axis=1), {"losses": values})
        else:
            batched.update(values)
    for row, single in enumerate(singles):
        assert batched.row_stats(row) == single.stats


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("pbgd", {"n": 3, "loss": "linear-drift"}),
        ("pbgd2", {"n": 3, "loss": "linear-drift", "feedback": "two-point"}),
    ],
)
def test_run_many_equals_single_runs(name, kwargs):
    seeds = [0, 1]
    many = run_many("BCO-Ball-v0", name, seeds, horizon=200, env_kwargs=kwargs)
    for seed, result in zip(seeds, many, strict=True):
        single = run("BCO-Ball-v0", name, horizon=200, seed=seed, env_kwargs=kwargs)
        assert result.same_outcome(single)


def test_refusals():
    ball = L2Ball(2)
    problem = Problem(ball, 100, 1.0, 1.0, "bandit")
    agent = make_agent("pbgd", problem)
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"path_length=.* must be a finite number >= 0"):
            agent.regret_bound(bad)
    with pytest.raises(ValueError, match=r"max_step_size=0\.001 is below min_step_size=0\.01"):
        make_agent("pbgd", problem, min_step_size=0.01, max_step_size=0.001)
    with pytest.raises(ValueError, match="smoothing_radius=2 exceeds the inner radius r=1"):
        make_agent("pbgd", problem, smoothing_radius=2.0)
    with pytest.raises(ValueError, match="needs a Euclidean projection"):
        PBGD(Problem(Permutahedron(4), 10, 1.0, 1.0))
    with pytest.raises(ValueError, match="feedback='two-point'"):
        PBGD2(problem)
    with pytest.raises(ValueError, match="meta_rate=0 must be finite and > 0"):
        make_agent("pbgd", problem, meta_rate=0)
