"""Rankings from all pairs: paired intervals, Holm's correction, ordered groups.

A chain that compares only neighbours in the order of the means misleads: a noisy agent
between two others hides a difference the two show on their own seeds, and ``A ≈ B ≈ C``
reads as "C does not beat A" when it does. Here every claim that A beats B rests on
A's and B's own paired differences D_s = R^A_s(T) - R^B_s(T) over their common seeds:

* the mean of D with its two-sided Student-t interval at level 0.95 (as in the paired
  tables, :func:`~bco_gym.stats.paired.t_interval`);
* the two-sided paired t-test's p-value of "mean D = 0" (below 0.05 exactly when that
  interval excludes 0);
* Holm's step-down correction across the m pairs of a scenario (Holm 1979): with the
  p-values sorted, p_(1) <= ... <= p_(m), the adjusted value is
  ``p~_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))``; A and B are *separated* when
  ``p~ <= alpha`` (0.05). This controls the chance of any false claim among the m at
  alpha, whatever the dependence between the pairs.

:func:`compare_family` tests one series against a fixed set of rows (the bench's
verdicts: an agent against a scenario's reference rows) with Holm's correction within
that family only: no series outside it can change the outcome, unlike the all-pairs
ranking's, whose m grows with every series added.

The separated pairs form a partial order (with common seeds the mean differences are
transitive, so it has no cycle). :func:`ordered_groups` shows it as ordered groups:
the set of agents on which it is a weak order -- groups whose members are pairwise
not separated, every member of a group separated from (better than) every member of
each later group -- that states the most separated pairs, and the agents left out
with their own relations. With
a single seed, or two runs with equal differences on every seed, nothing is separated.

References: S. Holm, "A simple sequentially rejective multiple test procedure",
Scand. J. Statist. 6 (1979) 65-70.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bco_gym.engine.result import RunResult
from bco_gym.stats.paired import LEVEL, group_series, paired_differences, t_interval

ALPHA = 0.05
EXHAUSTIVE_LIMIT = 12  # agents; beyond, a weak-order subset is found greedily


@dataclass(frozen=True)
class PairComparison:
    """Series ``first`` against ``second`` on their common seeds (D = first - second).

    ``low``/``high`` are the unadjusted 95% Student-t interval of mean D (nan with fewer
    than two seeds); ``p_value`` the paired t-test's, ``adjusted`` Holm's across the
    scenario's pairs; ``wins`` the seeds where ``first`` has the lower final regret;
    ``scale`` the mean of the two series' mean final regrets (for :attr:`relative`).
    """

    first: str
    second: str
    pairs: int
    mean: float
    low: float
    high: float
    p_value: float
    adjusted: float
    wins: int
    alpha: float = ALPHA
    scale: float = 0.0

    @property
    def separated(self) -> bool:
        """Whether the pair is told apart after Holm's correction."""
        return self.adjusted <= self.alpha

    @property
    def first_better(self) -> bool:
        """``first`` separated from and below ``second``."""
        return self.separated and self.mean < 0

    @property
    def relative(self) -> float:
        """Mean D over the mean of the two agents' final regrets (nan when that is 0)."""
        return self.mean / self.scale if self.scale else math.nan


def paired_p_value(differences: np.ndarray) -> float:
    """Two-sided p-value of the paired t-test of mean 0 (1.0 with no spread or < 2 seeds).

    Below ``1 - level`` exactly when the Student-t interval at ``level`` excludes 0. A
    difference with no spread is 0 on every seed (p = 1) or a constant non-zero shift
    (p = 0: the runs differ the same way on every seed).
    """
    values = np.asarray(differences, dtype=float)
    if values.size < 2:
        return 1.0
    spread = values.std(ddof=1)
    mean = values.mean()
    if spread == 0 or not math.isfinite(spread):
        return 1.0 if mean == 0 else 0.0
    statistic = mean / (spread / math.sqrt(values.size))
    from scipy import stats  # here, not at import: reading results needs no SciPy

    return float(2 * stats.t.sf(abs(statistic), values.size - 1))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given."""
    count = len(p_values)
    order = sorted(range(count), key=lambda index: p_values[index])
    adjusted = [1.0] * count
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (count - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


@dataclass(frozen=True)
class Ranking:
    """All pairs of one scenario's series (at one horizon) and the order they support.

    ``labels`` are sorted by mean final regret; ``pairs[(a, b)]`` holds a against b
    for every ordered pair (b against a is its mirror: same p-values, D negated).
    """

    labels: tuple[str, ...]
    means: Mapping[str, float]
    pairs: Mapping[tuple[str, str], PairComparison]
    alpha: float = ALPHA

    def beats(self, first: str, second: str) -> bool:
        """Whether ``first`` is separated from ``second`` with the lower regret."""
        return self.pairs[(first, second)].first_better

    def separated(self, first: str, second: str) -> bool:
        return self.pairs[(first, second)].separated

    @property
    def groups(self) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]:
        """(ordered groups, agents left out): see :func:`ordered_groups`."""
        return ordered_groups(self)

    def text(self) -> str:
        """The ordered groups on one line, e.g. ``ofw < bbcg < {bfw, fkm} < random``."""
        return ranking_text(self)


def rank(results: Sequence[RunResult], *, alpha: float = ALPHA, level: float = LEVEL) -> Ranking:
    """Every pair of series (:func:`~bco_gym.stats.paired.group_series`) in ``results``.

    ``results`` share one horizon (ValueError otherwise); pairs are compared on their
    common seeds and must be pairable (same env, set, loss sequence and env kwargs).
    """
    groups = _series_at_one_horizon(results, "rank")
    means = {label: float(np.mean([r.final_regret for r in g])) for label, g in groups.items()}
    labels = tuple(sorted(groups, key=lambda label: (means[label], label)))
    pairs = _holm_pairs(groups, means, list(itertools.combinations(labels, 2)), alpha, level)
    return Ranking(labels=labels, means=means, pairs=pairs, alpha=alpha)


@dataclass(frozen=True)
class Family:
    """One series against a fixed set of rows, Holm-corrected within that family only.

    ``pairs[row]`` is ``label`` against ``row`` (D = label - row), its adjusted p-value
    Holm's over the m = ``len(rows)`` comparisons of the family: no other series enters
    the correction, so adding or removing series outside the family cannot change it.
    """

    label: str
    pairs: Mapping[str, PairComparison]

    def beats(self, row: str) -> bool:
        """Whether ``label`` is separated from ``row`` with the lower regret."""
        return self.pairs[row].first_better

    def beaten_by(self, row: str) -> bool:
        """Whether ``row`` is separated from ``label`` with the lower regret."""
        return self.pairs[row].separated and self.pairs[row].mean > 0


def compare_family(
    results: Sequence[RunResult],
    label: str,
    rows: Sequence[str],
    *,
    alpha: float = ALPHA,
    level: float = LEVEL,
) -> Family:
    """``label``'s series against each series of ``rows`` (labels of ``results``' series,
    ``label`` left out), Holm-corrected within these comparisons (:class:`Family`)."""
    groups = _series_at_one_horizon(results, "compare_family")
    missing = [name for name in (label, *rows) if name not in groups]
    if missing:
        raise ValueError(f"compare_family: no series {missing} among {list(groups)}")
    means = {name: float(np.mean([r.final_regret for r in groups[name]])) for name in groups}
    chosen = [(label, row) for row in dict.fromkeys(rows) if row != label]
    pairs = _holm_pairs(groups, means, chosen, alpha, level)
    return Family(label, {second: pairs[(label, second)] for _, second in chosen})


def _series_at_one_horizon(results: Sequence[RunResult], caller: str) -> dict[str, list[RunResult]]:
    horizons = sorted({r.horizon for r in results})
    if len(horizons) != 1:
        raise ValueError(f"{caller} needs results at one horizon, got T in {horizons}")
    return group_series(results)


def _holm_pairs(
    groups: Mapping[str, Sequence[RunResult]],
    means: Mapping[str, float],
    chosen: Sequence[tuple[str, str]],
    alpha: float,
    level: float,
) -> dict[tuple[str, str], PairComparison]:
    """The ``chosen`` pairs and their mirrors, Holm-corrected over the ``chosen`` pairs."""
    raw = {}
    for first, second in chosen:
        seeds, differences = paired_differences(groups[first], groups[second])
        raw[(first, second)] = differences[:, -1] if seeds else np.empty(0)
    adjusted = dict(zip(raw, holm([paired_p_value(d) for d in raw.values()]), strict=True))
    pairs: dict[tuple[str, str], PairComparison] = {}
    for (first, second), final in raw.items():
        scale = (means[first] + means[second]) / 2
        for a, b, sign in ((first, second, 1.0), (second, first, -1.0)):
            values = sign * final
            if values.size:
                mean, low, high = (float(v) for v in t_interval(values, level=level))
            else:
                mean = low = high = math.nan
            pairs[(a, b)] = PairComparison(
                first=a,
                second=b,
                pairs=int(values.size),
                mean=mean,
                low=low,
                high=high,
                p_value=paired_p_value(values),
                adjusted=adjusted[(first, second)],
                wins=int((values < 0).sum()),
                alpha=alpha,
                scale=scale,
            )
    return pairs


# -- the partial order as ordered groups ----------------------------------------------------------
def _weak_order_groups(ranking: Ranking, members: Sequence[str]) -> list[list[str]] | None:
    """The ordered groups of ``members`` if separation is a weak order on them, else None.

    A weak order: "not separated" is an equivalence (its classes are the groups) and
    every member of an earlier group beats every member of a later one.
    """
    ordered = sorted(members, key=lambda label: (ranking.means[label], label))
    groups: list[list[str]] = []
    for label in ordered:
        if groups and not ranking.separated(label, groups[-1][0]):
            groups[-1].append(label)
        else:
            groups.append([label])
    for index, group in enumerate(groups):
        for a, b in itertools.combinations(group, 2):
            if ranking.separated(a, b):
                return None
        for later in groups[index + 1 :]:
            if not all(ranking.beats(a, b) for a in group for b in later):
                return None
    return groups


def _shown_pairs(groups: Sequence[Sequence[str]]) -> int:
    """How many separated pairs the ordered groups state (every pair across groups)."""
    sizes = [len(group) for group in groups]
    return sum(a * b for a, b in itertools.combinations(sizes, 2))


def _largest_weak_order(ranking: Ranking) -> list[list[str]]:
    labels = list(ranking.labels)
    if len(labels) <= EXHAUSTIVE_LIMIT:
        best: tuple[tuple[int, int, int], list[list[str]]] | None = None
        for size in range(len(labels), 0, -1):
            for members in itertools.combinations(labels, size):
                groups = _weak_order_groups(ranking, members)
                if groups is None:
                    continue
                # The most separated pairs stated, then the most agents, then the lowest.
                key = (_shown_pairs(groups), size, -sum(labels.index(m) for m in members))
                if best is None or key > best[0]:
                    best = (key, groups)
        assert best is not None  # any single agent is a weak order
        return best[1]
    members = list(labels)
    while (groups := _weak_order_groups(ranking, members)) is None:
        # Drop the agent in most pairs that break a weak order (not separated from
        # someone who is separated from a third agent it is not separated from).
        def conflicts(label: str, current: list[str] = members) -> int:
            return sum(
                1
                for other, third in itertools.permutations(current, 2)
                if label not in (other, third)
                and not ranking.separated(label, other)
                and not ranking.separated(label, third)
                and ranking.separated(other, third)
            )

        members.remove(max(members, key=lambda label: (conflicts(label), ranking.means[label])))
    return groups


def ordered_groups(ranking: Ranking) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]:
    """(groups, left out): the partial order of the separated pairs as ordered groups.

    The groups are the set of agents on which the order is a weak order that states the
    most separated pairs (every pair across two groups; ties broken toward more agents,
    then toward lower regrets): agents in one group are pairwise not separated; every
    agent of a group beats every agent of each later group. Agents that fit no such
    place (e.g. a noisy agent not separated from two agents that are separated from
    each other) are left out, by mean, and shown with their own relations.
    """
    groups = _largest_weak_order(ranking)
    placed = {label for group in groups for label in group}
    left_out = tuple(label for label in ranking.labels if label not in placed)
    return tuple(tuple(group) for group in groups), left_out


def _group_text(group: Sequence[str]) -> str:
    return group[0] if len(group) == 1 else "{" + ", ".join(group) + "}"


def relations_text(ranking: Ranking, label: str) -> str:
    """``"label: beats A; beaten by B; not separated from C"`` (the parts that apply)."""
    others = [other for other in ranking.labels if other != label]
    beats = [o for o in others if ranking.beats(label, o)]
    beaten = [o for o in others if ranking.beats(o, label)]
    unseparated = [o for o in others if not ranking.separated(label, o)]
    if not beats and not beaten:
        return f"{label} not separated from any"
    parts = [
        f"{name} {', '.join(members)}"
        for name, members in (
            ("beats", beats),
            ("beaten by", beaten),
            ("not separated from", unseparated),
        )
        if members
    ]
    return f"{label}: {'; '.join(parts)}"


def ranking_text(ranking: Ranking) -> str:
    """The ordered groups, ``<`` between groups, then each left-out agent's relations."""
    groups, left_out = ordered_groups(ranking)
    if len(ranking.labels) > 1 and not any(ranking.separated(*pair) for pair in ranking.pairs):
        return "none separated: {" + ", ".join(ranking.labels) + "}"
    text = " < ".join(_group_text(group) for group in groups)
    if left_out:
        text += " (" + "; ".join(relations_text(ranking, label) for label in left_out) + ")"
    return text


__all__ = [
    "ALPHA",
    "EXHAUSTIVE_LIMIT",
    "Family",
    "PairComparison",
    "Ranking",
    "compare_family",
    "holm",
    "ordered_groups",
    "paired_p_value",
    "rank",
    "ranking_text",
    "relations_text",
]
