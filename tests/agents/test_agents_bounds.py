"""The bounds the agents return hold for the algorithms as implemented.

* BBCG's ``lmo_call_bound``: the routine stops on the Frank-Wolfe gap (a do-while), so
  a block's routine makes at most 1 + A h_m calls, A = max(16 R_delta^2/eps^2, 2/eps),
  h_m = F_m(x_{m-1}) - min F_m; checked block by block with h_m computed exactly, and
  the total against measured counts (including a tiny step size, where every routine
  makes one call and the paper's count would be 1e-5).
* OFW is Hazan (2016)'s online conditional gradient (F_t holds the gradients before
  round t), and its regret stays under Theorem 7.3's 8DG T^(3/4) = 16RG T^(3/4).
"""

from __future__ import annotations

import numpy as np
import pytest
from agent_helpers import build, play, play_linear, regret

from bco_gym.agents.bbcg import bounds as bbcg_bounds
from bco_gym.sets import L2Ball, Simplex


def test_tiny_step_size_one_call_per_routine_within_the_bound():
    """The audit's case: step_size=1e-12 on the ball, T = 10^4: 99 routines, 1 call each."""
    ball, horizon = L2Ball(5), 10_000
    agent, loss = build("bbcg", ball, horizon, step_size=1e-12)
    play_linear(agent, loss, horizon, seed=0, blocks=True)
    assert agent.stats["lmo_calls"] == 99
    assert agent.stats["lmo_calls_per_block"] == [0] + [1] * 99
    assert 99 <= agent.lmo_call_bound()


@pytest.mark.parametrize(
    "convex_set, overrides",
    [
        (L2Ball(3), {"step_size": 0.5, "tolerance": 1e-3}),
        (Simplex(4), {"step_size": 0.2, "tolerance": 1e-3, "c": 0.2}),
        (L2Ball(4), {}),
    ],
    ids=["ball-large-step", "simplex-large-step", "ball-theorem"],
)
def test_mean_lmo_calls_within_the_bound(convex_set, overrides):
    horizon = 900
    agent, loss = build("bbcg", convex_set, horizon, **overrides)
    calls = []
    for seed in range(4):
        play_linear(agent, loss, horizon, seed, blocks=True)
        calls.append(agent.stats["lmo_calls"])
    assert np.mean(calls) <= agent.lmo_call_bound()
    if overrides:  # the routines did real work
        assert np.mean(calls) > 29  # 29 routines, some of which stepped


def test_every_routine_within_one_plus_a_times_its_start_excess():
    """calls_m <= 1 + A h_m, with h_m = F_m(x_{m-1}) - min F_m and min F_m exact on
    the ball (the minimiser is Pi_{K_delta}(c - eta * sum / 2))."""
    ball, horizon = L2Ball(3), 400
    agent, loss = build("bbcg", ball, horizon, step_size=0.5, tolerance=1e-3)
    loss.reset(np.random.default_rng(3))
    agent.reset(seed=4)
    actions, losses, iterates, t = [], [], [], 0
    while t < horizon:
        plays = agent.block_actions()
        values = loss.losses(t, plays)
        agent.update_block(values)
        actions.extend(plays)
        losses.extend(values)
        t += len(plays)
        if len(agent.stats["lmo_calls_per_block"]) > len(iterates):
            iterates.append(agent.iterate)
    p = agent.params
    delta, eta, size = p["smoothing_radius"], p["step_size"], p["block_size"]
    shrunk = ball.shrink(delta)
    calls_per_excess = bbcg_bounds.routine_calls_per_excess(agent._constants())
    actions, losses = np.array(actions), np.array(losses)
    estimate_sum, previous = np.zeros(3), ball.center  # x_0 = x_1 = c
    checked = 0
    for m, (calls, x_m) in enumerate(
        zip(agent.stats["lmo_calls_per_block"], iterates, strict=True), start=1
    ):
        if m > 1:  # F_m = eta <g_hat_1 + ... + g_hat_{m-1}, x> + ||x - c||^2
            exact = shrunk.project(ball.center - eta * estimate_sum / 2)

            def objective(x, total=estimate_sum):
                return eta * total @ x + np.sum((x - ball.center) ** 2)

            excess = max(0.0, objective(previous) - objective(exact))
            assert calls <= 1 + calls_per_excess * excess + 1e-6
            checked += calls > 1
        block = slice((m - 1) * size, m * size)
        directions = (actions[block] - previous) / delta
        estimate_sum = estimate_sum + 3 / delta * losses[block] @ directions
        previous = x_m
    assert checked >= 5  # routines that stepped, not only certified


def test_online_frank_wolfe_is_hazans_variant():
    """x_2 = lmo(grad F_1(x_1)) = lmo(0) (sigma_1 = 1); x_3 uses F_2 = eta<nabla_1, x> + ..."""
    simplex = Simplex(4)
    agent, loss = build("ofw", simplex, 50)
    loss.reset(np.random.default_rng(0))
    agent.reset(seed=0)
    eta, center = agent.params["step_size"], simplex.center
    x1 = agent.act(None)
    nabla_1 = loss.gradient(0, x1)
    agent.update(loss.loss(0, x1), {"gradient": nabla_1})
    x2 = agent.act(None)
    np.testing.assert_array_equal(x2, center + 1.0 * (simplex.lmo(np.zeros(4)) - center))
    agent.update(loss.loss(1, x2), {"gradient": loss.gradient(1, x2)})
    sigma_2 = min(1.0, 2 / np.sqrt(2))
    vertex = simplex.lmo(eta * nabla_1 + 2 * (x2 - center))
    np.testing.assert_allclose(agent.act(None), x2 + sigma_2 * (vertex - x2), atol=1e-15)


@pytest.mark.parametrize("convex_set", [Simplex(5), L2Ball(4)], ids=repr)
@pytest.mark.parametrize("pattern", ["iid", "alternating"])
def test_online_frank_wolfe_regret_within_theorem_7_3(convex_set, pattern):
    horizon = 3000
    agent, loss = build("ofw", convex_set, horizon)
    if pattern == "iid":
        _, losses = play_linear(agent, loss, horizon, seed=1)
        measured = regret(loss, losses)
    else:  # theta_t = (-1)^floor(t/50) theta: the leader flips, the comparator is mild
        theta = convex_set.tangent(np.random.default_rng(2).standard_normal(convex_set.shape))
        theta /= np.linalg.norm(theta)

        def sign(t):
            return 1.0 if (t // 50) % 2 == 0 else -1.0

        agent.reset(seed=0)
        _, losses = play(
            agent,
            lambda t, y: sign(t) * float(theta @ y),
            horizon,
            gradient_fn=lambda t, y: sign(t) * theta,
        )
        total = sum(sign(t) for t in range(horizon)) * theta
        measured = float(losses.sum() - total @ convex_set.lmo(total))
    bound = 16 * convex_set.outer_radius * loss.lipschitz * horizon**0.75
    assert agent.regret_bound() == pytest.approx(bound)
    assert measured <= bound
