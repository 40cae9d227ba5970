"""Which method when: a scenario's conclusion, generated from its statistics.

:func:`which_method` turns a scenario's all-pairs ranking (:mod:`~bco_gym.stats.ranking`)
and the runs' costs into a short paragraph; every claim in it is one the ranking makes
(a pair separated after Holm's correction) or a measured mean:

* the best bandit agents (not random, not full information, not two-point): the group
  of lowest mean among the bandit agents *separated from random play* (better), the
  agents of that set no other member of it beats; never an agent that does not beat
  random, however noisy (an agent whose mean is above random's can be "not separated"
  from the best one by its own noise). Where no bandit agent is separated from random
  play, the paragraph says so and names no best;
* the bandit agents not separated from random play, and those worse than it;
* a full-information or two-point agent that beats every one of the best bandit agents
  (a lower reference: it sees more than one loss value), tested within that family
  (:func:`~bco_gym.stats.ranking.compare_family`) when the ranking leaves it out;
* the advice: the best agent, or among tied ones the cheapest per round; "no method
  separates" when nothing is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from bco_gym.engine.result import RunResult
from bco_gym.stats.paired import group_series, is_bandit
from bco_gym.stats.ranking import Ranking, compare_family

RANDOM = "random"


def _number(value: float) -> str:
    if not math.isfinite(value):
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _listing(names: Sequence[str]) -> str:
    names = list(names)
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _cost(group: Sequence[RunResult]) -> float:
    """Microseconds per round, agent plus environment, over the group's runs."""
    rounds = sum(r.horizon for r in group)
    return 1e6 * sum(r.agent_seconds + r.env_seconds for r in group) / rounds


def which_method(ranking: Ranking, results: Sequence[RunResult]) -> str:
    """The "which method when" paragraph of one scenario (module docstring)."""
    groups = group_series(results)
    more = {label for label, group in groups.items() if not is_bandit(group[0])}
    randoms = [label for label in ranking.labels if groups[label][0].agent == RANDOM]
    random = randoms[0] if randoms else None
    bandit = [label for label in ranking.labels if label not in more and label != random]
    cost = {label: _cost(group) for label, group in groups.items()}
    if not bandit:
        return "Which method when: no bandit agent ran here."
    if not any(
        ranking.separated(a, b) for a, b in ranking.pairs if a not in more and b not in more
    ):
        cheapest = min(bandit, key=lambda label: cost[label])
        return (
            "Which method when: no two bandit agents are separated here at this horizon and "
            f"number of seeds; the cheapest bandit agent per round is {cheapest} "
            f"({_number(cost[cheapest])} µs)."
        )
    if random is None:
        best = [a for a in bandit if not any(ranking.beats(b, a) for b in bandit if b != a)]
    else:
        useful = [a for a in bandit if ranking.beats(a, random)]
        best = [a for a in useful if not any(ranking.beats(b, a) for b in useful if b != a)]
    sentences = [_best_sentence(ranking, bandit, best, cost, random)]
    if random is not None:
        sentences += _random_sentences(ranking, bandit, random)
    sentences += _more_feedback_sentences(ranking, results, sorted(more), best)
    return "Which method when: " + " ".join([*sentences, _advice(best, random, cost)])


def _more_feedback_sentences(
    ranking: Ranking, results: Sequence[RunResult], more: Sequence[str], best: Sequence[str]
) -> list[str]:
    """The full-information and two-point rows that beat every best bandit agent."""
    if not best:
        return []
    stronger = []
    for label in more:
        if label in ranking.labels:
            beats = all(ranking.beats(label, b) for b in best)
        else:
            at_horizon = [r for r in results if r.horizon == results[0].horizon]
            family = compare_family(at_horizon, label, best, alpha=ranking.alpha)
            beats = all(family.beats(b) for b in best)
        if beats:
            stronger.append(label)
    if not stronger:
        return []
    means = {
        label: float(np.mean([r.final_regret for r in group]))
        for label, group in group_series(results).items()
    }
    values = ", ".join(_number(means[label]) for label in stronger)
    verb = "does" if len(stronger) == 1 else "do"
    return [
        f"With more feedback than one loss a round (a lower reference, not a bandit agent), "
        f"{_listing(stronger)} {verb} better still ({values})."
    ]


def _advice(best: Sequence[str], random: str | None, cost: dict) -> str:
    """The choice: the cheapest of the best (separated from random play where it ran)."""
    if not best:
        return (
            "No bandit agent is separated from random play (better) here at this horizon: "
            "none is advised."
        )
    choice = min(best, key=lambda label: cost[label])
    others = [b for b in best if b != choice]
    if not others:
        return f"Here, choose {choice}."
    return f"Here, choose {choice} (tied with {_listing(others)}; the cheapest per round)."


def _best_sentence(
    ranking: Ranking,
    bandit: Sequence[str],
    best: Sequence[str],
    cost: dict[str, float],
    random: str | None,
) -> str:
    means = ", ".join(f"{a} {_number(ranking.means[a])}" for a in ranking.labels if a in bandit)
    costs = ", ".join(f"{a} {_number(cost[a])}" for a in ranking.labels if a in bandit)
    measured = f"(mean final regret: {means}; µs per round: {costs})"
    if not best:
        lowest = min(bandit, key=lambda label: ranking.means[label])
        return (
            f"No bandit agent is separated from random play (better); the lowest mean is "
            f"{lowest}'s {measured}."
        )
    among = "" if random is None else " separated from random play"
    others = [a for a in bandit if a not in best]
    if len(best) == 1:
        (winner,) = best
        beaten = [a for a in others if ranking.beats(winner, a)]
        separation = (
            "separated from every other bandit agent"
            if len(beaten) == len(others)
            else f"separated from {_listing(beaten) or 'none'} of the others"
        )
        head = f"{winner} has the lowest final regret of the bandit agents{among}, {separation}"
    else:
        head = f"{_listing(best)} are the best bandit agents{among}, not separated from each other"
    lower = [
        a
        for a in bandit
        if a not in best and ranking.means[a] < min(ranking.means[b] for b in best)
    ]
    if lower:
        head += (
            f" ({_listing(lower)}: a lower mean, not separated from random play)"
            if len(lower) == 1
            else f" ({_listing(lower)}: lower means, not separated from random play)"
        )
    return f"{head} {measured}."


def _random_sentences(ranking: Ranking, bandit: Sequence[str], random: str) -> list[str]:
    tied = [a for a in bandit if not ranking.separated(a, random)]
    worse = [a for a in bandit if ranking.beats(random, a)]
    sentences = []
    if tied:
        verb = "is" if len(tied) == 1 else "are"
        sentences.append(
            f"{_listing(tied)} {verb} not separated from random play"
            + (f" ({random})" if random != RANDOM else "")
            + " at this horizon."
        )
    if worse:
        verb = "does" if len(worse) == 1 else "do"
        sentences.append(f"{_listing(worse)} {verb} worse than random play.")
    return sentences
