"""Batched agents: row i of a batch is bit for bit the single agent reset with seed s_i.

Every built-in agent on the ball, the simplex and two structured polytopes (Birkhoff,
a flow polytope), for bandit and full-information feedback: actions of every round,
final stats and internal iterates compared with ``np.array_equal``; the block path
batched against the per-round batched path and the single agent; the memory slices
of a block; make_agent's batch handling and refusals.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from agent_helpers import ALL_AGENTS, build

from bco_gym.agents import AGENTS, batch, make_agent
from bco_gym.losses import LinearLoss
from bco_gym.problem import Problem
from bco_gym.sets import BirkhoffPolytope, FlowPolytope, L2Ball, NuclearNormBall, Simplex

SETS = {
    "ball": L2Ball(3),
    "simplex": Simplex(4),
    "birkhoff": BirkhoffPolytope(3),
    "flow": FlowPolytope.grid(2, 3),
}
SEEDS = [5, 17, 2]
HORIZON = 42
MOVING = {  # parameters whose iterates move within a short episode
    "bbcg": {"step_size": 0.3, "tolerance": 1e-2, "block_size": 7},
    "fkm": {"step_size": 1.0},
    "bfw": {"step_size": 1.0},
    "ofw": {"step_size": 1.0},
    "ogd": {"step_size": 1.0},
    "random": {"block_size": 9},
}


def _agent(name, convex_set, batch_size=None, horizon=HORIZON, **extra):
    overrides = {**MOVING[name], **extra}
    if name in ("bbcg", "fkm", "bfw"):
        overrides["smoothing_radius"] = convex_set.inner_radius / 2
    agent, _ = build(name, convex_set, horizon, **overrides)
    if batch_size is None:
        return agent
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return make_agent(name, agent.problem, batch_size=batch_size, **overrides)


def _losses(convex_set, seeds):
    """One linear loss sequence per row (row i's adversary seeded with seed_i + 1000)."""
    sequences = []
    for seed in seeds:
        loss = LinearLoss(convex_set)
        loss.reset(np.random.default_rng(seed + 1000))
        sequences.append(loss)
    return sequences


def _iterate(agent):
    """The agent's internal iterates x_t (S, *shape); the random agent has none."""
    return np.array(getattr(agent, "_points", np.zeros((agent.rows, 0))), copy=True)


def _play_batched(agent, sequences, horizon, blocks=False):
    """Play S rows; returns the actions (T, S, *shape) and the iterates after each update."""
    actions, iterates, t = [], [], 0
    while t < horizon:
        if blocks and agent.supports_blocks:
            plays = agent.block_actions()  # (S, k, *shape)
            values = np.array([s.losses(t, p) for s, p in zip(sequences, plays, strict=True)])
            agent.update_block(values)
            actions.extend(np.array(plays, copy=True).swapaxes(0, 1))
            t += plays.shape[1]
        else:
            plays = agent.act(None)
            values = np.array([s.loss(t, p) for s, p in zip(sequences, plays, strict=True)])
            info = None
            if agent.feedback == "full":
                pairs = zip(sequences, plays, strict=True)
                info = {"gradient": np.array([s.gradient(t, p) for s, p in pairs])}
            agent.update(values, info)
            actions.append(np.array(plays, copy=True))
            t += 1
        iterates.append(_iterate(agent))
    return np.array(actions), iterates


def _play_single(agent, sequence, horizon):
    actions, iterates = [], []
    for t in range(horizon):
        play = agent.act(None)
        info = {"gradient": sequence.gradient(t, play)} if agent.feedback == "full" else None
        agent.update(sequence.loss(t, play), info)
        actions.append(np.array(play, copy=True))
        iterates.append(_iterate(agent)[0])
    return np.array(actions), iterates


# Every agent on every set, except the projection-based ones on the flow polytope (its
# projection is a QP, slow; Birkhoff covers them on a structured set).
CASES = [
    (name, set_name)
    for name in ALL_AGENTS
    for set_name in SETS
    if not (set_name == "flow" and name in ("fkm", "ogd"))
]


@pytest.mark.parametrize(("name", "set_name"), CASES)
def test_every_row_is_the_single_agent_with_its_seed(name, set_name):
    convex_set = SETS[set_name]
    batched = _agent(name, convex_set, batch_size=len(SEEDS))
    batched.reset(seed=SEEDS)
    actions, iterates = _play_batched(batched, _losses(convex_set, SEEDS), HORIZON)
    assert actions.shape == (HORIZON, len(SEEDS), *convex_set.shape)
    stats = batched.stats
    assert stats["rounds"] == HORIZON
    for key in ("lmo_calls", "projections"):
        assert stats[key].dtype == np.int64 and stats[key].shape == (len(SEEDS),)
    for row, (seed, sequence) in enumerate(zip(SEEDS, _losses(convex_set, SEEDS), strict=True)):
        single = _agent(name, convex_set)
        single.reset(seed=seed)
        single_actions, single_iterates = _play_single(single, sequence, HORIZON)
        np.testing.assert_array_equal(actions[:, row], single_actions)
        for batch_iterate, single_iterate in zip(iterates, single_iterates, strict=True):
            np.testing.assert_array_equal(batch_iterate[row], single_iterate)
        assert batched.row_stats(row) == single.stats
        assert all(type(single.stats[k]) is int for k in ("rounds", "lmo_calls", "projections"))
    if name != "random":  # the rows learned: their iterates left the centre
        assert not np.allclose(iterates[-1], convex_set.center)
        assert name != "bbcg" or stats["lmo_calls"].min() > len(stats["lmo_calls_per_block"][0])


@pytest.mark.parametrize("set_name", ["ball", "simplex", "birkhoff"])
@pytest.mark.parametrize("name", ["bbcg", "random"])
def test_block_path_batched_equals_rounds_batched_equals_single(name, set_name):
    convex_set = SETS[set_name]
    outcomes = []
    for blocks in (False, True):
        agent = _agent(name, convex_set, batch_size=3)
        agent.reset(seed=21)  # an int s seeds the rows s, s+1, s+2
        actions, _ = _play_batched(agent, _losses(convex_set, [21, 22, 23]), HORIZON, blocks)
        outcomes.append((actions, agent.stats, _iterate(agent)))
    (rounds, stats_rounds, x_rounds), (blocks, stats_blocks, x_blocks) = outcomes
    np.testing.assert_array_equal(rounds, blocks)
    np.testing.assert_array_equal(x_rounds, x_blocks)
    assert stats_rounds.keys() == stats_blocks.keys()
    for key in stats_rounds:
        np.testing.assert_array_equal(stats_rounds[key], stats_blocks[key])
    single = _agent(name, convex_set)
    single.reset(seed=22)
    single_actions, _ = _play_single(single, _losses(convex_set, [22])[0], HORIZON)
    np.testing.assert_array_equal(blocks[:, 1], single_actions)


def test_batched_block_anchor_and_shapes():
    ball = SETS["ball"]
    agent = _agent("bbcg", ball, batch_size=2)
    agent.reset(seed=[3, 4])
    assert agent.block_anchor() is None
    plays = agent.block_actions()
    assert plays.shape == (2, 7, 3)
    anchors, delta = agent.block_anchor()
    assert anchors.shape == (2, 3) and delta == agent.params["smoothing_radius"]
    np.testing.assert_allclose(np.linalg.norm(plays - anchors[:, None], axis=-1), delta)
    with pytest.raises(ValueError, match=r"expected shape \(2, 7\)"):
        agent.update_block(np.zeros(7))
    agent.update_block(np.zeros((2, 7)))
    assert agent.stats["lmo_calls_per_block"].shape == (2, 1)
    assert np.isnan(agent.stats["cg_gap"]).all() and agent.row_stats(1)["cg_gap"] is None


@pytest.mark.parametrize("name", ["bbcg", "random"])
def test_slices_of_a_block_agree_with_whole_blocks(name, monkeypatch):
    """A tiny memory budget (slices of 2 plays) against the default (whole blocks).

    Plays are drawn in the same order, so they agree exactly until the estimates'
    sums (grouped by slice) first feed an iterate; after that to rounding (1e-12).
    """
    convex_set = SETS["simplex"]
    runs = []
    for budget in (None, 2 * convex_set.dim):
        if budget is not None:
            monkeypatch.setattr(batch, "BLOCK_BUDGET_FLOATS", budget)
        agent = _agent(name, convex_set, batch_size=2)
        agent.reset(seed=[8, 9])
        actions, _ = _play_batched(agent, _losses(convex_set, [8, 9]), HORIZON, blocks=True)
        runs.append((actions, agent.stats))
        lengths = []
        agent.reset(seed=[8, 9])
        while agent.stats["rounds"] < HORIZON:
            lengths.append(agent.block_actions().shape[1])
            agent.update_block(np.zeros((2, lengths[-1])))
        assert max(lengths) == (2 if budget else 9 if name == "random" else 7)
    (whole, whole_stats), (sliced, sliced_stats) = runs
    np.testing.assert_array_equal(whole[:14], sliced[:14])  # blocks 1-2 play around c
    np.testing.assert_allclose(whole, sliced, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(whole_stats["lmo_calls"], sliced_stats["lmo_calls"])


def test_slice_length_is_bounded_by_the_budget():
    assert batch.slice_rounds(10) == batch.BLOCK_BUDGET_FLOATS // 10
    assert batch.slice_rounds(10 * batch.BLOCK_BUDGET_FLOATS) == 1
    big = L2Ball(300_000)
    problem = Problem(big, 10_000, 1.0, 1.0)
    assert make_agent("random", problem).params["block_size"] == batch.slice_rounds(300_000)


def test_background_routine_is_bit_identical_batched():
    ball = SETS["ball"]
    outcomes = []
    for background in (False, True):
        agent = _agent("bbcg", ball, batch_size=3, background=background)
        agent.reset(seed=[1, 2, 3])
        actions, _ = _play_batched(agent, _losses(ball, [1, 2, 3]), HORIZON, blocks=True)
        outcomes.append((actions, agent.stats["lmo_calls"]))
        agent.close()
    np.testing.assert_array_equal(outcomes[0][0], outcomes[1][0])
    np.testing.assert_array_equal(outcomes[0][1], outcomes[1][1])


# -- make_agent and the batched API's refusals -------------------------------------------
class _VectorEnv:
    """The shape of a vector env: num_envs and a problem."""

    def __init__(self, problem, num_envs):
        self.problem, self.num_envs = problem, num_envs


def _problem(feedback="bandit"):
    loss = LinearLoss(L2Ball(3))
    return Problem(L2Ball(3), 100, loss.lipschitz, loss.bound, feedback)


def test_make_agent_batches_for_a_vector_env_or_a_batch_size():
    agent = make_agent("fkm", _VectorEnv(_problem(), 5))
    assert agent.batch_size == 5
    assert make_agent("fkm", _problem(), batch_size=2).batch_size == 2
    assert make_agent("fkm", _problem()).batch_size is None
    agent.reset(seed=None)  # fresh entropy per row
    plays = agent.act(None)
    assert plays.shape == (5, 3) and len({p.tobytes() for p in plays}) == 5
    with pytest.raises(ValueError, match=r"batch_size=3 but the vector env has num_envs=5"):
        make_agent("fkm", _VectorEnv(_problem(), 5), batch_size=3)
    for bad in (0, 2.0, "2", True):
        with pytest.raises(ValueError, match=rf"batch_size={bad!r} must be None or an integer"):
            make_agent("fkm", _problem(), batch_size=bad)
    sb3 = next(name for name in AGENTS if name.startswith("sb3-"))
    with pytest.raises(ValueError, match="has no batched form"):
        make_agent(sb3, _problem(), batch_size=2)


def test_batched_protocol_refusals():
    agent = make_agent("ofw", _problem("full"), batch_size=2)
    with pytest.raises(ValueError, match=r"reset\(seed=\[1\]\); allowed: None, an int >= 0"):
        agent.reset(seed=[1])
    agent.reset(seed=[1, 2])
    agent.act(None)
    with pytest.raises(ValueError, match=r"losses of shape \(3,\), expected \(2,\)"):
        agent.update(np.zeros(3), {"gradient": np.zeros((2, 3))})
    with pytest.raises(ValueError, match=r"losses\[1\]=nan must be finite"):
        agent.update(np.array([0.0, np.nan]), {"gradient": np.zeros((2, 3))})
    with pytest.raises(ValueError, match=r"info\['gradient'\] must be a finite array of shape"):
        agent.update(np.zeros(2), {"gradient": np.zeros(3)})
    agent.update(np.zeros(2), {"gradient": np.zeros((2, 3))})
    with pytest.raises(IndexError, match=r"row=2 out of range; allowed: 0..1"):
        agent.row_stats(2)
    single = make_agent("fkm", _problem())
    with pytest.raises(ValueError, match=r"reset\(seed='1'\); allowed: None or an int >= 0"):
        single.reset(seed="1")


@pytest.mark.parametrize(
    "name, key, value, allowed",
    [
        ("bbcg", "background", "no", "must be True or False"),
        ("bbcg", "background", 1, "must be True or False"),
        ("bbcg", "block_size", 7.0, "must be an integer in"),
        ("bbcg", "block_size", "7", "must be an integer in"),
        ("random", "block_size", 4.0, "must be an integer in"),
        ("bbcg", "c", "1", "must be a number"),
        ("bbcg", "tolerance", True, "must be a number"),
        ("fkm", "step_size", "0.1", "must be a number"),
        ("bfw", "smoothing_radius", "0.1", "must be a number"),
        ("ogd", "c", None, None),
    ],
)
def test_wrong_typed_options_are_refused_not_coerced(name, key, value, allowed):
    problem = _problem("full" if AGENTS[name].feedback == "full" else "bandit")
    if allowed is None:  # None means "the default": accepted
        make_agent(name, problem, **{key: value})
        return
    with pytest.raises(ValueError, match=rf"{key}={value!r} {allowed}"):
        make_agent(name, problem, **{key: value})


@pytest.mark.parametrize("name", ALL_AGENTS)
def test_nuclear_ball_rows_agree_with_the_single_agent_to_rounding(name):
    """The documented exception: the nuclear-norm ball's LMO is warm-started from the
    set's previous answer (Lanczos), so the LMO-based agents' rows agree with the single
    agent to rounding, not bit for bit; the projection-based ones stay exact."""
    ball = NuclearNormBall(4, 3)
    batched = _agent(name, ball, batch_size=len(SEEDS), horizon=21)
    batched.reset(seed=SEEDS)
    actions, _ = _play_batched(batched, _losses(ball, SEEDS), 21)
    for row, (seed, sequence) in enumerate(zip(SEEDS, _losses(ball, SEEDS), strict=True)):
        single = _agent(name, ball, horizon=21)
        single.reset(seed=seed)
        single_actions, _ = _play_single(single, sequence, 21)
        if name in ("fkm", "ogd", "random"):
            np.testing.assert_array_equal(actions[:, row], single_actions)
        else:
            np.testing.assert_allclose(actions[:, row], single_actions, rtol=0, atol=1e-12)
