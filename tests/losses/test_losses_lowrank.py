"""``linear-low-rank``: a rank-k mean of Frobenius norm mean_norm, rank-one noise of
Frobenius norm s, the exact comparator -rho sigma_1 of the summed matrices, and no
interval metrics (their cost is said)."""

from __future__ import annotations

import numpy as np
import pytest

from bco_gym.losses import make_losses
from bco_gym.sets import NuclearNormBall


def _losses(rank=2, **kwargs):
    losses = make_losses("linear-low-rank", NuclearNormBall(6, 5, radius=2.0), rank=rank, **kwargs)
    losses.reset(np.random.default_rng(3))
    return losses


def test_the_mean_has_the_rank_and_norm_and_the_noise_is_rank_one_of_norm_s():
    losses = _losses(rank=2, mean_norm=0.7, noise=0.3)
    mean = losses.mean_matrix()
    singular = np.linalg.svd(mean, compute_uv=False)
    np.testing.assert_allclose(singular[:2], 0.7 / np.sqrt(2))
    np.testing.assert_allclose(singular[2:], 0.0, atol=1e-12)
    params = losses.chunk(0)
    noise = params["theta"][:50].reshape(50, 6, 5) - mean
    noise_singular = np.linalg.svd(noise, compute_uv=False)
    np.testing.assert_allclose(noise_singular[:, 0], 0.3)
    np.testing.assert_allclose(noise_singular[:, 1:], 0.0, atol=1e-12)
    np.testing.assert_array_equal(params["offset"][:50], 0.0)
    assert losses.lipschitz == pytest.approx(1.0) and losses.bound == pytest.approx(2.0)


def test_the_comparator_is_minus_rho_times_the_top_singular_value_of_the_sum():
    losses = _losses(rank=1)
    (found,) = losses.comparator([400])
    total = losses.summed_vectors([400])[0].reshape(6, 5)
    assert found.gap == 0.0
    assert found.value == pytest.approx(-2.0 * np.linalg.svd(total, compute_uv=False)[0])
    rounds = np.arange(400)
    values = [losses.loss(int(t), found.point) for t in rounds]
    assert sum(values) == pytest.approx(found.value)


def test_no_interval_metrics_and_bad_rank_refused():
    assert "2T SVDs" in _losses().changing_reason()
    with pytest.raises(ValueError, match=r"rank=6 must be an integer in \[1, 5\]"):
        make_losses("linear-low-rank", NuclearNormBall(6, 5), rank=6)
    assert _losses().describe() == {
        "name": "linear-low-rank",
        "mean_norm": 0.5,
        "noise": 0.5,
        "rank": 2,
    }
