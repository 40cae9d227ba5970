"""Local slopes and bootstrap bands of regret exponents."""

from __future__ import annotations

import math

import numpy as np
import pytest
from synthetic_results import synthetic_result

from bco_gym.reports.summary import fit_exponents
from bco_gym.stats.slopes import exponent_band, exponent_bands, local_slopes


def test_local_slopes_are_log_ratios():
    slopes = local_slopes([100, 1600, 3200], np.array([10.0, 40.0, 40.0 * 2**0.9]))
    np.testing.assert_allclose(slopes, [0.5, 0.9], rtol=1e-12)
    assert np.isnan(local_slopes([1, 2], np.array([0.0, 1.0]))[0])


def test_an_exact_power_law_has_a_degenerate_band():
    horizons = [100, 1000, 10000]
    factors = np.array([1.0, 2.0, 3.5, 0.5])  # per seed: R = a_s T^0.75
    regrets = np.outer(np.array(horizons, dtype=float) ** 0.75, factors)
    band = exponent_band(horizons, regrets)
    means = regrets.mean(axis=1)
    np.testing.assert_allclose(band["local_slopes"], [0.75, 0.75], rtol=1e-12)
    np.testing.assert_allclose(band["local_low"], 0.75, rtol=1e-9)
    np.testing.assert_allclose(band["local_high"], 0.75, rtol=1e-9)
    # every resampled line is a power law with slope 0.75: the band brackets the data
    assert np.all(band["line_low"] <= means * (1 + 1e-9))
    assert np.all(band["line_high"] >= means * (1 - 1e-9))
    assert np.all(band["line_high"] > band["line_low"])  # the seeds' scale differs


def test_a_noisy_band_covers_the_fitted_line_and_one_seed_has_none():
    rng = np.random.default_rng(3)
    horizons = [100, 400, 1600, 6400]
    regrets = np.outer(np.array(horizons, dtype=float) ** 0.8, np.ones(6))
    regrets *= rng.uniform(0.7, 1.3, size=regrets.shape)
    band = exponent_band(horizons, regrets)
    logs, means = np.log(horizons), regrets.mean(axis=1)
    slope = np.polyfit(logs, np.log(means), 1)[0]
    line = np.exp(np.log(means).mean() + slope * (logs - logs.mean()))
    assert np.all(band["line_low"] < line) and np.all(line < band["line_high"])
    assert np.all(band["local_low"] < band["local_slopes"])
    assert np.all(band["local_slopes"] < band["local_high"])
    single = exponent_band(horizons, regrets[:, :1])
    assert np.isnan(single["line_low"]).all() and np.isfinite(single["local_slopes"]).all()


def test_bands_follow_the_fits():
    results = [
        synthetic_result(
            agent, seed, (1.0, 5.0, factor * horizon**exponent), checkpoints=(1, 10, horizon)
        )
        for agent, exponent in (("bbcg", 0.75), ("random", 1.0))
        for horizon in (100, 1000, 10000)
        for seed, factor in enumerate((1.0, 1.2, 0.9))
    ]
    fits = fit_exponents(results)
    bands = exponent_bands(results)
    assert [(b.agent, b.horizons) for b in bands] == [(f.agent, f.horizons) for f in fits]
    assert bands[0].midpoints == pytest.approx((math.sqrt(1e5), math.sqrt(1e7)))
    assert bands[1].local_slopes == pytest.approx((1.0, 1.0))
    with pytest.raises(ValueError, match="full grid"):
        exponent_bands(results[1:])
