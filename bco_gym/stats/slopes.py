"""Local slopes and bootstrap bands of regret exponents (the data of the exponents figure).

:func:`~bco_gym.stats.exponents.fit_exponent` fits one slope over all horizons; these
say whether that slope has settled. The bootstrap is the one of ``fit_exponent`` (seeds
resampled with replacement, the same resample at every horizon, the same generator
seed), so the band and the slope interval come from the same resamples.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from bco_gym.engine.result import RunResult
from bco_gym.stats.groups import group_results


@dataclass(frozen=True)
class ExponentBand:
    """Bootstrap band of an exponent fit, and the local slopes between successive horizons.

    With the resamples of :func:`~bco_gym.stats.exponents.fit_exponent` (the same seeds
    resampled at every horizon, the same generator seed), ``line_low``/``line_high`` are
    the pointwise
    (1 -+ level)/2 quantiles, at each horizon, of the resampled least-squares lines
    exp(mean log m* + slope* (log T - mean log T)). The local slope between T_i and
    T_{i+1} is log(m_{i+1}/m_i) / log(T_{i+1}/T_i), placed at sqrt(T_i T_{i+1}), with
    its percentile interval over the same resamples (nan with one seed).
    """

    env_id: str
    agent: str
    constants: str
    scale: str
    horizons: tuple[int, ...]
    line_low: tuple[float, ...]
    line_high: tuple[float, ...]
    midpoints: tuple[float, ...]
    local_slopes: tuple[float, ...]
    local_low: tuple[float, ...]
    local_high: tuple[float, ...]
    level: float


def local_slopes(horizons: Sequence[int], means: np.ndarray) -> np.ndarray:
    """log(m_{i+1}/m_i) / log(T_{i+1}/T_i) along axis 0 (nan where a mean is not positive)."""
    log_horizons = np.log(np.asarray(horizons, dtype=float))
    means = np.asarray(means, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.where(means > 0, np.log(np.where(means > 0, means, 1.0)), np.nan)
    steps = np.diff(log_horizons).reshape((-1,) + (1,) * (means.ndim - 1))
    return np.diff(logs, axis=0) / steps


def exponent_band(
    horizons: Sequence[int],
    regrets: np.ndarray,
    *,
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """Band and local slopes (see :class:`ExponentBand`) for regrets of shape (horizons, seeds).

    Keys: ``line_low``, ``line_high`` (per horizon), ``local_slopes``, ``local_low``,
    ``local_high`` (per pair of successive horizons).
    """
    regrets = np.asarray(regrets, dtype=float)
    log_horizons = np.log(np.asarray(horizons, dtype=float))
    band = {
        "line_low": np.full(len(log_horizons), np.nan),
        "line_high": np.full(len(log_horizons), np.nan),
        "local_slopes": local_slopes(horizons, regrets.mean(axis=1)),
        "local_low": np.full(len(log_horizons) - 1, np.nan),
        "local_high": np.full(len(log_horizons) - 1, np.nan),
    }
    seeds = regrets.shape[1]
    if seeds < 2:
        return band
    picks = np.random.default_rng(seed).integers(0, seeds, size=(resamples, seeds))
    resampled = regrets[:, picks].mean(axis=2)  # (horizons, resamples), as in fit_exponent
    logs = np.log(resampled[:, np.all(resampled > 0, axis=0)])
    if logs.shape[1] == 0:
        return band
    centred = log_horizons - log_horizons.mean()
    fitted_slopes = centred @ logs / (centred @ centred)
    lines = np.exp(logs.mean(axis=0) + np.outer(centred, fitted_slopes))
    local = np.diff(logs, axis=0) / np.diff(log_horizons)[:, None]
    quantiles = [(1 - level) / 2, (1 + level) / 2]
    band["line_low"], band["line_high"] = np.quantile(lines, quantiles, axis=1)
    band["local_low"], band["local_high"] = np.quantile(local, quantiles, axis=1)
    return band


def exponent_bands(results: Iterable[RunResult], *, level: float = 0.95) -> list[ExponentBand]:
    """One :class:`ExponentBand` per (env, agent, constants, scale), in
    :func:`~bco_gym.stats.exponents.fit_exponents` order.

    Every horizon of a group must have the same seeds (a full grid).
    """
    bands = []
    for (env_id, agent, constants, scale), group in group_results(results, False).items():
        horizons = sorted({r.horizon for r in group})
        seeds = sorted({r.seed for r in group})
        table = {(r.horizon, r.seed): r for r in group}
        if len(table) != len(horizons) * len(seeds) or len(horizons) < 2:
            raise ValueError(
                f"{agent}: a band needs a full grid of >= 2 horizons x seeds, got "
                f"{len(table)} results for horizons {horizons} and seeds {seeds}"
            )
        regrets = np.array([[table[h, s].final_regret for s in seeds] for h in horizons])
        band = exponent_band(horizons, regrets, level=level)
        bands.append(
            ExponentBand(
                env_id=env_id,
                agent=agent,
                constants=constants,
                scale=scale,
                horizons=tuple(horizons),
                midpoints=tuple(float(np.sqrt(a * b)) for a, b in itertools.pairwise(horizons)),
                level=level,
                **{key: tuple(float(v) for v in values) for key, values in band.items()},
            )
        )
    return bands


__all__ = [
    "ExponentBand",
    "exponent_band",
    "exponent_bands",
    "local_slopes",
]
