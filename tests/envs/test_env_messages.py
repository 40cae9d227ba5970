"""Two refusals that once hid their cause: a float32 centre of the simplex, whose sum
misses 1 by ~1e-8, and ``horizon=None`` for losses with no horizon of their own."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

import bco_gym  # noqa: F401  (registers the env ids)
from bco_gym.errors import InfeasibleActionError


def test_float32_simplex_centre_shows_its_deviation_beside_atol_and_project():
    env = gym.make("BCO-Simplex-v0", n=10)
    env.reset(seed=0)
    centre = np.asarray(env.unwrapped.set.center, dtype=np.float32)
    deviation = float(np.add.reduce(centre.astype(float))) - 1.0
    assert abs(deviation) > 1e-9  # the case: float32 rounding, past the default atol
    with pytest.raises(InfeasibleActionError) as caught:
        env.step(centre)
    message = str(caught.value)
    shown = re.search(r"sum of entries ([0-9.]+) \(1 ([+-]) ([0-9.e+-]+)\)", message)
    assert shown is not None, message
    # enough digits to see the sum is not 1, and the deviation itself to 3 digits
    assert float(shown.group(1)) != 1.0
    assert abs(float(shown.group(1)) - (1.0 + deviation)) <= 0.1 * abs(deviation)
    sign = 1.0 if shown.group(2) == "+" else -1.0
    assert sign * float(shown.group(3)) == pytest.approx(deviation, rel=1e-2)
    assert "atol=1e-09" in message and "on_infeasible='project'" in message
    # and the hint works: a larger atol accepts the float32 centre
    relaxed = gym.make("BCO-Simplex-v0", n=10, atol=1e-6)
    relaxed.reset(seed=0)
    relaxed.step(centre)


def test_horizon_none_is_named():
    with pytest.raises(ValueError, match=r"horizon=None is not allowed here.*integer >= 1"):
        gym.make("BCO-Simplex-v0", horizon=None)
