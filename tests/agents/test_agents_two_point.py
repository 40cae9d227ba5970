"""Two-point agents (fkm2, bbcg2) and the residual estimator of fkm, bfw and bbcg.

Unbiasedness of the two-point and residual estimators (z-tests against the smoothed
gradient of a quadratic), feasibility of both points of every pair, regret against the
stated bounds, reproducibility, batched rows bit for bit the single agents, refusals.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from agent_helpers import FrobeniusBall

from bco_gym.agents import AGENTS, make_agent
from bco_gym.agents.estimators import Residuals, sphere_directions, two_point_values
from bco_gym.experiment import run_many
from bco_gym.losses import LinearLoss
from bco_gym.problem import Problem
from bco_gym.sets import L2Ball, Simplex

TWO_POINT = ("fkm2", "bbcg2")
RESIDUAL = ("fkm", "bfw", "bbcg")


def _problem(convex_set, horizon, feedback="two-point"):
    loss = LinearLoss(convex_set)
    return Problem(convex_set, horizon, loss.lipschitz, loss.bound, feedback), loss


def _agent(name, convex_set, horizon, batch_size=None, **overrides):
    problem, loss = _problem(convex_set, horizon, AGENTS[name].feedback)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return make_agent(name, problem, batch_size=batch_size, **overrides), loss


def _play_pairs(agent, losses, horizon, seed):
    """Rounds of a two-point agent against ``losses`` (one LinearLoss per row)."""
    for row, loss in enumerate(losses):
        loss.reset(np.random.default_rng(seed + 1000 + row))
    agent.reset(seed=seed)
    single = agent.batch_size is None
    played = []
    for t in range(horizon):
        pairs = agent.act()
        rows = pairs[np.newaxis] if single else pairs
        values = np.array(
            [[loss.loss(t, p) for p in pair] for loss, pair in zip(losses, rows, strict=True)]
        )
        played.append(rows.copy())
        info = {"losses": values[0] if single else values}
        mean = (values[:, 0] + values[:, 1]) / 2
        agent.update(float(mean[0]) if single else mean, info)
    return np.stack(played, axis=1)  # (S, T, 2, *shape)


def _quadratic_target(convex_set, x, anchor):
    """The smoothed gradient of f(x) = ||x - a||^2 within V: P_V 2(x - a)."""
    return convex_set.tangent(2 * (x - anchor))


def _z_test(samples, target):
    mean = samples.mean(axis=0)
    error = samples.std(axis=0) / np.sqrt(len(samples))
    assert np.all(np.abs(mean - target.ravel()) <= 5 * error + 1e-12)


@pytest.mark.parametrize("convex_set", [Simplex(5), L2Ball(3), FrobeniusBall(2, 2)], ids=repr)
def test_two_point_estimate_is_unbiased_and_bounded(convex_set, rng):
    """E[(d/(2 delta))(f(x + delta u) - f(x - delta u)) u] = grad f_delta(x) for a
    quadratic (z-test, 5 standard errors per coordinate); ||g|| <= dG on the draws."""
    count, delta, d = 100_000, 0.2, convex_set.aff_dim
    x = convex_set.center
    anchor = x + rng.standard_normal(convex_set.shape)
    flat = sphere_directions(convex_set, rng, count).reshape(count, -1)
    plus = np.sum((x.ravel() + delta * flat - anchor.ravel()) ** 2, axis=1)
    minus = np.sum((x.ravel() - delta * flat - anchor.ravel()) ** 2, axis=1)
    values = two_point_values(np.stack([plus, minus], axis=1))
    samples = (d / delta) * values[:, np.newaxis] * flat
    _z_test(samples, _quadratic_target(convex_set, x, anchor))
    lipschitz = 2 * (np.linalg.norm(x - anchor) + delta)  # of f on the ball B(x, delta)
    assert np.linalg.norm(samples, axis=1).max() <= d * lipschitz * (1 + 1e-12)


@pytest.mark.parametrize("convex_set", [Simplex(5), L2Ball(3)], ids=repr)
def test_residual_estimate_is_unbiased(convex_set, rng):
    """g_t = (d/delta)(f_t(y_t) - f_{t-1}(y_{t-1})) u_t, y_{t-1} from an independent
    direction: its mean is grad f_delta,t(x_t) (z-test), with f_{t-1} != f_t."""
    count, delta, d = 200_000, 0.2, convex_set.aff_dim
    x = convex_set.center
    anchor, previous_anchor = (x + rng.standard_normal(convex_set.shape) for _ in range(2))
    previous_u = sphere_directions(convex_set, rng, count).reshape(count, -1)
    flat = sphere_directions(convex_set, rng, count).reshape(count, -1)
    previous = np.sum((x.ravel() + delta * previous_u - previous_anchor.ravel()) ** 2, axis=1)
    current = np.sum((x.ravel() + delta * flat - anchor.ravel()) ** 2, axis=1)
    samples = (d / delta) * (current - previous)[:, np.newaxis] * flat
    _z_test(samples, _quadratic_target(convex_set, x, anchor))


def test_residuals_follow_the_play_order_across_calls():
    losses = np.array([[1.0, 4.0, 2.0, 7.0, 7.5], [0.5, -1.0, 3.0, 3.0, 0.0]])
    residuals = Residuals(2)
    pieces = [
        residuals.of(losses[:, :2]),
        residuals.of(losses[:, 2:3]),
        residuals.of(losses[:, 3:]),
    ]
    expected = np.diff(losses, axis=1, prepend=0.0)  # f_0(y_0) := 0
    np.testing.assert_array_equal(np.concatenate(pieces, axis=1), expected)


@pytest.mark.parametrize("name", TWO_POINT)
@pytest.mark.parametrize("convex_set", [Simplex(4), L2Ball(3)], ids=repr)
def test_both_points_of_every_pair_lie_in_the_set(name, convex_set):
    horizon = 150
    agent, loss = _agent(name, convex_set, horizon, smoothing_radius=convex_set.inner_radius)
    pairs = _play_pairs(agent, [loss], horizon, seed=1)[0]
    assert pairs.shape == (horizon, 2, *convex_set.shape)
    for pair in pairs:
        assert convex_set.contains(pair[0], atol=1e-9) and convex_set.contains(pair[1], atol=1e-9)
        assert not np.array_equal(pair[0], pair[1])
    assert agent.stats["rounds"] == horizon


MOVING = {"fkm2": {"step_size": 0.5}, "bbcg2": {"step_size": 0.3, "block_size": 5}}


@pytest.mark.parametrize("name", TWO_POINT)
def test_batched_rows_are_the_single_agents_bit_for_bit(name):
    convex_set, horizon, seeds = L2Ball(3), 40, [4, 11, 4]
    batched, _ = _agent(name, convex_set, horizon, batch_size=3, **MOVING[name])
    losses = [LinearLoss(convex_set) for _ in seeds]
    for seed, loss in zip(seeds, losses, strict=True):
        loss.reset(np.random.default_rng(99 + seed))
    batched.reset(seed=seeds)
    singles = []
    for seed in seeds:
        single, _ = _agent(name, convex_set, horizon, **MOVING[name])
        single.reset(seed=seed)
        singles.append(single)
    for t in range(horizon):
        pairs = batched.act()
        values = np.array(
            [[loss.loss(t, p) for p in pair] for loss, pair in zip(losses, pairs, strict=True)]
        )
        for row, single in enumerate(singles):
            assert np.array_equal(single.act(), pairs[row])
            single.update(float(values[row].mean()), {"losses": values[row]})
        batched.update(values.mean(axis=1), {"losses": values})
    for row, single in enumerate(singles):
        assert batched.row_stats(row) == single.stats
    assert np.array_equal(pairs[0], pairs[2])  # the same seed twice


@pytest.mark.parametrize("name", TWO_POINT)
def test_a_seed_reproduces_the_run(name):
    convex_set = Simplex(4)
    runs = []
    for _ in range(2):
        agent, loss = _agent(name, convex_set, 60, **MOVING[name])
        runs.append(_play_pairs(agent, [loss], 60, seed=7))
    assert np.array_equal(runs[0], runs[1])
    agent, loss = _agent(name, convex_set, 60, **MOVING[name])
    assert not np.array_equal(runs[0], _play_pairs(agent, [loss], 60, seed=8))


@pytest.mark.parametrize(
    "name, estimator, bound_at",
    [
        ("fkm2", None, 2_500),
        ("bbcg2", None, 2_500),
        ("fkm", "residual", 2_500),
        ("bbcg", "residual", 2_500),
    ],
)
def test_mean_regret_is_within_the_stated_bound(name, estimator, bound_at):
    """Mean regret over 4 seeds on the ball (n = 5, linear losses) below regret_bound()."""
    feedback = "two-point" if name in TWO_POINT else "bandit"
    kwargs = {} if estimator is None else {"estimator": estimator}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        results = run_many(
            "BCO-Ball-v0",
            name,
            [0, 1, 2, 3],
            horizon=bound_at,
            env_kwargs={"n": 5, "feedback": feedback},
            agent_kwargs=kwargs,
        )
    bound = results[0].regret_bound
    assert bound is not None and bound > 0
    assert np.mean([r.final_regret for r in results]) <= bound


def test_regret_bounds_follow_the_derivations():
    convex_set, horizon = L2Ball(4), 10_000
    fkm2, _ = _agent("fkm2", convex_set, horizon)
    problem = fkm2.problem
    d, G, R, r = 4, problem.lipschitz, 1.0, 1.0
    assert fkm2.params["smoothing_radius"] == pytest.approx(r / 100)
    assert fkm2.regret_bound() == pytest.approx((R * d + 3 * r + R) * G * 100)
    bbcg2, _ = _agent("bbcg2", convex_set, horizon)
    K = 100
    spread = d * np.sqrt(K) + d * d + 2 * K
    assert bbcg2.params["block_size"] == K
    assert bbcg2.params["step_size"] == pytest.approx(2 * R / (G * np.sqrt(horizon * spread)))
    expected = 4 * R * G * np.sqrt(horizon * spread) + 4 * R * G * horizon**0.75
    expected += (3 * r + R) * G * np.sqrt(horizon)
    assert bbcg2.regret_bound() == pytest.approx(expected)
    # residual: the one-point bound with 2dM/delta, so larger at the same parameters
    plain, _ = _agent("fkm", convex_set, horizon)
    residual, _ = _agent("fkm", convex_set, horizon, estimator="residual")
    eta, delta = plain.params["step_size"], plain.params["smoothing_radius"]
    extra = eta * horizon * 3 * (d * problem.bound / delta) ** 2 / 2
    assert residual.regret_bound() == pytest.approx(plain.regret_bound() + extra)
    for name in ("bbcg",):
        one, _ = _agent(name, convex_set, horizon)
        two, _ = _agent(name, convex_set, horizon, estimator="residual")
        assert two.regret_bound() > one.regret_bound()


@pytest.mark.parametrize("name", RESIDUAL)
def test_residual_changes_only_the_estimate(name):
    """Round 1 (f_0(y_0) = 0) is the one-point update; later rounds differ."""
    convex_set, horizon = L2Ball(3), 30
    extra = {"step_size": 0.5, "smoothing_radius": 0.5}
    if name == "bbcg":
        extra.update(block_size=1, tolerance=1e-3)
    plays = {}
    for estimator in ("one-point", "residual"):
        agent, loss = _agent(name, convex_set, horizon, estimator=estimator, **extra)
        loss.reset(np.random.default_rng(0))
        agent.reset(seed=3)
        rows = []
        for t in range(horizon):
            y = agent.act()
            rows.append(y)
            agent.update(loss.loss(t, y) + 5.0)  # an offset the residual cancels
        plays[estimator] = np.array(rows)
        assert agent.params["estimator"] == estimator
    first_differs = 3 if name == "bbcg" else 2  # bbcg's x_1 is first played in block 3
    assert np.array_equal(plays["one-point"][:first_differs], plays["residual"][:first_differs])
    assert not np.array_equal(plays["one-point"], plays["residual"])


@pytest.mark.parametrize("name", RESIDUAL)
def test_an_unknown_estimator_is_refused(name):
    problem, _ = _problem(L2Ball(3), 100, "bandit")
    with pytest.raises(
        ValueError, match=r"estimator='two-point'.*allowed: 'one-point', 'residual'"
    ):
        make_agent(name, problem, estimator="two-point")


def test_feedback_mismatches_are_refused():
    two_point, _ = _problem(L2Ball(3), 100)
    bandit, _ = _problem(L2Ball(3), 100, "bandit")
    with pytest.raises(ValueError, match="feedback='two-point'"):
        make_agent("fkm", two_point)
    with pytest.raises(ValueError, match="feedback='bandit'"):
        make_agent("fkm2", bandit)
    agent = make_agent("fkm2", two_point)
    agent.reset(seed=0)
    agent.act()
    with pytest.raises(ValueError, match="info\\['losses'\\]"):
        agent.update(0.0, {"loss": 0.0})
    with pytest.raises(ValueError, match="shape \\(2,\\)"):
        agent.update(0.0, {"losses": np.array([0.0, 1.0, 2.0])})
    with pytest.raises(ValueError, match="finite"):
        agent.update(0.0, {"losses": np.array([0.0, np.nan])})
    with pytest.raises(ValueError, match="bbcg2"):
        make_agent("bbcg2", two_point, estimator="residual")
