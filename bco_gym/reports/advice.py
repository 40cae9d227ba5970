"""Which method when: a scenario's conclusion, generated from its statistics.

:func:`which_method` turns a scenario's all-pairs ranking (:mod:`~bco_gym.reports.ranking`)
and the runs' costs into a short paragraph; every claim in it is one the ranking makes
(a pair separated after Holm's correction) or a measured mean:

* the bandit agents (not random, not full information) that no other bandit agent
  beats: the best, or the tied best with the cheapest of them per round;
* the bandit agents not separated from random play, and those worse than it;
* a full-information agent that beats the best bandit agent (a lower reference: it
  sees gradients);
* the advice: the best agent, or among tied ones the cheapest per round; "no method
  separates" when nothing is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from bco_gym.engine.result import RunResult
from bco_gym.reports.paired import group_series, is_full_information
from bco_gym.reports.ranking import Ranking

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
    full = {label for label, group in groups.items() if is_full_information(group[0])}
    randoms = [label for label in ranking.labels if groups[label][0].agent == RANDOM]
    random = randoms[0] if randoms else None
    bandit = [label for label in ranking.labels if label not in full and label != random]
    cost = {label: _cost(groups[label]) for label in ranking.labels}
    if not bandit:
        return "Which method when: no bandit agent ran here."
    if not any(ranking.separated(*pair) for pair in ranking.pairs):
        cheapest = min(bandit, key=lambda label: cost[label])
        return (
            "Which method when: no two agents are separated here at this horizon and "
            f"number of seeds; the cheapest bandit agent per round is {cheapest} "
            f"({_number(cost[cheapest])} µs)."
        )
    best = [a for a in bandit if not any(ranking.beats(b, a) for b in bandit if b != a)]
    sentences = [_best_sentence(ranking, bandit, best, cost)]
    if random is not None:
        sentences += _random_sentences(ranking, bandit, random)
    stronger = sorted(f for f in full if all(ranking.beats(f, b) for b in best))
    if stronger:
        values = ", ".join(_number(ranking.means[f]) for f in stronger)
        verb = "does" if len(stronger) == 1 else "do"
        sentences.append(
            f"With full information (gradients), {_listing(stronger)} {verb} better still "
            f"({values})."
        )
    return "Which method when: " + " ".join([*sentences, _advice(ranking, best, random, cost)])


def _advice(ranking: Ranking, best: Sequence[str], random: str | None, cost: dict) -> str:
    """The choice: the best (beating random play where it ran), the cheapest among ties."""
    useful = [b for b in best if random is None or ranking.beats(b, random)]
    if not useful:
        cheapest = min(best, key=lambda label: cost[label])
        return (
            "No bandit agent beats random play here at this horizon; the cheapest of the "
            f"best is {cheapest}."
        )
    choice = min(useful, key=lambda label: cost[label])
    others = [b for b in best if b != choice]
    if not others:
        return f"Here, choose {choice}."
    reason = "the cheapest per round" if len(useful) > 1 else "the only one separated from random"
    return f"Here, choose {choice} (tied with {_listing(others)}; {reason})."


def _best_sentence(
    ranking: Ranking, bandit: Sequence[str], best: Sequence[str], cost: dict[str, float]
) -> str:
    others = [a for a in bandit if a not in best]
    means = ", ".join(f"{a} {_number(ranking.means[a])}" for a in ranking.labels if a in bandit)
    costs = ", ".join(f"{a} {_number(cost[a])}" for a in ranking.labels if a in bandit)
    if len(best) == 1:
        (winner,) = best
        beaten = [a for a in others if ranking.beats(winner, a)]
        separation = (
            "separated from every other bandit agent"
            if len(beaten) == len(others)
            else f"separated from {_listing(beaten) or 'none'} of the others"
        )
        head = f"{winner} has the lowest final regret of the bandit agents, {separation}"
    else:
        head = f"{_listing(best)} are the best bandit agents, not separated from each other"
    return f"{head} (mean final regret: {means}; µs per round: {costs})."


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
