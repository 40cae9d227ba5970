"""The compiled per-round kernels (bco_gym/agents/kernels, bco_gym/engine/compiled.py).

What is checked, against the NumPy code they replace:

* the reductions and oracles: numba's pairwise sum is NumPy's reduction bit for bit; the
  projections and LMOs of the ball, l1 ball, box and simplex (and their shrunk sets)
  equal the sets' own, bit for bit (the ball's norm is the pairwise sum of the squares
  on both sides);
* whole runs: every kernel agent on every kernel set plays what the NumPy lean loop and
  the Gymnasium loop play, bit for bit; ``run_many`` row i is ``run`` of seed i bit for
  bit; the comparators summed in the same pass are ``comparator()``'s bit for bit;
* the dispatch: short runs stay on the NumPy loop in "auto"; a play outside K goes to
  the env's own check, which raises; a bad ``BCO_GYM_KERNELS`` is refused by name.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("numba")

from bco_gym.agents import make_agent
from bco_gym.agents.kernels import read_only
from bco_gym.engine import compiled
from bco_gym.engine.loops import play_lean
from bco_gym.engine.runner import single_stage
from bco_gym.errors import InfeasibleActionError
from bco_gym.experiment import run, run_many
from bco_gym.sets import Hypercube, L1Ball, L2Ball, Simplex

HORIZON = 600
ENVS = ("BCO-Ball-v0", "BCO-L1Ball-v0", "BCO-Hypercube-v0", "BCO-Simplex-v0")
#: (agent, feedback, agent_kwargs): every kernel and estimator.
AGENTS = (
    ("fkm", "bandit", {}),
    ("fkm", "bandit", {"estimator": "residual"}),
    ("bfw", "bandit", {}),
    ("bfw", "bandit", {"estimator": "residual"}),
    ("fkm", "full", {}),  # bandit agents under full information (bco-gym exponents)
    ("bfw", "full", {}),
    ("fkm2", "two-point", {}),
    ("ofw", "full", {}),
    ("ogd", "full", {}),
)


@pytest.fixture
def kernels_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(compiled.SWITCH, "on")


# -- reductions and oracles -------------------------------------------------------------------
def test_pairwise_sum_is_numpys_reduction() -> None:
    from bco_gym.agents.kernels.oracles import pairwise_sum

    rng = np.random.default_rng(0)
    for n in [*range(1, 140), 255, 256, 1000, 4099]:
        values = rng.standard_normal(n) * 10.0 ** rng.uniform(-4, 4, n)
        rows = np.stack([values, values[::-1]])
        assert pairwise_sum(values, 0, n) == np.add.reduce(values) == rows.sum(axis=1)[0]


@pytest.mark.parametrize(
    "convex_set",
    [
        L2Ball(7, 1.5),
        L2Ball(150, 0.5),  # more than 128 terms: the long pairwise sums
        L1Ball(9, 2.0),
        L1Ball(40, 2.0),  # more than 32 terms: np.sort instead of the insertion sort
        Hypercube(-1.0, [1.0, 2.0, 0.5, 3.0, 1.0]),
        Simplex(6),
        Simplex(33),
    ],
    ids=repr,
)
@pytest.mark.parametrize("delta", [None, 0.3, 1.0])
def test_oracles_equal_the_sets(convex_set, delta) -> None:  # type: ignore[no-untyped-def]
    """The rounds' oracles on rows of 2-D arrays (into row 1 of ``out``), on points of
    every scale and on rounded ones (ties, 0.0 and -0.0: the sort's equal values)."""
    from bco_gym.agents.kernels.oracles import lmo, project

    target = convex_set if delta is None else convex_set.shrink(delta * convex_set.inner_radius)
    oracle = compiled._oracle(target)
    assert oracle is not None
    rng = np.random.default_rng(1)
    n = convex_set.dim
    work, rows, out = np.empty((6, n)), np.full((3, n), np.nan), np.full((2, n), np.nan)
    for scale in (0.01, 0.5, 3.0, 50.0):
        for trial in range(20):
            x = convex_set.center + scale * rng.standard_normal(n)
            if trial % 4 == 3:
                x = np.round(x, 1)
                x[rng.integers(0, n, size=3)] = rng.choice([0.0, -0.0], size=3)
            work[4] = x  # the rounds' step, projected from work's row 4
            project(*oracle, 4, out, 1, work)
            found = {"project": out[1].copy()}
            rows[2] = x - convex_set.center
            lmo(*oracle, rows, 2, out, 1, work)
            found["lmo"] = out[1].copy()
            for name, expected in (
                ("project", target.project(x)),
                ("lmo", target.lmo(x - convex_set.center)),
            ):
                assert np.array_equal(found[name], expected), name


@pytest.mark.parametrize(
    "env_id, n", [("BCO-Simplex-v0", 40), ("BCO-L1Ball-v0", 40), ("BCO-L1Ball-v0", 140)]
)
@pytest.mark.parametrize("agent, feedback", [("fkm", "bandit"), ("ofw", "full")])
def test_kernel_runs_in_high_dimension_equal_the_numpy_loop(
    monkeypatch: pytest.MonkeyPatch, env_id, n, agent, feedback
) -> None:  # type: ignore[no-untyped-def]
    """Above 32 coordinates the simplex projection sorts with np.sort, above 128 a row's
    sums are the long pairwise sums: calls the kernels make to functions that allocate."""
    options = {"horizon": 300, "seed": 2, "env_kwargs": {"feedback": feedback, "n": n}}
    monkeypatch.setenv(compiled.SWITCH, "on")
    fast = run(env_id, agent, **options)
    monkeypatch.setenv(compiled.SWITCH, "off")
    assert fast.same_outcome(run(env_id, agent, **options))


# -- whole runs -------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", ENVS)
@pytest.mark.parametrize("agent, feedback, agent_kwargs", AGENTS, ids=lambda v: str(v))
def test_kernel_runs_equal_the_numpy_and_gym_loops(
    monkeypatch: pytest.MonkeyPatch, env_id, agent, feedback, agent_kwargs
) -> None:  # type: ignore[no-untyped-def]
    options = {
        "horizon": HORIZON,
        "seed": 5,
        "env_kwargs": {"feedback": feedback},
        "agent_kwargs": agent_kwargs,
    }
    monkeypatch.setenv(compiled.SWITCH, "on")
    fast = run(env_id, agent, **options)
    many = run_many(env_id, agent, [5, 6], **{k: v for k, v in options.items() if k != "seed"})
    monkeypatch.setenv(compiled.SWITCH, "off")
    lean = run(env_id, agent, **options)
    gym = run(env_id, agent, fast=False, **options)
    assert lean.same_outcome(gym)  # the NumPy loops, bit for bit (as before)
    assert many[0].same_outcome(fast)  # one kernel: a batch of one and a batch agree exactly
    assert fast.stats == lean.stats and fast.lmo_calls == lean.lmo_calls
    assert (
        fast.projections == lean.projections == (HORIZON if agent in ("fkm", "fkm2", "ogd") else 0)
    )
    assert fast.same_outcome(lean)  # every set, the ball's Euclidean norm included


def test_a_batch_plays_each_row_as_its_own_run(kernels_on) -> None:  # type: ignore[no-untyped-def]
    seeds = [11, 3, 11, 40]
    many = run_many("BCO-Simplex-v0", "bfw", seeds, horizon=500)
    for seed, result in zip(seeds, many, strict=True):
        assert result.same_outcome(run("BCO-Simplex-v0", "bfw", horizon=500, seed=seed))


@pytest.mark.parametrize(
    "loss", ["linear", "linear-switching", "linear-drift", "linear-adversarial"]
)
def test_one_pass_comparators_equal_the_second_pass(kernels_on, loss) -> None:  # type: ignore[no-untyped-def]
    import gymnasium as gym

    env = gym.make("BCO-Ball-v0", horizon=700, loss=loss)
    env.reset(seed=2)
    base = env.unwrapped
    agent = make_agent("fkm", base.problem)
    agent.reset(seed=9)
    checkpoints = [1, 100, 256, 257, 512, 700]
    played = play_lean(single_stage(base), _rows(agent), checkpoints=checkpoints)
    assert played.comparators is not None
    for found, expected in zip(
        played.comparators[0], base.losses.comparator(checkpoints), strict=True
    ):
        assert found.horizon == expected.horizon and found.value == expected.value
        assert np.array_equal(found.point, expected.point)


def test_from_array_losses_play_through_the_kernel(kernels_on) -> None:  # type: ignore[no-untyped-def]
    from bco_gym.envs import BanditConvexEnv
    from bco_gym.losses import from_array

    rng = np.random.default_rng(4)
    thetas, offsets = rng.standard_normal((900, 5)), rng.standard_normal(900)
    convex_set = Hypercube(-1.0, 1.0, n=5)
    results = {}
    for mode in ("on", "off"):
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(compiled.SWITCH, mode)
            env = BanditConvexEnv(convex_set, from_array(convex_set, thetas, offsets))
            results[mode] = run(env, "fkm", seed=1)
    assert results["on"].same_outcome(results["off"])


# -- dispatch ---------------------------------------------------------------------------------
def _rows(agent):  # type: ignore[no-untyped-def]
    from bco_gym.engine.rows import RowAgents

    return RowAgents([agent])


def test_auto_keeps_short_runs_on_the_numpy_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    import gymnasium as gym

    monkeypatch.delenv(compiled.SWITCH, raising=False)
    for horizon, expected in ((1000, False), (compiled.MIN_RUN_ROUNDS, True)):
        env = gym.make("BCO-Ball-v0", horizon=horizon)
        env.reset(seed=0)
        agent = make_agent("fkm", env.unwrapped.problem)
        agent.reset(seed=0)
        plan = compiled.compiled_plan(single_stage(env.unwrapped), _rows(agent))
        assert (plan is not None) == expected


def test_agents_and_sets_without_a_kernel_play_numpy(kernels_on) -> None:  # type: ignore[no-untyped-def]
    import gymnasium as gym

    for env_id, name in (("BCO-NuclearBall-v0", "fkm"), ("BCO-Ball-v0", "random")):
        env = gym.make(env_id, horizon=50)
        env.reset(seed=0)
        agent = make_agent(name, env.unwrapped.problem)
        agent.reset(seed=0)
        assert compiled.compiled_plan(single_stage(env.unwrapped), _rows(agent)) is None


def test_a_bad_switch_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(compiled.SWITCH, "fastest")
    with pytest.raises(ValueError, match=r"BCO_GYM_KERNELS='fastest'.*allowed: auto, on, off"):
        compiled.kernel_mode()


def test_a_play_outside_the_set_goes_to_the_envs_check(kernels_on) -> None:  # type: ignore[no-untyped-def]
    import gymnasium as gym

    env = gym.make("BCO-Ball-v0", horizon=300)
    env.reset(seed=0)
    agent = make_agent("fkm", env.unwrapped.problem)
    agent.reset(seed=0)
    agent._points[:] = 5.0  # an iterate far outside K: its first play is refused
    with pytest.raises(InfeasibleActionError, match="round 0"):
        play_lean(single_stage(env.unwrapped), _rows(agent), checkpoints=[300])


@pytest.mark.parametrize(
    "convex_set", [L2Ball(10), Simplex(10), L2Ball(300), Simplex(700)], ids=repr
)
def test_longer_direction_chunks_draw_the_same_directions(convex_set) -> None:  # type: ignore[no-untyped-def]
    from bco_gym.agents.estimators import DirectionStream

    def directions(chunk_size: int) -> np.ndarray:
        rngs = [np.random.default_rng(seed) for seed in (3, 4)]
        stream = DirectionStream(convex_set, rngs, chunk_size=chunk_size)
        taken = [stream.take(1500)]
        while sum(map(len, taken)) < 1500:
            taken.append(stream.take(1500))
        return np.concatenate(taken)[:1500]

    assert np.array_equal(directions(256), directions(compiled.DIRECTION_FLOATS // 20))


# -- the interval-regret tracker's compiled update --------------------------------------------
@pytest.mark.parametrize(
    "convex_set",
    [
        L2Ball(7, 1.5),
        L2Ball(40, 1.0),
        L1Ball(9, 2.0),
        Hypercube(-1.0, [1.0, 2.0, 0.5, 3.0, 1.0]),
        Simplex(6),
    ],
    ids=repr,
)
@pytest.mark.parametrize("horizon", [1, 2, 37, 1000])
def test_compiled_interval_update_equals_the_numpy_one(convex_set, horizon) -> None:  # type: ignore[no-untyped-def]
    """Same metrics bit for bit, whatever the spans; thetas of every magnitude (the ball's
    rescaled norms, zero directions) included."""
    from bco_gym.losses.intervals import IntervalRegret

    rng = np.random.default_rng(horizon)
    thetas = rng.standard_normal((horizon, convex_set.dim))
    thetas *= 10.0 ** rng.choice([-200.0, -3.0, 0.0, 3.0, 160.0], size=(horizon, 1))
    thetas[:: max(1, horizon // 5)] = 0.0
    constants, played = rng.standard_normal(horizon), rng.standard_normal(horizon)
    numpy_tracker = IntervalRegret(convex_set, horizon)
    numpy_tracker.update(thetas, constants, played)
    compiled_tracker = IntervalRegret(convex_set, horizon)
    compiled_tracker.use_rounds(compiled.interval_rounds_for(convex_set))
    cuts = sorted({0, horizon, *rng.integers(0, horizon + 1, size=6).tolist()})
    for start, stop in itertools.pairwise(cuts):
        compiled_tracker.update(thetas[start:stop], constants[start:stop], played[start:stop])
    assert compiled_tracker.result().as_dict() == numpy_tracker.result().as_dict()


@pytest.mark.parametrize(
    "convex_set",
    [L2Ball(6, 1.5), L2Ball(10), L2Ball(40), Simplex(5), L1Ball(4, 2.0)],
    ids=repr,
)
@pytest.mark.parametrize("horizon", [1, 2, 300, 1000])
def test_compiled_interval_update_keeps_the_segments_pieces(convex_set, horizon) -> None:  # type: ignore[no-untyped-def]
    """With segments (linear-switching), the blocks each segment is made of are kept by
    the compiled update as by the NumPy one: the same switching regret, bit for bit,
    whatever the spans. Thetas of one scale, so every norm shows in the metrics (the
    ball's squares summed in 1, 2 and 5 blocks of 8 accumulators)."""
    from bco_gym.losses.intervals import IntervalRegret

    rng = np.random.default_rng(horizon + 3)
    thetas = rng.standard_normal((horizon, convex_set.dim))
    constants, played = rng.standard_normal(horizon), rng.standard_normal(horizon)
    cuts = sorted({0, *rng.integers(1, horizon, size=min(horizon - 1, 7)).tolist()})
    segments = [0] if horizon == 1 else cuts
    numpy_tracker = IntervalRegret(convex_set, horizon, segments)
    numpy_tracker.update(thetas, constants, played)
    compiled_tracker = IntervalRegret(convex_set, horizon, segments)
    compiled_tracker.use_rounds(compiled.interval_rounds_for(convex_set))
    spans = sorted({0, horizon, *rng.integers(0, horizon + 1, size=5).tolist()})
    for start, stop in itertools.pairwise(spans):
        compiled_tracker.update(thetas[start:stop], constants[start:stop], played[start:stop])
    found, expected = compiled_tracker.result(), numpy_tracker.result()
    assert found.switching_regret is not None
    assert found.as_dict() == expected.as_dict()


@pytest.mark.parametrize(
    "convex_set",
    [Simplex(5), L1Ball(5, 2.0), Hypercube(-1.0, 2.0, n=5), Hypercube(0.5, 2.0, n=5)],
    ids=repr,
)
def test_compiled_interval_update_equals_the_numpy_one_on_signed_zeros(convex_set):  # type: ignore[no-untyped-def]
    """The vertex sets' best value is the vertex's product alone when the other products
    are zeros; rows whose best product is itself a zero take the pairwise sum as NumPy
    does (the same signed zero). Non-finite thetas are refused by the sets' LMOs."""
    from bco_gym.losses.intervals import IntervalRegret

    rng = np.random.default_rng(7)
    special = [
        [-0.0] * 5,
        [0.0, -0.0, 0.0, -0.0, 0.0],
        [-0.0, 0.0, 3.0, 1.0, 2.0],
        [0.0, 0.0, 0.0, -0.0, 0.0],
        [1e300, -1e300, 0.5, 2.0, 3.0],
        [5e-324, -5e-324, 0.0, -0.0, 1e-310],
    ]
    thetas = rng.standard_normal((64, 5))
    for row, values in enumerate(special):
        thetas[9 * row] = values
    constants, played = rng.standard_normal(64), rng.standard_normal(64)
    numpy_tracker = IntervalRegret(convex_set, 64)
    numpy_tracker.update(thetas, constants, played)
    compiled_tracker = IntervalRegret(convex_set, 64)
    compiled_tracker.use_rounds(compiled.interval_rounds_for(convex_set))
    compiled_tracker.update(thetas[:20], constants[:20], played[:20])
    compiled_tracker.update(thetas[20:], constants[20:], played[20:])
    # repr tells -0.0 from 0.0
    assert repr(compiled_tracker.result().as_dict()) == repr(numpy_tracker.result().as_dict())
    for values in special:  # one round alone, b_t = f_t(y_t) = -0: the best value's sign shows
        found = []
        for rounds in (None, compiled.interval_rounds_for(convex_set)):
            tracker = IntervalRegret(convex_set, 1)
            tracker.use_rounds(rounds)
            tracker.update(np.array([values]), np.array([-0.0]), np.array([-0.0]))
            found.append(repr(tracker.result().as_dict()))
        assert found[0] == found[1], values


def test_trackers_take_the_compiled_update_only_where_kernels_would_play(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import gymnasium as gym

    env = gym.make("BCO-Ball-v0", horizon=50)
    env.reset(seed=0)
    stage = single_stage(env.unwrapped)
    monkeypatch.setenv(compiled.SWITCH, "auto")
    assert compiled.tracker_rounds(stage) is None  # 50 run-rounds: the NumPy update
    monkeypatch.setenv(compiled.SWITCH, "on")
    assert compiled.tracker_rounds(stage) is not None
    monkeypatch.setenv(compiled.SWITCH, "off")
    assert compiled.tracker_rounds(stage) is None
    assert compiled.interval_rounds_for(env.unwrapped.set.shrink(0.5)) is None  # not built in


@pytest.mark.parametrize("exponent", [0.4, 0.5])
def test_compiled_step_weights_are_decaying_step(exponent) -> None:  # type: ignore[no-untyped-def]
    """The Frank-Wolfe weights of bfw and ofw, bit for bit Python's (the C library's pow)."""
    from bco_gym.agents.kernels.oracles import decaying_steps
    from bco_gym.agents.schedules import decaying_step

    for first in (1, 2, 999, 65_537, 9_999_000):
        out = np.empty(1000)
        decaying_steps(first, 2.0, exponent, out)
        expected = [decaying_step(t, 2.0, exponent) for t in range(first, first + 1000)]
        assert out.tolist() == expected


# -- blocks: a refused play mid-block ---------------------------------------------------------
def _kernel_state(name: str, rows: int, dim: int, horizon: int) -> dict:  # type: ignore[type-arg]
    rng = np.random.default_rng(7)
    directions = rng.standard_normal((rows, horizon, dim))
    directions /= np.linalg.norm(directions, axis=2, keepdims=True)
    directions[2, 50] *= 30.0  # a play far out mid-block (row 2 of 6, round 50 of [32, 64))
    state = {
        "points": np.zeros((rows, dim)),
        "previous": np.zeros(rows),
        "sums": np.zeros((3, rows, dim)),  # bfw/ofw: estimate or gradient sum, linear, gradient
        "plays": np.zeros((rows, 2, dim) if name == "fkm2" else (rows, dim)),
        "losses": np.zeros((rows, horizon)),
    }
    inputs = {
        "directions": read_only(directions),  # as the engine hands them over (one compile)
        "theta": rng.standard_normal((rows, horizon, dim)) * 0.5,
        "offset": rng.standard_normal((rows, horizon)),
        "weights": np.minimum(1.0, 2.0 * np.arange(1.0, horizon + 1) ** -0.5),
    }
    return state | {"inputs": inputs}


def _call(name, state, check, begin, end, first, trusted):  # type: ignore[no-untyped-def]
    """The kernel ``name`` on rounds [begin, end) of the test's window, from ``first``."""
    from bco_gym.agents.bfw.kernel import bfw_rounds
    from bco_gym.agents.fkm.kernel import fkm2_rounds, fkm_rounds
    from bco_gym.agents.ofw.kernel import ofw_rounds
    from bco_gym.agents.ogd.kernel import ogd_rounds

    dim = state["points"].shape[1]
    inputs = state["inputs"]
    theta, offset, losses = inputs["theta"], inputs["offset"], state["losses"]
    weights = inputs["weights"][begin:end]
    shrunk = compiled._oracle(L2Ball(dim).shrink(0.2))
    full = compiled._oracle(L2Ball(dim))
    work, saved = np.empty((6, dim)), np.empty((5, *state["points"].shape))
    estimate, linear, gradient = state["sums"]
    window = (begin, begin, end - begin)
    common = (losses, window, first - begin, trusted - begin if trusted >= 0 else -1, work, saved)
    d = (state["points"], inputs["directions"], begin, theta, offset, -1.0, 0.2)
    if name == "fkm":
        found = fkm_rounds(
            *d, 0.05, True, state["previous"], shrunk, check, state["plays"], *common
        )
    elif name == "fkm2":
        found = fkm2_rounds(*d, 0.05, shrunk, check, state["plays"], *common)
    elif name == "bfw":
        found = bfw_rounds(
            *d, 0.05, 0.1, True, state["previous"], weights, estimate, linear, gradient,
            np.zeros(dim), shrunk, check, state["plays"], *common,
        )  # fmt: skip
    elif name == "ofw":
        found = ofw_rounds(
            state["points"], theta, offset, -1.0, 0.1, weights, estimate, linear, gradient,
            np.zeros(dim), full, check, *common,
        )  # fmt: skip
    else:
        found = ogd_rounds(state["points"], theta, offset, -1.0, 0.1, full, check, *common)
    return begin + found


def _snapshot(state) -> dict:  # type: ignore[no-untyped-def, type-arg]
    return {key: value.copy() for key, value in state.items() if key != "inputs"}


@pytest.mark.parametrize("name", ["fkm", "fkm2", "bfw", "ofw", "ogd"])
def test_a_refused_play_mid_block_stops_every_row_before_its_round(name) -> None:  # type: ignore[no-untyped-def]
    """The rows play blocks of rounds one row after another (rounds.py); a play refused at
    round j* (by a box around every earlier play) must leave what round-by-round play
    leaves: the first refused round returned, every row's state as before j*, every row's
    play of j* in ``plays``; then, j* trusted, the rest of the window bit for bit."""
    from bco_gym.agents.kernels import KIND_BOX
    from bco_gym.agents.kernels.rounds import BLOCK

    rows, dim, horizon = 6, 3, 400
    wide = np.full(dim, 1e9)
    anything = (KIND_BOX, 0.0, -wide, wide, 0.0)
    reference = _kernel_state(name, rows, dim, horizon)
    states, played = [_snapshot(reference)], []
    for j in range(horizon):  # one round per call: round by round
        assert _call(name, reference, anything, j, j + 1, j, -1) == j + 1
        exploring = name in ("fkm", "fkm2", "bfw")
        played.append((reference["plays"] if exploring else states[j]["points"]).copy())
        states.append(_snapshot(reference))
    flat = [p.reshape(-1, dim) for p in played]
    refused = next(
        j
        for j in range(BLOCK + 3, horizon)
        if np.any(flat[j] < np.min(flat[:j], axis=(0, 1)))
        or np.any(flat[j] > np.max(flat[:j], axis=(0, 1)))
    )
    box = (
        KIND_BOX,
        0.0,
        np.min(flat[:refused], axis=(0, 1)),
        np.max(flat[:refused], axis=(0, 1)),
        0.0,
    )
    blocked = _kernel_state(name, rows, dim, horizon)
    assert _call(name, blocked, box, 0, horizon, 0, -1) == refused
    expected = states[refused]
    for key in ("points", "previous", "sums"):
        assert np.array_equal(blocked[key], expected[key]), key
    assert np.array_equal(blocked["losses"][:, :refused], expected["losses"][:, :refused])
    if name in ("fkm", "fkm2", "bfw"):
        assert np.array_equal(blocked["plays"], played[refused])
    assert _call(name, blocked, anything, 0, horizon, refused, refused) == horizon
    for key in ("points", "previous", "sums", "losses"):
        assert np.array_equal(blocked[key], states[horizon][key]), key
