"""The integrity checks of bench: fresh seeds, their agreement test, the regret floor.

The agreement test against the exact Mann-Whitney test on one stratum and against its
own null distribution (uniform p-values, false alarms at the level); the regret floor as
a true bound (no honest agent flagged, the minimiser-playing agent flagged); the fresh
seeds' range and the agent seed they give.
"""

from __future__ import annotations

import hashlib
import math
import types

import numpy as np
import pytest
from scipy import stats

from bco_gym.engine import agent_seed_for
from bco_gym.engine.preparation import FRESH_SEED_FLOOR
from bco_gym.reports.integrity import (
    AGREEMENT_LEVEL,
    agreement,
    draw_fresh_seeds,
    floors,
    is_stationary,
)


# -- fresh seeds and the agent's seed -----------------------------------------------------------
def test_fresh_seeds_are_distinct_128_bit_draws():
    seeds = draw_fresh_seeds(50)
    assert len(set(seeds)) == 50
    assert all(2**127 <= seed < 2**128 for seed in seeds)
    assert len({seed & 0xFFFF for seed in seeds}) > 40  # not a counter
    assert set(seeds).isdisjoint(draw_fresh_seeds(50))
    for bad in (1, 0, 2.0, True, "3"):
        with pytest.raises(ValueError, match="must be an integer >= 2"):
            draw_fresh_seeds(bad)


def test_public_seeds_keep_their_agent_seed_and_fresh_ones_get_a_digest():
    for seed in (0, 1, 999, 2**64 - 1):  # every public seed: as every result so far
        expected = np.random.SeedSequence([seed, 1]).generate_state(1, np.uint64)[0]
        assert agent_seed_for(seed) == int(expected)
    seed = 2**127 + 12345
    digest = hashlib.sha256(b"bco_gym agent seed\x00" + seed.to_bytes(16, "big")).digest()
    assert agent_seed_for(seed) == int.from_bytes(digest[:8], "little")
    assert agent_seed_for(FRESH_SEED_FLOOR) != agent_seed_for(FRESH_SEED_FLOOR + 1)
    public = {agent_seed_for(s) for s in range(1000)}  # what the seed-inverting agent searches
    assert public.isdisjoint(agent_seed_for(s) for s in draw_fresh_seeds(20))


# -- the agreement test ---------------------------------------------------------------------------
def test_one_stratum_is_the_exact_two_sided_rank_sum_test(monkeypatch):
    from bco_gym.reports import integrity

    rng = np.random.default_rng(4)
    for _ in range(4):
        public, fresh = rng.normal(size=7), rng.normal(0.8, 1.0, size=5)
        exact = stats.mannwhitneyu(fresh, public, alternative="two-sided", method="exact").pvalue
        found = agreement("x", {"s": public}, {"s": fresh})  # 792 relabellings: enumerated
        assert found.p_value == pytest.approx(exact, rel=1e-12)
        assert found.smallest_p == pytest.approx(2 / math.comb(12, 5))
        monkeypatch.setattr(integrity, "EXACT_LABELLINGS", 10)  # drawn instead
        drawn = agreement("x", {"s": public}, {"s": fresh}, draws=40_000)
        monkeypatch.undo()
        assert abs(drawn.p_value - exact) < 4 * math.sqrt(exact * (1 - exact) / 40_000) + 1e-4


def test_the_agreement_test_holds_its_level_under_the_null():
    """Exchangeable scores (heavy-tailed, scales differing by scenario): the p-values are
    uniform, so the test rejects at about its level and no more."""
    rng = np.random.default_rng(11)
    p_values = []
    for _ in range(300):
        public, fresh = {}, {}
        for name, scale in (("a", 1.0), ("b", 50.0), ("c", 0.01)):
            values = scale * rng.standard_t(2, size=10)
            public[name], fresh[name] = values[:6], values[6:]
        p_values.append(agreement("x", public, fresh, draws=2_000).p_value)
    p_values = np.array(p_values)
    assert np.mean(p_values <= 0.05) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 300)
    assert stats.kstest(p_values, "uniform").pvalue > 1e-3


def test_an_agent_that_recognises_the_public_seeds_disagrees():
    """Score 0 on every public seed, an honest agent's scores on the fresh ones: flagged
    over three scenarios of four seeds each, although no one scenario could be."""
    rng = np.random.default_rng(2)
    public = {name: np.zeros(4) for name in "abc"}
    fresh = {name: rng.uniform(0.3, 0.9, size=4) for name in "abc"}
    found = agreement("cheat", public, fresh)
    assert found.disagree and found.p_value < 1e-3 and found.statistic > 0
    assert found.superiority == {"a": 1.0, "b": 1.0, "c": 1.0}
    alone = agreement("cheat", {"a": public["a"]}, {"a": fresh["a"]})
    assert not alone.conclusive and not alone.disagree  # 2 / C(8, 4) = 0.029 > 0.01
    honest = agreement("honest", fresh, {n: rng.uniform(0.3, 0.9, size=4) for n in "abc"})
    assert not honest.disagree
    assert AGREEMENT_LEVEL == 0.01


def test_scenarios_without_scores_on_both_sides_are_left_out():
    found = agreement("x", {"a": [0.1, 0.2], "b": [0.3, math.nan]}, {"a": [0.4, 0.5]})
    assert set(found.public) == {"a"} and found.public["a"].tolist() == [0.1, 0.2]
    empty = agreement("x", {"a": [0.1]}, {"b": [0.2]})
    assert math.isnan(empty.p_value) and not empty.disagree


# -- the regret floor ---------------------------------------------------------------------------
def _result(agent, regret, gap=0.0, horizon=1000, family="linear", bound=1.0, lipschitz=1.0):
    return types.SimpleNamespace(
        agent=agent,
        final_regret=regret,
        final_gap=gap,
        horizon=horizon,
        loss={"name": family},
        problem={"bound": bound, "lipschitz": lipschitz, "outer_radius": 1.0},
    )


def test_the_floor_statistic_by_hand():
    runs = {
        "iid": [_result("a", -100.0, gap=1.0), _result("a", -50.0), _result("b", 3.0)],
        "drift": [_result("a", -900.0, family="linear-drift")],  # not stationary: not tested
    }
    found = {floor.agent: floor for floor in floors(runs)}
    assert set(found) == {"a", "b"}
    a = found["a"]
    assert a.spread == 2.0 and a.rounds == 2000 and a.total == -149.0
    assert a.statistic == pytest.approx(-149.0 / (2.0 * math.sqrt(4000)))
    assert a.threshold == pytest.approx(-math.sqrt(math.log(2 / 0.001)))
    assert a.floor == pytest.approx(a.threshold * 2.0 * math.sqrt(4000))
    assert not a.suspect  # -1.18 > -2.76
    runs["iid"].append(_result("c", -400.0))
    assert [floor.agent for floor in floors(runs) if floor.suspect] == ["c"]


def test_stationary_families():
    assert is_stationary(_result("a", 0.0, family="linear"))
    assert is_stationary(_result("a", 0.0, family="quadratic"))
    for family in ("linear-switching", "linear-drift", "linear-adversarial", "array", "x"):
        assert not is_stationary(_result("a", 0.0, family=family))


def test_the_floor_is_a_true_bound_for_honest_agents_and_catches_a_minimiser():
    """Honest agents (random play, FKM, BFW) on the i.i.d. ball, quadratic and box
    scenarios stay above the floor by far; an agent that plays each round's minimiser
    (it reads the losses from the stack) falls below it."""
    from bco_gym.experiment import run_many

    runs = {}
    for name, env_id, kwargs in (
        ("ball", "BCO-Ball-v0", {"n": 10}),
        ("quadratic", "BCO-Ball-v0", {"n": 5, "loss": "quadratic"}),
        ("box", "BCO-Hypercube-v0", {"n": 5}),
    ):
        runs[name] = [
            result
            for agent in ("random", "fkm", "bfw")
            for result in run_many(env_id, agent, list(range(6)), horizon=1000, env_kwargs=kwargs)
        ]
    honest = floors(runs)
    assert len(honest) == 9 and not any(floor.suspect for floor in honest)
    assert min(floor.statistic for floor in honest) > 0.5
    runs["ball"] += run_many(
        "BCO-Ball-v0", "attack_agents:StackWalker", list(range(6)), horizon=1000,
        env_kwargs={"n": 10},
    )  # fmt: skip
    caught = [floor for floor in floors(runs) if floor.suspect]
    assert [(floor.agent, floor.scenario) for floor in caught] == [("stack-walker", "ball")]
