"""Every agent: feasibility, determinism, parameters, bounds and every refusal."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from agent_helpers import (
    ALL_AGENTS,
    BANDIT_AGENTS,
    FrobeniusBall,
    Permutahedron,
    build,
    play_linear,
    regret,
)

from bco_gym.agents import AGENTS, Agent, make_agent, problem_of
from bco_gym.losses import LinearLoss
from bco_gym.problem import Problem
from bco_gym.sets import L2Ball, Simplex

SETS = [Simplex(4), L2Ball(3), FrobeniusBall(2, 3)]
PROJECTION_FREE = ("bbcg", "bfw", "ofw", "random")
CORE = [
    "bbcg",
    "fkm",
    "bfw",
    "ofw",
    "ogd",
    "random",
    "fkm2",
    "bbcg2",
    "fejer-bgd",
    "loo-bbgd",
    "saha-tewari",
    "so-bgd",
    "pbgd",
    "pbgd2",
    "bandit-newton",
]  # the sb3-* agents are tested in tests/rl


def test_registry_names_and_classes():
    assert list(AGENTS) == [*CORE, "sb3-ppo", "sb3-a2c", "sb3-sac", "sb3-td3"]
    for name, cls in AGENTS.items():
        assert cls.name == name and issubclass(cls, Agent)
        assert cls.SCALE_PARAM is None or cls.SCALE_PARAM in cls.OPTIONS
    assert [n for n, cls in AGENTS.items() if cls.supports_blocks] == [
        "bbcg",
        "random",
        "bbcg2",
        "loo-bbgd",
    ]
    exponents = {name: AGENTS[name].regret_exponent for name in CORE}
    assert exponents == {
        "bbcg": 0.75,
        "fkm": 0.75,
        "bfw": 0.8,
        "ofw": 0.75,
        "ogd": 0.5,
        "random": 1.0,
        "fkm2": 0.5,
        "bbcg2": 0.75,
        "fejer-bgd": 0.75,
        "loo-bbgd": 0.75,
        "saha-tewari": 2 / 3,
        "so-bgd": 0.75,
        "pbgd": 0.75,
        "pbgd2": 0.5,
        "bandit-newton": 0.5,
    }


PATHS = [(name, False) for name in ALL_AGENTS] + [("bbcg", True), ("random", True)]


@pytest.mark.parametrize("convex_set", SETS, ids=repr)
@pytest.mark.parametrize(
    "name, blocks", PATHS, ids=[f"{n}-{'blocks' if b else 'rounds'}" for n, b in PATHS]
)
def test_every_action_lies_in_the_set(name, convex_set, blocks):
    horizon = 200
    agent, loss = build(name, convex_set, horizon)
    actions, _ = play_linear(agent, loss, horizon, seed=0, blocks=blocks)
    assert actions.shape == (horizon, *convex_set.shape)
    for y in actions:
        assert convex_set.contains(y, atol=1e-9), f"{name} played {y!r}, outside {convex_set!r}"
    assert agent.stats["rounds"] == horizon


@pytest.mark.parametrize("name", ("bbcg", "bfw", "random"))
def test_user_defined_permutahedron_runs_and_stays_feasible(name):
    """A set known only through geometry, lmo, contains and tangent (hidden-bug guard:
    non-full-dimensional, non-zero centre, no projection, no vectorised tangent)."""
    permutahedron = Permutahedron(5)
    horizon = 400
    agent, loss = build(name, permutahedron, horizon, **({"c": 0.5} if name != "random" else {}))
    actions, losses = play_linear(agent, loss, horizon, seed=4)
    for y in actions:
        assert permutahedron.contains(y, atol=1e-9)
    assert np.isfinite(regret(loss, losses))
    if name != "random":  # the centre stays in the relative interior: explored in V only
        np.testing.assert_allclose(actions.sum(axis=1), 15.0, atol=1e-9)


def test_full_information_frank_wolfe_on_the_permutahedron():
    permutahedron = Permutahedron(4)
    agent, loss = build("ofw", permutahedron, 100)
    actions, _ = play_linear(agent, loss, 100, seed=2)
    assert all(permutahedron.contains(y, atol=1e-9) for y in actions)
    assert agent.stats["lmo_calls"] == 100


@pytest.mark.parametrize("name", ALL_AGENTS)
def test_same_seed_same_actions(name):
    agent, loss = build(name, Simplex(5), 120)
    first, _ = play_linear(agent, loss, 120, seed=9)
    second, _ = play_linear(agent, loss, 120, seed=9)  # reset() replays exactly
    np.testing.assert_array_equal(first, second)
    other, _ = build(name, Simplex(5), 120)
    third, _ = play_linear(other, loss, 120, seed=9)  # a fresh agent too
    np.testing.assert_array_equal(first, third)
    if name in BANDIT_AGENTS:  # randomised agents: another seed explores differently
        loss.reset(np.random.default_rng(9))
        agent.reset(seed=123)
        assert not np.allclose(agent.act(None), first[0])


@pytest.mark.parametrize("name", ALL_AGENTS)
def test_params_scale_knob_and_stats(name):
    ball = L2Ball(3)
    agent, _ = build(name, ball, 400)
    cls = type(agent)
    if cls.SCALE_PARAM is not None:
        value = agent.params[cls.SCALE_PARAM]
        doubled, _ = build(name, ball, 400, **{cls.SCALE_PARAM: 2 * value})
        assert doubled.params[cls.SCALE_PARAM] == pytest.approx(2 * value)
        assert doubled.params["step_size"] == pytest.approx(2 * agent.params["step_size"])
    agent.reset(seed=0)
    assert {"rounds", "lmo_calls", "projections"} <= set(agent.stats)
    bound = agent.regret_bound()
    assert bound is None or (np.isfinite(bound) and bound > 0)
    assert repr(agent).startswith(cls.__name__ + "(")


@pytest.mark.parametrize(
    "name, counter, per_round",
    [
        ("fkm", "projections", 1),
        ("ogd", "projections", 1),
        ("bfw", "lmo_calls", 1),
        ("ofw", "lmo_calls", 1),
        ("random", "lmo_calls", 0),
    ],
)
def test_oracle_counts(name, counter, per_round):
    agent, loss = build(name, L2Ball(3), 50)
    play_linear(agent, loss, 50, seed=1)
    assert agent.stats[counter] == per_round * 50


@pytest.mark.parametrize("name", ("fkm", "ofw", "ogd"))
def test_regret_within_the_stated_bound(name):
    """FKM (in expectation; mean of 3 seeds), OFW and OGD (for every sequence)."""
    ball, horizon = L2Ball(3), 2000
    agent, loss = build(name, ball, horizon)
    regrets = [regret(loss, play_linear(agent, loss, horizon, seed)[1]) for seed in range(3)]
    assert np.mean(regrets) <= agent.regret_bound()
    if name != "fkm":
        assert max(regrets) <= agent.regret_bound()


def test_theorem_bounds_of_fkm_ogd_ofw_follow_the_stated_formulas():
    ball, horizon = L2Ball(4), 10_000  # G = M = r = R = 1, d = 4
    fkm, _ = build("fkm", ball, horizon)
    c = np.sqrt(4 / 4)  # sqrt(RdM / ((3 + R/r) G))
    assert fkm.params["c"] == pytest.approx(c)
    assert fkm.params["smoothing_radius"] == pytest.approx(c * horizon**-0.25)
    assert fkm.regret_bound() == pytest.approx(2 * np.sqrt(4 * 4) * horizon**0.75)
    ogd, _ = build("ogd", ball, horizon)
    assert ogd.params["step_size"] == pytest.approx(1 / 100)
    assert ogd.regret_bound() == pytest.approx(100.0)  # R G sqrt(T)
    ofw, _ = build("ofw", ball, horizon)
    assert ofw.regret_bound() == pytest.approx(16 * horizon**0.75)
    assert build("ofw", ball, horizon, c=2.0)[0].regret_bound() is None
    bfw, _ = build("bfw", ball, horizon)
    assert bfw.params["smoothing_radius"] == pytest.approx(2 * c * horizon**-0.2)
    assert bfw.regret_bound() is None


# -- refusals ---------------------------------------------------------------------------------
def _ball_problem(horizon=5, feedback="bandit"):
    loss = LinearLoss(L2Ball(3))
    return Problem(L2Ball(3), horizon, loss.lipschitz, loss.bound, feedback)


def test_unknown_name_and_keyword():
    with pytest.raises(ValueError, match="unknown agent 'ppo'; valid names: bbcg, fkm, bfw, ofw"):
        make_agent("ppo", _ball_problem())
    with pytest.raises(ValueError, match=r"unknown keyword\(s\) delta; allowed: c, step_size"):
        make_agent("fkm", _ball_problem(), delta=0.1)
    with pytest.raises(ValueError, match=r"unknown keyword\(s\) c; allowed: law, block_size"):
        make_agent("random", _ball_problem(), c=1.0)


DEGENERATE = "ignore:.*reaches the inner radius:UserWarning"  # tiny horizons: delta = r


@pytest.mark.filterwarnings(DEGENERATE)
def test_problem_from_an_env_or_nothing():
    problem = _ball_problem()

    class Inner:
        pass

    class Wrapper:  # the shape of a Gymnasium wrapper stack: .unwrapped.problem
        unwrapped = Inner()

    Wrapper.unwrapped.problem = problem
    assert problem_of(Wrapper()) is problem
    built = make_agent("bbcg", Wrapper()).problem  # the problem, with the agent's own set
    assert built.set is not problem.set and built == dataclasses.replace(problem, set=built.set)
    with pytest.raises(TypeError, match="needs a Problem or an env"):
        make_agent("bbcg", object())


def test_full_information_agent_on_a_bandit_problem():
    for name in ("ofw", "ogd"):
        with pytest.raises(ValueError, match="full-information agent and needs feedback='full'"):
            make_agent(name, _ball_problem())
    agent = make_agent("ofw", _ball_problem(feedback="full"))
    agent.reset(seed=0)
    agent.act(None)
    with pytest.raises(ValueError, match=r"needs info\['gradient'\]"):
        agent.update(0.1, {})
    with pytest.raises(ValueError, match=r"info\['gradient'\] must be a finite array of shape"):
        agent.update(0.1, {"gradient": np.zeros(4)})


def test_projection_agent_on_a_set_without_projection():
    permutahedron = Permutahedron(4)
    problem = Problem(permutahedron, 10, 1.0, 1.0)
    with pytest.raises(ValueError, match="needs a Euclidean projection"):
        make_agent("fkm", problem)
    with pytest.raises(ValueError, match="needs a Euclidean projection"):
        make_agent("ogd", Problem(permutahedron, 10, 1.0, 1.0, "full"))


@pytest.mark.filterwarnings(DEGENERATE)
@pytest.mark.parametrize("name", BANDIT_AGENTS)
def test_protocol_misuse(name):
    agent = make_agent(name, _ball_problem(horizon=2))
    with pytest.raises(RuntimeError, match=r"call reset\(\) before act\(\)"):
        agent.act(None)
    agent.reset(seed=0)
    with pytest.raises(RuntimeError, match=r"update\(\) called before act\(\)"):
        agent.update(0.0)
    agent.act(None)
    with pytest.raises(
        RuntimeError, match=r"act\(\) called in round 0 while the previous action awaits"
    ):
        agent.act(None)
    with pytest.raises(ValueError, match="loss=nan must be finite"):
        agent.update(float("nan"))
    agent.update(0.0)
    agent.act(None)
    agent.update(0.0)
    with pytest.raises(RuntimeError, match="all 2 rounds of the horizon were played"):
        agent.act(None)


def test_block_path_refused_by_agents_without_it():
    agent = make_agent("fkm", _ball_problem())
    agent.reset(seed=0)
    with pytest.raises(NotImplementedError, match="has no block fast path"):
        agent.block_actions()


def test_invalid_scale_values():
    with pytest.raises(ValueError, match=r"c=0 must be finite and > 0"):
        make_agent("bfw", _ball_problem(), c=0)
    with pytest.raises(ValueError, match=r"step_size=inf must be finite and > 0"):
        make_agent("ogd", _ball_problem(feedback="full"), step_size=float("inf"))


def test_random_agent_block_path_is_bit_identical_to_round_by_round():
    simplex = Simplex(4)
    agent, loss = build("random", simplex, 50, block_size=8)
    per_round, _ = play_linear(agent, loss, 50, seed=3)
    blocked, _ = play_linear(agent, loss, 50, seed=3, blocks=True)
    np.testing.assert_array_equal(per_round, blocked)
    agent.reset(seed=0)
    assert len(agent.block_actions()) == 8  # blocks of block_size from round 0
    agent.update_block(np.zeros(8))
    agent.act(None)
    agent.update(0.0)
    assert len(agent.block_actions()) == 7  # the rest of the second block
