"""Whether a loss sequence is learnable from one-point feedback: T_dir, measured.

Play the centre plus delta u_t (u_t uniform on the unit sphere of the tangent space V,
delta = r/2 unless given: the scale scenarios' tuned radius) for N rounds with full
feedback, and measure

* ||grad F(c)||: the norm of the mean loss's gradient at the centre, tangent part (the
  squared norm of the rounds' mean gradient less its sampling variance / N, so
  unbiased for ||grad F||^2);
* E||g_t||^2 of the residual estimate g_t = (d/delta)(f_t(y_t) - f_(t-1)(y_(t-1))) u_t,
  which is ((d/delta)(f_t(y_t) - f_(t-1)(y_(t-1))))^2 since ||u_t|| = 1 (the first
  round, against f_(-1) := 0, is left out).

The sum of T estimates carries T grad F against noise of squared norm T E||g_t||^2, a
share 1/d of it along grad F (u_t is isotropic in V), so the summed estimates point
down the gradient, <sum g, grad F> above its noise, after about

    T_dir = E||g_t||^2 / (d ||grad F||^2)

rounds, and estimate the whole gradient after T* = d T_dir. Below T_dir no constant
makes an agent learn; between T_dir and T* an agent that moves to the LMO vertex of the
summed estimates (BBCG, BFW) gains while the estimate is still mostly noise.
``benchmarks/bench_scale.py signal`` prints it for every scale scenario.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Signal:
    """What :func:`gradient_signal` measured.

    Attributes:
        aff_dim: d.
        delta: the exploration radius.
        rounds: N, the rounds played.
        gradient_norm: ||grad F(c)|| (tangent part, unbiased for its square).
        estimate_rms: sqrt(E||g_t||^2).
        rounds_direction: T_dir = E||g_t||^2 / (d ||grad F||^2) (inf without a gradient).
        rounds_needed: T* = d T_dir.
    """

    aff_dim: int
    delta: float
    rounds: int
    gradient_norm: float
    estimate_rms: float
    rounds_direction: float
    rounds_needed: float


def gradient_signal(
    env_id: str,
    env_kwargs: dict[str, Any],
    rounds: int,
    seed: int = 0,
    delta: float | None = None,
) -> Signal:
    """T_dir and its parts for ``env_id`` (see the module docstring), on seed ``seed``."""
    import gymnasium as gym

    env = gym.make(env_id, horizon=rounds, feedback="full", **env_kwargs)
    convex_set = env.unwrapped.set
    centre, dim = np.asarray(convex_set.center, dtype=float), convex_set.aff_dim
    delta = convex_set.inner_radius / 2 if delta is None else float(delta)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    gradient_sum = np.zeros(convex_set.shape)
    gradient_squares = estimate_squares = 0.0
    previous = None
    for _ in range(rounds):
        direction = convex_set.tangent(rng.standard_normal(convex_set.shape))
        direction /= np.linalg.norm(direction)
        _, _, _, _, info = env.step(centre + delta * direction)
        gradient = convex_set.tangent(np.asarray(info["gradient"], dtype=float))
        gradient_sum += gradient
        gradient_squares += float(np.vdot(gradient, gradient))
        if previous is not None:
            estimate_squares += ((dim / delta) * (info["loss"] - previous)) ** 2
        previous = info["loss"]
    env.close()
    mean = gradient_sum / rounds
    variance = gradient_squares / rounds - float(np.vdot(mean, mean))
    signal_squared = max(float(np.vdot(mean, mean)) - variance / rounds, 0.0)
    estimate = estimate_squares / (rounds - 1)
    needed = estimate / signal_squared if signal_squared > 0 else float("inf")
    return Signal(
        aff_dim=int(dim),
        delta=delta,
        rounds=rounds,
        gradient_norm=signal_squared**0.5,
        estimate_rms=estimate**0.5,
        rounds_direction=needed / dim,
        rounds_needed=needed,
    )


def linear_rounds_direction(mean_norm: float, noise: float, aff_dim: int) -> float:
    """T_dir of ``linear``-type losses <theta_t, x - c>, theta_t = mu + s w_t in V (w_t
    uniform in the unit ball of V): f_t(c) = 0, so E||g_t||^2 = d^2 E[(<theta_t, u_t> -
    <theta_(t-1), u_(t-1)>)^2] = 2 d E||theta_t||^2 and T_dir = 2 (||mu||^2 + s^2 d/(d+2))
    / ||mu||^2 (E||w_t||^2 = d/(d+2) for the uniform law on the unit ball of R^d)."""
    noise_squared = noise**2 * aff_dim / (aff_dim + 2)
    return 2.0 * (mean_norm**2 + noise_squared) / mean_norm**2
