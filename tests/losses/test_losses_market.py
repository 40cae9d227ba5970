"""Online portfolio selection on the shipped data: files, losses, constants, comparator."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from scipy.optimize import minimize

import bco_gym
from bco_gym.data import PORTFOLIO_DATASETS, portfolio_prices
from bco_gym.losses import PortfolioDataLoss, wealth
from bco_gym.sets import Simplex

DATA = Path(bco_gym.__file__).parent / "data" / "portfolio"
SHAPES = {
    "nyse_o": (5651, 36),
    "nyse_n": (6431, 23),
    "tse": (1259, 88),
    "sp500": (1276, 25),
    "msci": (1043, 24),
    "djia": (507, 30),
}


def _relatives_here(dataset: str) -> np.ndarray:
    """r_1 = p_1, r_t = p_t / p_{t-1}, computed here straight from the shipped file."""
    with np.load(DATA / f"{dataset}.npz", allow_pickle=False) as archive:
        prices = archive["prices"]
    return np.concatenate([prices[:1], prices[1:] / prices[:-1]])


def _losses(dataset: str, horizon: int | None = None) -> PortfolioDataLoss:
    losses = PortfolioDataLoss(Simplex(SHAPES[dataset][1]), dataset, horizon)
    losses.reset(np.random.default_rng(0))
    return losses


def test_shipped_files_match_the_provenance_checksums_and_shapes():
    provenance = (DATA / "PROVENANCE.md").read_text()
    listed = dict(
        re.findall(r"\| `(\w+)\.npz` \| \d+ \| \d+ \| \d+ \| `([0-9a-f]{64})` \|", provenance)
    )
    assert set(listed) == set(PORTFOLIO_DATASETS) == set(SHAPES)
    total = 0
    for dataset, digest in listed.items():
        content = (DATA / f"{dataset}.npz").read_bytes()
        total += len(content)
        assert hashlib.sha256(content).hexdigest() == digest
        prices = portfolio_prices(dataset)
        assert prices.shape == SHAPES[dataset] and prices.dtype == np.float64
        assert np.all(np.isfinite(prices)) and np.all(prices > 0)
        assert not prices.flags.writeable
    assert total < 4 * 2**20


@pytest.mark.parametrize("dataset", PORTFOLIO_DATASETS)
def test_losses_and_gradients_are_the_formula_on_the_price_relatives(dataset: str):
    relatives = _relatives_here(dataset)
    losses = _losses(dataset)
    assert losses.horizon == len(relatives) == SHAPES[dataset][0]
    rng = np.random.default_rng(1)
    rounds = [0, 1, len(relatives) - 1, *rng.choice(len(relatives), 20)]
    for t in rounds:
        x = rng.dirichlet(np.ones(relatives.shape[1]))
        assert losses.loss(int(t), x) == pytest.approx(-np.log(relatives[t] @ x), rel=1e-14)
        np.testing.assert_allclose(losses.gradient(int(t), x), -relatives[t] / (relatives[t] @ x))
    points = rng.dirichlet(np.ones(relatives.shape[1]), size=50)
    np.testing.assert_allclose(
        losses.losses(100, points), -np.log(np.sum(relatives[100:150] * points, axis=1)), rtol=1e-14
    )


@pytest.mark.parametrize("dataset", PORTFOLIO_DATASETS)
def test_constants_are_true_bounds_attained_at_vertices(dataset: str):
    relatives = _relatives_here(dataset)
    losses = _losses(dataset)
    n = relatives.shape[1]
    vertices = np.eye(n)
    # over the simplex |log <r, x>| and ||r|| / <r, x> are maximised at vertices
    values = np.abs(np.log(relatives))  # |f_t(e_i)| for every day and asset
    assert values.max() == pytest.approx(losses.bound, rel=1e-14)
    # at the vertex of the day's worst asset ||grad|| = ||r_t|| / min_i r_t,i: the largest
    # such day, found here, attains G; other days stay below
    largest = int(np.argmax(np.linalg.norm(relatives, axis=1) / relatives.min(axis=1)))
    days = [largest, *np.random.default_rng(3).choice(len(relatives), 30)]
    worst = [
        np.linalg.norm(losses.gradient(int(t), vertices[np.argmin(relatives[t])])) for t in days
    ]
    assert worst[0] == pytest.approx(losses.lipschitz, rel=1e-12)
    assert max(worst) <= losses.lipschitz
    # the properties scan every day's relatives at each reading (portable.log's Python
    # loop): read once for the 600 checks (3.5 of nyse_n's 3.9 CPU-s)
    bound, lipschitz = losses.bound, losses.lipschitz
    rng = np.random.default_rng(2)
    for t in rng.choice(len(relatives), 30):
        for x in rng.dirichlet(np.full(n, 0.3), size=20):
            assert abs(losses.loss(int(t), x)) <= bound
            assert np.linalg.norm(losses.gradient(int(t), x)) <= lipschitz


def _slsqp_best_crp(relatives: np.ndarray) -> float:
    """min over the simplex of -sum_t log <r_t, x>, by SLSQP (success and feasibility checked)."""
    days, n = relatives.shape
    scaled = relatives / relatives.mean(axis=1, keepdims=True)  # same minimiser, O(1) values

    def value(x):
        return -np.log(scaled @ x).mean()

    def gradient(x):
        return -scaled.T @ (1.0 / (scaled @ x)) / days

    solution = minimize(
        value,
        np.full(n, 1.0 / n),
        jac=gradient,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * n,
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1.0, "jac": lambda x: np.ones(n)}],
        options={"ftol": 1e-13, "maxiter": 1000},
    )
    assert solution.success, solution.message
    x = np.clip(solution.x, 0.0, None)
    assert abs(solution.x.sum() - 1.0) < 1e-9 and solution.x.min() > -1e-9
    x = x / x.sum()
    return float(-np.log(relatives @ x).sum())


@pytest.mark.parametrize(("dataset", "horizon"), [("djia", None), ("nyse_o", None), ("tse", 600)])
def test_best_crp_matches_slsqp(dataset: str, horizon: int | None):
    losses = _losses(dataset, horizon)
    relatives = _relatives_here(dataset)[: losses.horizon]
    (best,) = losses.comparator([losses.horizon])
    independent = _slsqp_best_crp(relatives)
    assert Simplex(relatives.shape[1]).contains(best.point, atol=1e-12)
    assert best.value == pytest.approx(-np.log(relatives @ best.point).sum(), rel=1e-12)
    assert 0.0 <= best.gap <= 1e-9 * losses.horizon * losses.bound
    assert best.value <= independent + 1e-9 * losses.horizon
    assert best.value - best.gap <= independent + 1e-12 * losses.horizon
    # the best CRP beats every single stock (a vertex) and the uniform CRP
    assert best.value <= -np.log(relatives).sum(axis=0).max() + 1e-9
    assert best.value <= -np.log(relatives.mean(axis=1)).sum()
    assert wealth(best.value) == pytest.approx(np.prod(relatives @ best.point), rel=1e-10)


def test_describe_reports_the_best_crp_wealth():
    losses = _losses("msci")
    description = losses.describe()
    (best,) = losses.comparator([losses.horizon])
    assert description == {
        "name": "portfolio-data",
        "dataset": "msci",
        "horizon": 1043,
        "assets": 24,
        "best_crp_wealth": float(np.exp(-best.value)),
    }
    assert wealth(np.array([0.0, np.log(2.0)])) == pytest.approx([1.0, 0.5])


def test_horizon_rules_on_the_loss_and_through_gym_make():
    env = gym.make("BCO-Portfolio-v0", dataset="djia").unwrapped
    assert env.horizon == 507 and env.set.shape == (30,)
    shorter = gym.make("BCO-Portfolio-v0", dataset="djia", horizon=100).unwrapped
    assert shorter.horizon == shorter.losses.horizon == 100
    relatives = _relatives_here("djia")
    assert shorter.losses.bound == pytest.approx(np.abs(np.log(relatives[:100])).max())
    shorter.reset(seed=0)
    with pytest.raises(ValueError, match="round 100 is past the sequence's horizon 100"):
        shorter.losses.loss(100, np.full(30, 1 / 30))
    with pytest.raises(
        ValueError, match="horizon=508 is past the end of dataset 'djia'; the maximum is 507"
    ):
        gym.make("BCO-Portfolio-v0", dataset="djia", horizon=508)
    with pytest.raises(ValueError, match="horizon=0 must be an integer >= 1"):
        PortfolioDataLoss(Simplex(30), "djia", 0)
    with pytest.raises(
        ValueError, match="dataset='nasdaq' is not allowed; allowed: nyse_o, nyse_n"
    ):
        gym.make("BCO-Portfolio-v0", dataset="nasdaq")
    with pytest.raises(ValueError, match=r"has 30 assets, so the set must be Simplex\(30\)"):
        PortfolioDataLoss(Simplex(5), "djia")


def test_an_episode_pays_log_wealth_and_does_not_depend_on_the_seed():
    relatives = _relatives_here("sp500")[:40]
    runs = []
    for seed in (0, 1, 0):
        env = gym.make("BCO-Portfolio-v0", dataset="sp500", horizon=40)
        env.reset(seed=seed)
        x = np.full(25, 1 / 25)
        rewards = [env.step(x)[1] for _ in range(40)]
        runs.append(rewards)
    np.testing.assert_allclose(runs[0], np.log(relatives @ np.full(25, 1 / 25)), rtol=1e-13)
    assert runs[0] == runs[1] == runs[2]
    assert wealth(-sum(runs[0])) == pytest.approx(np.prod(relatives.mean(axis=1)), rel=1e-12)


def test_final_wealth_of_a_run_is_the_last_entry_of_its_wealth_curve():
    from bco_gym.agents.base import Agent
    from bco_gym.experiment import run
    from bco_gym.losses import final_wealth

    class Uniform(Agent):
        name = "uniform"

        def _reset(self) -> None:
            pass

        def _act(self) -> np.ndarray:
            return self.set.center

        def _update(self, loss, info) -> None:
            pass

    env = gym.make("BCO-Portfolio-v0", dataset="sp500", horizon=40)
    result = run(env, Uniform(env.unwrapped.problem), seed=0)
    curve = wealth(result.cumulative_loss)
    assert curve.shape == result.cumulative_loss.shape  # the curve, one per checkpoint
    assert final_wealth(result) == curve[-1] == final_wealth(result.cumulative_loss)
    relatives = _relatives_here("sp500")[:40]
    assert final_wealth(result) == pytest.approx(np.prod(relatives.mean(axis=1)), rel=1e-12)
    with pytest.raises(ValueError, match=r"final_wealth: .*got shape \(0,\)"):
        final_wealth(np.array([]))
