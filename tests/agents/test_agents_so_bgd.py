"""SO-BGD (Garber & Kretzu 2022, Algorithm 10): Algorithm 6 against Lemmas 12-13,
feasibility on every set with a separation oracle, Theorem 15's parameters, bound and
separation-call count, and batched rows equal to single runs."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from gk22_helpers import agent_for, largest_interval_regret, play, sequence

from bco_gym.agents import make_agent
from bco_gym.agents.gk22 import bounds as gk22_bounds
from bco_gym.agents.gk22.oracles import separation_projection
from bco_gym.engine.many import run_many
from bco_gym.engine.runner import run
from bco_gym.errors import UnsupportedSetError
from bco_gym.problem import Problem
from bco_gym.sets import FlowPolytope, Hypercube, L1Ball, L2Ball, Simplex

ENVS = {
    "BCO-Ball-v0": L2Ball(4),
    "BCO-L1Ball-v0": L1Ball(4),
    "BCO-Hypercube-v0": Hypercube(n=4),
    "BCO-Simplex-v0": Simplex(4),
}


def moving(convex_set, horizon: int) -> dict:
    """Theorem 15's parameters with c, c' small enough for the conditions to hold
    (delta = 1/2, delta' = r/4 at this horizon) and a larger step, so that y~ moves and
    Algorithm 6 steps in a short run."""
    root = horizon**0.25
    return {"c": 0.5 * root, "c_prime": 0.25 * convex_set.inner_radius * root, "step_size": 0.05}


@pytest.mark.parametrize("env_id", list(ENVS))
def test_plays_are_feasible_on_every_set_with_an_oracle(env_id):
    # the env raises InfeasibleActionError on a play outside K (no projection)
    horizon = 400
    kwargs = moving(ENVS[env_id], horizon)
    result = run(
        env_id, "so-bgd", horizon=horizon, seed=1, env_kwargs={"n": 4}, agent_kwargs=kwargs
    )
    assert result.projections == 0 and result.lmo_calls == 0
    stats = result.stats
    assert stats["separation_calls"] == horizon + stats["separation_steps"]
    assert stats["separation_steps"] > 0  # Algorithm 6 stepped


@pytest.mark.parametrize("convex_set", list(ENVS.values()), ids=repr)
def test_algorithm_6_meets_lemmas_12_and_13(convex_set, rng):
    """y~ with c + (y~ - c)/(1 - delta'/r) in K, an infeasible projection of y_0 onto
    K_{delta,delta'/r}; on the ball the calls are within Lemma 13's count."""
    squeeze, margin = 0.2, 0.3 * convex_set.inner_radius
    c, r = convex_set.center, convex_set.inner_radius
    inner = (1 - squeeze) * (1 - margin / r)
    comparators = c + inner * (convex_set.sample_many(rng, 60) - c)  # in K_{delta,delta'/r}
    steps = 0
    for scale in np.linspace(0.1, 4.0, 25):
        y0 = c + scale * convex_set.tangent(rng.normal(size=convex_set.shape))
        found = separation_projection(convex_set, y0, squeeze, margin)
        assert convex_set.contains(c + (found.point - c) / (1 - margin / r), atol=1e-9)
        before = np.linalg.norm(y0 - comparators, axis=1)
        after = np.linalg.norm(found.point - comparators, axis=1)
        assert np.all(after <= before + 1e-12)
        if isinstance(convex_set, L2Ball):  # dist to K_{delta,delta'/r}, a ball about 0
            start = max(0.0, min(np.linalg.norm(y0), convex_set.outer_radius) - inner)
            end = max(0.0, np.linalg.norm(found.point) - inner)
            lemma_13 = (start**2 - end**2) / (squeeze * (r - margin)) ** 2 + 1
            assert found.calls <= lemma_13 + 1e-9
        steps += found.calls - 1
    assert steps > 25  # far points needed several steps


def test_default_parameters_are_theorem_15s():
    convex_set, T = L2Ball(4), 10**6
    d, r, M = 4, 1.0, 1.0
    agent = agent_for("so-bgd", convex_set, T)
    assert agent.params["c"] == pytest.approx(8 / r)
    assert agent.params["c_prime"] == pytest.approx(math.sqrt(d * M))
    assert agent.params["step_size"] == pytest.approx(r / (4 * math.sqrt(d * M)) * T**-0.75)
    assert agent.params["squeeze"] == pytest.approx(8 / r * T**-0.25)
    assert agent.params["smoothing_radius"] == pytest.approx(math.sqrt(d * M) * T**-0.25)
    constants = agent._gk22_constants()
    closed = gk22_bounds.theorem_15_closed_form(constants, 8 / r, math.sqrt(d * M))
    assert agent.regret_bound() == pytest.approx(closed, rel=1e-12)
    # the count's closed form: T + 2R sqrt(dM)/(r c c') T^(3/4) + dM/(4 c^2 c'^2) T^(1/2)
    c, cp = 8 / r, math.sqrt(d * M)
    count = T + 2 * math.sqrt(d * M) / (r * c * cp) * T**0.75 + d * M / (4 * c**2 * cp**2) * T**0.5
    assert agent.separation_call_bound() == pytest.approx(count, rel=1e-12)
    # below the theorem's horizon the squeeze is capped at 1 and delta' at r/2
    problem = Problem(convex_set, 100, 1.0, 1.0, "bandit")
    with pytest.warns(UserWarning) as caught:
        capped = make_agent("so-bgd", problem)
    assert capped.params["squeeze"] == 1.0 and capped.params["smoothing_radius"] == 0.5
    assert {"squeeze", "smoothing_radius"} <= {str(w.message).split()[3] for w in caught}


KINDS = ["stationary", "switching", "adversarial"]


@pytest.mark.parametrize("convex_set", [L2Ball(3), Simplex(4)], ids=repr)
@pytest.mark.parametrize("kind", KINDS)
def test_the_bound_exceeds_the_regret_of_every_interval(convex_set, kind):
    horizon = 1024
    for overrides in ({}, moving(convex_set, horizon)):  # the theorem's (capped), and moving
        agent = agent_for("so-bgd", convex_set, horizon, **overrides)
        thetas = sequence(kind, convex_set.dim, horizon, 64, np.random.default_rng(7))
        _, losses = play(agent, convex_set, thetas, seed=1)
        worst = largest_interval_regret(convex_set, thetas, losses)
        assert 0 < worst <= agent.regret_bound()
        # Theorem 15's count is deterministic: it holds for every run
        assert horizon <= agent.stats["separation_calls"] <= agent.separation_call_bound()


def test_separation_calls_within_theorem_15s_count_at_its_parameters():
    # T^(1/4) > max(2 sqrt(dM)/r, 8/r) = 8 on the unit ball (d = 2, M = 1): T > 4096
    convex_set, horizon = L2Ball(2), 5000
    agent = agent_for("so-bgd", convex_set, horizon)
    assert agent.params["squeeze"] < 1 and agent.params["smoothing_radius"] < 0.5
    thetas = sequence("switching", 2, horizon, 1, np.random.default_rng(3))
    play(agent, convex_set, thetas, seed=2)
    assert agent.stats["separation_calls"] <= agent.separation_call_bound()


@pytest.mark.parametrize("env_id", ["BCO-Simplex-v0", "BCO-Ball-v0"])
def test_run_many_rows_are_the_single_runs(env_id):
    seeds, horizon = [0, 5, 9], 300
    convex_set = Simplex(4) if env_id == "BCO-Simplex-v0" else L2Ball(4)
    kwargs = moving(convex_set, horizon)
    many = run_many(
        env_id, "so-bgd", seeds, horizon=horizon, env_kwargs={"n": 4}, agent_kwargs=kwargs
    )
    for seed, result in zip(seeds, many, strict=True):
        single = run(
            env_id, "so-bgd", horizon=horizon, seed=seed, env_kwargs={"n": 4}, agent_kwargs=kwargs
        )
        assert result.same_outcome(single)
        assert single.stats["separation_steps"] > 0


def test_batched_agent_rows_equal_single_agents_in_lockstep():
    convex_set, horizon, seeds = Simplex(5), 300, [3, 4, 5]
    overrides = moving(convex_set, horizon)
    batched = agent_for("so-bgd", convex_set, horizon, batch_size=3, **overrides)
    singles = [agent_for("so-bgd", convex_set, horizon, **overrides) for _ in seeds]
    batched.reset(seed=seeds)
    for agent, seed in zip(singles, seeds, strict=True):
        agent.reset(seed=seed)
    theta = np.linspace(-1.0, 1.0, 5)
    for t in range(horizon):
        plays = batched.act(None)
        assert np.array_equal(plays, np.stack([agent.act(None) for agent in singles]))
        losses = plays @ (theta * math.cos(t / 17.0)) + 0.1
        batched.update(losses)
        for agent, value in zip(singles, losses, strict=True):
            agent.update(float(value))
    for row, agent in enumerate(singles):
        assert batched.row_stats(row) == agent.stats


def test_refusals_name_the_value():
    with pytest.raises(UnsupportedSetError, match=r"SeparationOracleBanditGD needs .*oracle"):
        agent_for("so-bgd", FlowPolytope.grid(2, 2), 10)
    problem = Problem(L2Ball(3), 10, 1.0, 1.0, "bandit")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(ValueError, match=r"smoothing_radius=0\.6 exceeds r/2 = 0\.5"):
            make_agent("so-bgd", problem, smoothing_radius=0.6)
        with pytest.raises(ValueError, match=r"squeeze=1\.5 exceeds 1"):
            make_agent("so-bgd", problem, squeeze=1.5)
        with pytest.raises(ValueError, match=r"c_prime=-1"):
            make_agent("so-bgd", problem, c_prime=-1.0)
