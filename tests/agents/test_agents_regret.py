"""Sublinear regret in practice: L2Ball(5), linear losses (r = R there, so Theorem 1's
smoothing radius c T^(-1/4) is below r once T > (c/r)^4 = 25).

Measured with 2 seeds (1 for the deterministic full-information agents). Regret/T
must fall from T = 1,000 to T = 20,000 for every agent, and at T = 20,000 the bandit
agents must beat the random agent (regret ~ T/2 here: ||mu|| R = 0.5 per round) by a
wide margin: BBCG and FKM (O(T^(3/4))) by at least a factor 2, BFW (O(T^(4/5)), the
slowest rate) by a factor 1.4. At the default scales they measured about 0.37, 0.44
and 0.61 times the random agent's regret, so the margins leave room for seed noise.
"""

from __future__ import annotations

import numpy as np
import pytest
from agent_helpers import build

from bco_gym.agents import AGENTS
from bco_gym.agents.kernels import SWITCH
from bco_gym.sets import L2Ball

#: The module's measurements take half a minute of one core: run first (tests/conftest.py).
pytestmark = pytest.mark.slow

HORIZONS = (1_000, 20_000)
SEEDS = (0, 1)  # the deterministic full-information agents use the first only


def _linear_table(loss, horizon):
    """theta_t and <theta_t, c> of rounds 0..horizon-1 (one vectorised read)."""
    parts = [
        (params["theta"][part], params["offset"][part])
        for *_, params, part in loss.chunks(0, horizon)
    ]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


#: Overrides of the theorems' defaults: Theorem 11's c = 20 R sqrt(dM) keeps loo-bbgd's
#: K_{delta/r} at the centre alone until T = (20 sqrt(5))^4 = 4 * 10^6 on this ball; its c
#: here gives delta = r/2 at T = 1,000 (its own tests check the theorem's defaults).
OVERRIDES = {"loo-bbgd": {"c": 0.5 * 1_000**0.25}}


def _mean_regret(name: str, horizon: int) -> float:
    """Mean regret over SEEDS with a lean loop (losses read from the loss's own table)."""
    ball = L2Ball(5)
    agent, loss = build(name, ball, horizon, **OVERRIDES.get(name, {}))
    full = AGENTS[name].feedback == "full"
    regrets = []
    for seed in SEEDS[:1] if full else SEEDS:
        loss.reset(np.random.default_rng(seed))
        agent.reset(seed=seed + 100)
        theta, offset = _linear_table(loss, horizon)
        total, t = 0.0, 0
        while t < horizon:
            if agent.supports_blocks:
                plays = agent.block_actions()
                values = np.einsum("ij,ij->i", theta[t : t + len(plays)], plays)
                values -= offset[t : t + len(plays)]
                agent.update_block(values)
                total += values.sum()
                t += len(plays)
            else:
                value = float(theta[t] @ agent.act(None)) - offset[t]
                agent.update(value, {"gradient": theta[t]} if full else None)
                total += value
                t += 1
        regrets.append(total - loss.comparator([horizon])[0].value)
    return float(np.mean(regrets))


#: Left out: the RL agents (tests/rl), the two-point agents (test_agents_two_point.py) and
#: bandit-newton, whose Theorem 7 step size (~1e-40 here) holds x_t at x_1 for every
#: practical T, so its regret is linear at these horizons (as random's: it explores around
#: the centre; test_agents_bandit_newton.py and docs/results.md's exponent table).
LEFT_OUT = ("bandit-newton",)
CORE = [
    name
    for name in AGENTS
    if not name.startswith("sb3-") and AGENTS[name].feedback != "two-point" and name not in LEFT_OUT
]


@pytest.fixture(scope="module")
def measured() -> dict[tuple[str, int], float]:
    # so-bgd's and fejer-bgd's separation steps and saha-tewari's Newton solve through their
    # compiled kernels (the same bits as their NumPy code: test_agents_separation_kernel.py,
    # test_agents_saha_tewari_kernel.py), which "auto" keeps for runs of 100,000 run-rounds
    # on: the same regrets in about half the time (saha-tewari's 40,000 rounds cost 20 s).
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SWITCH, "on")
        return {(name, T): _mean_regret(name, T) for name in CORE for T in HORIZONS}


@pytest.mark.parametrize("name", CORE)
def test_regret_per_round_decreases_with_the_horizon(measured, name):
    short, long = (measured[name, T] / T for T in HORIZONS)
    if name == "random":  # the control: no learning, regret/T stays near ||mu|| R = 0.5
        assert short == pytest.approx(0.5, abs=0.05) and long == pytest.approx(0.5, abs=0.02)
    else:
        assert long < 0.9 * short, f"{name}: regret/T {short:.3f} -> {long:.3f}"


@pytest.mark.parametrize("name, margin", [("bbcg", 2.0), ("fkm", 2.0), ("bfw", 1.4)])
def test_bandit_agents_beat_random_by_a_wide_margin(measured, name, margin):
    horizon = HORIZONS[-1]
    assert measured[name, horizon] * margin <= measured["random", horizon]


def test_full_information_reference_lines(measured):
    """OGD (O(sqrt(T))) far below everything; OFW below the bandit agents."""
    horizon = HORIZONS[-1]
    assert measured["ogd", horizon] < 0.05 * measured["random", horizon]
    assert measured["ofw", horizon] < min(measured[n, horizon] for n in ("bbcg", "fkm", "bfw"))
