"""One-point Frank-Wolfe: a user's projection-free agent with a scale constant to tune.

Each round it plays y_t = x_t + delta u_t around its current point x_t of the shrunk set
K_delta (delta = r / 2, u_t uniform on the unit sphere of the tangent space V), adds the
one-point estimate (d / delta) f_t(y_t) u_t to the running sum G_t (Flaxman et al. 2005),
and takes one Frank-Wolfe step on F_t(x) = eta <G_t, x> + ||x - c||^2 over K_delta:
v_t = lmo(eta G_t + 2 (x_t - c)), x_(t+1) = x_t + sigma_t (v_t - x_t), sigma_t =
1 / sqrt(t + 1). Its scale constant c sets eta = c R / (d M) T^(-3/4), as BBCG's c sets
its eta (R the outer radius, M the bound on |f_t|): the references' tuning grid fits it.
The default c = 1 is a guess, not a theorem's (``THEORY_DEFAULTS = False``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bco_gym.agents import Agent


class OnePointFW(Agent):
    """One Frank-Wolfe step a round on the summed one-point estimates (module docstring)."""

    name = "one-point-fw"
    SCALE_PARAM = "c"
    THEORY_DEFAULTS = False
    OPTIONS = ("c",)

    def __init__(self, problem: Any, c: float = 1.0):
        super().__init__(problem)
        if not c > 0:
            raise ValueError(f"c={c!r} must be positive")
        delta = 0.5 * self.set.inner_radius
        scale = self.set.outer_radius / (self.set.aff_dim * problem.bound)
        self.params = {"c": float(c), "delta": delta, "eta": c * scale * self.horizon**-0.75}
        self.shrunk = self.set.shrink(delta)

    def _reset(self) -> None:
        self.point = np.array(self.set.center, dtype=float)
        self.total = np.zeros(self.set.shape)
        self.direction = np.zeros(self.set.shape)

    def _act(self) -> np.ndarray:
        direction = self.set.tangent(self.rng.standard_normal(self.set.shape))
        self.direction = direction / np.linalg.norm(direction)
        return self.point + self.params["delta"] * self.direction

    def _update(self, loss: float, info: Any) -> None:
        delta, eta = self.params["delta"], self.params["eta"]
        self.total += (self.set.aff_dim / delta) * loss * self.direction
        gradient = eta * self.total + 2 * (self.point - self.set.center)
        vertex = np.asarray(self.shrunk.lmo(gradient), dtype=float)
        self.stats["lmo_calls"] += 1
        step = 1.0 / np.sqrt(self.stats["rounds"] + 1)
        self.point = self.point + step * (vertex - self.point)


class ShortOnePointFW(OnePointFW):
    """OnePointFW declaring that it affords at most 100 rounds on a set of dimension >= 3
    (as an agent whose rounds cost milliseconds on large sets would)."""

    name = "short-one-point-fw"

    @classmethod
    def affordable_horizon(cls, problem: Any) -> int | None:
        return 100 if problem.set.dim >= 3 else None
