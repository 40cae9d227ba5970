"""The compiled separation steps (bco_gym/agents/gk22/kernel.py) against the Python
loops they replace: Algorithm 6 (so-bgd) and fejer-bgd's steps give the same points and
the same call counts bit for bit, on every set with a separation oracle, in single runs,
``run_many`` and the Gymnasium loop; rows the kernel cannot finish go to the Python
loop, which raises its own error."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from bco_gym.agents import kernels
from bco_gym.agents.gk22 import oracles as infeasible
from bco_gym.agents.gk22.oracles import SeparationSteps, separation_projection
from bco_gym.engine.many import run_many
from bco_gym.engine.runner import run
from bco_gym.sets import Hypercube, L1Ball, L2Ball, Simplex

ENVS = {
    "BCO-Ball-v0": L2Ball(6),
    "BCO-L1Ball-v0": L1Ball(6),
    "BCO-Hypercube-v0": Hypercube(n=6),
    "BCO-Simplex-v0": Simplex(6),
}
HORIZON = 300


def options(agent: str, convex_set, horizon: int = HORIZON) -> dict:
    """Parameters within the theorems' conditions with a step that leaves the set, so that
    the steps run (the theory constants would leave them idle in a short run)."""
    r = convex_set.inner_radius
    if agent == "so-bgd":
        root = horizon**0.25
        return {"c": 0.5 * root, "c_prime": 0.25 * r * root, "step_size": 0.05}
    return {"step_size": 0.05, "smoothing_radius": 0.2 * r}


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> list[np.ndarray]:
    """The rows the kernel left to the Python loop, per call (it runs from the first
    run-round on)."""
    monkeypatch.setattr(kernels, "AGENT_MIN_RUN_ROUNDS", 0)
    monkeypatch.setenv(kernels.SWITCH, "auto")  # the engine's own kernels stay off
    seen: list[np.ndarray] = []
    call = SeparationSteps.__call__

    def recorded(self, targets, calls, steps):
        left = call(self, targets, calls, steps)
        seen.append(left.copy())
        return left

    monkeypatch.setattr(SeparationSteps, "__call__", recorded)
    return seen


def played(monkeypatch, mode: str, play):
    with monkeypatch.context() as patch:
        patch.setenv(kernels.SWITCH, mode)
        return play()


@pytest.mark.parametrize("agent", ["so-bgd", "fejer-bgd"])
@pytest.mark.parametrize("env_id", list(ENVS))
def test_run_many_is_the_python_loop_bit_for_bit(agent, env_id, spy, monkeypatch):
    kwargs = options(agent, ENVS[env_id])

    def play():
        return run_many(
            env_id, agent, [0, 3, 8], horizon=HORIZON, env_kwargs={"n": 6}, agent_kwargs=kwargs
        )

    compiled = played(monkeypatch, "auto", play)
    assert len(spy) == HORIZON and not any(len(left) for left in spy)  # every row compiled
    plain = played(monkeypatch, "off", play)
    assert len(spy) == HORIZON  # "off": the Python loop alone
    steps = "separation_steps" if agent == "so-bgd" else "fejer_steps"
    for a, b in zip(compiled, plain, strict=True):
        assert a.same_outcome(b)
        assert a.stats == b.stats  # the separation calls and steps agree
        assert a.stats[steps] > 20  # the steps ran
        assert a.stats["separation_calls"] == HORIZON + a.stats[steps]


@pytest.mark.parametrize("agent", ["so-bgd", "fejer-bgd"])
@pytest.mark.parametrize("env_id", ["BCO-Simplex-v0", "BCO-L1Ball-v0"])
@pytest.mark.parametrize("fast", [None, False], ids=["lean", "gymnasium"])
def test_single_runs_are_the_python_loop_bit_for_bit(agent, env_id, fast, spy, monkeypatch):
    kwargs = options(agent, ENVS[env_id])

    def play():
        return run(
            env_id, agent, horizon=HORIZON, seed=4, env_kwargs={"n": 6}, agent_kwargs=kwargs,
            fast=fast,
        )  # fmt: skip

    compiled = played(monkeypatch, "auto", play)
    assert len(spy) == HORIZON
    plain = played(monkeypatch, "off", play)
    assert compiled.same_outcome(plain) and compiled.stats == plain.stats
    assert compiled.stats["separation_calls"] > HORIZON


def counted(steps: SeparationSteps, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's call counts per row (from zero counters) and the rows it left."""
    calls, made = np.zeros(len(targets), np.int64), np.zeros(len(targets), np.int64)
    left = steps(targets, calls, made)
    assert np.array_equal(made, np.where(calls > 0, calls - 1, 0))
    return calls, left


SETS = [L2Ball(9), L1Ball(9), Hypercube(n=9), Simplex(9), L2Ball(140)]  # 140: > 128 terms


@pytest.mark.parametrize("convex_set", SETS, ids=repr)
def test_algorithm_6_rows_are_separation_projection(convex_set, monkeypatch):
    monkeypatch.setenv(kernels.SWITCH, "on")
    rng = np.random.default_rng(2)
    c, r = convex_set.center, convex_set.inner_radius
    squeeze, margin = 0.1, 0.3 * r
    steps = SeparationSteps.for_set(
        convex_set, 1.0 - margin / r, squeeze * (r - margin), fejer=False, run_rounds=1
    )
    scales = np.linspace(0.05, 3.0, 40)[:, np.newaxis]
    initial = c + scales * convex_set.tangent_many(rng.normal(size=(40, convex_set.dim)))
    targets = initial.copy()
    counts, left = counted(steps, targets)
    assert len(left) == 0
    for row, y0 in enumerate(initial):
        found = separation_projection(convex_set, y0, squeeze, margin)
        assert counts[row] == found.calls
        assert targets[row].tobytes() == found.point.tobytes()
    assert counts.max() > 5  # far points took several steps


@pytest.mark.parametrize("convex_set", SETS[:4], ids=repr)
def test_fejer_rows_are_the_agents_steps(convex_set, monkeypatch):
    from bco_gym.agents import make_agent
    from bco_gym.problem import Problem

    monkeypatch.setenv(kernels.SWITCH, "off")
    problem = Problem(convex_set, 1000, 1.0, 1.0, "bandit")
    r = convex_set.inner_radius
    agent = make_agent("fejer-bgd", problem, step_size=0.1, smoothing_radius=0.2 * r)
    agent.reset(seed=0)
    steps = SeparationSteps.for_set(
        convex_set, agent._shrink, 0.2 * r, fejer=True, run_rounds=10**9
    )
    assert steps is None  # "off"
    monkeypatch.setenv(kernels.SWITCH, "on")
    steps = SeparationSteps.for_set(convex_set, agent._shrink, 0.2 * r, fejer=True, run_rounds=1)
    rng = np.random.default_rng(5)
    scales = np.linspace(0.05, 2.0, 30)[:, np.newaxis]
    initial = convex_set.center + scales * convex_set.tangent_many(
        rng.normal(size=(30, convex_set.dim))
    )
    targets = initial.copy()
    counts, left = counted(steps, targets)
    assert len(left) == 0
    before = agent._counters["separation_calls"][0]
    for row, z in enumerate(initial):
        point = agent._fejer(z.copy(), 0)
        after = agent._counters["separation_calls"][0]
        assert counts[row] == after - before
        before = after
        assert targets[row].tobytes() == point.tobytes()
    assert counts.max() > 5


def test_rows_the_kernel_cannot_finish_are_left_to_the_python_loop(monkeypatch):
    monkeypatch.setenv(kernels.SWITCH, "on")
    convex_set = Simplex(5)
    r = convex_set.inner_radius
    steps = SeparationSteps.for_set(convex_set, 0.5, 0.5 * r, fejer=False, run_rounds=1)
    far = convex_set.center + np.array([0.5, -0.5, 0.0, 0.0, 0.0])
    targets = np.vstack([far, [np.nan, 0, 0, 0, 1], convex_set.center])
    untouched = targets[1].copy()
    counts, left = counted(steps, targets)
    assert left.tolist() == [1] and counts[1] == 0 and counts[0] > 1 and counts[2] == 1
    assert np.array_equal(targets[1], untouched, equal_nan=True)
    with pytest.raises(ValueError, match="non-finite"):  # what the Python loop says
        separation_projection(convex_set, untouched, 0.5, 0.5 * r)
    # the safety limit (Lemma 13's count): the kernel stops short of it, Python raises
    monkeypatch.setattr(infeasible, "SEPARATION_SLACK", -1000)
    steps = SeparationSteps.for_set(convex_set, 0.5, 0.5 * r, fejer=False, run_rounds=1)
    targets = np.vstack([far, convex_set.center])
    counts, left = counted(steps, targets)
    assert left.tolist() == [0] and counts.tolist() == [0, 1]
    assert np.array_equal(targets[0], far)
    with pytest.raises(RuntimeError, match="Lemma 13 allows"):
        separation_projection(convex_set, far, 0.5, 0.5 * r)


def test_the_kernel_is_used_only_where_wanted(monkeypatch):
    convex_set = L2Ball(3)
    monkeypatch.setenv(kernels.SWITCH, "auto")
    assert SeparationSteps.for_set(convex_set, 0.5, 0.1, fejer=False, run_rounds=10) is None
    wanted = kernels.AGENT_MIN_RUN_ROUNDS
    assert SeparationSteps.for_set(convex_set, 0.5, 0.1, fejer=False, run_rounds=wanted)
    monkeypatch.setenv(kernels.SWITCH, "off")
    assert SeparationSteps.for_set(convex_set, 0.5, 0.1, fejer=False, run_rounds=wanted) is None
    monkeypatch.setenv(kernels.SWITCH, "on")
    assert SeparationSteps.for_set(convex_set, 0.5, 0.1, fejer=False, run_rounds=1)
    monkeypatch.setattr(kernels, "numba_available", lambda: False)
    assert SeparationSteps.for_set(convex_set, 0.5, 0.1, fejer=False, run_rounds=1) is None
    monkeypatch.setenv(kernels.SWITCH, "fastest")
    with pytest.raises(ValueError, match="BCO_GYM_KERNELS='fastest' is not allowed"):
        kernels.kernel_mode()


def test_a_compile_is_announced_once(monkeypatch, capsys):
    from bco_gym.agents.gk22 import kernel as separation

    monkeypatch.setattr(separation, "is_cached", lambda dispatcher: False)
    separation.announce_compile.cache_clear()
    separation.announce_compile()
    separation.announce_compile()
    said = capsys.readouterr().err
    assert said.count("compiling the separation kernel of so-bgd and fejer-bgd") == 1
    separation.announce_compile.cache_clear()


@pytest.mark.parametrize("agent", ["so-bgd", "fejer-bgd"])
def test_rows_left_to_the_python_loop_mid_run_give_the_same_run(agent, spy, monkeypatch):
    """A floor above every unit normal's size makes the kernel leave each row that must
    step to the Python loop, and finish the others: rounds mix the two paths."""
    init = SeparationSteps.__init__

    def stubborn(self, *args, **kwargs):
        init(self, *args, **kwargs)
        arguments = list(self._arguments)
        arguments[11] = 2.0  # the floor on the normal's size
        self._arguments = tuple(arguments)

    monkeypatch.setattr(SeparationSteps, "__init__", stubborn)
    kwargs = options(agent, ENVS["BCO-Simplex-v0"])

    def play():
        return run_many(
            "BCO-Simplex-v0", agent, [1, 2, 6], horizon=HORIZON, env_kwargs={"n": 6},
            agent_kwargs=kwargs,
        )  # fmt: skip

    mixed = played(monkeypatch, "auto", play)
    left = [len(rows) for rows in spy]
    assert max(left) > 0 and min(left) < 3  # some rows went back, some did not
    plain = played(monkeypatch, "off", play)
    for a, b in zip(mixed, plain, strict=True):
        assert a.same_outcome(b) and a.stats == b.stats
