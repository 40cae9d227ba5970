"""The random agent: per-row chunks from ``sample_many``, identical on every path.

(tests/agents/test_agents_batched.py checks rows = single agents and blocks = rounds on
short episodes; here: the chunk boundaries across blocks and slices, mixed act and
block_actions, the documented stream, a user-defined set, and run_many = run.)
"""

from __future__ import annotations

import numpy as np
import pytest
from agent_helpers import Permutahedron, build

from bco_gym.agents import make_agent
from bco_gym.agents.random import agent as random_module
from bco_gym.experiment import run, run_many
from bco_gym.sets import BirkhoffPolytope, L2Ball, Simplex
from bco_gym.sets.mixtures import vertex_mixture


def _agent(convex_set, horizon, batch_size=None, **overrides):
    agent, _ = build("random", convex_set, horizon, **overrides)
    if batch_size is None:
        return agent
    return make_agent("random", agent.problem, batch_size=batch_size, **overrides)


def _plays(agent, horizon, pattern):
    """Play ``horizon`` rounds; pattern(t) says whether round t starts with block_actions."""
    plays, t = [], 0
    batched = agent.batch_size is not None
    while t < horizon:
        if pattern(t):
            block = agent.block_actions()
            k = block.shape[1] if batched else block.shape[0]
            agent.update_block(np.zeros((agent.rows, k) if batched else k))
            plays.extend(np.array(block, copy=True).swapaxes(0, 1) if batched else block)
            t += k
        else:
            plays.append(np.array(agent.act(None), copy=True))
            agent.update(np.zeros(agent.rows) if batched else 0.0)
            t += 1
    return np.array(plays)


PATTERNS = {
    "rounds": lambda t: False,
    "blocks": lambda t: True,
    "mixed": lambda t: t % 7 in (3, 4),  # act mid-slice, then block_actions for the rest
}


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_every_path_plays_the_sample_many_chunks_of_each_row(pattern, monkeypatch):
    """Chunks: one sample_many per row and slice; a block of 10 cut into slices of 4."""
    monkeypatch.setattr(random_module, "slice_rounds", lambda dimension: 4)
    convex_set, horizon, seeds = Simplex(4), 33, [4, 9]
    agent = _agent(convex_set, horizon, batch_size=2, block_size=10)
    agent.reset(seed=seeds)
    plays = _plays(agent, horizon, PATTERNS[pattern])
    # slices [0,4) [4,8) [8,10) [10,14) ... [30,33): each row's stream, chunk by chunk
    lengths = [4, 4, 2] * 3 + [3]
    for row, seed in enumerate(seeds):
        rng = np.random.default_rng(seed)
        expected = np.concatenate([convex_set.sample_many(rng, k) for k in lengths])
        np.testing.assert_array_equal(plays[:, row], expected)
    single = _agent(convex_set, horizon, block_size=10)
    single.reset(seed=seeds[1])
    np.testing.assert_array_equal(_plays(single, horizon, PATTERNS[pattern]), plays[:, 1])


def test_calls_to_the_set_are_one_per_row_and_slice(monkeypatch):
    convex_set = L2Ball(3)
    calls = []
    original = convex_set.sample_many
    monkeypatch.setattr(
        convex_set, "sample_many", lambda rng, count: calls.append(count) or original(rng, count)
    )
    monkeypatch.setattr(convex_set, "sample", lambda rng: pytest.fail("sample called per round"))
    agent = _agent(convex_set, 50, batch_size=3, block_size=20)
    agent.reset(seed=0)
    _plays(agent, 50, PATTERNS["rounds"])
    assert calls == [20] * 3 + [20] * 3 + [10] * 3


def test_reset_starts_the_stream_again():
    agent = _agent(Simplex(3), 30, block_size=8)
    agent.reset(seed=5)
    first = _plays(agent, 5, PATTERNS["rounds"])  # part of a chunk left over
    agent.reset(seed=5)
    np.testing.assert_array_equal(_plays(agent, 30, PATTERNS["mixed"])[:5], first)


def test_user_defined_set_uses_the_default_loop():
    convex_set = Permutahedron(4)
    agent = _agent(convex_set, 12, block_size=5)
    agent.reset(seed=3)
    plays = _plays(agent, 12, PATTERNS["mixed"])
    rng = np.random.default_rng(3)
    np.testing.assert_array_equal(plays, [convex_set.sample(rng) for _ in range(12)])
    assert all(convex_set.contains(play) for play in plays)


@pytest.mark.parametrize("env_id", ["BCO-Ball-v0", "BCO-Simplex-v0"])
def test_run_many_matches_run_across_blocks(env_id):
    seeds, horizon = [2, 11, 2], 1300  # past the default block of 1024
    batch = run_many(env_id, "random", seeds, horizon=horizon, env_kwargs={"n": 10})
    for seed, result in zip(seeds, batch, strict=True):
        assert result.same_outcome(
            run(env_id, "random", seed=seed, horizon=horizon, env_kwargs={"n": 10})
        )
    assert batch[0].same_outcome(batch[2]) and not batch[0].same_outcome(batch[1])


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_vertex_mixture_law_plays_the_mixture_chunks_of_each_row(pattern, monkeypatch):
    """law="vertex-mixture": the same chunking, each chunk vertex_mixture's draw."""
    monkeypatch.setattr(random_module, "slice_rounds", lambda dimension: 4)
    convex_set, horizon, seeds = BirkhoffPolytope(3), 21, [4, 9]
    agent = _agent(convex_set, horizon, batch_size=2, block_size=10, law="vertex-mixture")
    agent.reset(seed=seeds)
    plays = _plays(agent, horizon, PATTERNS[pattern])
    lengths = [4, 4, 2, 4, 4, 2, 1]
    for row, seed in enumerate(seeds):
        rng = np.random.default_rng(seed)
        expected = np.concatenate([vertex_mixture(convex_set, rng, k) for k in lengths])
        np.testing.assert_array_equal(plays[:, row], expected)
    assert convex_set.violation_many(plays.reshape(-1, 3, 3)) is None


def test_the_default_law_is_the_sets_and_a_bad_law_is_refused():
    agent = _agent(Simplex(3), 10)
    assert agent.params["law"] == "set"
    with pytest.raises(ValueError, match=r"law='uniform'; allowed: 'set', 'vertex-mixture'"):
        _agent(Simplex(3), 10, law="uniform")


def test_vertex_mixture_run_many_matches_run():
    kwargs = {"horizon": 300, "env_kwargs": {"grid": 4}, "agent_kwargs": {"law": "vertex-mixture"}}
    batch = run_many("BCO-ShortestPath-v0", "random", [3, 5], **kwargs)
    for seed, result in zip([3, 5], batch, strict=True):
        assert result.same_outcome(run("BCO-ShortestPath-v0", "random", seed=seed, **kwargs))
