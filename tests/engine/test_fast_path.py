"""The runner's fast loops reproduce the Gymnasium loop: same plays, losses and regret.

* "block" (agents with ``supports_blocks``: bbcg, random): whole blocks of plays, a
  vectorised feasibility check, batched losses;
* "lean" (every other agent): the env's own step without the wrappers;

against "gym", the DESIGN.md loop through the RegretRecorder (``fast=False``). Plays are
recorded from the agent itself and compared bit for bit; losses and regret to 1e-12
relative. Also: the exact streaming sums used above ``ROUND_LOSSES_LIMIT``, the loop
selection rules, the block feasibility check (exact and by anchor certificate) and
``violation_many`` against ``violation`` point by point, for every built-in set.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import bco_gym  # noqa: F401  (registers the ids)
from bco_gym import InfeasibleActionError
from bco_gym.agents import make_agent
from bco_gym.agents.base import Agent
from bco_gym.cli import main as cli_main
from bco_gym.engine import tally as tally_module
from bco_gym.engine.runner import run
from bco_gym.engine.tally import ExactSum as _ExactSum
from bco_gym.engine.tally import LossTally as _LossTally
from bco_gym.sets import (
    BirkhoffPolytope,
    FlowPolytope,
    Hypercube,
    L1Ball,
    L2Ball,
    NuclearNormBall,
    Simplex,
)
from bco_gym.sets.base import ConvexSet
from bco_gym.wrappers.regret import exact_sum

HORIZON = 150
BLOCK_CASES = {
    "BCO-Simplex-v0": {"n": 4},
    "BCO-Ball-v0": {"n": 3},
    "BCO-NuclearBall-v0": {"rows": 4, "cols": 3},
    "BCO-ShortestPath-v0": {"grid": 3},
    "BCO-Birkhoff-v0": {"n": 3},
}


def record_plays(agent: Agent) -> list[np.ndarray]:
    """Copies of every point the agent plays, through act or block_actions."""
    plays: list[np.ndarray] = []
    act, block_actions = agent.act, agent.block_actions

    def recorded_act(observation=None):
        action = act(observation)
        plays.append(np.array(action, copy=True))
        return action

    def recorded_block_actions():
        actions = block_actions()
        plays.extend(np.array(actions, copy=True))
        return actions

    agent.act = recorded_act
    agent.block_actions = recorded_block_actions
    return plays


def moving_overrides(name: str, env: gym.Env) -> dict:
    """Parameters whose iterates leave the centre within a short episode (delta = r/2)."""
    if name == "random":
        return {}
    overrides = {"step_size": 1.0}
    if name in ("bbcg", "fkm", "bfw"):
        overrides["smoothing_radius"] = env.unwrapped.set.inner_radius / 2
    if name == "bbcg":
        overrides["tolerance"] = 1e-6
    return overrides


def played(env_id, name, size, fast, seed=4, horizon=HORIZON, env_kwargs=None):
    """(result, plays) of one run of agent ``name`` with the given loop choice."""
    env = gym.make(env_id, horizon=horizon, **size, **(env_kwargs or {}))
    agent = make_agent(name, env, **moving_overrides(name, env))
    plays = record_plays(agent)
    return run(env, agent, seed=seed, fast=fast), np.array(plays)


def assert_same_outcome(fast, slow, fast_plays, slow_plays):
    np.testing.assert_array_equal(fast_plays, slow_plays)  # identical actions
    assert len(fast_plays) == fast.horizon
    np.testing.assert_allclose(fast.round_losses, slow.round_losses, rtol=1e-12, atol=0)
    np.testing.assert_allclose(fast.cumulative_loss, slow.cumulative_loss, rtol=1e-12, atol=0)
    np.testing.assert_allclose(fast.regret, slow.regret, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(fast.comparator_loss, slow.comparator_loss)
    assert fast.lmo_calls == slow.lmo_calls and fast.projections == slow.projections
    # BBCG's last routine runs after the last play (its output is never played). On the
    # nuclear-norm ball its LMO is warm-started from the set's previous answer, and in
    # the Gymnasium loop the recorder's end-of-episode comparator calls that LMO first:
    # the last certified gap may differ in its last digits, nothing else.
    fast_stats, slow_stats = dict(fast.stats), dict(slow.stats)
    gaps = fast_stats.pop("cg_gap", None), slow_stats.pop("cg_gap", None)
    assert fast_stats == slow_stats
    assert gaps[0] == gaps[1] or gaps[0] == pytest.approx(gaps[1], rel=1e-6)


@pytest.mark.parametrize("env_id", BLOCK_CASES)
@pytest.mark.parametrize("name", ["bbcg", "random"])
def test_block_loop_reproduces_the_gym_loop(env_id, name):
    slow, slow_plays = played(env_id, name, BLOCK_CASES[env_id], fast=False)
    fast, fast_plays = played(env_id, name, BLOCK_CASES[env_id], fast=None)
    assert (slow.loop, fast.loop) == ("gym", "block")
    assert_same_outcome(fast, slow, fast_plays, slow_plays)
    convex_set = gym.make(env_id, **BLOCK_CASES[env_id]).unwrapped.set
    assert all(convex_set.contains(play, atol=1e-9) for play in fast_plays)
    if name == "bbcg":  # the iterates moved (exploration alone reaches r/2 from c)
        offsets = (fast_plays - convex_set.center).reshape(len(fast_plays), -1)
        assert np.linalg.norm(offsets, axis=1).max() > 0.6 * convex_set.inner_radius


@pytest.mark.parametrize(
    ("env_id", "name", "feedback"),
    [
        ("BCO-Simplex-v0", "fkm", "bandit"),
        ("BCO-Ball-v0", "bfw", "bandit"),
        ("BCO-Ball-v0", "ofw", "full"),
        ("BCO-Ball-v0", "fkm2", "two-point"),
    ],
)
def test_lean_loop_reproduces_the_gym_loop(env_id, name, feedback):
    size = BLOCK_CASES[env_id]
    extra = {"feedback": feedback}
    slow, slow_plays = played(env_id, name, size, fast=False, env_kwargs=extra)
    fast, fast_plays = played(env_id, name, size, fast=None, env_kwargs=extra)
    assert (slow.loop, fast.loop) == ("gym", "lean")
    assert_same_outcome(fast, slow, fast_plays, slow_plays)


@pytest.mark.parametrize("env_id", ["BCO-Simplex-v0", "BCO-Ball-v0"])
def test_block_loop_of_pairs_reproduces_the_gym_loop(monkeypatch, env_id):
    """bbcg2's blocks of pairs: on the ball the anchor certifies both halves (the block's
    losses at once), on the simplex (not full-dimensional) each round is checked as the
    lean loop checks it; both bit for bit the Gymnasium loop."""
    from bco_gym.engine import loops

    size, extra = BLOCK_CASES[env_id], {"feedback": "two-point"}
    slow, slow_plays = played(env_id, "bbcg2", size, fast=False, env_kwargs=extra)
    rounds_checked = []
    original = loops.two_point_info
    monkeypatch.setattr(
        loops, "two_point_info", lambda *a: rounds_checked.append(1) or original(*a)
    )
    fast, fast_plays = played(env_id, "bbcg2", size, fast=None, env_kwargs=extra)
    assert len(rounds_checked) == (HORIZON if env_id == "BCO-Simplex-v0" else 0)
    assert (slow.loop, fast.loop) == ("gym", "block")
    assert_same_outcome(fast, slow, fast_plays, slow_plays)
    assert fast.same_outcome(slow)


@pytest.mark.parametrize("name", ["bbcg", "fkm"])
def test_above_the_storage_limit_the_sums_stream_exactly(monkeypatch, name):
    """With the limit at 50 rounds nothing per-round is kept, and every checkpoint sum
    is still bit-identical to the one computed from the stored losses."""
    stored, _ = played("BCO-Simplex-v0", name, {"n": 4}, fast=None, horizon=300)
    monkeypatch.setattr(tally_module, "ROUND_LOSSES_LIMIT", 50)
    streamed, _ = played("BCO-Simplex-v0", name, {"n": 4}, fast=None, horizon=300)
    reference, _ = played("BCO-Simplex-v0", name, {"n": 4}, fast=False, horizon=300)
    assert stored.round_losses is not None
    assert streamed.round_losses is None and reference.round_losses is None
    for other in (stored, reference):
        np.testing.assert_array_equal(streamed.cumulative_loss, other.cumulative_loss)
        np.testing.assert_array_equal(streamed.regret, other.regret)
    assert streamed.cumulative_loss[-1] == math.fsum(stored.round_losses.tolist())


def test_exact_sum_is_the_correctly_rounded_sum():
    """Wide exponents, cancellation and subnormals, streamed in uneven pieces."""
    rng = np.random.default_rng(3)
    batches = [
        rng.standard_normal(500) * 10.0 ** rng.integers(-300, 300, 500),
        np.array([1e16, 1.0, -1e16, 3e-300, -0.0, 0.0, 5e-324]),
        rng.standard_normal(300) * 1e-310,
        np.concatenate([np.full(200, 0.1), np.full(200, -0.1), [2.0**-60]]),
        rng.uniform(-1, 1, 1000) + 1e15,
    ]
    for values in batches:
        total = _ExactSum()
        for piece in np.array_split(rng.permutation(values), 7):
            total.add(piece)
        assert _ExactSum.rounded(total.scaled()) == math.fsum(values.tolist())
    with pytest.raises(ValueError, match="finite"):
        _ExactSum().add(np.array([1.0, np.inf, -np.inf]))


def test_streaming_tally_matches_stored_segment_sums(monkeypatch):
    monkeypatch.setattr(tally_module, "ROUND_LOSSES_LIMIT", 10)
    rng = np.random.default_rng(5)
    values = rng.standard_normal(400) * 10.0 ** rng.integers(-8, 8, 400)
    stops = [1, 3, 50, 51, 200, 400]
    tally = _LossTally(400, stops)
    start = 0
    for size in (7, 1, 90, 2, 300):
        tally.add(values[start : start + size])
        start += size
    bounds = zip([0, *stops[:-1]], stops, strict=True)
    assert tally.segment_sums() == [exact_sum(values[a:b]) for a, b in bounds]
    assert tally.total() == exact_sum(values)
    assert tally.round_losses() is None


def test_stored_tally_sums_are_fsums_of_the_stored_losses() -> None:
    """The stored path takes its segment sums and total from one pass of exact sums: each
    is math.fsum's, with cancellation and extreme magnitudes; a loss not finite gives
    fsum's inf or nan (the exact sums refuse it, math.fsum takes over)."""
    rng = np.random.default_rng(9)
    values = rng.standard_normal(400) * 10.0 ** rng.integers(-300, 300, 400)
    values[10:14] = [1e300, 1e300, -1e300, -1e300]  # exact: 0 whatever the order
    stops = [1, 3, 50, 51, 200, 400]
    tally = _LossTally(400, stops)
    tally.add(values[:123])
    tally.add(values[123:])
    bounds = list(zip([0, *stops[:-1]], stops, strict=True))
    assert tally.segment_sums() == [math.fsum(values[a:b].tolist()) for a, b in bounds]
    assert tally.total() == math.fsum(values.tolist())
    for bad, expected in ((np.inf, math.inf), (np.nan, None)):
        spoiled = values.copy()
        spoiled[60] = bad
        tally = _LossTally(400, stops, losses=spoiled)
        sums = tally.segment_sums()
        assert sums[:4] == [math.fsum(spoiled[a:b].tolist()) for a, b in bounds[:4]]
        if expected is None:
            assert math.isnan(sums[4]) and math.isnan(tally.total())
        else:
            assert sums[4] == expected and tally.total() == expected


def test_loop_selection():
    def loop_of(name, fast=None, wrap=None, **kwargs):
        env = gym.make("BCO-Simplex-v0", n=3, horizon=20, **kwargs)
        env = wrap(env) if wrap else env
        return run(env, make_agent(name, env), seed=0, fast=fast).loop

    assert loop_of("bbcg") == "block" and loop_of("random") == "block"
    assert loop_of("fkm") == "lean" and loop_of("bfw") == "lean"
    assert loop_of("bbcg", fast=False) == "gym" and loop_of("fkm", fast=False) == "gym"
    assert loop_of("bbcg", fast=True) == "block" and loop_of("fkm", fast=True) == "lean"
    # no projection to replay in the block loop: the lean loop runs; frames need env.step
    assert loop_of("bbcg", on_infeasible="project") == "lean"
    assert loop_of("bbcg", render_mode="rgb_array") == "gym"
    # a wrapper whose step must run keeps the Gymnasium loop (or refuses fast=True)
    stats = gym.wrappers.RecordEpisodeStatistics
    assert loop_of("bbcg", wrap=stats) == "gym"
    with pytest.raises(ValueError, match="RecordEpisodeStatistics, whose step must run"):
        loop_of("bbcg", fast=True, wrap=stats)


class Wanderer(Agent):
    """Plays a fixed point each round, and ``outside`` in round ``bad`` (blocks of 5).

    ``anchor`` is what it names as the anchor of its blocks (None: no anchor)."""

    name = "wanderer"
    supports_blocks = True

    def __init__(self, problem, inside, outside, bad, anchor=None):
        super().__init__(problem)
        self.inside, self.outside, self.bad, self.anchor = inside, outside, bad, anchor

    def _reset(self):
        pass

    def _play(self, t):
        return np.array(self.outside if t == self.bad else self.inside, dtype=float)

    def _act(self):
        return self._play(self._round)

    def _update(self, loss, info):
        pass

    def _block_actions(self):
        stop = min((self._round // 5 + 1) * 5, self.horizon)
        return np.stack([self._play(t) for t in range(self._round, stop)])

    def _update_block(self, losses):
        pass

    def _block_anchor(self):
        return self.anchor


def refusal(env_id, size, fast, **wanderer):
    env = gym.make(env_id, horizon=20, **size)
    agent = Wanderer(env.unwrapped.problem, **wanderer)
    with pytest.raises(InfeasibleActionError) as caught:
        run(env, agent, seed=0, fast=fast)
    return str(caught.value)


@pytest.mark.parametrize(
    ("env_id", "size", "outside"),
    [
        ("BCO-Simplex-v0", {"n": 3}, [1.2, -0.1, -0.1]),
        ("BCO-Ball-v0", {"n": 2}, [0.9, 0.9]),
        ("BCO-NuclearBall-v0", {"rows": 3, "cols": 2}, [[0.8, 0.0], [0.0, 0.8], [0.0, 0.0]]),
        ("BCO-ShortestPath-v0", {"grid": 2}, [0.5, 0.5, 0.5, 0.4]),
    ],
)
def test_block_loop_refuses_an_infeasible_play_like_the_env(env_id, size, outside):
    convex_set = gym.make(env_id, **size).unwrapped.set
    inside = np.array(convex_set.center)
    outside = np.array(outside)
    assert convex_set.violation(outside) is not None
    plays = {"inside": inside, "outside": outside, "bad": 7}
    expected = refusal(env_id, size, fast=False, **plays)
    assert expected.startswith("round 7: action not in")
    assert refusal(env_id, size, fast=None, **plays) == expected
    # an anchor that does not hold cannot certify the bad block: the exact check refuses
    lying = (inside, convex_set.inner_radius)
    assert refusal(env_id, size, fast=None, anchor=lying, **plays) == expected


def test_a_wrong_anchor_does_not_refuse_feasible_plays():
    env = gym.make("BCO-Ball-v0", n=2, horizon=20)
    inside = np.array([0.5, 0.5])
    agent = Wanderer(env.unwrapped.problem, inside, inside, bad=-1, anchor=(np.ones(2), 0.1))
    assert run(env, agent, seed=0).loop == "block"


def test_bbcg_anchor_certifies_blocks_without_per_play_svds(monkeypatch):
    """On the nuclear-norm ball the certificate (one exact test of x_{m-1} per block)
    replaces the per-play membership test; the plays are nonetheless in K."""

    def forbidden(self, points, atol=1e-9):
        raise AssertionError("violation_many called: the anchor certificate did not hold")

    monkeypatch.setattr(NuclearNormBall, "violation_many", forbidden)
    fast, plays = played("BCO-NuclearBall-v0", "bbcg", {"rows": 4, "cols": 3}, fast=None)
    assert fast.loop == "block"
    ball = NuclearNormBall(4, 3)
    assert all(ball.contains(play, atol=1e-9) for play in plays)


def test_bbcg_block_anchor_is_the_iterate_and_the_smoothing_radius():
    env = gym.make("BCO-Ball-v0", n=3, horizon=HORIZON)
    agent = make_agent("bbcg", env, **moving_overrides("bbcg", env))
    agent.reset(seed=1)
    assert agent.block_anchor() is None  # no block pending
    losses = env.unwrapped.losses
    env.reset(seed=2)
    delta, t = agent.params["smoothing_radius"], 0
    shrunk = env.unwrapped.set.shrink(delta)
    while t < HORIZON:
        plays = agent.block_actions()
        anchor, radius = agent.block_anchor()
        assert radius == delta
        np.testing.assert_array_equal(anchor, agent.iterate)
        assert shrunk.contains(anchor, atol=1e-12)
        np.testing.assert_allclose(np.linalg.norm(plays - anchor, axis=1), delta, rtol=1e-12)
        agent.update_block(losses.losses(t, plays))
        t += len(plays)
    assert agent.block_anchor() is None


class UnitSquare(ConvexSet):
    """[0, 1]^2 known only through contains (the default violation_many loops)."""

    def __repr__(self) -> str:  # a stable test id (pytest-xdist compares ids)
        return "UnitSquare()"

    shape = (2,)
    center = np.array([0.5, 0.5])
    inner_radius = 0.5
    outer_radius = math.sqrt(0.5)

    def lmo(self, direction):
        return (np.asarray(direction) < 0).astype(float)

    def contains(self, x, atol=1e-9):
        return bool(np.all(np.asarray(x) >= -atol) and np.all(np.asarray(x) <= 1 + atol))


SETS = [
    Simplex(4),
    L2Ball(3, radius=2.0),
    L1Ball(3),
    Hypercube(-1.0, 2.0, n=3),
    NuclearNormBall(3, 2),
    FlowPolytope.grid(3, 3),
    BirkhoffPolytope(3),
    Simplex(4).shrink(0.1),
    L2Ball(3).shrink(0.25),
    UnitSquare(),
]


def batch_of_points(convex_set, rng, count=60):
    """Inside, on the boundary, just outside (by ~atol), far outside, and non-finite."""
    shape, center = convex_set.shape, np.asarray(convex_set.center)
    points = []
    for k in range(count):
        vertex = convex_set.lmo(rng.standard_normal(shape))
        kind = k % 5
        if kind == 0:
            points.append(center + rng.uniform() * (vertex - center))
        elif kind == 1:
            points.append(vertex)
        elif kind == 2:
            points.append(vertex + 1e-9 * rng.choice([-2.0, -1.0, 0.5, 1.0, 2.0], shape))
        elif kind == 3:
            points.append(center + 3.0 * (vertex - center) + rng.standard_normal(shape))
        else:
            point = np.array(vertex, dtype=float)
            point.flat[rng.integers(point.size)] = rng.choice([np.nan, np.inf, -np.inf])
            points.append(point)
    return np.array(points, dtype=float)


def first_violation(convex_set, points, atol):
    for index, point in enumerate(points):
        reason = convex_set.violation(point, atol)
        if reason is not None:
            return index, reason
    return None


@pytest.mark.parametrize("convex_set", SETS, ids=repr)
@pytest.mark.parametrize("atol", [1e-9, 0.0])
def test_violation_many_gives_the_verdict_of_violation_point_by_point(convex_set, atol):
    rng = np.random.default_rng(11)
    points = batch_of_points(convex_set, rng)
    for start in range(0, len(points), 3):  # many batches, each starting elsewhere
        batch = points[start:]
        assert convex_set.violation_many(batch, atol) == first_violation(convex_set, batch, atol)
    if atol > 0:  # with atol = 0 a point built in floating point may miss by rounding
        assert convex_set.violation_many(points[0::5], atol) is None
    assert convex_set.violation_many(points[:0], atol) is None
    wrong = np.zeros((2, *convex_set.shape, 1))
    assert convex_set.violation_many(wrong, atol)[0] == 0


def test_cli_gym_loop_flag(capsys):
    assert cli_main(["run", "--horizon", "60", "--quiet"]) == 0
    assert "block loop" in capsys.readouterr().out
    assert cli_main(["run", "--horizon", "60", "--quiet", "--gym-loop"]) == 0
    assert "gym loop" in capsys.readouterr().out


class _Spans:
    """A stand-in tally that records the spans of rounds it is handed."""

    def __init__(self) -> None:
        self.spans: list[np.ndarray] = []

    def add(self, values: np.ndarray) -> None:
        self.spans.append(np.array(values))


@pytest.mark.parametrize(("block", "chunk", "horizon"), [(7, 20, 100), (3, 4, 30), (50, 20, 130)])
def test_the_block_feed_hands_every_round_over_in_order_at_chunk_ends(block, chunk, horizon):
    from bco_gym.engine.loops import LEAN_BUFFER, _BlockFeed

    tallies = [_Spans(), _Spans()]
    feed = _BlockFeed(tallies, horizon, chunk)
    losses = np.arange(2 * horizon, dtype=float).reshape(2, horizon)
    played, ends = 0, []
    while played < horizon:
        rounds = min(block, horizon - played)
        feed.add(losses[:, played : played + rounds], float(rounds))
        played += rounds
        if played // chunk > (played - rounds) // chunk or played == horizon:
            ends.append(played)  # where a hand-over must have happened
    for row, tally in enumerate(tallies):
        assert np.array_equal(np.concatenate(tally.spans), losses[row])
        handed = np.cumsum([len(span) for span in tally.spans])
        assert handed.tolist() == ends  # at the chunk ends and the horizon, nowhere else
        assert max(len(span) for span in tally.spans) <= chunk + LEAN_BUFFER
    assert feed.latency.rounds == horizon
