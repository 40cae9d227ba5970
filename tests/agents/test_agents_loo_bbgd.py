"""LOO-BBGD (Garber & Kretzu 2022, Algorithm 9): Algorithms 2-3 against Lemmas 6-7,
feasibility on every set, Theorem 11's parameters, bound and LOO count, and batched rows
equal to single runs."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from agent_helpers import Permutahedron
from gk22_helpers import agent_for, largest_interval_regret, play, sequence

from bco_gym.agents import make_agent
from bco_gym.agents.batch import RowOracle
from bco_gym.agents.gk22 import bounds as gk22_bounds
from bco_gym.agents.gk22.oracles import (
    close_infeasible_projection_rows,
    lemma_6_calls,
    lemma_7_iterations,
)
from bco_gym.agents.theory import ProblemConstants
from bco_gym.engine.many import run_many
from bco_gym.engine.runner import run
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

SETS = [
    Simplex(5),
    L2Ball(3),
    L1Ball(4),
    Hypercube(n=3),
    NuclearNormBall(2, 3),
    FlowPolytope.grid(2, 3),
    BirkhoffPolytope(3),
    Permutahedron(4),
]


def moving(convex_set, horizon: int, block: int = 20, reach: float = 3.0) -> dict:
    """Overrides under which x_m moves in a short run at a modest LOO cost: c small
    enough that K_{delta/r} is not the centre alone; short blocks so that Algorithm 3
    runs several times, with a step moving y by a few delta per block
    (eta sqrt(K) dM/delta = ``reach`` delta), as Theorem 11's eta does for its K."""
    delta = 0.5 * convex_set.inner_radius * horizon**-0.25
    spread = convex_set.aff_dim * (convex_set.outer_radius + np.linalg.norm(convex_set.center))
    return {
        "smoothing_radius": delta,
        "block_size": block,
        "step_size": reach * delta**2 / (math.sqrt(block) * spread),
    }


@pytest.mark.parametrize("convex_set", SETS, ids=repr)
@pytest.mark.parametrize("blocks", [False, True], ids=["rounds", "blocks"])
def test_plays_are_feasible_on_every_set(convex_set, blocks):
    horizon = 300
    agent = agent_for("loo-bbgd", convex_set, horizon, **moving(convex_set, horizon))
    agent.reset(seed=3)
    rng = np.random.default_rng(4)
    thetas = rng.normal(size=(horizon, *convex_set.shape)) + rng.normal(size=convex_set.shape)
    t, points = 0, set()
    while t < horizon:
        plays = agent.block_actions() if blocks else agent.act(None)[np.newaxis]
        for y in plays:
            assert convex_set.contains(y, atol=1e-9), f"played {y!r}, outside {convex_set!r}"
        values = np.array([float(np.sum(thetas[t + i] * y)) for i, y in enumerate(plays)])
        agent.update_block(values) if blocks else agent.update(values[0])
        t += len(plays)
        points.add(agent.iterate.tobytes())
    assert agent.stats["lmo_calls"] > 0 and agent.stats["projections"] == 0
    assert len(points) > 3  # x_m moved


@pytest.mark.parametrize("convex_set", [L2Ball(3), Simplex(5), Permutahedron(4)], ids=repr)
def test_algorithm_3_meets_lemmas_6_and_7(convex_set, rng):
    """(x, y~) with x in C, ||x - y~||^2 <= 3 eps, y~ in R B(c) an infeasible projection
    of y_0 onto C, and the counts within Lemma 7 (iterations) and Lemma 6 (calls per run)."""
    delta = 0.5 * convex_set.inner_radius
    shrunk = convex_set.shrink(delta)
    c, R = convex_set.center, convex_set.outer_radius
    tolerance = delta**2 / 3
    rows = 12
    feasible = c + (1 - delta / convex_set.inner_radius) * (
        np.array([convex_set.lmo(g) for g in rng.normal(size=(rows, *convex_set.shape))]) - c
    )  # vertices of C
    scales = np.linspace(0.05, 1.0, rows) * convex_set.outer_radius
    directions = rng.normal(size=(rows, *convex_set.shape))
    initial = c + scales[:, np.newaxis] * np.array([convex_set.tangent(g) for g in directions])
    initial[0] = feasible[0] + 0.1 * delta * convex_set.tangent(directions[0])  # close to C
    result = close_infeasible_projection_rows(
        RowOracle(shrunk.lmo_many, shrunk.lmo), feasible, initial, tolerance, c, R
    )
    comparators = c + (1 - delta / convex_set.inner_radius) * (
        np.array([convex_set.lmo(g) for g in rng.normal(size=(40, *convex_set.shape))]) - c
    )
    for i in range(rows):
        x, y = result.points[i], result.targets[i]
        assert shrunk.contains(x, atol=1e-9)
        assert np.sum((x - y) ** 2) <= 3 * tolerance
        assert np.linalg.norm(y - c) <= R * (1 + 1e-12)
        before = np.linalg.norm(initial[i] - comparators, axis=1)
        after = np.linalg.norm(y - comparators, axis=1)
        assert np.all(after <= before + 1e-12)
        h = float(np.sum((feasible[i] - initial[i]) ** 2))
        assert result.iterations[i] <= lemma_7_iterations(h, tolerance)
        assert result.most_calls[i] <= lemma_6_calls(R, tolerance)
        assert result.loo_calls[i] >= result.iterations[i]
    assert result.iterations.max() > 1  # some rows needed several separating hyperplanes
    assert (result.loo_calls == 0).any()  # and the closest ones none (||x_0 - y_0||^2 <= 3 eps)
    # each row alone: bit for bit the batch's row
    for i in range(rows):
        alone = close_infeasible_projection_rows(
            RowOracle(shrunk.lmo_many, shrunk.lmo),
            feasible[i : i + 1],
            initial[i : i + 1],
            tolerance,
            c,
            R,
        )
        assert np.array_equal(alone.points[0], result.points[i])
        assert np.array_equal(alone.targets[0], result.targets[i])
        assert alone.loo_calls[0] == result.loo_calls[i]


def test_default_parameters_are_theorem_11s():
    convex_set, horizon = L2Ball(2), 4096
    d, R, M = 2, 1.0, 1.0
    agent = agent_for("loo-bbgd", convex_set, horizon * 10**4)
    T = horizon * 10**4
    c = 20 * R * math.sqrt(d * M)
    assert agent.params["c"] == pytest.approx(c)
    assert agent.params["block_size"] == round(6 * d * M * math.sqrt(T))
    assert agent.params["step_size"] == pytest.approx(R / math.sqrt(d * M) * T**-0.75)
    assert agent.params["smoothing_radius"] == pytest.approx(c * T**-0.25)
    assert agent.params["tolerance"] == pytest.approx(agent.params["smoothing_radius"] ** 2 / 3)
    # below T = (20 R sqrt(dM)/r)^4 the radius is capped at r, with a warning
    problem = Problem(convex_set, horizon, 1.0, 1.0, "bandit")
    with pytest.warns(UserWarning, match="inner radius"):
        capped = make_agent("loo-bbgd", problem)
    assert capped.params["smoothing_radius"] == 1.0


def test_bound_and_count_at_exact_parameters_are_the_theorem_closed_forms():
    # T = 2304: sqrt(T) = 48, K = 6 dM sqrt(T) = 576 divides T (4 blocks) for d = 2, M = 1
    convex_set, T, c = L2Ball(2), 2304, 0.5
    agent = agent_for("loo-bbgd", convex_set, T, c=c)
    assert agent.params["block_size"] == 576
    constants = agent._gk22_constants()
    assert agent.regret_bound() == pytest.approx(
        gk22_bounds.theorem_11_closed_form(constants, c), rel=1e-12
    )
    # the count: ceil(81 R^2/delta^2 - 2) per run and B - 1 = 3 routines where the closed
    # form has 81 R^2/delta^2 and T/K = 4, and two corrections: 20 for the proof's 19
    # (Lemma 7's ceiling) and the fourth moment's terms that Lemma 20's proof drops
    delta, eta, K = (agent.params[key] for key in ("smoothing_radius", "step_size", "block_size"))
    eps, s, G = delta**2 / 3, 2 * 1.0 / delta, 1.0
    per_run = lemma_6_calls(1.0, delta**2 / 3)
    dropped = 4 * K**2 * s**2 * G * (s + G) + K * s**2 * max(0.0, (s + G) ** 2 - 3 * s**2)
    assert agent.lmo_call_bound() == pytest.approx(
        gk22_bounds.theorem_11_loo_calls_closed_form(constants, c)
        * (3 / 4)
        * per_run
        / (81 / delta**2)
        + 3 * (1 + 2 * eta**4 * dropped / eps**2) * per_run,
        rel=1e-12,
    )


def test_lemma_7_count_has_the_ceiling_of_its_proof():
    """k - 1 moves lower dist^2(y, C) by 4 eps^2/h each from at most h, and the iteration
    after dist^2 <= eps is the last: k <= ceil(h (h - eps)/(4 eps^2)) + 1 (the printed
    h (h - eps)/(4 eps^2) + 1 is 23.5 at h = 10 eps, where 24 iterations can be needed)."""
    assert lemma_7_iterations(10.0, 1.0) == 24
    assert lemma_7_iterations(9.0, 1.0) == 19  # 18 exactly: no rounding
    assert lemma_7_iterations(0.5, 1.0) == 1


def test_the_fourth_moment_bound_covers_the_block_sum():
    """E||g_hat||^4 for K estimates of f(x) = a + <b, x> about 0 on the unit 2-ball (the
    moments of one estimate by quadrature over the circle, then the exact expansion over
    K i.i.d. terms) is below block_sum_fourth_moment, itself above Lemma 20's printed
    bound by its dropped terms only."""
    d, delta, G, M, K = 2, 0.5, 1.0, 1.0, 7
    k = ProblemConstants(1, d, 1.0, 1.0, G, M)
    angles = np.linspace(0.0, 2 * np.pi, 4096, endpoint=False)
    u = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    g = (d / delta) * (M - delta * G + delta * G * u[:, 0])[:, None] * u
    mu = g.mean(0)
    norms = (g * g).sum(1)
    m2, m4 = norms.mean(), (norms**2).mean()
    skew = ((norms[:, None] * g).mean(0)) @ mu
    along = ((g @ mu) ** 2).mean()
    cross = np.trace((g.T @ g / len(g)) @ (g.T @ g / len(g)))  # E (g_1^T g_2)^2
    exact = (
        K * m4
        + K * (K - 1) * (m2**2 + 2 * cross)
        + 4 * K * (K - 1) * skew
        + K * (K - 1) * (K - 2) * (2 * m2 * (mu @ mu) + 4 * along)
        + K * (K - 1) * (K - 2) * (K - 3) * (mu @ mu) ** 2
    )
    s = d * M / delta
    printed = 3 * K**2 * s**4 + 6 * K**3 * s**2 * G**2 + K**4 * G**4
    bound = gk22_bounds.block_sum_fourth_moment(k, K, delta)
    assert exact <= bound
    assert bound - printed == pytest.approx(4 * K**2 * s**2 * G * (s + G), rel=1e-12)


KINDS = ["stationary", "switching", "adversarial"]


@pytest.mark.parametrize("convex_set", [L2Ball(3), Simplex(4)], ids=repr)
@pytest.mark.parametrize("kind", KINDS)
def test_the_bound_exceeds_the_regret_of_every_interval(convex_set, kind):
    """A smoke test: at T = 2048 Theorem 11's bound (1.3e4 to 1.8e4) exceeds 2MT (4096 to
    5595), above any interval's regret whatever the plays (an agent ascending instead of
    descending passes it), so only the next test can fail."""
    horizon = 2048
    # the theorem's c (capped: K_{delta/r} is the centre alone), and one for delta = r/2
    for c in (None, 0.5 * convex_set.inner_radius * horizon**0.25):
        agent = agent_for("loo-bbgd", convex_set, horizon, **({} if c is None else {"c": c}))
        period = agent.params["block_size"]
        thetas = sequence(kind, convex_set.dim, horizon, period, np.random.default_rng(7))
        _, losses = play(agent, convex_set, thetas, seed=1)
        worst = largest_interval_regret(convex_set, thetas, losses)
        assert 0 < worst <= agent.regret_bound()
        assert agent.stats["lmo_calls"] <= agent.lmo_call_bound()


def largest_interval_regret_on_segment(thetas: np.ndarray, losses: np.ndarray) -> float:
    """max over ALL intervals [s, e] of sum f_t(y_t) - min_{[-1, 1]} sum f_t for f_t(x) =
    theta_t x on the unit 1-ball, exactly in O(T): the interval's regret is P_e - P_s +
    |Q_e - Q_s| (P, Q the prefix sums of losses and thetas) = max over sigma = +-1 of
    V_e - V_s, V = P + sigma Q, whose largest increase is a running minimum."""
    played = np.concatenate(([0.0], np.cumsum(losses)))
    total = np.concatenate(([0.0], np.cumsum(thetas[:, 0])))
    return max(
        float(np.max(v[1:] - np.minimum.accumulate(v[:-1])))
        for v in (played + total, played - total)
    )


@pytest.mark.parametrize("kind", KINDS)
def test_the_bound_exceeds_the_regret_of_every_interval_where_it_is_informative(kind):
    """Theorem 11's bound is below the trivial 2MT (any interval's regret, for |f| <= M)
    only from T ~ 10^4 at d = 1: on [-1, 1] at T = 32768 with c = 0.657 (near its best c)
    it is 0.55 * 2MT, so a broken agent (one stuck at the wrong end of the segment
    against a stationary loss has regret ~1.6 T) fails it; the regret of every interval is
    exact (the O(T) scan, checked against the brute force of gk22_helpers)."""
    convex_set, horizon = L2Ball(1), 32768
    agent = agent_for("loo-bbgd", convex_set, horizon, c=0.657)
    bound = agent.regret_bound()
    assert bound < 0.6 * 2 * agent.problem.bound * horizon  # informative
    thetas = sequence(kind, 1, horizon, agent.params["block_size"], np.random.default_rng(7))
    _, losses = play(agent, convex_set, thetas, seed=1)
    worst = largest_interval_regret_on_segment(thetas, losses)
    assert 0 < worst <= bound
    head = 1500
    assert largest_interval_regret_on_segment(thetas[:head], losses[:head]) == pytest.approx(
        largest_interval_regret(convex_set, thetas[:head], losses[:head]), rel=1e-12
    )
    assert agent.stats["lmo_calls"] <= agent.lmo_call_bound()


def test_loo_calls_are_counted_per_block_and_within_theorem_11s_count():
    convex_set, horizon = Simplex(5), 4000
    agent = agent_for("loo-bbgd", convex_set, horizon, c=0.3)
    thetas = sequence("switching", 5, horizon, 1, np.random.default_rng(2))
    play(agent, convex_set, thetas, seed=0)
    stats = agent.stats
    per_block = stats["lmo_calls_per_block"]
    assert len(per_block) == math.ceil(horizon / agent.params["block_size"])
    assert per_block[0] == 0 and all(calls >= 1 for calls in per_block[1:])
    assert sum(per_block) == stats["lmo_calls"]
    assert stats["hyperplane_searches"] <= stats["lmo_calls"]
    assert stats["lmo_calls"] <= agent.lmo_call_bound()


@pytest.mark.parametrize(
    "env_id, kwargs", [("BCO-Simplex-v0", {"n": 4}), ("BCO-Ball-v0", {"n": 3})]
)
def test_run_many_rows_are_the_single_runs(env_id, kwargs):
    seeds, horizon = [0, 5, 9], 600
    convex_set = Simplex(4) if env_id == "BCO-Simplex-v0" else L2Ball(3)
    agent_kwargs = moving(convex_set, horizon, block=25, reach=20.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        many = run_many(
            env_id, "loo-bbgd", seeds, horizon=horizon, env_kwargs=kwargs, agent_kwargs=agent_kwargs
        )
        for seed, result in zip(seeds, many, strict=True):
            single = run(
                env_id,
                "loo-bbgd",
                horizon=horizon,
                seed=seed,
                env_kwargs=kwargs,
                agent_kwargs=agent_kwargs,
            )
            assert result.same_outcome(single)
            assert single.stats["lmo_calls"] > 0


def test_batched_agent_rows_equal_single_agents_in_lockstep():
    convex_set, horizon, seeds = Simplex(5), 200, [3, 4, 5]
    overrides = moving(convex_set, horizon, block=11, reach=10.0)
    batched = agent_for("loo-bbgd", convex_set, horizon, batch_size=3, **overrides)
    singles = [agent_for("loo-bbgd", convex_set, horizon, **overrides) for _ in seeds]
    batched.reset(seed=seeds)
    for agent, seed in zip(singles, seeds, strict=True):
        agent.reset(seed=seed)
    theta = np.linspace(-1.0, 1.0, 5)
    for t in range(horizon):
        plays = batched.act(None)
        assert np.array_equal(plays, np.stack([agent.act(None) for agent in singles]))
        losses = plays @ (theta * (1.0 + math.cos(t / 13.0)))
        batched.update(losses)
        for agent, value in zip(singles, losses, strict=True):
            agent.update(float(value))
    for row, agent in enumerate(singles):
        assert batched.row_stats(row) == agent.stats
    assert batched.stats["lmo_calls"].min() > 0


def test_refusals_name_the_value():
    problem = Problem(L2Ball(3), 100, 1.0, 1.0, "bandit")
    with pytest.raises(ValueError, match=r"smoothing_radius=2 exceeds the inner radius"):
        make_agent("loo-bbgd", problem, smoothing_radius=2.0)
    with pytest.raises(ValueError, match=r"block_size=0 must be an integer"):
        make_agent("loo-bbgd", problem, c=0.1, block_size=0)
    with pytest.raises(ValueError, match=r"tolerance=-1"):
        make_agent("loo-bbgd", problem, c=0.1, tolerance=-1.0)
    with pytest.raises(ValueError, match="unknown keyword"):
        make_agent("loo-bbgd", problem, background=True)
