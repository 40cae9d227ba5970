"""Every loss object prints as its class, its set and its parameters (no ``object at``)."""

from __future__ import annotations

import numpy as np
import pytest

from bco_gym.losses import FAMILIES, families_for, make_losses
from bco_gym.losses.arrays import from_array
from bco_gym.losses.batch import LossBatch
from bco_gym.losses.functions import from_function
from bco_gym.sets import BirkhoffPolytope, FlowPolytope, L2Ball, NuclearNormBall, Simplex

SETS = [Simplex(3), L2Ball(3), FlowPolytope.grid(3, 3), NuclearNormBall(3, 3), BirkhoffPolytope(3)]


def _on_a_set(family: str):
    return next(make_losses(family, s) for s in SETS if family in families_for(s))


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_repr_shows_class_set_and_parameters(family):
    losses = _on_a_set(family)
    shown = repr(losses)
    assert shown.startswith(f"{type(losses).__name__}({losses.set!r}")
    for key, value in losses.describe().items():
        if key != "name":
            assert f"{key}={value!r}" in shown, shown
    assert "object at" not in shown


def test_array_function_and_batch_reprs():
    thetas = np.arange(15.0).reshape(5, 3)
    assert repr(from_array(Simplex(3), thetas)) == (
        "ArrayLoss(Simplex(n=3), thetas=ndarray of shape (5, 3), horizon=5)"
    )

    def loss(t, x):
        return float(x[0])

    def gradient(t, x):
        return np.array([1.0, 0.0, 0.0])

    function = from_function(Simplex(3), loss, gradient, horizon=7, lipschitz=1.0, bound=1.0)
    shown = repr(function)
    assert shown.startswith("FunctionLoss(Simplex(n=3), loss=")
    assert "horizon=7" in shown and "loss" in shown
    batch = LossBatch([make_losses("linear", Simplex(3)) for _ in range(4)])
    assert repr(batch) == "LossBatch(4 x LinearLoss(Simplex(n=3), mean_norm=0.5, noise=0.5))"
