"""Scores no agent can fake: fresh seeds, their agreement with the public ones, and the
regret floor of a stationary scenario.

Three checks of ``bco-gym bench`` (docs/benchmark.md, "Threat model"):

**Fresh seeds** (``--fresh-seeds N``, :func:`draw_fresh_seeds`). N evaluation seeds drawn
from the operating system's entropy (:func:`secrets.randbits`, i.e. ``os.urandom``) when
the run starts: 128-bit integers with the top bit set (127 random bits), so no agent can
enumerate them, and the agent's own seed of such a seed is a SHA-256 digest of it
(:func:`~bco_gym.engine.preparation.agent_seed_for`), which reveals nothing of it. They
are written into the report only when every cell has run.

**Agreement** (:func:`agreement`). An honest agent's scores on the public seeds and on
the fresh seeds are draws from one distribution per scenario: the public seeds are
fixed, but the loss sequence a seed gives is a draw like any other. So within each
scenario the labels "public" and "fresh" are exchangeable, and the test is a stratified
two-sample rank test, **van Elteren's stratified Wilcoxon rank-sum test** (the scenarios
are the strata): in scenario s, with n_s runs of the agent pooled and m_s of them fresh,
W_s is the sum of the fresh runs' ranks (midranks for ties) and

    T = sum_s (W_s - m_s (n_s + 1) / 2) / (n_s + 1).

Its two-sided p-value is P(|T*| >= |T|) over independent relabellings within each
scenario: every relabelling when there are at most :data:`EXACT_LABELLINGS` (the exact
p-value), else :data:`PERMUTATIONS` Monte Carlo draws from a seeded generator, counted as
(1 + hits) / (1 + draws) (a valid p-value, never below 1 / (1 + draws)). Why this test:
the scores of one agent differ in scale from scenario to scenario and are ratios with
heavy tails (a seed where random play has little regret inflates them), so a t-test on
the scores would rest on assumptions they break; a rank test within each scenario needs
none, and the permutation p-value is exact for any
number of seeds, where a normal approximation is not. An agent that recognises the
public seeds scores lower on them than on the fresh ones in every scenario, which is
the alternative this statistic is most powerful against. The fresh and public scores
**disagree** when p <= :data:`AGREEMENT_LEVEL`; the report says so in its first lines.
:attr:`Agreement.smallest_p` is the smallest p-value the design can give (every fresh
run ranked above every public one in every scenario): when it exceeds the level, no
disagreement could be detected and the report says that more fresh seeds are needed.

**The regret floor of a stationary scenario** (:func:`suspects`). A scenario is
*stationary* when its loss family draws f_t = f(., xi_t) with xi_1, ..., xi_T i.i.d.
given what the family draws at reset (``LossSequence.stationary``: ``linear`` and the
other families whose rounds are i.i.d. around a mean fixed at reset; not the switching,
drifting or adversarial families, real data, nor a user's losses). Let F(x) = E f(x,
xi) and x* a minimiser of F over K. An agent that cannot see round t's loss before it
plays y_t has E[f_t(y_t) - f_t(x*) | past] = F(y_t) - F(x*) >= 0, and
g_t = f_t(y_t) - f_t(x*) lies in [-a, a] with a = min(2M, 2GR) (M bounds |f_t| over K,
G its gradients, R is K's outer radius: its diameter is at most 2R). The regret is at
least sum_t g_t (the comparator is at most sum_t f_t(x*)), and the reported regret R^
plus the comparator's certified gap is at least the regret. So, over the S runs (seeds)
of a scenario, by the Azuma-Hoeffding inequality for the martingale differences of the
g_t (each confined to an interval of length 2a),

    P( sum_s (R^_s + gap_s) < -a sqrt(2 ln(1/delta) sum_s T_s) ) <= delta.

The *statistic* is Z = sum_s (R^_s + gap_s) / (a sqrt(2 sum_s T_s)); an agent is
**suspect** on the scenario when Z < -sqrt(ln(m / :data:`SUSPECT_LEVEL`)), m the number
of (agent, stationary scenario) pairs tested in the report (Bonferroni): an honest agent
is flagged with probability at most SUSPECT_LEVEL in the whole report, whatever it plays.
An agent that reads the losses (from the stack, the garbage collector, the env's seed)
and plays each round's minimiser has regret about -T times a constant, far below the
floor's -sqrt(T).
"""

from __future__ import annotations

import itertools
import math
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bco_gym.engine.preparation import FRESH_SEED_FLOOR
from bco_gym.engine.result import RunResult
from bco_gym.stats.scores import ScoreRow

#: Bits of a fresh seed (its top bit set: 127 random bits).
FRESH_SEED_BITS = 128
#: The fresh and public scores disagree when the agreement test's p-value is at most this.
AGREEMENT_LEVEL = 0.01
#: Up to this many relabellings in all, the agreement test enumerates them (exact p);
#: beyond, it draws PERMUTATIONS of them (seeded: the same scores, the same p).
EXACT_LABELLINGS = 100_000
PERMUTATIONS = 20_000
AGREEMENT_SEED = 20_250_401
#: Family-wise probability that the report flags an honest agent as suspect.
SUSPECT_LEVEL = 0.001


# -- fresh seeds --------------------------------------------------------------------------------
def draw_fresh_seeds(count: int) -> tuple[int, ...]:
    """``count`` distinct seeds from the operating system's entropy, each in
    [2^127, 2^128) (at or above :data:`~bco_gym.engine.preparation.FRESH_SEED_FLOOR`, so
    the agent's seed of each is a SHA-256 digest of it)."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 2:
        raise ValueError(f"fresh seeds: count={count!r} must be an integer >= 2 (paired tests)")
    top = 1 << (FRESH_SEED_BITS - 1)
    seeds: list[int] = []
    while len(seeds) < count:
        seed = top | secrets.randbits(FRESH_SEED_BITS - 1)
        if seed not in seeds:
            seeds.append(seed)
    assert min(seeds) >= FRESH_SEED_FLOOR
    return tuple(seeds)


# -- agreement of the fresh and the public seeds ------------------------------------------------
@dataclass(frozen=True)
class Agreement:
    """The agreement test of one agent's scores on the public and the fresh seeds.

    Attributes:
        agent: the agent's label.
        public, fresh: scenario -> the agent's finite scores on the public / fresh seeds.
        statistic: van Elteren's T (module docstring); positive when the fresh runs rank
            higher (score worse) than the public ones.
        p_value: its two-sided permutation p-value.
        smallest_p: the smallest p-value these numbers of runs can give.
        superiority: scenario -> P(a fresh run scores above a public run) (ties one
            half): 0.5 where they agree, 1 where every fresh run scores worse.
    """

    agent: str
    public: dict[str, np.ndarray]
    fresh: dict[str, np.ndarray]
    statistic: float
    p_value: float
    smallest_p: float
    superiority: dict[str, float]

    @property
    def disagree(self) -> bool:
        return self.p_value <= AGREEMENT_LEVEL

    @property
    def conclusive(self) -> bool:
        """Whether a disagreement could have been detected at all (smallest_p <= level)."""
        return self.smallest_p <= AGREEMENT_LEVEL


def agreement(
    agent: str,
    public: Mapping[str, Sequence[float]],
    fresh: Mapping[str, Sequence[float]],
    *,
    draws: int = PERMUTATIONS,
) -> Agreement:
    """The stratified rank-sum test (module docstring) of ``agent``'s scores, scenario ->
    scores, on the public and the fresh seeds; the strata are the scenarios where both
    hold at least one finite score."""
    strata = []
    kept_public, kept_fresh, superiority = {}, {}, {}
    for name in public:
        ours = _finite(public[name])
        theirs = _finite(fresh.get(name, ()))
        if not len(ours) or not len(theirs):
            continue
        kept_public[name], kept_fresh[name] = ours, theirs
        from scipy import stats  # here, not at import: reading results needs no SciPy

        ranks = stats.rankdata(np.concatenate([ours, theirs]))
        strata.append((ranks, len(theirs)))
        above = (theirs[:, None] > ours[None, :]).mean() + 0.5 * (theirs[:, None] == ours).mean()
        superiority[name] = float(above)
    if not strata:
        return Agreement(agent, kept_public, kept_fresh, math.nan, math.nan, math.nan, {})
    observed = sum(_centred_sum(ranks[len(ranks) - m :], ranks, m) for ranks, m in strata)
    labellings = math.prod(math.comb(len(ranks), m) for ranks, m in strata)
    tolerance = 1e-9 * max(1.0, abs(observed))
    if labellings <= EXACT_LABELLINGS:  # every relabelling: the exact p-value
        relabelled = np.zeros(1)
        for ranks, m in strata:
            relabelled = np.add.outer(relabelled, _every_centred_sum(ranks, m)).ravel()
        p_value = float(np.mean(np.abs(relabelled) >= abs(observed) - tolerance))
    else:
        rng = np.random.default_rng(AGREEMENT_SEED)
        relabelled = np.zeros(draws)
        for ranks, m in strata:
            picks = rng.random((draws, len(ranks))).argpartition(m - 1, axis=1)[:, :m]
            relabelled += (ranks[picks].sum(axis=1) - m * (len(ranks) + 1) / 2) / (len(ranks) + 1)
        hits = int(np.count_nonzero(np.abs(relabelled) >= abs(observed) - tolerance))
        p_value = (1 + hits) / (1 + draws)
    return Agreement(
        agent,
        kept_public,
        kept_fresh,
        float(observed),
        p_value,
        min(1.0, 2.0 / labellings),
        superiority,
    )


def _finite(values: Sequence[float]) -> np.ndarray:
    array = np.asarray(list(values), dtype=float)
    return array[np.isfinite(array)]


def _every_centred_sum(ranks: np.ndarray, m: int) -> np.ndarray:
    """The centred, weighted rank sum of every choice of ``m`` of the stratum's runs."""
    n = len(ranks)
    sums = np.array([ranks[list(chosen)].sum() for chosen in itertools.combinations(range(n), m)])
    return (sums - m * (n + 1) / 2) / (n + 1)


def _centred_sum(chosen: np.ndarray, ranks: np.ndarray, m: int) -> float:
    """(W - m (n + 1) / 2) / (n + 1): one stratum's centred, weighted rank sum."""
    n = len(ranks)
    return float((chosen.sum() - m * (n + 1) / 2) / (n + 1))


def agreements(
    agents: Sequence[str], public: Sequence[ScoreRow], fresh: Sequence[ScoreRow]
) -> list[Agreement]:
    """The agreement test of each of ``agents`` from the rows of scores.csv on the public
    seeds and on the fresh seeds."""
    return [
        agreement(agent, _by_scenario(public, agent), _by_scenario(fresh, agent))
        for agent in agents
    ]


def _by_scenario(rows: Sequence[ScoreRow], agent: str) -> dict[str, list[float]]:
    table: dict[str, list[float]] = {}
    for row in rows:
        if row.agent == agent:
            table.setdefault(row.scenario, []).append(row.score)
    return table


# -- the regret floor of a stationary scenario --------------------------------------------------
@dataclass(frozen=True)
class Floor:
    """One agent on one stationary scenario against the regret floor (module docstring).

    Attributes:
        agent, scenario: the labels.
        runs: S, the runs (seeds) counted.
        total: sum over the runs of the final regret plus the comparator's certified gap.
        spread: a = min(2M, 2GR), the range of f_t(y) - f_t(x*) over K.
        rounds: sum over the runs of the horizon.
        statistic: Z = total / (a sqrt(2 rounds)).
        threshold: -sqrt(ln(m / SUSPECT_LEVEL)), the report's m tests accounted for.
    """

    agent: str
    scenario: str
    runs: int
    total: float
    spread: float
    rounds: int
    statistic: float
    threshold: float

    @property
    def suspect(self) -> bool:
        return self.statistic < self.threshold

    @property
    def floor(self) -> float:
        """The lowest total an honest agent reaches but with the report's probability."""
        return self.threshold * self.spread * math.sqrt(2.0 * self.rounds)


def is_stationary(result: RunResult) -> bool:
    """Whether ``result``'s loss family is stationary (module docstring) and its problem
    records the constants the floor needs (the loss bound, G and R: a result made by
    hand may lack them, and then has no floor)."""
    from bco_gym.losses import FAMILIES

    family = FAMILIES.get(str(result.loss.get("name")))
    needed = {"bound", "lipschitz", "outer_radius"}
    return bool(getattr(family, "stationary", False)) and needed <= set(result.problem)


def floors(runs: Mapping[str, Sequence[RunResult]], level: float = SUSPECT_LEVEL) -> list[Floor]:
    """Every agent of every stationary scenario (scenario -> its results) against the
    regret floor, the threshold Bonferroni-corrected over all of them."""
    groups: dict[tuple[str, str], list[RunResult]] = {}
    for scenario, results in runs.items():
        for result in results:
            if is_stationary(result) and math.isfinite(result.final_regret):
                groups.setdefault((scenario, result.agent), []).append(result)
    if not groups:
        return []
    threshold = -math.sqrt(math.log(len(groups) / level))
    found = []
    for (scenario, agent), results in groups.items():
        problem = results[0].problem
        spread = min(
            2.0 * float(problem["bound"]),
            2.0 * float(problem["lipschitz"]) * float(problem["outer_radius"]),
        )
        total = float(sum(r.final_regret + r.final_gap for r in results))
        rounds = int(sum(r.horizon for r in results))
        statistic = total / (spread * math.sqrt(2.0 * rounds)) if spread > 0 else math.inf
        found.append(
            Floor(agent, scenario, len(results), total, spread, rounds, statistic, threshold)
        )
    return found


def suspects(runs: Mapping[str, Sequence[RunResult]]) -> list[Floor]:
    """The (agent, scenario) pairs below the regret floor: :func:`floors` that are suspect."""
    return [floor for floor in floors(runs) if floor.suspect]


@dataclass(frozen=True)
class FreshSeeds:
    """What ``bco-gym bench --fresh-seeds N`` found: the seeds, when they were drawn and
    revealed, every agent's scores on them, each given agent's agreement test, and the
    cells that failed on them."""

    seeds: tuple[int, ...]
    drawn_at: str
    revealed_at: str
    rows: list[ScoreRow]
    agreements: list[Agreement]
    failures: list[str]

    def document(self, command: str) -> dict[str, Any]:
        """``fresh-seeds.json``: the seeds as decimal strings (128-bit integers exceed what
        most JSON readers hold exactly), the draw, and each given agent's agreement."""
        return {
            "format": 1,
            "command": command,
            "source": "the operating system's entropy (Python's secrets.randbits, os.urandom)",
            "bits": FRESH_SEED_BITS,
            "drawn_at": self.drawn_at,
            "revealed_at": self.revealed_at,
            "seeds": [str(seed) for seed in self.seeds],
            "test": (
                "van Elteren's stratified Wilcoxon rank-sum test of each given agent's scores "
                f"on the public against the fresh seeds (strata: scenarios), two-sided, "
                f"{PERMUTATIONS:,} Monte Carlo relabellings; disagree when p <= {AGREEMENT_LEVEL}"
            ),
            "agreement": {
                found.agent: {
                    "p_value": found.p_value,
                    "statistic": found.statistic,
                    "smallest_p": found.smallest_p,
                    "disagree": found.disagree,
                    "scenarios": sorted(found.public),
                }
                for found in self.agreements
            },
            "failures": list(self.failures),
        }


def isolated_agents(results: Sequence[RunResult]) -> frozenset[str]:
    """The agents whose runs among ``results`` played in their own process."""
    return frozenset(result.agent for result in results if "isolated" in str(result.loop))


def flag_lines(runs: Mapping[str, Sequence[RunResult]], fresh: FreshSeeds | None) -> list[str]:
    """The report's first lines on integrity: each agent below the regret floor of a
    stationary scenario (suspect) and each agent whose fresh and public scores disagree;
    nothing when there is neither."""
    isolated = isolated_agents([r for results in runs.values() for r in results])
    lines: list[str] = []
    by_agent: dict[str, list[Floor]] = {}
    for floor in suspects(runs):
        by_agent.setdefault(floor.agent, []).append(floor)
    for agent, found in by_agent.items():
        shown = ", ".join(
            f"{floor.scenario} (Z = {floor.statistic:.3g} < {floor.threshold:.3g})"
            for floor in found
        )
        where = " although it played in its own process" if agent in isolated else ""
        lines.append(
            f"**Suspect: {_code(agent)}**{where}. Its regret is below what any agent that plays "
            "before it sees the round's loss reaches on a stationary scenario, beyond the "
            f"comparator's certified gap and the sampling noise, in {shown}: it may read the "
            "losses. Verify it with `--isolate --fresh-seeds N` before reading its scores "
            "(see Integrity)."
        )
    for found in fresh.agreements if fresh is not None else ():
        if found.disagree:
            lines.append(
                f"**Fresh seeds disagree with the public seeds for {_code(found.agent)}** "
                f"(van Elteren's stratified rank-sum test, p = {found.p_value:.2g} <= "
                f"{AGREEMENT_LEVEL}): its scores on the public seeds are not those it gets on "
                "seeds it could not know in advance; it may recognise the public seeds. Read "
                "its scores on the fresh seeds (see Integrity)."
            )
    return [*(f"- {line}" for line in lines), ""] if lines else []


INTEGRITY_NOTE = (
    'What protects these scores (docs/benchmark.md, "Threat model"): the public seeds '
    "protect against mistakes, not against an agent that reads the env's code; fresh seeds "
    "(`--fresh-seeds N`, drawn from the operating system's entropy when the run starts) "
    "against an agent that recognises its seed; isolation (`--isolate`: the agent plays in "
    "its own process, which receives only its feedback and returns only its plays) against "
    "an agent that reads the losses from memory. `--isolate --fresh-seeds N` is the "
    "verification mode to run before a result is published."
)


def integrity_lines(
    runs: Mapping[str, Sequence[RunResult]], given: Sequence[str], fresh: FreshSeeds | None
) -> list[str]:
    """The report's Integrity section: how each given agent played, the regret floor of
    the stationary scenarios and, with fresh seeds, the seeds and the agreement tests."""
    results = [result for found in runs.values() for result in found]
    isolated = isolated_agents(results)
    played = [agent for agent in given if any(r.agent == agent for r in results)]
    lines = ["## Integrity", "", INTEGRITY_NOTE, ""]
    alone = [agent for agent in played if agent in isolated]
    inside = [agent for agent in played if agent not in isolated]
    if alone:
        lines.append(
            "- Played in their own process (`--isolate`; oracle calls counted by the set): "
            + ", ".join(_code(agent) for agent in alone)
            + "."
        )
    if inside:
        lines.append(
            "- Played in the bench's process, where the losses are in memory: "
            + ", ".join(_code(agent) for agent in inside)
            + " (verify with `--isolate`)."
        )
    if fresh is None:
        lines.append(
            "- Evaluation seeds: the suite's public seeds only (verify with `--fresh-seeds N`)."
        )
    lines += ["", *_floor_lines(runs, played)]
    if fresh is not None:
        lines += _fresh_lines(fresh)
    return lines


def _floor_lines(runs: Mapping[str, Sequence[RunResult]], given: Sequence[str]) -> list[str]:
    found = floors(runs)
    if not found:
        return ["No scenario here is stationary: the regret floor is not tested.", ""]
    threshold = found[0].threshold
    stationary = sorted({floor.scenario for floor in found})
    lines = [
        "### Regret floor of the stationary scenarios",
        "",
        f"On a stationary scenario ({', '.join(stationary)}: rounds i.i.d. given what the "
        "family draws at reset), an agent that plays before it sees the round's loss has a "
        "total regret plus certified gap over the scenario's S runs of at least "
        "-a sqrt(2 ln(1/delta) sum T) but with probability delta (Azuma-Hoeffding; a = "
        "min(2M, 2GR)). Z is that total over a sqrt(2 sum T); an agent is suspect where "
        f"Z < {threshold:.3g} (delta = {SUSPECT_LEVEL} over the {len(found)} agent-scenario "
        "pairs tested, Bonferroni).",
        "",
    ]
    body = []
    for agent in given:
        ours = [floor for floor in found if floor.agent == agent]
        if not ours:
            continue
        lowest = min(ours, key=lambda floor: floor.statistic)
        body.append(
            [
                agent,
                str(len(ours)),
                f"{lowest.statistic:.3g} ({lowest.scenario})",
                "**suspect**" if any(floor.suspect for floor in ours) else "no",
            ]
        )
    if body:
        from bco_gym.reports.summary import render_markdown

        header = ["agent", "stationary scenarios", "lowest Z (scenario)", "below the floor"]
        lines += [render_markdown(header, body), ""]
    others = [floor for floor in found if floor.agent not in given]
    if others:
        lowest = min(others, key=lambda floor: floor.statistic)
        below = sorted({floor.agent for floor in others if floor.suspect})
        state = f"below the floor: {', '.join(below)}" if below else "none below the floor"
        lines += [
            f"The other agents (the references): {state}; lowest Z {lowest.statistic:.3g} "
            f"({lowest.agent} on {lowest.scenario}).",
            "",
        ]
    return lines


def _fresh_lines(fresh: FreshSeeds) -> list[str]:
    from bco_gym.reports.summary import render_markdown

    lines = [
        "### Fresh seeds",
        "",
        f"{len(fresh.seeds)} evaluation seeds drawn from the operating system's entropy "
        f"(128-bit integers, 127 random bits) at {fresh.drawn_at} when the run started, "
        f"revealed at {fresh.revealed_at} when every cell had run; every scenario's agents "
        "played them (also in `fresh-scores.csv`; the seeds in `fresh-seeds.json`):",
        "",
        *[f"- `{seed}`" for seed in fresh.seeds],
        "",
        "Each given agent's scores on the public seeds beside its scores on the fresh seeds, "
        "and their agreement: van Elteren's stratified Wilcoxon rank-sum test (strata: the "
        f"scenarios; two-sided; {PERMUTATIONS:,} Monte Carlo relabellings within each "
        f"scenario). They disagree when p <= {AGREEMENT_LEVEL}. A rank test within each "
        "scenario, because the scores are ratios with heavy tails whose scale differs from "
        "scenario to scenario; exact by permutation for any number of seeds. P(fresh > "
        "public) is the probability that a fresh run scores above (worse than) a public one "
        "(0.5: no difference).",
        "",
    ]
    for found in fresh.agreements:
        body = [
            [
                name,
                describe(found.public[name]),
                describe(found.fresh[name]),
                f"{found.superiority[name]:.2f}",
            ]
            for name in found.public
        ]
        if not body:
            lines += [f"{_code(found.agent)}: no scenario with scores on both.", ""]
            continue
        header = ["scenario", "public seeds: mean score (n)", "fresh seeds: mean score (n)"]
        lines += [
            f"**{_code(found.agent)}**",
            "",
            render_markdown([*header, "P(fresh > public)"], body),
            "",
        ]
        verdict = (
            "**disagree**"
            if found.disagree
            else "agree (no evidence of a difference)"
            if found.conclusive
            else "inconclusive: these numbers of seeds cannot reach the level"
        )
        lines += [
            f"T = {found.statistic:.3g}, p = {found.p_value:.2g} (the smallest p these numbers "
            f"of runs can give: {found.smallest_p:.2g}): {verdict}.",
            "",
        ]
    if fresh.failures:
        lines += ["Failed on the fresh seeds:", ""]
        lines += [f"- {failure}" for failure in fresh.failures] + [""]
    return lines


def _code(text: str) -> str:
    """``text`` as a markdown code span: shown as written, never read as markup."""
    from bco_gym.reports.summary import sanitize_text

    return "`" + sanitize_text(text).replace("`", "'") + "`"


def describe(values: Any) -> str:
    """``0.41 (n=3)``: the mean of scores and their count, ``-`` when there are none."""
    array = _finite(values)
    if not len(array):
        return "-"
    return f"{float(array.mean()):.3g} (n={len(array)})"
