"""The compute frontier (regret against CPU seconds): kept importable under this name; the code
lives in :mod:`bco_gym.stats.frontier`, below both the reports and the figures."""

from bco_gym.stats.frontier import (
    BudgetRow,
    EqualRegretRow,
    FrontierPoint,
    budget_rows,
    common_level,
    equal_regret_rows,
    frontier_points,
    reference_budget,
    run_seconds,
    seconds_to_reach,
    within_budget,
)

__all__ = [
    "BudgetRow",
    "EqualRegretRow",
    "FrontierPoint",
    "budget_rows",
    "common_level",
    "equal_regret_rows",
    "frontier_points",
    "reference_budget",
    "run_seconds",
    "seconds_to_reach",
    "within_budget",
]
