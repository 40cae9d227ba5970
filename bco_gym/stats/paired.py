"""Paired comparisons against a reference agent: intervals, differences, the paired table.

Runs with the same seed on the same env, loss family and horizon see the same loss
sequence, so the regret of agent A minus the regret of a reference agent B on seed s,

    D_s(t) = R^A_s(t) - R^B_s(t),

removes the sequence-to-sequence noise both share. Over the seeds common to both, the
mean difference is reported with a two-sided Student-t interval at level 0.95,

    mean(D) +- t_{(1 + level)/2, n - 1} * sd(D) / sqrt(n)   (sd with ddof = 1),

which assumes the seeds' differences are i.i.d. (they are: one seed, one independent
loss sequence and agent stream) and roughly normal; with one seed the interval is
undefined (nan). Final regrets get the same interval over their seeds.

* :func:`t_interval` -- (mean, low, high) of values along an axis;
* :func:`series_key` / :func:`series_label` -- how results are grouped into one line
  (agent, constants label, non-theory scale) and how that line is named;
* :func:`paired_differences` -- D_s at every checkpoint for one series against the
  reference, seed-aligned; results that did not see the same losses (another env, set,
  loss digest -- ``RunResult.loss["digest"]``, a hash of an array's data -- or env
  kwargs) are refused with a ValueError naming both;
* :func:`paired_table` -- one :class:`PairedRow` per series and horizon;
  :func:`paired_columns` renders it for :func:`~bco_gym.reports.summary.render_markdown`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from bco_gym.engine.result import RunResult

LEVEL = 0.95
SCALING_EXPONENT = 3 / 4


def t_interval(
    values: np.ndarray | Sequence[float], *, axis: int = 0, level: float = LEVEL
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, low, high) of ``values`` along ``axis``: the Student-t interval at ``level``.

    With a single value along ``axis`` the bounds are nan (no spread to estimate).
    """
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    array = np.asarray(values, dtype=float)
    count = array.shape[axis]
    if count == 0:
        raise ValueError("t_interval needs at least one value")
    mean = array.mean(axis=axis)
    if count < 2:
        nan = np.full_like(mean, np.nan)
        return mean, nan, nan.copy()
    from scipy import stats  # here, not at import: reading results needs no SciPy

    half_width = (
        stats.t.ppf((1 + level) / 2, count - 1) * array.std(axis=axis, ddof=1) / math.sqrt(count)
    )
    return mean, mean - half_width, mean + half_width


# -- series: how results form one line of a figure or one row of a table -------------------------
def feedback_of(result: RunResult) -> str:
    """What the agent learned from: ``"bandit"``, ``"two-point"`` or ``"full"``.

    The agent's own feedback (recorded in its spec since 0.1; else its class's), not the
    env's: a bandit agent run on an env with ``feedback="full"`` (so that a
    full-information agent can be compared on the same losses) reads only the loss, and
    is a bandit row. A full-information or two-point row is marked wherever it is shown
    (:data:`FEEDBACK_MARKS`) and kept out of the bandit rows' rankings.
    """
    recorded = result.agent_spec.get("feedback") if result.agent_spec else None
    if recorded is None:
        recorded = _agent_feedback(result.agent)
    env = result.problem.get("feedback", "bandit")
    return recorded if recorded in FEEDBACK_MARKS and recorded == env else "bandit"


#: The mark of a row that learned from more than one loss value a round.
FEEDBACK_MARKS = {"full": "full info", "two-point": "two-point"}


def is_full_information(result: RunResult) -> bool:
    """Whether the agent learns from gradients (a full-information agent such as OFW);
    see :func:`feedback_of`."""
    return feedback_of(result) == "full"


def is_bandit(result: RunResult) -> bool:
    """Whether the agent learned from one loss value a round (:func:`feedback_of`)."""
    return feedback_of(result) == "bandit"


def _agent_feedback(agent: str) -> str:
    """The feedback ``agent`` (a name or import path) needs; "bandit" if it no longer resolves."""
    from bco_gym.agents.registry import resolve_agent

    try:
        return resolve_agent(agent).feedback
    except (ValueError, TypeError, ImportError):
        return "bandit"


def scale_text(result: RunResult) -> str:
    """``"c=1.23"`` for a run whose constants are not the theory's, else ``""``."""
    value = result.scale_value
    if result.constants == "theory" or result.scale_param is None or value is None:
        return ""
    return f"{result.scale_param}={value:.3g}" if isinstance(value, float) else f"{value}"


def series_key(result: RunResult) -> tuple[str, str, str, str]:
    """(agent, constants label, scale text, feedback): one line of a figure."""
    return (result.agent, result.constants, scale_text(result), feedback_of(result))


def series_label(result: RunResult) -> str:
    """The agent's name, with non-theory constants and "(full info)" or "(two-point)"
    where they apply (:data:`FEEDBACK_MARKS`).

    An agent without a scale constant (random, the sb3 agents) run with its defaults
    has nothing to label: it is named alone.
    """
    agent, constants, scale, feedback = series_key(result)
    label = agent
    if constants != "theory" and not (constants == "default" and result.scale_param is None):
        label += f" ({constants}{', ' + scale if scale else ''})"
    return label + (f" ({FEEDBACK_MARKS[feedback]})" if feedback in FEEDBACK_MARKS else "")


def group_series(results: Iterable[RunResult]) -> dict[str, list[RunResult]]:
    """Results by :func:`series_label`, in first-seen order."""
    groups: dict[str, list[RunResult]] = {}
    for result in results:
        groups.setdefault(series_label(result), []).append(result)
    return groups


def find_reference(labels: Iterable[str], reference: str) -> str | None:
    """The label that is ``reference`` or whose agent is ``reference`` (unique), or None."""
    labels = list(labels)
    if reference in labels:
        return reference
    matches = [label for label in labels if label.startswith(f"{reference} (")]
    if len(matches) > 1:
        raise ValueError(
            f"reference {reference!r} matches several series {matches}; pass one of them exactly"
        )
    return matches[0] if matches else None


# -- paired differences ---------------------------------------------------------------------------
def _import_path(result: RunResult) -> str:
    """Who ran ``result``: its agent's identity (import path and keyword arguments)."""
    from bco_gym.agents.registry import identity_of_result

    return identity_of_result(result)


def _by_seed(group: Sequence[RunResult], label: str) -> dict[int, RunResult]:
    table: dict[int, RunResult] = {}
    for result in group:
        if result.seed in table:
            paths = {_import_path(r) for r in (table[result.seed], result)}
            which = f" by different agents ({', '.join(sorted(paths))})" if len(paths) > 1 else ""
            raise ValueError(
                f"{label}: seed {result.seed} appears twice at T = {result.horizon}{which}"
            )
        table[result.seed] = result
    return table


#: Env kwargs that change what an agent observes, not the loss sequence: results that
#: differ only there are paired (a bandit agent beside a full-information one).
OBSERVATION_KWARGS = frozenset({"feedback"})


def _loss_kwargs(result: RunResult) -> dict:
    return {k: v for k, v in result.env_kwargs.items() if k not in OBSERVATION_KWARGS}


def _without_digest(loss: dict) -> dict:
    return {k: v for k, v in loss.items() if k != "digest"}


def _check_pairable(result: RunResult, reference: RunResult) -> None:
    """Same losses: the same seed then means the same loss sequence; ValueError otherwise.

    Compared: the env id, the set, the loss description (``RunResult.loss``, with its
    ``"digest"`` of the sequence where the results record one: a data hash for arrays),
    the env kwargs but ``feedback`` (:data:`OBSERVATION_KWARGS`) and the checkpoints.
    The error names both results and each value that differs.
    """
    ours_digest, theirs_digest = result.loss.get("digest"), reference.loss.get("digest")
    if ours_digest is not None and theirs_digest is not None:
        losses = ("loss digest", ours_digest, theirs_digest)
    else:  # a result that predates digests: its description
        losses = ("loss", _without_digest(result.loss), _without_digest(reference.loss))
    mismatches = [
        f"{name} ({ours!r} against {theirs!r})"
        for name, ours, theirs in (
            ("env id", result.env_id, reference.env_id),
            ("set", result.problem.get("set"), reference.problem.get("set")),
            losses,
            ("env kwargs", _loss_kwargs(result), _loss_kwargs(reference)),
        )
        if ours != theirs
    ]
    if not np.array_equal(result.checkpoints, reference.checkpoints):
        mismatches.append("checkpoints")
    if mismatches:
        raise ValueError(
            f"cannot pair {result.agent} (seed {result.seed}) with {reference.agent} "
            f"(seed {reference.seed}): they did not see the same losses; different "
            f"{'; '.join(mismatches)}"
        )


def paired_differences(
    group: Sequence[RunResult], reference_group: Sequence[RunResult]
) -> tuple[list[int], np.ndarray]:
    """(common seeds, D of shape (seeds, checkpoints)): regret minus the reference's.

    Both groups hold one horizon each (the same); seeds present in only one are left out.
    """
    if not group or not reference_group:
        raise ValueError("paired_differences needs results in both groups")
    ours = _by_seed(group, group[0].agent)
    theirs = _by_seed(reference_group, reference_group[0].agent)
    seeds = sorted(ours.keys() & theirs.keys())
    for seed in seeds:
        _check_pairable(ours[seed], theirs[seed])
    if not seeds:
        return [], np.empty((0, len(group[0].checkpoints)))
    return seeds, np.stack([ours[s].regret - theirs[s].regret for s in seeds])


# -- the paired table -----------------------------------------------------------------------------
@dataclass(frozen=True)
class PairedRow:
    """One series at one horizon, against a reference series on the same seeds.

    ``difference_*`` and ``wins`` are None for the reference itself and where the
    reference has no run at this horizon; ``wins`` counts the paired seeds where this
    series' final regret is strictly below the reference's.
    """

    label: str
    agent: str
    full_information: bool
    horizon: int
    seeds: int
    regret_mean: float
    regret_low: float
    regret_high: float
    reference: str
    pairs: int
    difference_mean: float | None
    difference_low: float | None
    difference_high: float | None
    wins: int | None
    regret_bound: float | None
    lmo_per_round: float
    projections_per_round: float
    seconds_per_round: float
    latency_p50_us: float | None = None
    latency_p99_us: float | None = None

    @property
    def scaled_regret(self) -> float:
        """Mean final regret / T^(3/4)."""
        return self.regret_mean / self.horizon**SCALING_EXPONENT

    @property
    def win_fraction(self) -> float | None:
        """``wins / pairs`` (None where there is no comparison)."""
        return None if self.wins is None or self.pairs == 0 else self.wins / self.pairs


def paired_table(
    results: Iterable[RunResult], reference: str = "random", *, level: float = LEVEL
) -> list[PairedRow]:
    """One :class:`PairedRow` per (series, horizon), the series in first-seen order.

    ``reference`` is a series label or an agent name with a single series. Results are
    paired by seed only where they saw the same losses: a ValueError naming the two
    results and what differs (env id, set, loss digest or description, env kwargs other
    than ``feedback``, checkpoints) is raised otherwise, never a silent pairing.
    """
    by_horizon: dict[int, list[RunResult]] = {}
    for result in results:
        by_horizon.setdefault(result.horizon, []).append(result)
    rows = []
    for horizon in sorted(by_horizon):
        groups = group_series(by_horizon[horizon])
        found = find_reference(groups, reference)
        for label, group in groups.items():
            _by_seed(group, label)  # a series is one run per seed, never two merged
            rows.append(_row(label, group, found, groups.get(found or ""), level))
    return rows


_NO_COMPARISON: tuple[int, None, None, None, None] = (0, None, None, None, None)


def _final_comparison(
    group: list[RunResult], reference_group: list[RunResult], level: float
) -> tuple[int, float | None, float | None, float | None, int | None]:
    """(pairs, mean, low, high, wins) of the final-regret differences to the reference."""
    seeds, differences = paired_differences(group, reference_group)
    if not seeds:
        return _NO_COMPARISON
    final = differences[:, -1]
    mean, low, high = t_interval(final, level=level)
    return len(seeds), float(mean), float(low), float(high), int((final < 0).sum())


def _row(
    label: str,
    group: list[RunResult],
    reference: str | None,
    reference_group: list[RunResult] | None,
    level: float,
) -> PairedRow:
    first = group[0]
    mean, low, high = t_interval([r.final_regret for r in group], level=level)
    compared = reference_group is not None and label != reference
    pairs, d_mean, d_low, d_high, wins = (
        _final_comparison(group, reference_group, level) if compared else _NO_COMPARISON
    )
    bounds = [r.regret_bound for r in group if r.regret_bound is not None]
    rounds = first.horizon * len(group)
    return PairedRow(
        label=label,
        agent=first.agent,
        full_information=is_full_information(first),
        horizon=first.horizon,
        seeds=len(group),
        regret_mean=float(mean),
        regret_low=float(low),
        regret_high=float(high),
        reference=reference or "",
        pairs=pairs,
        difference_mean=d_mean,
        difference_low=d_low,
        difference_high=d_high,
        wins=wins,
        regret_bound=float(np.mean(bounds)) if bounds else None,
        lmo_per_round=sum(r.lmo_calls for r in group) / rounds,
        projections_per_round=sum(r.projections for r in group) / rounds,
        seconds_per_round=sum(r.agent_seconds + r.env_seconds for r in group) / rounds,
        latency_p50_us=_mean_latency(group, "p50"),
        latency_p99_us=_mean_latency(group, "p99"),
    )


def _mean_latency(group: list[RunResult], key: str) -> float | None:
    """The mean over the group's runs of ``latency_us[key]`` (None if a run has none)."""
    values = [r.latency_us.get(key) for r in group]
    if not values or any(v is None for v in values):
        return None
    return float(np.mean(values))


# -- rendering ------------------------------------------------------------------------------------
def _decimals(values: Iterable[float | None]) -> int:
    """Decimals that give the column's largest magnitude at least 3 significant digits."""
    finite = [abs(v) for v in values if v is not None and math.isfinite(v)]
    largest = max(finite, default=0.0)
    if largest == 0:
        return 0
    return int(min(4, max(0, 2 - math.floor(math.log10(largest)))))


def _fixed(value: float | None, decimals: int) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    text = f"{value:.{decimals}f}"
    return "0" if float(text) == 0 and decimals == 0 else text


def _interval(mean: float | None, low: float | None, high: float | None, decimals: int) -> str:
    if mean is None:
        return "-"
    if low is None or high is None or not math.isfinite(low):
        return _fixed(mean, decimals)
    return f"{_fixed(mean, decimals)} [{_fixed(low, decimals)}, {_fixed(high, decimals)}]"


def _significant(value: float | None) -> str:
    """Three significant digits, positional (no exponent), alike across a column."""
    if value is None or not math.isfinite(value):
        return "-"
    if value == 0:
        return "0"
    decimals = max(0, 2 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"


def paired_columns(rows: Sequence[PairedRow]) -> tuple[list[str], list[list[str]]]:
    """Header and cells of the paired table (numbers alike within each column)."""
    reference = next((row.reference for row in rows if row.reference), "reference")
    regret = _decimals([v for row in rows for v in (row.regret_low, row.regret_high)])
    difference = _decimals([v for row in rows for v in (row.difference_low, row.difference_high)])
    scaled = _decimals([row.scaled_regret for row in rows])
    header = [
        "agent",
        "T",
        "seeds",
        "final regret [95% CI]",
        f"minus {reference} [95% CI]",
        "wins",
        "regret/T^(3/4)",
        "theorem bound",
        "LMO/round",
        "proj/round",
        "µs/round",
        "p50 µs",
        "p99 µs",
    ]
    body = [
        [
            row.label,
            str(row.horizon),
            str(row.seeds),
            _interval(row.regret_mean, row.regret_low, row.regret_high, regret),
            "(reference)"
            if row.label == row.reference
            else _interval(
                row.difference_mean, row.difference_low, row.difference_high, difference
            ),
            f"{row.wins}/{row.pairs}" if row.wins is not None else "-",
            _fixed(row.scaled_regret, scaled),
            _significant(row.regret_bound),
            _significant(row.lmo_per_round),
            _significant(row.projections_per_round),
            _significant(1e6 * row.seconds_per_round),
            _significant(row.latency_p50_us),
            _significant(row.latency_p99_us),
        ]
        for row in rows
    ]
    return header, body


__all__ = [
    "FEEDBACK_MARKS",
    "LEVEL",
    "OBSERVATION_KWARGS",
    "SCALING_EXPONENT",
    "PairedRow",
    "feedback_of",
    "find_reference",
    "group_series",
    "is_bandit",
    "is_full_information",
    "paired_columns",
    "paired_differences",
    "paired_table",
    "scale_text",
    "series_key",
    "series_label",
    "t_interval",
]
