"""Tables from results: per-agent summaries over seeds, and fitted regret exponents.

Statistics. Over the seeds of one (env, agent, constants, horizon) group, the regret
is reported as the mean ± the sample standard deviation (ddof = 1; 0 for one seed).

Exponent fit (the empirical Table 1). For horizons T_1 < ... < T_H and seeds s, let
m_i be the mean over seeds of the final regret R_{i,s}. The slope is the ordinary
least-squares slope of log m_i against log T_i. Its confidence interval is a
percentile bootstrap over seeds: resample the seeds with replacement (the same
resample at every horizon, since seed s fixes one loss sequence whose prefixes all
horizons share), recompute the m_i and the slope, and take the (1 - level)/2 and
(1 + level)/2 quantiles of the slopes (resamples with a non-positive mean regret at
some horizon, where the log is undefined, are dropped and counted). The interval
measures seed-to-seed noise only, not the bias of lower-order terms at small T.

Comparator. Every row says how far its regrets can be trusted (:func:`comparator_text`):
"exact" (gap 0), "certified, gap <= g" (the true regret is at most g above the one
shown), "checked on N samples (not certified), gap <= g" when the losses came from
``from_function`` and passed its sampled checks (the gap is a bound only if they are
convex, which samples cannot prove), or "uncertified" when some run's losses came from
``from_function(..., verify=False)``
(:func:`bco_gym.losses.verification.comparator_status`).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields

import numpy as np

from bco_gym.engine.result import THEORY_EXPONENTS, RunResult
from bco_gym.losses.verification import (
    CHECKED_PREFIX,
    EXACT,
    SAMPLED,
    UNCERTIFIED,
    comparator_status,
)
from bco_gym.reports.page import Markdown, md_text, sanitize_text
from bco_gym.reports.paired import group_series, is_full_information

SCALING_EXPONENT = 3 / 4


@dataclass(frozen=True)
class AgentSummary:
    """One row of a ``compare`` table: an agent's results over seeds at one horizon."""

    env_id: str
    agent: str
    constants: str
    scale: str
    horizon: int
    seeds: int
    regret_mean: float
    regret_std: float
    regret_bound: float | None
    lmo_per_round: float
    projections_per_round: float
    rounds_per_second: float
    adaptive_mean: float | None = None
    dynamic_mean: float | None = None
    comparator: str = EXACT

    @property
    def scaled_regret(self) -> float:
        """Mean regret / T^(3/4)."""
        return self.regret_mean / self.horizon**SCALING_EXPONENT


@dataclass(frozen=True)
class ExponentFit:
    """One row of an ``exponents`` table: the fitted slope of log regret vs log T."""

    env_id: str
    agent: str
    constants: str
    scale: str
    horizons: tuple[int, ...]
    regret_mean: tuple[float, ...]
    regret_std: tuple[float, ...]
    seeds: int
    slope: float
    low: float
    high: float
    level: float
    dropped_resamples: int
    theory: float | None
    lmo_per_round: float
    projections_per_round: float
    comparator: str = EXACT
    #: Whether the agent learned from gradients, read from the runs themselves
    #: (:func:`~bco_gym.reports.paired.is_full_information`), so that a user's
    #: full-information agent is drawn as one without a built-in's name.
    full_information: bool = False


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


def _groups(results: Iterable[RunResult], by_horizon: bool) -> dict[tuple, list[RunResult]]:
    """Results grouped by env, agent, constants label, non-theory scale (and horizon)."""
    groups: dict[tuple, list[RunResult]] = {}
    for result in results:
        scale = "" if result.constants == "theory" else _scale_text(result)
        key = (result.env_id, result.agent, result.constants, scale)
        if by_horizon:
            key += (result.horizon,)
        groups.setdefault(key, []).append(result)
    return groups


def _scale_text(result: RunResult) -> str:
    value = result.scale_value
    if result.scale_param is None or value is None:
        return "-"
    return f"{result.scale_param}={value:.3g}" if isinstance(value, float) else str(value)


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    array = np.asarray(values, dtype=float)
    return float(array.mean()), float(array.std(ddof=1)) if len(array) > 1 else 0.0


def summarize(results: Iterable[RunResult]) -> list[AgentSummary]:
    """One :class:`AgentSummary` per (env, agent, constants, horizon), in first-seen order."""
    rows = []
    for (env_id, agent, constants, _, horizon), group in _groups(results, True).items():
        mean, std = _mean_std([r.final_regret for r in group])
        bounds = [r.regret_bound for r in group if r.regret_bound is not None]
        spent = sum(r.agent_seconds + r.env_seconds for r in group)
        rounds = horizon * len(group)
        rows.append(
            AgentSummary(
                env_id=env_id,
                agent=agent,
                constants=constants,
                scale=_scale_text(group[0]),
                horizon=horizon,
                seeds=len(group),
                regret_mean=mean,
                regret_std=std,
                regret_bound=float(np.mean(bounds)) if bounds else None,
                lmo_per_round=sum(r.lmo_calls for r in group) / rounds,
                projections_per_round=sum(r.projections for r in group) / rounds,
                rounds_per_second=rounds / spent if spent > 0 else math.inf,
                adaptive_mean=_mean_or_none([r.adaptive_regret for r in group]),
                dynamic_mean=_mean_or_none([r.dynamic_regret for r in group]),
                comparator=comparator_text(group),
            )
        )
    return rows


def _mean_or_none(values: Sequence[float | None]) -> float | None:
    """The mean over seeds, or None when a seed has no value (a non-linear family)."""
    if not values or any(v is None for v in values):
        return None
    return float(np.mean(np.asarray(values, dtype=float)))


def fit_exponent(
    horizons: Sequence[int],
    regrets: np.ndarray,
    *,
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float, float, int]:
    """(slope, low, high, dropped resamples) for regrets of shape (horizons, seeds).

    See the module docstring for the method. With one seed the interval is (nan, nan).
    """
    log_horizons = np.log(np.asarray(horizons, dtype=float))
    regrets = np.asarray(regrets, dtype=float)
    if regrets.ndim != 2 or regrets.shape[0] != len(log_horizons) or len(log_horizons) < 2:
        raise ValueError(
            f"fit_exponent needs regrets of shape (horizons >= 2, seeds), got {regrets.shape} "
            f"for {len(log_horizons)} horizons"
        )
    means = regrets.mean(axis=1)
    slope = _log_slope(log_horizons, means)
    seeds = regrets.shape[1]
    if seeds < 2:
        return slope, math.nan, math.nan, 0
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, seeds, size=(resamples, seeds))
    resampled_means = regrets[:, picks].mean(axis=2)  # (horizons, resamples)
    usable = np.all(resampled_means > 0, axis=0)
    centred = log_horizons - log_horizons.mean()
    slopes = centred @ np.log(resampled_means[:, usable]) / (centred @ centred)
    if slopes.size == 0:
        return slope, math.nan, math.nan, int(resamples)
    low, high = np.quantile(slopes, [(1 - level) / 2, (1 + level) / 2])
    return slope, float(low), float(high), int(resamples - usable.sum())


def _log_slope(log_horizons: np.ndarray, means: np.ndarray) -> float:
    if np.any(means <= 0):
        return math.nan
    centred = log_horizons - log_horizons.mean()
    return float(centred @ np.log(means) / (centred @ centred))


def fit_exponents(results: Iterable[RunResult], *, level: float = 0.95) -> list[ExponentFit]:
    """One :class:`ExponentFit` per (env, agent, constants) over its horizons.

    Every horizon of a group must have the same seeds (a full grid).
    """
    fits = []
    for (env_id, agent, constants, _), group in _groups(results, False).items():
        horizons = sorted({r.horizon for r in group})
        seeds = sorted({r.seed for r in group})
        table = {(r.horizon, r.seed): r for r in group}
        missing = [(h, s) for h in horizons for s in seeds if (h, s) not in table]
        if missing:
            raise ValueError(f"{agent}: no result for (horizon, seed) {missing[:3]}")
        regrets = np.array([[table[h, s].final_regret for s in seeds] for h in horizons])
        if len(horizons) < 2:
            raise ValueError(f"{agent}: an exponent needs at least two horizons, got {horizons}")
        slope, low, high, dropped = fit_exponent(horizons, regrets, level=level)
        largest = [table[horizons[-1], s] for s in seeds]
        rounds = horizons[-1] * len(seeds)
        fits.append(
            ExponentFit(
                env_id=env_id,
                agent=agent,
                constants=constants,
                scale=_scale_text(group[0]),
                horizons=tuple(horizons),
                regret_mean=tuple(float(v) for v in regrets.mean(axis=1)),
                regret_std=tuple(_mean_std(row)[1] for row in regrets),
                seeds=len(seeds),
                slope=slope,
                low=low,
                high=high,
                level=level,
                dropped_resamples=dropped,
                theory=theory_exponent(agent, group[0]),
                lmo_per_round=sum(r.lmo_calls for r in largest) / rounds,
                projections_per_round=sum(r.projections for r in largest) / rounds,
                comparator=comparator_text(group),
                full_information=any(is_full_information(r) for r in group),
            )
        )
    return fits


def theory_exponent(agent: str, result: RunResult | None = None) -> float | None:
    """a of the agent's O(T^a) guarantee: the one ``result`` (a run of it) recorded in
    its ``agent_spec`` (what a factory's agent declared), else its declared
    ``regret_exponent`` (a user agent's too), else the built-in table; None when it
    declares none (fit only)."""
    from bco_gym.agents import find_agent

    recorded = (result.agent_spec or {}).get("regret_exponent") if result is not None else None
    if recorded is not None:
        return float(recorded)
    spec = find_agent(agent)
    if spec is not None and spec.regret_exponent is not None:
        return spec.regret_exponent
    return THEORY_EXPONENTS.get(agent)


# -- rendering -----------------------------------------------------------------------------------
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _number(value: float | None, digits: int = 3) -> str:
    return format_column([value], digits)[0]


def format_column(values: Sequence[float | None], digits: int = 3) -> list[str]:
    """The numbers of one table column, formatted alike: all fixed-point with the same
    decimals (``digits`` significant digits for the smallest non-zero value), or, when
    the magnitudes span more than that can show, all in scientific notation. None and
    NaN are "-", infinities "inf"/"-inf"."""
    finite = [abs(float(v)) for v in values if v is not None and math.isfinite(float(v))]
    nonzero = [v for v in finite if v > 0]
    if nonzero and (min(nonzero) < 1e-3 or max(nonzero) >= 1e7):
        style = f".{digits - 1}e"
    elif not nonzero:
        style = ".0f"
    else:
        smallest = min(nonzero)
        decimals = max(0, digits - 1 - math.floor(math.log10(smallest)))
        style = f".{min(decimals, 6)}f"
    return [_formatted(value, style) for value in values]


def _formatted(value: float | None, style: str) -> str:
    if value is None or math.isnan(float(value)):
        return "-"
    if math.isinf(float(value)):
        return "inf" if value > 0 else "-inf"
    return format(float(value), style)


def compare_columns(rows: Sequence[AgentSummary]) -> tuple[list[str], list[list[str]]]:
    """Header and cells of the ``compare`` table (each numeric column formatted alike)."""
    header = [
        "agent",
        "constants",
        "scale",
        "T",
        "seeds",
        "regret (mean ± std)",
        "comparator",
        "regret/T^(3/4)",
        "adaptive",
        "dynamic",
        "bound",
        "LMO/round",
        "proj/round",
        "rounds/s",
    ]
    means = format_column([row.regret_mean for row in rows], 4)
    stds = format_column([row.regret_std for row in rows], 3)
    names = (
        "scaled_regret",
        "adaptive_mean",
        "dynamic_mean",
        "regret_bound",
        "lmo_per_round",
        "projections_per_round",
    )
    numbers = [format_column([getattr(row, name) for row in rows]) for name in names]
    body = [
        [
            row.agent,
            row.constants,
            row.scale,
            str(row.horizon),
            str(row.seeds),
            f"{means[i]} ± {stds[i]}",
            row.comparator,
            *(column[i] for column in numbers),
            f"{row.rounds_per_second:,.0f}" if math.isfinite(row.rounds_per_second) else "inf",
        ]
        for i, row in enumerate(rows)
    ]
    return header, body


@dataclass(frozen=True)
class ChangingSummary:
    """One agent's regrets on the yardsticks of a changing environment, over seeds.

    Each value is (mean, std) over the seeds; ``switching`` is None without segments.
    """

    label: str
    seeds: int
    static: tuple[float, float]
    adaptive: tuple[float, float]
    dynamic: tuple[float, float]
    switching: tuple[float, float] | None


def changing_rows(results: Iterable[RunResult]) -> list[ChangingSummary]:
    """One :class:`ChangingSummary` per series (agent, constants) of results whose
    adaptive and dynamic regrets are known (:mod:`bco_gym.losses.intervals`)."""
    rows = []
    for label, group in group_series(results).items():
        switching = [r.interval_regret.get("switching_regret") for r in group]
        rows.append(
            ChangingSummary(
                label=label,
                seeds=len(group),
                static=_mean_std([r.final_regret for r in group]),
                adaptive=_mean_std([float(r.adaptive_regret) for r in group]),
                dynamic=_mean_std([float(r.dynamic_regret) for r in group]),
                switching=None if None in switching else _mean_std(switching),
            )
        )
    return rows


def changing_columns(
    rows: Sequence[ChangingSummary],
) -> tuple[list[str], list[list[str]], str]:
    """Header, cells and the sentence naming the lowest mean on each yardstick."""
    yardsticks = [("static", "static regret"), ("adaptive", "adaptive regret")]
    yardsticks.append(("dynamic", "dynamic regret"))
    if all(row.switching is not None for row in rows):
        yardsticks.append(("switching", "switching regret"))
    header = ["agent", "seeds", *(f"{title} (mean ± std)" for _, title in yardsticks)]
    columns = []
    for name, _ in yardsticks:
        means = format_column([getattr(row, name)[0] for row in rows], 4)
        stds = format_column([getattr(row, name)[1] for row in rows], 3)
        columns.append([f"{m} ± {s}" for m, s in zip(means, stds, strict=True)])
    body = [
        [row.label, str(row.seeds), *(column[i] for column in columns)]
        for i, row in enumerate(rows)
    ]
    winners = "; ".join(
        f"{title}: {min(rows, key=lambda row: getattr(row, name)[0]).label}"
        for name, title in yardsticks
    )
    return header, body, winners


def exponent_columns(fits: Sequence[ExponentFit]) -> tuple[list[str], list[list[str]]]:
    """Header and cells of the ``exponents`` table."""
    level = f"{round(100 * fits[0].level)}%" if fits else "95%"
    header = [
        "agent",
        "constants",
        "scale",
        "horizons",
        "seeds",
        "slope",
        f"{level} CI",
        "theory",
        "LMO/round",
        "proj/round",
        "comparator",
    ]
    lmo = format_column([fit.lmo_per_round for fit in fits])
    projections = format_column([fit.projections_per_round for fit in fits])
    body = [
        [
            fit.agent,
            fit.constants,
            fit.scale,
            f"{fit.horizons[0]}..{fit.horizons[-1]} ({len(fit.horizons)})",
            str(fit.seeds),
            f"{fit.slope:.3f}" if math.isfinite(fit.slope) else "-",
            f"[{fit.low:.3f}, {fit.high:.3f}]" if math.isfinite(fit.low) else "-",
            f"{fit.theory:.3f}" if fit.theory is not None else "-",
            lmo[i],
            projections[i],
            fit.comparator,
        ]
        for i, fit in enumerate(fits)
    ]
    return header, body


def render_text(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    """An aligned plain-text table (control characters escaped)."""
    table = [[sanitize_text(cell) for cell in row] for row in [header, *body]]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in table
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(line.rstrip() for line in lines)


def render_markdown(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured Markdown table: every cell shown as text
    (:func:`~bco_gym.reports.page.md_text`: a label or a message cannot make a link, an
    image or HTML) unless it is :class:`~bco_gym.reports.page.Markdown` already (a link,
    a code span, bold numbers); control characters and ``|`` escaped in every cell."""

    def cell(text: str) -> str:
        shown = sanitize_text(text) if isinstance(text, Markdown) else md_text(text, in_table=True)
        return shown.replace("|", "\\|")

    def row(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell(c) for c in cells) + " |"

    lines = [row(header), "|" + "|".join("---" for _ in header) + "|"]
    lines += [row(cells) for cells in body]
    return "\n".join(lines)


def render_csv(rows: Sequence[AgentSummary | ExponentFit]) -> str:
    """CSV text of summary rows with full-precision numbers (one column per field).

    Text cells are sanitised: control characters escaped, and a cell a spreadsheet would
    run as a formula (longer than one character, starting with = + - @, tab or CR, and
    not a number) gets a leading apostrophe.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if not rows:
        return ""
    names = [f.name for f in fields(rows[0])]
    extra = ["scaled_regret"] if isinstance(rows[0], AgentSummary) else []
    writer.writerow(names + extra)
    for row in rows:
        values = [getattr(row, name) for name in names + extra]
        writer.writerow([_csv_value(value) for value in values])
    return buffer.getvalue()


def _csv_value(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, tuple):
        return " ".join(repr(v) for v in value)
    if isinstance(value, float | int):
        return repr(value)
    return csv_safe(str(value))


def csv_safe(text: str) -> str:
    """``text`` made inert for spreadsheets (see :func:`render_csv`)."""
    text = sanitize_text(text)
    try:
        float(text)
        return text
    except ValueError:
        pass
    return "'" + text if len(text) > 1 and text.startswith(_FORMULA_START) else text
