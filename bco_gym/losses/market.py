"""Online portfolio selection on real market data: f_t(x) = -log <r_t, x> on the simplex.

Data: one of the six classic price series shipped in :mod:`bco_gym.data`
(``nyse_o``, ``nyse_n``, ``tse``, ``sp500``, ``msci``, ``djia``; provenance, licence and
checksums in ``bco_gym/data/portfolio/PROVENANCE.md``). With p_t the prices of day t
(t = 1..T, every price 1 on day 0), the price relatives are r_1 = p_1 and
r_t = p_t / p_{t-1}; round t - 1 in code is day t, so the horizon T is the number of
rows. x is a constantly rebalanced portfolio over the n assets, and
sum_t f_t(x) = -log(wealth of x after T days, starting from 1): :func:`wealth` turns a
cumulative loss back into wealth. The sequence is the data: the seed changes nothing.

Constants (true bounds over the simplex, from the rows used): <r_t, x> lies in
[min_i r_{t,i}, max_i r_{t,i}], so |f_t(x)| <= M = max_t max(|log min_i r_{t,i}|,
|log max_i r_{t,i}|); the gradient -r_t / <r_t, x> has norm at most
G = max_t ||r_t|| / min_i r_{t,i}. Both are attained: M at the vertex of the extreme
asset of the extreme day, G at the vertex of the day's worst asset (both rounded up by
16 ulps, so that values computed another way stay below them).

Comparator: the best constantly rebalanced portfolio (Cover 1991), by the synthetic
``portfolio`` family's projected Newton method, certified by the Frank-Wolfe gap
(:class:`bco_gym.losses.portfolio.PortfolioLoss`). The data do not depend on the seed,
so comparators are computed once per instance and kept.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from bco_gym import portable
from bco_gym.data import PORTFOLIO_DATASETS, portfolio_prices, price_relatives
from bco_gym.losses.base import Comparator, LossSequence, Params, check_checkpoints
from bco_gym.losses.portfolio import PortfolioLoss
from bco_gym.sets import Simplex
from bco_gym.sets.base import ConvexSet

# G and M are maxima of computed quantities; a loss or gradient norm computed another way
# (a dot product, a norm of -r/<r, x>) can exceed them by an ulp or two, so round up.
ROUND_UP = 1.0 + 16 * np.finfo(float).eps


def wealth(cumulative_loss: float | np.ndarray) -> float | np.ndarray:
    """exp(-cumulative loss), entry by entry: the wealth (from 1) of a portfolio whose
    summed loss is given.

    A number gives a number; an array gives an array of the same shape. So
    ``wealth(result.cumulative_loss)`` is the wealth *curve* of a run, one value per
    checkpoint (``result.checkpoints``); its last entry, :func:`final_wealth`, is the
    run's final wealth.
    """
    return portable.exp(-np.asarray(cumulative_loss, dtype=float))


def final_wealth(run: Any) -> float:
    """The wealth (from 1) at the end of a run: exp(-sum_t f_t(x_t)) after its last round.

    Args:
        run: a run's result (anything with a ``cumulative_loss`` curve whose last entry is
            at the horizon, such as a ``RunResult``), or a cumulative-loss curve itself
            (a number or a 1-d array; its last entry counts).

    Raises ValueError for an empty curve or one of more than one dimension.
    """
    curve = np.asarray(getattr(run, "cumulative_loss", run), dtype=float)
    if curve.ndim > 1 or curve.size == 0:
        raise ValueError(
            f"final_wealth: expected a run's cumulative-loss curve (a number or a 1-d "
            f"array with at least one entry), got shape {curve.shape}"
        )
    return float(portable.exp(-curve.reshape(-1)[-1]))


def dataset_shape(dataset: str) -> tuple[int, int]:
    """(days, assets) of a shipped data set (ValueError for an unknown name)."""
    return portfolio_prices(dataset).shape


class PortfolioDataLoss(PortfolioLoss):
    """-log <r_t, x> with the price relatives of a real data set (module docstring).

    Args:
        convex_set: the simplex over the data set's assets (``Simplex(assets)``).
        dataset: one of ``nyse_o`` (default), ``nyse_n``, ``tse``, ``sp500``, ``msci``,
            ``djia``.
        horizon: the number of days used, the first ones (default: all rows; at most
            the number of rows).
    """

    stationary = False

    name = "portfolio-data"

    def __init__(self, convex_set: ConvexSet, dataset: str = "nyse_o", horizon: int | None = None):
        LossSequence.__init__(self, convex_set)
        relatives = price_relatives(portfolio_prices(dataset))
        days, assets = relatives.shape
        if convex_set.dim != assets:
            raise ValueError(
                f"{self.name} loss: dataset {dataset!r} has {assets} assets, so the set must "
                f"be Simplex({assets}); got {convex_set!r}"
            )
        self.horizon = _check_horizon(self.name, dataset, horizon, days)
        self.dataset = dataset
        self.n = assets
        self.relatives = relatives[: self.horizon]
        self.relatives.setflags(write=False)
        self._comparators: dict[int, Comparator] = {}

    @classmethod
    def supports(cls, convex_set: ConvexSet) -> bool:
        return isinstance(convex_set, Simplex)

    @classmethod
    def support_note(cls) -> str:
        return "it is defined on the simplex (Simplex) over the data set's assets only"

    @property
    def lipschitz(self) -> float:
        norms = np.sqrt((self.relatives * self.relatives).sum(axis=1))
        return float(np.max(norms / self.relatives.min(axis=1))) * ROUND_UP

    @property
    def bound(self) -> float:
        low, high = self.relatives.min(axis=1), self.relatives.max(axis=1)
        return (
            float(max(np.max(np.abs(portable.log(low))), np.max(np.abs(portable.log(high)))))
            * ROUND_UP
        )

    def _repr_fields(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "horizon": self.horizon, "assets": self.n}

    def describe(self) -> dict[str, Any]:
        """Name, data set, horizon, assets, and the best constantly rebalanced portfolio's
        final wealth over the horizon (from the cached comparator)."""
        (best,) = self.comparator([self.horizon])
        return {
            "name": self.name,
            "dataset": self.dataset,
            "horizon": self.horizon,
            "assets": self.n,
            "best_crp_wealth": float(wealth(best.value)),
        }

    def _floats_per_round(self) -> int:
        return self.set.dim

    def _draw_globals(self, rng: np.random.Generator) -> Params:
        return {}

    def _draw_chunk(self, rng: np.random.Generator, first: int, size: int) -> Params:
        return {"relatives": self.relatives[first : first + size]}

    def comparator(self, checkpoints: Sequence[int]) -> list[Comparator]:
        stops = check_checkpoints(checkpoints)
        self._check_within_horizon(stops[-1])
        if self._seed is None:  # the data need no seed; reading chunks does
            self.reset(np.random.default_rng(0))
        missing = [stop for stop in stops if stop not in self._comparators]
        if missing:
            for result in super().comparator(missing):
                self._comparators[result.horizon] = result
        return [self._comparators[stop] for stop in stops]


def _check_horizon(family: str, dataset: str, horizon: Any, days: int) -> int:
    if horizon is None:
        return days
    if isinstance(horizon, bool) or not isinstance(horizon, numbers.Integral) or horizon < 1:
        raise ValueError(f"{family} loss: horizon={horizon!r} must be an integer >= 1")
    if horizon > days:
        raise ValueError(
            f"{family} loss: horizon={horizon!r} is past the end of dataset {dataset!r}; "
            f"the maximum is {days} (its number of days)"
        )
    return int(horizon)


__all__ = ["PORTFOLIO_DATASETS", "PortfolioDataLoss", "dataset_shape", "wealth"]
