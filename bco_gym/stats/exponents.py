"""Fitted regret exponents (the empirical Table 1).

For horizons T_1 < ... < T_H and seeds s, let
m_i be the mean over seeds of the final regret R_{i,s}. The slope is the ordinary
least-squares slope of log m_i against log T_i. Its confidence interval is a
percentile bootstrap over seeds: resample the seeds with replacement (the same
resample at every horizon, since seed s fixes one loss sequence whose prefixes all
horizons share), recompute the m_i and the slope, and take the (1 - level)/2 and
(1 + level)/2 quantiles of the slopes (resamples with a non-positive mean regret at
some horizon, where the log is undefined, are dropped and counted). The interval
measures seed-to-seed noise only, not the bias of lower-order terms at small T.

"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from bco_gym.engine.result import THEORY_EXPONENTS, RunResult
from bco_gym.losses.verification import EXACT
from bco_gym.stats.groups import comparator_text, group_results, mean_std, scale_column
from bco_gym.stats.paired import is_full_information


@dataclass(frozen=True)
class ExponentFit:
    """One row of an ``exponents`` table: the fitted slope of log regret vs log T."""

    env_id: str
    agent: str
    constants: str
    scale: str
    horizons: tuple[int, ...]
    regret_mean: tuple[float, ...]
    regret_std: tuple[float, ...]
    seeds: int
    slope: float
    low: float
    high: float
    level: float
    dropped_resamples: int
    theory: float | None
    lmo_per_round: float
    projections_per_round: float
    comparator: str = EXACT
    #: Whether the agent learned from gradients, read from the runs themselves
    #: (:func:`~bco_gym.stats.paired.is_full_information`), so that a user's
    #: full-information agent is drawn as one without a built-in's name.
    full_information: bool = False


def fit_exponent(
    horizons: Sequence[int],
    regrets: np.ndarray,
    *,
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float, float, int]:
    """(slope, low, high, dropped resamples) for regrets of shape (horizons, seeds).

    See the module docstring for the method. With one seed the interval is (nan, nan).
    """
    log_horizons = np.log(np.asarray(horizons, dtype=float))
    regrets = np.asarray(regrets, dtype=float)
    if regrets.ndim != 2 or regrets.shape[0] != len(log_horizons) or len(log_horizons) < 2:
        raise ValueError(
            f"fit_exponent needs regrets of shape (horizons >= 2, seeds), got {regrets.shape} "
            f"for {len(log_horizons)} horizons"
        )
    means = regrets.mean(axis=1)
    slope = _log_slope(log_horizons, means)
    seeds = regrets.shape[1]
    if seeds < 2:
        return slope, math.nan, math.nan, 0
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, seeds, size=(resamples, seeds))
    resampled_means = regrets[:, picks].mean(axis=2)  # (horizons, resamples)
    usable = np.all(resampled_means > 0, axis=0)
    centred = log_horizons - log_horizons.mean()
    slopes = centred @ np.log(resampled_means[:, usable]) / (centred @ centred)
    if slopes.size == 0:
        return slope, math.nan, math.nan, int(resamples)
    low, high = np.quantile(slopes, [(1 - level) / 2, (1 + level) / 2])
    return slope, float(low), float(high), int(resamples - usable.sum())


def _log_slope(log_horizons: np.ndarray, means: np.ndarray) -> float:
    if np.any(means <= 0):
        return math.nan
    centred = log_horizons - log_horizons.mean()
    return float(centred @ np.log(means) / (centred @ centred))


def fit_exponents(results: Iterable[RunResult], *, level: float = 0.95) -> list[ExponentFit]:
    """One :class:`ExponentFit` per (env, agent, constants) over its horizons.

    Every horizon of a group must have the same seeds (a full grid).
    """
    fits = []
    for (env_id, agent, constants, _), group in group_results(results, False).items():
        horizons = sorted({r.horizon for r in group})
        seeds = sorted({r.seed for r in group})
        table = {(r.horizon, r.seed): r for r in group}
        missing = [(h, s) for h in horizons for s in seeds if (h, s) not in table]
        if missing:
            raise ValueError(f"{agent}: no result for (horizon, seed) {missing[:3]}")
        regrets = np.array([[table[h, s].final_regret for s in seeds] for h in horizons])
        if len(horizons) < 2:
            raise ValueError(f"{agent}: an exponent needs at least two horizons, got {horizons}")
        slope, low, high, dropped = fit_exponent(horizons, regrets, level=level)
        largest = [table[horizons[-1], s] for s in seeds]
        rounds = horizons[-1] * len(seeds)
        fits.append(
            ExponentFit(
                env_id=env_id,
                agent=agent,
                constants=constants,
                scale=scale_column(group[0]),
                horizons=tuple(horizons),
                regret_mean=tuple(float(v) for v in regrets.mean(axis=1)),
                regret_std=tuple(mean_std(row)[1] for row in regrets),
                seeds=len(seeds),
                slope=slope,
                low=low,
                high=high,
                level=level,
                dropped_resamples=dropped,
                theory=theory_exponent(agent, group[0]),
                lmo_per_round=sum(r.lmo_calls for r in largest) / rounds,
                projections_per_round=sum(r.projections for r in largest) / rounds,
                comparator=comparator_text(group),
                full_information=any(is_full_information(r) for r in group),
            )
        )
    return fits


def theory_exponent(agent: str, result: RunResult | None = None) -> float | None:
    """a of the agent's O(T^a) guarantee: the one ``result`` (a run of it) recorded in
    its ``agent_spec`` (what a factory's agent declared), else its declared
    ``regret_exponent`` (a user agent's too), else the built-in table; None when it
    declares none (fit only)."""
    from bco_gym.agents import find_agent

    recorded = (result.agent_spec or {}).get("regret_exponent") if result is not None else None
    if recorded is not None:
        return float(recorded)
    spec = find_agent(agent)
    if spec is not None and spec.regret_exponent is not None:
        return spec.regret_exponent
    return THEORY_EXPONENTS.get(agent)


__all__ = ["ExponentFit", "fit_exponent", "fit_exponents", "theory_exponent"]
