"""run(..., isolate=True) and run_many(..., isolate=True): the agent in its own process.

Results equal the in-process run's bit for bit; the child receives only the feedback and
returns only plays (the attacks that read the losses in-process play honestly there);
oracle calls are counted by the set; a crash, hang or bad play fails the agent's run with
a clear message and the child is always ended.
"""

from __future__ import annotations

import pytest

import bco_gym  # noqa: F401  (registers the ids)
from bco_gym.engine import isolation, protection
from bco_gym.errors import AgentError, InfeasibleActionError
from bco_gym.experiment import run, run_many

BALL = {"horizon": 60, "env_kwargs": {"n": 4}}


@pytest.fixture
def children(monkeypatch):
    """Every child process started during the test (to check that each was ended)."""
    started = []
    original = isolation._Child.__init__

    def recording(self, *args, **kwargs):
        original(self, *args, **kwargs)
        started.append(self.process)

    monkeypatch.setattr(isolation._Child, "__init__", recording)
    return started


@pytest.mark.parametrize(
    ("agent", "feedback", "every_loop"),
    [
        ("user_agents:Jitter", "bandit", True),  # a user's agent
        ("bbcg", "bandit", False),  # a block agent with a batched form; LMO calls counted
        ("fkm", "bandit", False),  # projections counted
        ("user_agents:GradientJitter", "full", True),  # gradients sent
        ("fkm2", "two-point", False),  # pairs played, both losses sent
    ],
)
def test_isolated_runs_equal_in_process_runs_bit_for_bit(
    agent, feedback, every_loop, children, monkeypatch
):
    """A batch of eight seeds pays one message per round (not one per seed); with
    ``every_loop``, the parent is not dumpable while the lean loop's child runs. (Each
    isolated run starts a child interpreter, about 1.4 CPU-s: the checks share the runs.)"""
    sent = []
    original = isolation._Child.send

    def counting(self, tag, payload):
        sent.append(tag)
        original(self, tag, payload)

    monkeypatch.setattr(isolation._Child, "send", counting)
    options = {"horizon": 60, "env_kwargs": {"n": 4, "feedback": feedback}}
    seeds = list(range(8))
    inside = run_many("BCO-Ball-v0", agent, seeds, **options)
    isolated = run_many("BCO-Ball-v0", agent, seeds, isolate=True, **options)
    assert sent == [b"INIT", b"SEED", *[b"PLAY"] * options["horizon"], b"DONE"]
    for ours, theirs in zip(isolated, inside, strict=True):
        assert ours.same_outcome(theirs)
        assert ours.loop == "batched-isolated"
    if every_loop:  # a single run in the lean loop and in the Gymnasium loop
        seen = []
        single = run(
            "BCO-Ball-v0",
            agent,
            seed=5,
            isolate=True,
            progress=lambda rounds: seen.append(protection.dumpable()),
            **options,
        )
        gym_loop = run("BCO-Ball-v0", agent, seed=7, isolate=True, fast=False, **options)
        assert single.same_outcome(inside[5]) and single.loop == "isolated"
        assert gym_loop.same_outcome(inside[7]) and gym_loop.loop == "isolated-gym"
        if protection.dumpable() is not None:  # prctl(PR_GET_DUMPABLE) is Linux's
            assert seen and set(seen) == {0} and protection.dumpable() == 1
    assert children and all(child.poll() is not None for child in children)


def test_oracle_calls_are_counted_by_the_set_not_reported_by_the_agent():
    inside = run("BCO-Ball-v0", "attack_agents:QuietOracle", seed=1, **BALL)
    isolated = run("BCO-Ball-v0", "attack_agents:QuietOracle", seed=1, isolate=True, **BALL)
    assert inside.lmo_calls == 0  # what it says
    assert isolated.lmo_calls == 8 * BALL["horizon"] == isolated.stats["lmo_calls"]
    assert isolated.final_regret == inside.final_regret


@pytest.mark.parametrize("attack", ["StackWalker", "GcSearcher"])
def test_agents_that_read_the_losses_play_honestly_when_isolated(attack):
    seeds = [3, 4]
    inside = run_many("BCO-Ball-v0", f"attack_agents:{attack}", seeds, **BALL)
    isolated = run_many("BCO-Ball-v0", f"attack_agents:{attack}", seeds, isolate=True, **BALL)
    honest = run_many("BCO-Ball-v0", "attack_agents:_Honest", seeds, **BALL)
    for seed, cheat, alone, fair in zip(seeds, inside, isolated, honest, strict=True):
        assert cheat.final_regret < -5.0, seed  # each round's minimiser, in-process
        assert alone.final_regret == fair.final_regret > 5.0, seed  # nothing to read


@pytest.mark.parametrize(
    ("fault", "error", "message"),
    [
        ("raise", AgentError, r"agent 'misbehaver\[fault=raise\]' seed 9 failed in round 3: "
         r"RuntimeError: misbehaver gives up in round 3 \(in its isolated process\)"),
        ("value", ValueError, r"agent 'misbehaver\[fault=value\]' seed 9 failed in round 3: "
         r"misbehaver refuses round 3$"),
        ("exit", AgentError, r"seed 9 failed in round 3: its isolated process ended with "
         r"exit code 3 while playing round 3"),
        ("kill", AgentError, r"its isolated process was killed by SIGKILL while playing round 3"),
        ("hang", AgentError, r"its isolated process did not answer within 2 s while playing "
         r"round 3"),
        ("shape", InfeasibleActionError, r"round 3: action of shape \(5,\), expected \(4,\)"),
        ("nan", InfeasibleActionError, r"round 3"),
        ("junk", AgentError, r"its isolated process sent b'JUNK', not a message of the "
         r"protocol, while playing round 3"),
    ],
)  # fmt: skip
def test_a_misbehaving_child_fails_its_run_with_a_clear_message(
    fault, error, message, children, monkeypatch
):
    monkeypatch.setattr(isolation, "ROUND_TIMEOUT", 2.0)
    agent = f"attack_agents:Misbehaver[fault={fault}]"
    with pytest.raises(error, match=message):
        run("BCO-Ball-v0", agent, seed=9, isolate=True, **BALL)
    assert children and all(child.poll() is not None for child in children)


def test_a_failing_isolated_agent_fails_its_cells_never_the_sweep(tmp_path):
    from bco_gym.experiment import sweep
    from bco_gym.sweeps import load_failures

    agents = ["attack_agents:Misbehaver[fault=exit]", "user_agents:Jitter"]
    with pytest.warns(UserWarning, match="cells failed"):
        results = sweep(
            "BCO-Ball-v0",
            agents,
            40,
            [0, 1],
            out=tmp_path,
            env_kwargs={"n": 4},
            failures="record",
            isolate=True,
        )
    assert [r.agent for r in results] == ["jitter", "jitter"]
    assert all(r.loop == "batched-isolated" for r in results)
    failures = load_failures(tmp_path)
    assert len(failures) == 2 and all("ended with exit code 3" in f.error for f in failures)


def test_isolated_and_in_process_cells_are_kept_apart(tmp_path):
    from bco_gym.experiment import load_sweep, sweep

    options = {"out": tmp_path, "env_kwargs": {"n": 4}}
    first = sweep("BCO-Ball-v0", ["user_agents:Jitter", "fkm"], 30, [0], **options)
    second = sweep(
        "BCO-Ball-v0", ["user_agents:Jitter", "fkm"], 30, [0], isolate=["user_agents:Jitter"],
        **options,
    )  # fmt: skip
    assert [r.loop for r in first] == ["batched-lean", "batched-lean"]
    assert [r.loop for r in second] == ["batched-isolated", "batched-lean"]
    assert second[0].same_outcome(first[0]) and len(load_sweep(tmp_path)) == 3


def test_isolation_refuses_what_it_cannot_build_in_its_own_process():
    from bco_gym.agents import Agent, make_agent

    class Local(Agent):
        def _reset(self):
            return None

        def _act(self):
            return self.set.center.copy()

        def _update(self, loss, info):
            return None

    with pytest.raises(ValueError, match=r"cannot be imported there"):
        run("BCO-Ball-v0", Local, seed=0, isolate=True, **BALL)
    import gymnasium as gym

    env = gym.make("BCO-Ball-v0", n=4, horizon=60)
    with pytest.raises(ValueError, match="not a built FlaxmanAgent"):
        run(env, make_agent("fkm", env), seed=0, isolate=True)
    with pytest.raises(TypeError, match="isolate='yes' must be True or False"):
        run("BCO-Ball-v0", "fkm", seed=0, isolate="yes", **BALL)


def test_an_isolated_bandit_agent_gets_no_gradient_in_a_full_feedback_scenario():
    """In the lean, the Gymnasium and the batched loop (Entitled raises if handed more)."""
    options = {"horizon": 30, "env_kwargs": {"n": 4, "feedback": "full"}}
    for fast in (None, False):
        run("BCO-Ball-v0", "attack_agents:Entitled", seed=2, isolate=True, fast=fast, **options)
    run_many("BCO-Ball-v0", "attack_agents:Entitled", [1, 2], isolate=True, **options)
