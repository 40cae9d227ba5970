"""BBCG against Algorithms 1-2 and Theorem 1 of Garber & Kretzu (2020)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from agent_helpers import build, play, play_linear, regret

from bco_gym.agents import BlockBanditCG, make_agent
from bco_gym.losses import LinearLoss
from bco_gym.problem import Problem
from bco_gym.sets import L2Ball, Simplex


def _problem(convex_set, horizon, loss=None):
    loss = loss or LinearLoss(convex_set)
    return Problem(convex_set, horizon, loss.lipschitz, loss.bound)


def test_default_parameters_are_theorem_1_with_d_for_n():
    ball = L2Ball(5)  # linear losses: G = 1, M = G R = 1; r = R = 1, d = 5
    agent = make_agent("bbcg", _problem(ball, 10_000))
    c = math.sqrt(5)
    assert agent.params["c"] == pytest.approx(c)
    assert agent.params["block_size"] == 100
    assert agent.params["step_size"] == pytest.approx(2 * c / 5 * 10_000**-0.75)
    assert agent.params["smoothing_radius"] == pytest.approx(c / 10)
    assert agent.params["tolerance"] == pytest.approx(16 / 100)
    # Theorem 1's bounds at the default c.
    theorem = (8 * math.sqrt(5) + 6 + 4 / math.sqrt(5)) * 10_000**0.75
    assert agent.regret_bound() == pytest.approx(theorem)
    # The LMO bound of the routine as implemented (gap stopping): 99 routines, each at
    # most 1 + A*H calls, A = max(16 R_delta^2/eps^2, 2/eps), H >= E[start excess].
    delta, eta, eps, K = c / 10, 2 * c / 5 * 10_000**-0.75, 0.16, 100
    shrunk_radius = 1 - delta
    first, second = math.sqrt(K) * 5 / delta + K, K * (5 / delta) ** 2 + K**2
    excess = eps + eta * min(2 * shrunk_radius * first, math.sqrt(eps) * first + eta / 2 * second)
    calls = 99 * (1 + max(16 * shrunk_radius**2 / eps**2, 2 / eps) * excess)
    assert agent.lmo_call_bound() == pytest.approx(calls, rel=1e-12)

    simplex = Simplex(10)  # d = 9 replaces n = 10
    agent = make_agent("bbcg", _problem(simplex, 10_000))
    d, r, R = 9, 1 / math.sqrt(90), math.sqrt(0.9)
    M = R  # G = 1
    assert agent.params["c"] == pytest.approx(math.sqrt(d * M * r))
    assert agent.params["step_size"] == pytest.approx(
        2 * agent.params["c"] * R / (d * M) * 10_000**-0.75
    )


def test_smoothing_radius_is_capped_at_r_with_a_warning():
    simplex = Simplex(10)  # c / r = 9: degenerate until T ~ 9^4 = 6,561
    with pytest.warns(UserWarning, match=r"reaches the inner radius .* 6\.56e\+03"):
        agent = make_agent("bbcg", _problem(simplex, 1000))
    assert agent.params["smoothing_radius"] == simplex.inner_radius
    # K_delta = {c}: every play is the centre plus a step of length r.
    agent.reset(seed=0)
    plays = agent.block_actions()
    np.testing.assert_allclose(
        np.linalg.norm(plays - simplex.center, axis=1), simplex.inner_radius, rtol=1e-12
    )
    # Outside the theorem's range both bounds are the paper's lemmas at the capped delta,
    # which exceed the closed forms the theorem would give for this c.
    c, T, d, G = agent.params["c"], 1000, 9, 1.0
    agent.update_block(np.zeros(len(plays)))
    while agent.stats["rounds"] < T:
        agent.update_block(np.ones(len(agent.block_actions())))
    assert agent.stats["lmo_calls"] == 31
    M, r, R = simplex.outer_radius, simplex.inner_radius, simplex.outer_radius
    # K_delta = {c}: every gap is 0, so each of the 31 routines makes exactly 1 call,
    # and the bound (A = 2/eps, start excess <= eps) is 31 * (1 + 2).
    assert agent.lmo_call_bound() == pytest.approx(31 * 3, rel=1e-12)
    closed_regret = (3 * c * G + c * R * G / r + 6 * G * R + 4 * c * G**2 * R / (d * M)) * T**0.75
    assert agent.regret_bound() > closed_regret + 4 * R * d * M / c * T**0.75


def test_bounds_never_fall_below_lemma_3_when_the_block_size_is_rounded():
    # T = 13: K_b = round(sqrt(13)) = 4, where the theorem's closed form is below Lemma 3.
    problem = Problem(L2Ball(2), 13, lipschitz=50.0, bound=1.0)
    agent = make_agent("bbcg", problem)
    T, K, d, G, M = 13, 4, 2, 50.0, 1.0
    delta, eta, eps = (agent.params[k] for k in ("smoothing_radius", "step_size", "tolerance"))
    lemma = (
        3 * delta * G
        + delta * G
        + G * math.sqrt(eps)
        + eta * G * math.sqrt(K) * d * M / delta
        + eta * (d * M / delta) ** 2
        + 2 * eta * K * G**2
    ) * T + 4 / eta
    c = agent.params["c"]
    closed = (3 * c * G + c * G + 6 * G + 4 * c * G**2 / (d * M) + 4 * d * M / c) * T**0.75
    assert closed < lemma
    assert agent.regret_bound() == pytest.approx(lemma)


def test_overrides_and_their_validation():
    ball = L2Ball(3)
    agent = make_agent("bbcg", _problem(ball, 625), c=0.5, block_size=7)
    assert agent.params["smoothing_radius"] == pytest.approx(0.5 / 5)
    assert agent.params["step_size"] == pytest.approx(2 * 0.5 / 3 * 625**-0.75)
    assert agent.params["block_size"] == 7
    with pytest.raises(ValueError, match=r"smoothing_radius=2 exceeds the inner radius r = 1"):
        make_agent("bbcg", _problem(ball, 625), smoothing_radius=2.0)
    with pytest.raises(ValueError, match=r"tolerance=-1 must be finite and > 0"):
        make_agent("bbcg", _problem(ball, 625), tolerance=-1)
    with pytest.raises(ValueError, match=r"block_size=0 must be an integer in \[1, horizon=625\]"):
        make_agent("bbcg", _problem(ball, 625), block_size=0)
    with pytest.raises(ValueError, match=r"unknown keyword\(s\) eta; allowed: c, block_size"):
        make_agent("bbcg", _problem(ball, 625), eta=0.1)


def _iterates_by_block(agent, loss_fn, horizon):
    """Play round by round; return the plays and x_m after each block m."""
    actions, iterates = [], []
    losses = []
    for t in range(horizon):
        y = agent.act(None)
        value = loss_fn(t, y)
        agent.update(value)
        actions.append(y)
        losses.append(value)
        if len(agent.stats["lmo_calls_per_block"]) > len(iterates):
            iterates.append(agent.iterate)
    return np.array(actions), np.array(losses), iterates


@pytest.mark.parametrize("tolerance", [None, 1e-7])
def test_each_iterate_is_the_certified_rftl_point_of_the_previous_blocks(tolerance):
    """x_m ~ argmin_{K_delta} eta<g_hat_1 + ... + g_hat_{m-1}, x> + ||x - x_1||^2.

    The estimates are rebuilt from the recorded plays alone (u_t = (y_t - x_{m-1})/delta)
    and the exact minimiser is the projection Pi_{K_delta}(x_1 - eta * sum / 2); strong
    convexity bounds the squared distance by the certified gap <= eps.
    """
    simplex = Simplex(5)
    horizon = 400
    agent, loss = build("bbcg", simplex, horizon, c=0.3, tolerance=tolerance)
    loss.reset(np.random.default_rng(7))
    agent.reset(seed=8)
    actions, losses, iterates = _iterates_by_block(agent, loss.loss, horizon)
    p = agent.params
    delta, eta, eps, size = p["smoothing_radius"], p["step_size"], p["tolerance"], p["block_size"]
    shrunk = simplex.shrink(delta)
    center = simplex.center
    estimate_sum = np.zeros(5)
    previous = center  # x_0 = x_1 = c
    assert len(iterates) == horizon // size
    for m, x_m in enumerate(iterates, start=1):
        block = slice((m - 1) * size, m * size)
        directions = (actions[block] - previous) / delta
        np.testing.assert_allclose(np.linalg.norm(directions, axis=1), 1.0, rtol=1e-9)
        np.testing.assert_allclose(directions.sum(axis=1), 0.0, atol=1e-12)  # in V
        if m == 1:
            np.testing.assert_array_equal(x_m, center)
        else:
            exact = shrunk.project(center - eta * estimate_sum / 2)
            assert np.sum((x_m - exact) ** 2) <= eps + 1e-12
            gradient = eta * estimate_sum + 2 * (x_m - center)
            gap = np.vdot(gradient, x_m - shrunk.lmo(gradient))
            assert gap <= eps + 1e-12
            assert shrunk.contains(x_m, atol=1e-12)
        estimate_sum += 4 / delta * losses[block] @ directions  # d = 4
        previous = x_m
    if tolerance is not None:  # tight tolerance: x_m is the RFTL point to 3e-4
        assert np.sum((iterates[-1] - exact) ** 2) <= 1e-7


def test_x_m_does_not_depend_on_block_m():
    """Change only block 3's losses: x_1..x_3 and the plays of blocks 1..4 stay the same,
    x_4 (built from blocks 1..3) and the plays of block 5 change."""
    ball = L2Ball(3)
    horizon = 100  # blocks of 10
    rng = np.random.default_rng(11)
    thetas = rng.standard_normal((horizon, 3))
    perturbed = thetas.copy()
    perturbed[20:30] += 5.0  # block 3 = rounds 20..29
    runs = []
    for table in (thetas, perturbed):
        agent, _ = build("bbcg", ball, horizon, tolerance=1e-9)
        agent.reset(seed=12)
        runs.append(_iterates_by_block(agent, lambda t, y, table=table: table[t] @ y, horizon))
    (actions_a, _, iterates_a), (actions_b, _, iterates_b) = runs
    for m in range(3):
        np.testing.assert_array_equal(iterates_a[m], iterates_b[m])
    assert not np.allclose(iterates_a[3], iterates_b[3])
    np.testing.assert_array_equal(actions_a[:40], actions_b[:40])
    assert not np.allclose(actions_a[40:50], actions_b[40:50])


def test_lmo_calls_and_mean_regret_are_within_theorem_1():
    """Simplex n=5, linear losses, T=4096 (c T^(-1/4) = 0.11 <= r = 0.22: Theorem 1
    applies), 5 seeds: mean LMO calls and mean regret under the theorem's bounds."""
    simplex, horizon = Simplex(5), 4096
    agent, loss = build("bbcg", simplex, horizon)
    assert agent.params["c"] * horizon**-0.25 <= simplex.inner_radius
    calls, regrets = [], []
    for seed in range(5):
        _, losses = play_linear(agent, loss, horizon, seed, blocks=True)
        regrets.append(regret(loss, losses))
        calls.append(agent.stats["lmo_calls"])
        per_block = agent.stats["lmo_calls_per_block"]
        assert len(per_block) == 64 and per_block[0] == 0 and min(per_block[1:]) >= 1
        assert sum(per_block) == agent.stats["lmo_calls"]
        assert agent.stats["projections"] == 0
        assert 0 <= agent.stats["cg_gap"] <= agent.params["tolerance"]
    assert np.mean(calls) <= agent.lmo_call_bound()
    assert np.mean(regrets) <= agent.regret_bound()


@pytest.mark.parametrize("blocks", [False, True])
def test_background_mode_is_bit_identical_to_the_synchronous_mode(blocks):
    ball = L2Ball(4)
    horizon = 300  # blocks of 17, the last one of 11 rounds
    outcomes = []
    for background in (False, True):
        agent, loss = build("bbcg", ball, horizon, tolerance=1e-6, background=background)
        actions, losses = play_linear(agent, loss, horizon, seed=3, blocks=blocks)
        outcomes.append((actions, losses, dict(agent.stats), agent.iterate))
        agent.close()
    (a_sync, l_sync, s_sync, x_sync), (a_bg, l_bg, s_bg, x_bg) = outcomes
    np.testing.assert_array_equal(a_sync, a_bg)
    np.testing.assert_array_equal(l_sync, l_bg)
    np.testing.assert_array_equal(x_sync, x_bg)
    assert s_sync == s_bg
    assert s_sync["lmo_calls"] > len(s_sync["lmo_calls_per_block"])  # the routine did work


def test_block_hooks_are_bit_identical_to_round_by_round_play():
    ball = L2Ball(4)
    horizon = 150  # K_b = 12: 12 full blocks and one of 6 rounds
    agent, loss = build("bbcg", ball, horizon, tolerance=1e-5)
    reference, _ = play_linear(agent, loss, horizon, seed=5)
    reference_stats = dict(agent.stats)

    agent.reset(seed=6)  # same seeds as play_linear(seed=5): loss 5, agent 6
    loss.reset(np.random.default_rng(5))
    mixed, t = [], 0
    while t < horizon:
        if t % 3 == 0:  # a few single rounds, then the rest of the block at once
            y = agent.act(None)
            agent.update(loss.loss(t, y))
            plays = y[np.newaxis]
        else:
            plays = agent.block_actions()
            agent.update_block(loss.losses(t, plays))
        mixed.extend(plays)
        t += len(plays)
    np.testing.assert_array_equal(np.array(mixed), reference)
    assert agent.stats == reference_stats


def test_pickling_mid_block_with_a_running_worker_resumes_identically():
    ball = L2Ball(3)
    horizon = 64
    agent, loss = build("bbcg", ball, horizon, tolerance=1e-6, background=True)
    loss.reset(np.random.default_rng(1))
    agent.reset(seed=2)
    for t in range(20):  # blocks of 8: now inside block 3, its routine running
        agent.update(loss.loss(t, agent.act(None)))
    clone = pickle.loads(pickle.dumps(agent))
    rest = [play(a, lambda s, y: loss.loss(s + 20, y), horizon - 20)[0] for a in (agent, clone)]
    np.testing.assert_array_equal(rest[0], rest[1])
    assert agent.stats == clone.stats
    agent.close()
    clone.close()


def test_block_protocol_refusals():
    agent, _ = build("bbcg", L2Ball(3), 16)
    agent.reset(seed=0)
    with pytest.raises(RuntimeError, match=r"update_block\(\) called before block_actions\(\)"):
        agent.update_block(np.zeros(4))
    plays = agent.block_actions()
    assert plays.shape == (4, 3)
    with pytest.raises(RuntimeError, match="awaits update_block"):
        agent.act(None)
    with pytest.raises(RuntimeError, match=r"pass its losses to update_block\(\)"):
        agent.update(0.0)
    with pytest.raises(ValueError, match=r"expected shape \(4,\)"):
        agent.update_block(np.zeros(3))
    with pytest.raises(ValueError, match="losses must be finite"):
        agent.update_block(np.array([0.0, np.nan, 0.0, 0.0]))
    agent.update_block(np.zeros(4))
    assert agent.stats["rounds"] == 4
    assert isinstance(agent, BlockBanditCG)
