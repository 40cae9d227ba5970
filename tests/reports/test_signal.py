"""T_dir (bco_gym.reports.signal) against a direct simulation of the summed estimates.

T_dir is the number of rounds after which the summed residual estimates point down the
mean gradient: the projection z = <sum_t g_t, e> on the gradient's direction e has mean
T ||grad F|| and standard deviation sqrt(T E||g_t||^2 / d), so its signal-to-noise
ratio is sqrt(T / T_dir). Here T_dir is measured by :func:`gradient_signal` and the
ratio by playing many independent episodes of the env itself.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np

from bco_gym.reports.signal import gradient_signal, linear_rounds_direction

ENV = "BCO-Ball-v0"
KWARGS = {"n": 4, "loss": "linear", "loss_kwargs": {"mean_norm": 0.5, "noise": 1.0}}


def _summed_estimate_projection(rounds: int, seed: int, delta: float) -> float:
    """<sum of the residual estimates over ``rounds``, e>, e the unit mean gradient."""
    env = gym.make(ENV, horizon=rounds, **KWARGS)
    env.reset(seed=seed)
    losses = env.unwrapped.losses
    mean = losses._globals["mean"]
    rng = np.random.default_rng([seed, 9])
    dim, total, previous = 4, 0.0, None
    for _ in range(rounds):
        direction = rng.standard_normal(4)
        direction /= np.linalg.norm(direction)
        _, _, _, _, info = env.step(delta * direction)
        if previous is not None:  # as gradient_signal: the first residual is left out
            total += (dim / delta) * (info["loss"] - previous) * float(direction @ mean)
        previous = info["loss"]
    env.close()
    return total / np.linalg.norm(mean)


def test_t_dir_is_where_the_summed_estimates_reach_one_noise_width():
    measured = gradient_signal(ENV, KWARGS, rounds=4000, seed=0)
    assert measured.aff_dim == 4 and measured.delta == 0.5
    # the analytic value of linear losses: 2 (||mu||^2 + s^2 d/(d+2)) / ||mu||^2 = 7.33
    expected = linear_rounds_direction(0.5, 1.0, 4)
    assert math.isclose(expected, 2 * (0.25 + 1.0 * 4 / 6) / 0.25)
    assert abs(measured.rounds_direction - expected) < 0.1 * expected
    assert math.isclose(measured.rounds_needed, 4 * measured.rounds_direction)
    # the direct simulation: at T = 4 T_dir the ratio is 2 (sqrt(4)), at T_dir / 2 about 0.7
    for factor in (4, 0.5):
        rounds = round(factor * measured.rounds_direction) + 1  # + the round left out
        z = np.array([_summed_estimate_projection(rounds, seed, 0.5) for seed in range(600)])
        ratio = z.mean() / z.std()
        assert (
            abs(ratio - math.sqrt((rounds - 1) / measured.rounds_direction))
            < 0.2 * math.sqrt(factor) + 0.1
        ), (factor, ratio)
