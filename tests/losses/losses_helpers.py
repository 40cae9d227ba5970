"""Shared fixtures for the loss-sequence tests: small sets and feasible points."""

from __future__ import annotations

import numpy as np

from bco_gym.losses import FAMILIES, LossSequence, families_for, make_losses
from bco_gym.sets import (
    BirkhoffPolytope,
    ConvexSet,
    FlowPolytope,
    Hypercube,
    L1Ball,
    L2Ball,
    NuclearNormBall,
    Simplex,
)

SETS: dict[str, ConvexSet] = {
    "simplex": Simplex(4),
    "ball": L2Ball(3, radius=1.5),
    "l1": L1Ball(3, radius=2.0),
    "box": Hypercube(low=[-1.0, 0.0, 2.0], high=[1.0, 0.5, 3.0]),
    "nuclear": NuclearNormBall(3, 4, radius=2.0),
    "flow": FlowPolytope.grid(3, 3),
    "birkhoff": BirkhoffPolytope(3),
}

CASES = [(family, set_name) for set_name, kind in SETS.items() for family in families_for(kind)]
CASE_IDS = [f"{family}-{set_name}" for family, set_name in CASES]

SMOOTH = {
    "linear",
    "linear-switching",
    "linear-drift",
    "linear-adversarial",
    "quadratic",
    "regression",
    "portfolio",
    "completion",
}
SMOOTH |= {"edge-costs", "congestion", "assignment", "linear-low-rank"}
assert SMOOTH | {"absolute"} == set(FAMILIES)


def sequence(family: str, set_name: str, seed: int = 0, **kwargs: object) -> LossSequence:
    """The family on SETS[set_name], reset from default_rng(seed)."""
    losses = make_losses(family, SETS[set_name], **kwargs)
    losses.reset(np.random.default_rng(seed))
    return losses


def feasible_points(convex_set: ConvexSet, rng: np.random.Generator, count: int) -> np.ndarray:
    """The centre, ``count`` samples and ``count`` LMO vertices of K, stacked."""
    points = [np.asarray(convex_set.center, dtype=float)]
    points += [convex_set.sample(rng) for _ in range(count)]
    points += [convex_set.lmo(rng.standard_normal(convex_set.shape)) for _ in range(count)]
    return np.stack(points)


def sum_over_rounds(losses: LossSequence, point: np.ndarray, stop: int) -> float:
    """sum_{t < stop} f_t(point) by per-round evaluation (independent of the comparator)."""
    return float(losses.losses(0, np.broadcast_to(point, (stop, *point.shape))).sum())
