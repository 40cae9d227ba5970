"""Scores across scenarios: normalised regret, IQM and mean with stratified-bootstrap
intervals, probability of improvement, performance profiles.

The protocol is Agarwal et al.'s for a benchmark of many tasks with few runs each:

* a run's **score** is its final regret divided by random play's on the same scenario
  and seed (the same loss sequence): 0 = no regret, 1 = random play's regret, above 1
  worse than random. The divisor is guarded: it is never below :data:`SCORE_FLOOR` (a
  tenth) of the median of random's regrets over the scenario's seeds, so a seed where
  random play happened to have almost no regret (1e-12 gave scores of 1e12, and one such
  seed in 8 a mean score of 6e9) counts as a seed with a tenth of the typical one. A run
  gets no score (nan) when random did not run on its seed or random's median regret on
  the scenario is not positive;
* the **interquartile mean** (IQM) of an agent's scores pools every run of every
  scenario and averages the middle 50% (``scipy.stats.trim_mean(..., 0.25)``); the
  **mean** averages the scenarios' mean scores (each scenario weighs the same);
* their 95% intervals are **stratified-bootstrap** percentile intervals: each resample
  draws every scenario's runs with replacement within the scenario (the scenarios are
  kept, the seeds vary);
* the **probability of improvement** of X over Y is, averaged over the scenarios both
  ran, the chance that a run of X has a lower score than a run of Y (ties count one
  half): the Mann-Whitney statistic over all pairs of their runs, divided by their
  number; with its stratified-bootstrap interval (X's and Y's runs resampled
  independently);
* the **performance profile** of an agent at tau is the fraction of its runs with a
  score <= tau, averaged over the scenarios; with its pointwise stratified-bootstrap
  95% band (:func:`profile`: each resample redraws every scenario's runs within the
  scenario and recomputes the whole profile).

Where the optional extra ``bench`` is installed (``rliable``), the IQM's and the mean's
intervals of an agent whose scenarios all hold the same number of runs are computed by
rliable's ``get_interval_estimates`` with its own metrics, and so is the profile's band
(the function ``rliable.library.create_performance_profile`` bootstraps, fraction of
runs with score <= tau, handed to ``get_interval_estimates`` with a seeded generator:
``create_performance_profile`` itself takes no seed and draws from a fresh generator,
so its bands would change from one report to the next); otherwise (and by default for
the probability of improvement, where rliable's loop is slow) by this module's
stratified bootstrap: the same resampling scheme, vectorised over the resamples. The
tests check that the two agree to Monte Carlo error. Both are seeded (:data:`SEED`), so
the same scores give the same intervals.

References: R. Agarwal, M. Schwarzer, P. S. Castro, A. Courville, M. G. Bellemare,
"Deep reinforcement learning at the edge of the statistical precipice", NeurIPS 2021.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bco_gym.agents.moved import current_identity
from bco_gym.engine.result import RunResult
from bco_gym.stats.paired import feedback_of

SEED = 20211206
BOOTSTRAP_REPS = 2000
LEVEL = 0.95
TRIM = 0.25
#: The score's divisor is at least this fraction of random's median regret on the scenario.
SCORE_FLOOR = 0.1


@dataclass(frozen=True)
class ScoreRow:
    """One run's line of ``scores.csv``."""

    suite: str
    scenario: str
    agent: str
    seed: int
    horizon: int
    regret: float
    score: float
    adaptive_regret: float | None = None
    dynamic_regret: float | None = None
    version: str | None = None
    computed_at: str | None = None
    feedback: str = "bandit"


#: ``feedback``: what the agent learned from, ``bandit`` (one loss value a round),
#: ``two-point`` or ``full`` (gradients): rows of the last two are not bandit results
#: (:func:`~bco_gym.stats.paired.feedback_of`); ``version``: the bco_gym version that
#: computed the run; ``computed_at``: when (UTC; empty for results saved before it was
#: recorded).
COLUMNS = (
    "suite",
    "scenario",
    "agent",
    "feedback",
    "seed",
    "horizon",
    "regret",
    "score",
    "adaptive_regret",
    "dynamic_regret",
    "version",
    "computed_at",
)

#: The identity of the score's baseline, random play (its label may be anything).
BASELINE_IDENTITY = "bco_gym.agents.random.agent:RandomAgent"


def is_baseline(result: RunResult) -> bool:
    """Whether ``result`` is random play's, whatever its sampling law (by identity's class;
    by name for older results)."""
    identity = (result.agent_spec or {}).get("identity")
    if identity is None:
        return result.agent == "random"
    return current_identity(identity).split("[", 1)[0] == BASELINE_IDENTITY


def agent_label(result: RunResult) -> str:
    """scores.csv's agent: the agent's name, with "(tuned)" (or another constants label
    than theory's) where its constants are not its defaults, e.g. ``bbcg (tuned)``."""
    if result.constants in ("theory", "default"):
        return result.agent
    return f"{result.agent} ({result.constants})"


def score_rows(suite: str, scenario: str, results: Sequence[RunResult]) -> list[ScoreRow]:
    """Every result's row: its final regret over random's on the same seed, that divisor
    raised to at least :data:`SCORE_FLOOR` times random's median regret on the scenario
    (module docstring); nan without random's run on the seed or a positive median."""
    random = {r.seed: r.final_regret for r in results if is_baseline(r)}
    typical = float(np.median(list(random.values()))) if random else math.nan
    rows = []
    for result in results:
        baseline = random.get(result.seed, math.nan)
        if typical > 0 and math.isfinite(baseline):
            score = result.final_regret / max(baseline, SCORE_FLOOR * typical)
        else:
            score = math.nan
        rows.append(
            ScoreRow(
                suite=suite,
                scenario=scenario,
                agent=agent_label(result),
                seed=result.seed,
                horizon=result.horizon,
                regret=float(result.final_regret),
                score=float(score),
                adaptive_regret=result.adaptive_regret,
                dynamic_regret=result.dynamic_regret,
                version=result.versions.get("bco_gym"),
                computed_at=result.computed_at,
                feedback=feedback_of(result),
            )
        )
    return rows


def scores_by_scenario(rows: Sequence[ScoreRow], agent: str) -> dict[str, np.ndarray]:
    """Scenario -> the agent's finite scores there, by seed (scenarios in first-seen order)."""
    table: dict[str, list[tuple[int, float]]] = {}
    for row in rows:
        if row.agent == agent and math.isfinite(row.score):
            table.setdefault(row.scenario, []).append((row.seed, row.score))
    return {name: np.array([s for _, s in sorted(pairs)]) for name, pairs in table.items()}


# -- point estimates ------------------------------------------------------------------------------
def iqm(per_scenario: Sequence[np.ndarray]) -> float:
    """Interquartile mean of all runs pooled (25% trimmed at each end)."""
    from scipy import stats  # here, not at import: reading results needs no SciPy

    return float(stats.trim_mean(np.concatenate(per_scenario), TRIM))


def mean_of_means(per_scenario: Sequence[np.ndarray]) -> float:
    """Mean over scenarios of the scenario's mean score."""
    return float(np.mean([values.mean() for values in per_scenario]))


def _below(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """P(X < Y) + P(X = Y) / 2 over all pairs, along the last two axes of x[..., :, None]."""
    less = (x[..., :, None] < y[..., None, :]).mean(axis=(-2, -1))
    equal = (x[..., :, None] == y[..., None, :]).mean(axis=(-2, -1))
    return less + equal / 2


def probability_of_improvement(ours: Sequence[np.ndarray], theirs: Sequence[np.ndarray]) -> float:
    """Mean over scenarios of P(our score < their score), ties one half."""
    return float(np.mean([_below(x, y) for x, y in zip(ours, theirs, strict=True)]))


# -- intervals ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Estimate:
    """A point estimate with its 95% stratified-bootstrap interval and who computed it."""

    value: float
    low: float
    high: float
    method: str  # "rliable" or "bco_gym"


def rliable_available() -> bool:
    """Whether ``rliable`` (the extra ``bench``) imports here."""
    try:
        import rliable.library  # noqa: F401
    except Exception:  # an installed rliable whose dependencies are broken counts as absent
        return False
    return True


def _percentiles(samples: np.ndarray) -> tuple[float, float]:
    tail = 100 * (1 - LEVEL) / 2
    low, high = np.percentile(samples, [tail, 100 - tail])
    return float(low), float(high)


def _resample(values: np.ndarray, reps: int, rng: np.random.Generator) -> np.ndarray:
    """(reps, n): each row a draw of the n runs with replacement."""
    return values[rng.integers(0, len(values), size=(reps, len(values)))]


def bootstrap_aggregates(
    per_scenario: Sequence[np.ndarray], *, reps: int = BOOTSTRAP_REPS, seed: int = SEED
) -> dict[str, tuple[float, float]]:
    """{"iqm": (low, high), "mean": (low, high)}: this module's stratified bootstrap."""
    rng = np.random.default_rng(seed)
    samples = [_resample(values, reps, rng) for values in per_scenario]
    pooled = np.concatenate(samples, axis=1)
    from scipy import stats  # here, not at import: reading results needs no SciPy

    iqms = stats.trim_mean(pooled, TRIM, axis=1)
    means = np.mean([sample.mean(axis=1) for sample in samples], axis=0)
    return {"iqm": _percentiles(iqms), "mean": _percentiles(means)}


def bootstrap_improvement(
    ours: Sequence[np.ndarray],
    theirs: Sequence[np.ndarray],
    *,
    reps: int = BOOTSTRAP_REPS,
    seed: int = SEED,
) -> tuple[float, float]:
    """The probability of improvement's interval: both sides resampled within scenarios."""
    rng = np.random.default_rng(seed)
    per_scenario = [
        _below(_resample(x, reps, rng), _resample(y, reps, rng))
        for x, y in zip(ours, theirs, strict=True)
    ]
    return _percentiles(np.mean(per_scenario, axis=0))


@contextlib.contextmanager
def _seeded_global_numpy(seed: int) -> Iterator[np.random.RandomState]:
    """rliable draws its resamples from NumPy's global generator: seed it, then restore it."""
    saved = np.random.get_state()  # noqa: NPY002 (rliable reads the global generator)
    np.random.seed(seed)  # noqa: NPY002
    try:
        yield np.random.RandomState(seed)
    finally:
        np.random.set_state(saved)  # noqa: NPY002


def _rectangular(*groups: Sequence[np.ndarray]) -> bool:
    sizes = {len(values) for group in groups for values in group}
    return len(sizes) == 1


def _rliable_band(
    data: np.ndarray | tuple[np.ndarray, np.ndarray],
    function: Callable[..., np.ndarray],
    reps: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of a vector-valued statistic by rliable's stratified bootstrap, seeded."""
    from rliable import library

    with _seeded_global_numpy(seed) as state, warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # arch's note on random_state
        _, intervals = library.get_interval_estimates(
            {"x": data},
            function,
            reps=reps,
            confidence_interval_size=LEVEL,
            random_state=state,
        )
    band = np.asarray(intervals["x"], dtype=float)
    return band[0], band[1]


def _rliable_interval(
    data: np.ndarray | tuple[np.ndarray, np.ndarray],
    function: Callable[..., float],
    reps: int,
    seed: int,
) -> tuple[float, float]:
    low, high = _rliable_band(data, lambda *arrays: np.array([function(*arrays)]), reps, seed)
    return float(low[0]), float(high[0])


def aggregate(
    per_scenario: Mapping[str, np.ndarray],
    *,
    reps: int = BOOTSTRAP_REPS,
    use_rliable: bool | None = None,
) -> dict[str, Estimate]:
    """{"iqm": ..., "mean": ...} of one agent's scores (scenario -> scores by seed).

    ``use_rliable``: None uses it where installed and the scenarios hold equally many
    runs; False forces this module's bootstrap.
    """
    groups = [np.asarray(v, dtype=float) for v in per_scenario.values() if len(v)]
    if not groups:
        nan = Estimate(math.nan, math.nan, math.nan, "none")
        return {"iqm": nan, "mean": nan}
    point = {"iqm": iqm(groups), "mean": mean_of_means(groups)}
    if _use_rliable(use_rliable, groups):
        from rliable import metrics

        matrix = np.stack(groups, axis=1)  # (runs, scenarios)
        functions = {"iqm": metrics.aggregate_iqm, "mean": metrics.aggregate_mean}
        return {
            name: Estimate(point[name], *_rliable_interval(matrix, f, reps, SEED), "rliable")
            for name, f in functions.items()
        }
    intervals = bootstrap_aggregates(groups, reps=reps)
    return {name: Estimate(point[name], *intervals[name], "bco_gym") for name in point}


def improvement(
    ours: Mapping[str, np.ndarray],
    theirs: Mapping[str, np.ndarray],
    *,
    reps: int = BOOTSTRAP_REPS,
    use_rliable: bool | None = False,
) -> Estimate:
    """P(ours < theirs) over the scenarios both ran, with its interval (module docstring).

    By default this module's bootstrap (vectorised, milliseconds); ``use_rliable=None``
    or True uses rliable's, which runs a Mann-Whitney test per scenario per resample (about
    ten seconds per pair at 2,000 resamples here); the two agree (tests/reports).
    """
    shared = [name for name in ours if name in theirs and len(ours[name]) and len(theirs[name])]
    if not shared:
        return Estimate(math.nan, math.nan, math.nan, "none")
    x = [np.asarray(ours[name], dtype=float) for name in shared]
    y = [np.asarray(theirs[name], dtype=float) for name in shared]
    value = probability_of_improvement(x, y)
    if _use_rliable(use_rliable, x, y):
        from rliable import metrics

        # rliable counts a higher score as better: lower regret is a higher negated score.
        pair = (-np.stack(x, axis=1), -np.stack(y, axis=1))
        low, high = _rliable_interval(pair, metrics.probability_of_improvement, reps, SEED)
        return Estimate(value, low, high, "rliable")
    return Estimate(value, *bootstrap_improvement(x, y, reps=reps), "bco_gym")


def _use_rliable(requested: bool | None, *groups: Sequence[np.ndarray]) -> bool:
    if requested is False:
        return False
    usable = _rectangular(*groups) and rliable_available()
    if requested and not usable:
        raise ValueError(
            "use_rliable=True needs rliable installed (pip install bco_gym[bench]) and "
            "equally many runs in every scenario"
        )
    return usable


def _at_most(scores: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """Fraction of ``scores`` <= tau along the last axis: shape (..., len(taus))."""
    return (scores[..., None] <= taus).mean(axis=-2)


def performance_profile(per_scenario: Mapping[str, np.ndarray], taus: np.ndarray) -> np.ndarray:
    """Fraction of runs with score <= tau, averaged over scenarios, at each tau."""
    groups = [np.asarray(v, dtype=float) for v in per_scenario.values() if len(v)]
    taus = np.asarray(taus, dtype=float)
    if not groups:
        return np.full(taus.shape, math.nan)
    return np.mean([_at_most(values, taus) for values in groups], axis=0)


@dataclass(frozen=True)
class ProfileEstimate:
    """A performance profile at each tau with its pointwise 95% stratified-bootstrap band."""

    taus: np.ndarray
    value: np.ndarray
    low: np.ndarray
    high: np.ndarray
    method: str  # "rliable", "bco_gym" or "none"


def bootstrap_profile(
    per_scenario: Sequence[np.ndarray],
    taus: np.ndarray,
    *,
    reps: int = BOOTSTRAP_REPS,
    seed: int = SEED,
) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) at each tau: this module's stratified bootstrap of the profile."""
    rng = np.random.default_rng(seed)
    taus = np.asarray(taus, dtype=float)
    profiles = np.mean(
        [_at_most(_resample(values, reps, rng), taus) for values in per_scenario], axis=0
    )  # (reps, taus)
    tail = 100 * (1 - LEVEL) / 2
    low, high = np.percentile(profiles, [tail, 100 - tail], axis=0)
    return low, high


def profile(
    per_scenario: Mapping[str, np.ndarray],
    taus: np.ndarray,
    *,
    reps: int = BOOTSTRAP_REPS,
    use_rliable: bool | None = None,
) -> ProfileEstimate:
    """One agent's performance profile (scenario -> scores by seed) with its band.

    ``use_rliable`` as in :func:`aggregate`: rliable where installed and the scenarios
    hold equally many runs (then the fraction pooled over all runs, which rliable
    bootstraps, equals the mean of the scenarios' fractions); False forces this
    module's bootstrap.
    """
    groups = [np.asarray(v, dtype=float) for v in per_scenario.values() if len(v)]
    taus = np.asarray(taus, dtype=float)
    value = performance_profile(per_scenario, taus)
    if not groups:
        return ProfileEstimate(taus, value, value.copy(), value.copy(), "none")
    if _use_rliable(use_rliable, groups):
        matrix = np.stack(groups, axis=1)  # (runs, scenarios)
        low, high = _rliable_band(matrix, lambda m: _at_most(m.ravel(), taus), reps, SEED)
        return ProfileEstimate(taus, value, low, high, "rliable")
    low, high = bootstrap_profile(groups, taus, reps=reps)
    return ProfileEstimate(taus, value, low, high, "bco_gym")


def improvement_matrix(
    per_agent: Mapping[str, Mapping[str, np.ndarray]], *, reps: int = BOOTSTRAP_REPS
) -> dict[tuple[str, str], Estimate]:
    """(X, Y) -> P(X < Y) for every ordered pair of agents sharing a scenario.

    Each unordered pair is bootstrapped once (:func:`improvement`); its mirror is the
    complement, P(Y < X) = 1 - P(X < Y) on every resample (ties count one half on both
    sides), so the mirror's interval is [1 - high, 1 - low] of the same resamples.
    """
    agents = list(per_agent)
    matrix: dict[tuple[str, str], Estimate] = {}
    for i, first in enumerate(agents):
        for second in agents[i + 1 :]:
            found = improvement(per_agent[first], per_agent[second], reps=reps)
            if not math.isfinite(found.value):
                continue
            matrix[(first, second)] = found
            matrix[(second, first)] = Estimate(
                1.0 - found.value, 1.0 - found.high, 1.0 - found.low, found.method
            )
    return matrix


__all__ = [
    "BASELINE_IDENTITY",
    "BOOTSTRAP_REPS",
    "COLUMNS",
    "LEVEL",
    "SCORE_FLOOR",
    "SEED",
    "TRIM",
    "Estimate",
    "ProfileEstimate",
    "ScoreRow",
    "agent_label",
    "aggregate",
    "bootstrap_aggregates",
    "bootstrap_improvement",
    "bootstrap_profile",
    "improvement",
    "improvement_matrix",
    "iqm",
    "is_baseline",
    "mean_of_means",
    "performance_profile",
    "probability_of_improvement",
    "profile",
    "rliable_available",
    "score_rows",
    "scores_by_scenario",
]
