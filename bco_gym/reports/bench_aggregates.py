"""The statistics of ``bco-gym bench``'s report: per agent its scenarios scored, IQM and
mean with stratified-bootstrap intervals and its performance profile; per pair of agents
the probability of improvement; per verdict reference (bbcg, fkm) the column of
P(agent < reference) against its tuned row where the scenario has one
(:mod:`bco_gym.stats.scores` computes each)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from bco_gym.reports.bench_verdicts import VERDICT_REFERENCES
from bco_gym.stats.paired import FEEDBACK_MARKS
from bco_gym.stats.scores import (
    Estimate,
    ProfileEstimate,
    ScoreRow,
    aggregate,
    improvement,
    improvement_matrix,
    profile,
    scores_by_scenario,
)

#: The scores tau at which the performance profiles are drawn.
PROFILE_TAUS = np.linspace(0.0, 1.5, 151)


@dataclass(frozen=True)
class Aggregates:
    """Per agent: scenarios scored, IQM and mean estimates, performance profile with its
    band; per ordered pair of agents sharing a scenario, P(first < second)."""

    agents: list[str]
    scenarios: dict[str, int]
    runs: dict[str, int]
    estimates: dict[str, dict[str, Estimate]]
    improvements: dict[tuple[str, str], Estimate]
    profiles: dict[str, ProfileEstimate]
    #: Per verdict reference (bbcg, fkm): its column of the scores table.
    against: dict[str, ReferenceColumn] = field(default_factory=dict)
    #: Per agent: what it learned from (scores.csv's ``feedback``; absent: bandit).
    feedback: dict[str, str] = field(default_factory=dict)

    def is_bandit(self, agent: str) -> bool:
        return self.feedback.get(agent, "bandit") == "bandit"

    def shown(self, agent: str) -> str:
        """The agent as tables and figures name it: ``ogd (full info)`` for an agent with
        more feedback than one loss value a round."""
        kind = self.feedback.get(agent, "bandit")
        return agent if kind not in FEEDBACK_MARKS else f"{agent} ({FEEDBACK_MARKS[kind]})"

    def order(self) -> list[str]:
        """The bandit agents, then those with more feedback (ranked apart); each most
        scenarios first, then by IQM (the tables' and figures' order)."""
        return sorted(
            self.agents,
            key=lambda a: (
                not self.is_bandit(a),
                -self.scenarios[a],
                self.estimates[a]["iqm"].value,
            ),
        )


@dataclass(frozen=True)
class ReferenceColumn:
    """P(agent < reference) for every agent, against the row of the reference the
    verdicts are against: per scenario its tuned row (scores.csv ``bbcg (tuned)``) where
    the scenario has one, else its theory row (``bbcg``)."""

    reference: str
    rows: dict[str, str]  # scenario -> the reference's scores.csv label there
    estimates: dict[str, Estimate]  # agent -> P(agent < that row)

    @property
    def tuned(self) -> int:
        """In how many scenarios the column is against a tuned row."""
        return sum(label != self.reference for label in self.rows.values())

    @property
    def header(self) -> str:
        """``P(agent < bbcg (tuned)) [95% CI]``; with tuned rows in some scenarios only,
        ``P(agent < bbcg (tuned in 3/11)) [95% CI]``; without any, ``P(agent < bbcg)``."""
        if not self.tuned:
            row = self.reference
        elif self.tuned == len(self.rows):
            row = f"{self.reference} (tuned)"
        else:
            row = f"{self.reference} (tuned in {self.tuned}/{len(self.rows)})"
        return f"P(agent < {row}) [95% CI]"


def reference_column(
    reference: str,
    per_agent: Mapping[str, Mapping[str, np.ndarray]],
    improvements: Mapping[tuple[str, str], Estimate],
    reps: int,
) -> ReferenceColumn | None:
    """``reference``'s :class:`ReferenceColumn` (None when it has no scores). A scenario
    where the chosen row is the agent's own is left out of that agent's P; where one
    row serves every scenario, P is the matrix's (the same resamples)."""
    tuned = f"{reference} (tuned)"
    scenarios = list(dict.fromkeys([*per_agent.get(tuned, {}), *per_agent.get(reference, {})]))
    if not scenarios:
        return None
    rows = {name: tuned if name in per_agent.get(tuned, {}) else reference for name in scenarios}
    estimates = {}
    for agent, ours in per_agent.items():
        shared = {name: row for name, row in rows.items() if name in ours and row != agent}
        if not shared:
            continue
        used = set(shared.values())
        if len(used) == 1 and (agent, *used) in improvements:
            estimates[agent] = improvements[(agent, *used)]
            continue
        theirs = {name: per_agent[row][name] for name, row in shared.items()}
        found = improvement({name: ours[name] for name in shared}, theirs, reps=reps)
        if math.isfinite(found.value):
            estimates[agent] = found
    return ReferenceColumn(reference, rows, estimates)


def aggregates(rows: Sequence[ScoreRow], agents: Sequence[str], reps: int) -> Aggregates:
    per_agent = {agent: scores_by_scenario(rows, agent) for agent in agents}
    improvements = improvement_matrix(per_agent, reps=reps)
    columns = {
        reference: reference_column(reference, per_agent, improvements, reps)
        for reference in VERDICT_REFERENCES
    }
    return Aggregates(
        agents=list(agents),
        scenarios={agent: len(per_agent[agent]) for agent in agents},
        runs={agent: sum(len(v) for v in per_agent[agent].values()) for agent in agents},
        estimates={agent: aggregate(per_agent[agent], reps=reps) for agent in agents},
        improvements=improvements,
        profiles={agent: profile(per_agent[agent], PROFILE_TAUS, reps=reps) for agent in agents},
        against={name: column for name, column in columns.items() if column is not None},
        feedback={row.agent: row.feedback for row in rows if row.feedback != "bandit"},
    )


__all__ = ["PROFILE_TAUS", "Aggregates", "ReferenceColumn", "aggregates", "reference_column"]
