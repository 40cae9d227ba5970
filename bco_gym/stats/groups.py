"""What a group of results shares, and how far its regrets can be trusted.

Results are grouped by env, agent, constants label and free constant (and horizon):
:func:`group_results`. Over the seeds of a group the regret is the mean ± the sample
standard deviation (:func:`mean_std`).

Comparator. Every row says how far its regrets can be trusted (:func:`comparator_text`):
"exact" (gap 0), "certified, gap <= g" (the true regret is at most g above the one
shown), "checked on N samples (not certified), gap <= g" when the losses came from
``from_function`` and passed its sampled checks (the gap is a bound only if they are
convex, which samples cannot prove), or "uncertified" when some run's losses came from
``from_function(..., verify=False)``
(:func:`bco_gym.losses.verification.comparator_status`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from bco_gym.engine.result import RunResult
from bco_gym.losses.verification import (
    CHECKED_PREFIX,
    EXACT,
    SAMPLED,
    UNCERTIFIED,
    comparator_status,
)


def comparator_text(results: Iterable[RunResult]) -> str:
    """How far the regrets of ``results`` can be trusted, in a few words (module docstring):
    "uncertified" if any run's comparator is, else "exact" if every gap is 0, else
    "checked on N samples (not certified), gap <= g" if a run's losses were checked on
    samples, else "certified, gap <= g", with g the largest final gap."""
    results = list(results)
    statuses = {comparator_status(r.loss, r.final_gap) for r in results}
    if UNCERTIFIED in statuses:
        return UNCERTIFIED
    if statuses <= {EXACT}:
        return EXACT
    gap = max(r.final_gap for r in results)
    if SAMPLED in statuses:
        labels = sorted({str(r.loss.get("comparator")) for r in results} - {"None"})
        checked = [label for label in labels if label.startswith(CHECKED_PREFIX)]
        return f"{checked[0]} (not certified), gap <= {gap:.2g}"
    return f"certified, gap <= {gap:.2g}"


#: Said wherever an uncertified regret is shown (the CLI, the reports).
UNCERTIFIED_NOTE = (
    "comparator uncertified: the losses come from from_function(..., verify=False), so "
    "their convexity and gradient checks were not run; the comparator's gap bounds its "
    "error only if every f_t is convex with the given gradient, and these regrets are "
    "not certified"
)


def group_results(results: Iterable[RunResult], by_horizon: bool) -> dict[tuple, list[RunResult]]:
    """Results grouped by env, agent, constants label, non-theory scale (and horizon),
    in first-seen order."""
    groups: dict[tuple, list[RunResult]] = {}
    for result in results:
        scale = "" if result.constants == "theory" else scale_column(result)
        key = (result.env_id, result.agent, result.constants, scale)
        if by_horizon:
            key += (result.horizon,)
        groups.setdefault(key, []).append(result)
    return groups


def scale_column(result: RunResult) -> str:
    """A table's scale column: the run's free constant as ``name=value`` ("-" without one)."""
    value = result.scale_value
    if result.scale_param is None or value is None:
        return "-"
    return f"{result.scale_param}={value:.3g}" if isinstance(value, float) else str(value)


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """The mean and the sample standard deviation (ddof = 1; 0 for one value)."""
    array = np.asarray(values, dtype=float)
    return float(array.mean()), float(array.std(ddof=1)) if len(array) > 1 else 0.0


__all__ = ["UNCERTIFIED_NOTE", "comparator_text", "group_results", "mean_std", "scale_column"]
