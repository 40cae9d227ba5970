"""saha-tewari's compiled FTRL solve (bco_gym/agents/saha_tewari/kernel.py): NumPy's bits.

Every play, Newton step count and counter of the compiled solve is the NumPy solve's, on
every set with a barrier, at the rounding floor (stalled and capped solves), batched
(run_many) against single runs, and in the Gymnasium loop. About 20 s the first time on a
machine (numba compiles the kernel, then loads it from its cache).
"""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("numba")

from bco_gym.agents import make_agent
from bco_gym.agents.kernels import AGENT_MIN_RUN_ROUNDS, SWITCH
from bco_gym.experiment import run, run_many
from bco_gym.problem import Problem
from bco_gym.sets import BirkhoffPolytope, FlowPolytope, Hypercube, L2Ball, Simplex
from bco_gym.wrappers import RegretRecorder

SETS = [
    L2Ball(3, radius=2.0),
    L2Ball(10),
    Hypercube(low=[-1.0, 0.0, 0.0], high=[1.0, 0.2, 3.0]),
    Simplex(5),
    Simplex(10),
    BirkhoffPolytope(3),
    FlowPolytope.grid(3, 3),
]


def problem_for(convex_set, horizon):
    """Quadratic losses ||x - z||^2/2 towards a target 5 outer radii from the centre."""
    rng = np.random.default_rng(7)
    center = convex_set.center.reshape(-1)
    step = convex_set.tangent(rng.standard_normal(convex_set.shape)).reshape(-1)
    target = center + 5 * convex_set.outer_radius * step / np.linalg.norm(step)
    reach = 6 * convex_set.outer_radius
    return Problem(convex_set, horizon, reach, reach**2 / 2, "bandit"), target


def play(monkeypatch, mode, problem, target, **options):
    """Plays (T, n) and stats of saha-tewari with the kernels switched ``mode``, against
    a target that switches sides every 40 rounds (damped and full Newton steps)."""
    monkeypatch.setenv(SWITCH, mode)
    agent = make_agent("saha-tewari", problem, **options)
    agent.reset(seed=5)
    assert (agent._kernel is not None) == (mode == "on")
    center = problem.set.center.reshape(-1)
    plays = []
    for t in range(problem.horizon):
        z = target if (t // 40) % 2 == 0 else 2 * center - target
        y = agent.act(None).reshape(-1)
        plays.append(y)
        agent.update(0.5 * float(np.add.reduce((y - z) * (y - z))) + 0.01 * t)
    return np.array(plays), agent.stats


@pytest.mark.parametrize("convex_set", SETS, ids=repr)
def test_the_compiled_solve_gives_the_numpy_solves_bits(monkeypatch, convex_set):
    problem, target = problem_for(convex_set, 160)
    compiled, compiled_stats = play(monkeypatch, "on", problem, target)
    numpy_plays, numpy_stats = play(monkeypatch, "off", problem, target)
    assert compiled.tobytes() == numpy_plays.tobytes()
    assert compiled_stats == numpy_stats
    assert numpy_stats["newton_steps"] >= problem.horizon
    assert all(convex_set.contains(y.reshape(convex_set.shape)) for y in compiled)


@pytest.mark.parametrize("convex_set", [Simplex(60), L2Ball(150)], ids=repr)
def test_large_sets_give_the_same_bits(monkeypatch, convex_set):
    """Simplex(60): at its centre all singular values of M are equal and the singular
    vectors are decided by rounding (numba's own SVD, SciPy's LAPACK, returned other
    ones: the reason the SVD stays NumPy's). L2Ball(150): sums of more than 128 terms
    (pairwise halves) and A_t's products taken in slices."""
    problem, target = problem_for(convex_set, 12)
    compiled, compiled_stats = play(monkeypatch, "on", problem, target)
    numpy_plays, numpy_stats = play(monkeypatch, "off", problem, target)
    assert compiled.tobytes() == numpy_plays.tobytes()
    assert compiled_stats == numpy_stats


@pytest.mark.parametrize("convex_set", [Simplex(4), Hypercube(n=3), L2Ball(4)], ids=repr)
def test_the_counts_agree_at_the_rounding_floor(monkeypatch, convex_set):
    """A step size 30 times the theorem's: solves stall at the rounding floor or stop at
    the cap, and step halvings at the boundary happen; the same on both sides."""
    problem, target = problem_for(convex_set, 200)
    default = make_agent("saha-tewari", problem).params["step_size"]
    options = {"step_size": 30 * default, "max_newton_steps": 10}
    compiled, compiled_stats = play(monkeypatch, "on", problem, target, **options)
    numpy_plays, numpy_stats = play(monkeypatch, "off", problem, target, **options)
    assert compiled.tobytes() == numpy_plays.tobytes()
    assert compiled_stats == numpy_stats
    assert numpy_stats["newton_stalled"] + numpy_stats["newton_unconverged"] > 0


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [("BCO-Ball-v0", {"n": 4, "loss": "quadratic"}), ("BCO-Birkhoff-v0", {"n": 3})],
)
def test_batched_compiled_runs_equal_single_numpy_runs(monkeypatch, env_id, kwargs):
    seeds = [0, 1]
    monkeypatch.setenv(SWITCH, "on")
    many = run_many(env_id, "saha-tewari", seeds, horizon=150, env_kwargs=kwargs)
    monkeypatch.setenv(SWITCH, "off")
    for seed, result in zip(seeds, many, strict=True):
        single = run(env_id, "saha-tewari", horizon=150, seed=seed, env_kwargs=kwargs)
        assert result.same_outcome(single)


def test_the_gymnasium_loop_gives_the_same_losses(monkeypatch):
    def episode(mode):
        monkeypatch.setenv(SWITCH, mode)
        env = RegretRecorder(gym.make("BCO-Simplex-v0", horizon=120, n=6, loss="quadratic"))
        agent = make_agent("saha-tewari", env)
        observation, _ = env.reset(seed=3)
        agent.reset(seed=4)
        losses, done = [], False
        while not done:
            observation, _, terminated, truncated, info = env.step(agent.act(observation))
            agent.update(info["loss"], info)
            losses.append(info["loss"])
            done = terminated or truncated
        env.close()
        return np.array(losses), info["regret"], agent.stats

    compiled, numpy_run = episode("on"), episode("off")
    assert compiled[0].tobytes() == numpy_run[0].tobytes()
    assert compiled[1] == numpy_run[1] and compiled[2] == numpy_run[2]


def test_the_switch_decides_where_the_solve_runs(monkeypatch):
    problem = Problem(Simplex(3), 100, 1.0, 1.0, "bandit")
    long = Problem(Simplex(3), AGENT_MIN_RUN_ROUNDS, 1.0, 1.0, "bandit")
    for mode, horizon_problem, expected in [
        ("off", long, False),
        ("auto", problem, False),
        ("auto", long, True),
        ("on", problem, True),
    ]:
        monkeypatch.setenv(SWITCH, mode)
        agent = make_agent("saha-tewari", horizon_problem)
        agent.reset(seed=0)
        assert (agent._kernel is not None) is expected, mode
    monkeypatch.setenv(SWITCH, "fastest")
    with pytest.raises(ValueError, match="BCO_GYM_KERNELS='fastest' is not allowed"):
        make_agent("saha-tewari", problem).reset(seed=0)


def test_an_agent_using_the_kernel_pickles_mid_run(monkeypatch):
    monkeypatch.setenv(SWITCH, "on")
    problem, _ = problem_for(Simplex(4), 40)
    agent = make_agent("saha-tewari", problem)
    agent.reset(seed=2)
    for t in range(20):
        agent.update(float(np.sum(agent.act(None) ** 2)) + t)
    clone = pickle.loads(pickle.dumps(agent))
    for t in range(20, 40):
        plays = agent.act(None), clone.act(None)
        assert plays[0].tobytes() == plays[1].tobytes()
        agent.update(float(np.sum(plays[0] ** 2)) + t)
        clone.update(float(np.sum(plays[1] ** 2)) + t)
    assert clone.stats == agent.stats
