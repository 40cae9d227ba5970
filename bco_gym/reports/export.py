"""``bco-gym export`` and ``bco-gym cite``: a bench directory's tables for a paper, and
what to cite for it.

:func:`load_bench` reads a bench directory back as its report computed it: the suite
(``bench.json``), every scenario's stored cells (restricted to the rows of its
``scores.csv``, which must agree with them: a hand-edited or stale scores.csv is refused),
and the statistics of ``report.md`` computed by the same functions
(``bco_gym.reports.bench_report.aggregates``,
:func:`~bco_gym.reports.bench_verdicts.judgements`,
:func:`~bco_gym.stats.paired.paired_table`,
:func:`~bco_gym.stats.ranking.ordered_groups`), so an exported number is the report's.

:func:`tables` turns it into three tables (:class:`Table`):

* ``aggregate`` -- per agent: scenarios, runs, IQM and mean score with their 95%
  stratified-bootstrap intervals, P(agent < bbcg) and P(agent < fkm) against the rows the
  verdicts are against (their tuned rows where a scenario has them);
* ``scenarios`` -- per scenario and row: seeds, mean final regret with its 95% t
  interval, its ordered group (1 = best; the all-pairs ranking of the bandit rows);
* ``paired`` -- per scenario, row and reference: the paired difference of final regret
  (row minus reference, same seeds) with its 95% t interval and the seeds it wins.

Full-information and two-point rows are marked (``ogd (full info)``) and ranked apart:
below a rule in the aggregate table, without an ordered group in the scenario table.
Every table carries the provenance (:func:`provenance`): the suite and scenarios covered,
the reference archive's digest and where the reference rows came from, the versions of
bco_gym that computed the rows and wrote the export, the evaluation seeds.

Formats (:func:`export_text`): ``latex`` (booktabs tables with captions, user text
escaped by :func:`~bco_gym.reports.citations.latex_text`), ``markdown`` (user text escaped
by :func:`~bco_gym.reports.page.md_text`) and ``csv`` (one tidy table, every number at
full precision: see :data:`CSV_COLUMNS`).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bco_gym.engine.result import RunResult
from bco_gym.reports.bench_aggregates import Aggregates, aggregates
from bco_gym.reports.bench_provenance import Coverage, ScenarioRun, seeds_line
from bco_gym.reports.bench_verdicts import Judged, judgements, paired_reference
from bco_gym.reports.export_render import Row, Table, latex, markdown
from bco_gym.stats.paired import paired_table
from bco_gym.stats.ranking import ordered_groups
from bco_gym.stats.scores import BOOTSTRAP_REPS, Estimate, ScoreRow, score_rows

FORMATS = ("latex", "markdown", "csv")
#: The columns of ``--format csv``: one row per number (``statistic`` says which), with
#: ``low``/``high`` its 95% interval where it has one; ``table`` is ``provenance``,
#: ``aggregate``, ``scenarios`` or ``paired``; ``ranked`` is ``bandit`` or ``apart``
#: (full information, two-point); ``group`` the ordered group (1 = best); ``text`` the
#: provenance's text.
CSV_COLUMNS = (
    "table",
    "scenario",
    "agent",
    "feedback",
    "ranked",
    "against",
    "statistic",
    "value",
    "low",
    "high",
    "n",
    "group",
    "text",
)


@dataclass(frozen=True)
class Bench:
    """A bench directory read back: what its report computed (:func:`load_bench`)."""

    directory: Path
    suite: str
    coverage: Coverage
    runs: list[ScenarioRun]
    rows: list[ScoreRow]
    stats: Aggregates
    judged: dict[str, Judged]


def load_bench(
    directory: str | Path, *, suite_file: str | None = None, reps: int = BOOTSTRAP_REPS
) -> Bench:
    """``directory`` (written by ``bco-gym bench``) as its report computed it.

    ``suite_file``: the suite file (``.toml``) the bench ran, when its suite is not a
    built-in one (its name must be the directory's). ValueError when ``directory`` is not
    a bench directory or its scores.csv disagrees with its stored cells."""
    directory = Path(directory)
    name, coverage, runs, rows = load_runs(directory, suite_file=suite_file)
    agents = list(dict.fromkeys(row.agent for row in rows))
    stats = aggregates(rows, agents, reps)
    return Bench(directory, name, coverage, runs, rows, stats, judgements(runs))


def load_runs(
    directory: Path, *, suite_file: str | None = None
) -> tuple[str, Coverage, list[ScenarioRun], list[ScoreRow]]:
    """(suite, coverage, runs, score rows) of a bench directory: its stored cells on the
    seeds and rows of its scores.csv (checked equal to them), where each scenario's
    reference rows came from (:func:`~bco_gym.reports.bench_scores.archived_rows`)."""
    from bco_gym.reports.bench_plan import MARKER
    from bco_gym.reports.bench_scores import archived_rows
    from bco_gym.reports.bench_stored import with_earlier_scenarios
    from bco_gym.reports.suites import resolve_suite

    name = _suite_of(directory / MARKER)
    listed = _read_scores(directory / "scores.csv")
    definition, every = resolve_suite(suite_file or name)
    if definition != name:
        raise ValueError(
            f"{str(directory)!r} holds a bench of suite {name!r}; the suite given is {definition!r}"
        )
    seeds: dict[str, set[int]] = {}
    for row in listed:
        seeds.setdefault(row.scenario, set()).add(row.seed)
    steps = [
        (replace(s, seeds=tuple(sorted(seeds[s.name]))) if s.name in seeds else s, (), {})
        for s in every
    ]
    runs = []
    for run in with_earlier_scenarios(directory, steps, []):
        shown = {row.agent for row in listed if row.scenario == run.scenario.name}
        kept = [r for r in run.results if _label(r) in shown]
        if kept:
            archived = archived_rows(name, run.scenario, kept)
            runs.append(replace(run, results=kept, references=_source(kept, archived, run)))
    coverage = Coverage(name, [run.scenario.name for run in runs], len(every))
    rows = [r for run in runs for r in score_rows(coverage.label, run.scenario.name, run.results)]
    _check_agree(directory, listed, rows)
    return name, coverage, runs, rows


def _suite_of(marker: Path) -> str:
    try:
        document = json.loads(marker.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(
            f"{str(marker.parent)!r} is not a bench directory (no {marker.name}); export "
            "reads what `bco-gym bench --out DIR` wrote"
        ) from None
    except (OSError, ValueError) as error:
        raise ValueError(f"{str(marker)!r} is unreadable ({error})") from None
    if not isinstance(document, dict) or not isinstance(document.get("suite"), str):
        raise ValueError(f"{str(marker)!r} names no suite")
    return document["suite"]


def _read_scores(path: Path) -> list[ScoreRow]:
    """scores.csv's rows (the fields export checks: scenario, agent, seed, regret)."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            found = list(csv.DictReader(handle))
    except FileNotFoundError:
        raise ValueError(
            f"{str(path.parent)!r} has no scores.csv: the bench has not finished"
        ) from None
    rows = []
    for number, row in enumerate(found, start=2):
        try:
            rows.append(
                ScoreRow(
                    suite=row["suite"],
                    scenario=row["scenario"],
                    agent=row["agent"],
                    seed=int(row["seed"]),
                    horizon=int(row["horizon"]),
                    regret=float(row["regret"]),
                    score=float(row["score"] or "nan"),
                    feedback=row.get("feedback") or "bandit",
                )
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(
                f"{str(path)!r} line {number} is not a scores.csv row ({error})"
            ) from None
    if not rows:
        raise ValueError(f"{str(path)!r} has no rows")
    return rows


def _label(result: RunResult) -> str:
    from bco_gym.stats.scores import agent_label

    return agent_label(result)


def _source(results: Sequence[RunResult], archived: frozenset[str], run: ScenarioRun) -> str:
    from bco_gym.reports.bench_scores import rows_source as source

    return source(results, archived, run.reference_agents)


def _check_agree(directory: Path, listed: Sequence[ScoreRow], rows: Sequence[ScoreRow]) -> None:
    """ValueError unless scores.csv holds exactly the stored cells' rows and regrets."""
    stored = {(r.scenario, r.agent, r.seed): r.regret for r in rows}
    written = {(r.scenario, r.agent, r.seed): r.regret for r in listed}
    missing = sorted(set(written) - set(stored))
    differ = sorted(key for key in set(written) & set(stored) if written[key] != stored[key])
    if missing or differ:
        shown = (missing or differ)[:3]
        what = "has rows with no stored cell" if missing else "disagrees with the stored cells"
        raise ValueError(
            f"{str(directory / 'scores.csv')!r} {what} (scenario, agent, seed: {shown}); "
            "run the bench again to rewrite it"
        )


# -- the tables -----------------------------------------------------------------------------------
def provenance(bench: Bench) -> list[tuple[str, str]]:
    """(what, text): the suite and scenarios covered, the reference archive, the versions of
    bco_gym that computed the rows and wrote this, the evaluation seeds."""
    from bco_gym.reports.references import library_version

    computed = sorted({r.versions.get("bco_gym") or "?" for run in bench.runs for r in run.results})
    covered = bench.coverage
    suite = bench.suite + (f" ({covered.note})" if covered.subset else "")
    return [
        ("suite", f"{suite}, scenarios {', '.join(run.scenario.name for run in bench.runs)}"),
        ("archive", _archive(bench.suite, bench.runs)),
        (
            "library",
            f"rows computed by bco_gym {', '.join(computed)}; exported by bco_gym "
            f"{library_version()}",
        ),
        ("seeds", seeds_line(bench.runs)),
    ]


def _archive(suite: str, runs: Sequence[ScenarioRun]) -> str:
    """The report's line on the reference archive (its digest, where the reference rows
    came from), as plain text."""
    from bco_gym.reports.bench_provenance import archive_line

    return archive_line(suite, runs).replace("`", "")


def tables(bench: Bench) -> list[Table]:
    """The aggregate, scenario and paired tables of ``bench`` (module docstring)."""
    return [_aggregate(bench), _scenarios(bench), _paired(bench)]


def _aggregate(bench: Bench) -> Table:
    stats = bench.stats
    columns = list(stats.against.values())
    rows = []
    for agent in stats.order():
        values: dict[str, Estimate | float | int | None] = {
            "scenarios": stats.scenarios[agent],
            "runs": stats.runs[agent],
            "iqm_score": stats.estimates[agent]["iqm"],
            "mean_score": stats.estimates[agent]["mean"],
        }
        for column in columns:
            values[f"p_improvement:{column.reference}"] = column.estimates.get(agent)
        rows.append(Row("", agent, stats.feedback.get(agent, "bandit"), values))
    caption = (
        "Scores across scenarios (a run's final regret over random play's on the same "
        "scenario and seed; 0: no regret, 1: random play's): IQM and mean with 95% "
        "stratified-bootstrap intervals, and the probability that a run of the agent scores "
        "lower than a run of the reference, averaged over the scenarios, against the "
        "reference rows of the verdicts (a reference's tuned row where the scenario has one)"
    )
    heads = ("scenarios", "runs", "iqm_score", "mean_score")
    named = {f"p_improvement:{c.reference}": c.header for c in columns}
    return Table("aggregate", caption, (*heads, *named), rows, named)


def _scenarios(bench: Bench) -> Table:
    rows = []
    for run in bench.runs:
        judged = bench.judged.get(run.scenario.name)
        groups = {}
        if judged is not None and judged.ranking is not None:
            found, _ = ordered_groups(judged.ranking)
            groups = {label: index for index, group in enumerate(found, start=1) for label in group}
        for row in paired_table(run.results, "random"):
            feedback = judged.feedback.get(row.label, "bandit") if judged else "bandit"
            values = {
                "seeds": row.seeds,
                "final_regret": Estimate(row.regret_mean, row.regret_low, row.regret_high, "t"),
            }
            rows.append(Row(run.scenario.name, row.label, feedback, values, groups.get(row.label)))
    caption = (
        "Mean final regret per scenario with its 95% t interval over the seeds; group: the "
        "ordered groups of the bandit rows (1 = best; rows of one group not separated by "
        "paired t-tests Holm-corrected over every pair of the scenario, each row of a group "
        "separated from every row of the later groups; blank: fits no group)"
    )
    return Table("scenarios", caption, ("seeds", "final_regret", "group"), rows)


def _paired(bench: Bench) -> Table:
    rows = []
    for run in bench.runs:
        judged = bench.judged.get(run.scenario.name)
        for reference in run.scenario.references:
            against = paired_reference(judged, reference)
            for row in paired_table(run.results, against):
                if row.difference_mean is None or row.label == against:
                    continue
                feedback = judged.feedback.get(row.label, "bandit") if judged else "bandit"
                values = {
                    "pairs": row.pairs,
                    "difference": Estimate(
                        row.difference_mean,
                        _or_nan(row.difference_low),
                        _or_nan(row.difference_high),
                        "t",
                    ),
                    "wins": row.wins,
                }
                rows.append(Row(run.scenario.name, row.label, feedback, values, against=against))
    caption = (
        "Paired differences of final regret against each scenario's references (row minus "
        "reference on the same seeds; negative: lower regret than the reference) with their "
        "95% t intervals, and the seeds where the row's regret is lower"
    )
    return Table("paired", caption, ("pairs", "difference", "wins"), rows)


def _or_nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def export_text(bench: Bench, format: str) -> str:
    """``bench``'s tables in ``format`` (one of :data:`FORMATS`)."""
    if format == "csv":
        return csv_text(bench)
    if format == "latex":
        return latex(tables(bench), provenance(bench))
    if format == "markdown":
        return markdown(tables(bench), provenance(bench))
    raise ValueError(f"format={format!r}; allowed: {', '.join(FORMATS)}")


def csv_text(bench: Bench) -> str:
    """The tidy CSV (:data:`CSV_COLUMNS`): provenance rows, then one row per number;
    floats as ``repr`` (they read back bit for bit), empty where there is none."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for what, text in provenance(bench):
        writer.writerow(["provenance", "", "", "", "", "", what, "", "", "", "", "", text])
    for table in tables(bench):
        for row in table.rows:
            for statistic, value in row.values.items():
                against = row.against
                if statistic.startswith("p_improvement:"):
                    statistic, against = statistic.split(":", 1)
                writer.writerow(_csv_row(table.name, row, statistic, against, value))
    return buffer.getvalue()


def _csv_row(table: str, row: Row, statistic: str, against: str, value: object) -> list[str]:
    if isinstance(value, Estimate):
        numbers = [_number(value.value), _number(value.low), _number(value.high)]
    else:
        numbers = [_number(value), "", ""]
    count = row.values.get("pairs", row.values.get("seeds", row.values.get("runs")))
    return [
        table,
        row.scenario,
        _cell(row.agent),
        row.feedback,
        row.ranked,
        _cell(against),
        statistic,
        *numbers,
        "" if count is None else str(count),
        "" if row.group is None else str(row.group),
        "",
    ]


def _number(value: object) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return repr(float(value)) if isinstance(value, float) else str(value)


def _cell(text: str) -> str:
    """A label as a CSV cell a spreadsheet shows as text (a leading = + - @ quoted by ')."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


# -- cite -----------------------------------------------------------------------------------------
def cite_text(directory: str | Path, *, suite_file: str | None = None) -> str:
    """``bco-gym cite DIR``: BibTeX of the library (its version), the suite (the archive's
    digest, the evaluation seeds) and the paper of every agent in the bench directory
    (:mod:`~bco_gym.reports.citations`), each paper once; a ``%`` comment line per agent
    says which entries are its, or why it has none."""
    from bco_gym.reports import citations
    from bco_gym.reports.references import library_version

    directory = Path(directory)
    name, coverage, runs, _ = load_runs(directory, suite_file=suite_file)
    results = [result for run in runs for result in run.results]
    year = max((r.computed_at or "")[:4] for r in results) or library_version()
    suite = name + (f" ({coverage.note})" if coverage.subset else "")
    details = [f"reference archive {_archive(name, runs)}", f"evaluation seeds {seeds_line(runs)}"]
    notes = [f"% BibTeX for the bench in {citations.one_line(directory)} (bco-gym cite):"]
    entries = {
        "bco_gym": citations.library_entry(library_version(), year),
        "suite": citations.suite_entry(suite, library_version(), year, details),
    }
    paths = {_label(r): (r.agent_spec or {}).get("import_path") or r.agent for r in results}
    for label, path in paths.items():
        found, problems = _agent_entries(path)
        for key, text in found:
            entries.setdefault(key, text)
        keys = ", ".join(key for key, _ in found) or "no paper declared (REFERENCE)"
        notes.append(f"% {citations.one_line(label)} ({citations.one_line(path)}): {keys}")
        notes += [f"%   {citations.one_line(problem)}" for problem in problems]
    return "\n".join([*notes, "", *(text + "\n" for text in entries.values())])


def _agent_entries(path: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The BibTeX entries ``path``'s agent declares, and why some are missing."""
    from bco_gym.agents.registry import resolve_agent
    from bco_gym.reports.citations import agent_entries

    try:
        factory = resolve_agent(path).factory
    except Exception as error:  # an agent that cannot be imported here is cited without a paper
        return [], [f"its code could not be loaded here ({type(error).__name__}: {error})"]
    return agent_entries(factory)


__all__ = [
    "CSV_COLUMNS",
    "FORMATS",
    "Bench",
    "Row",
    "Table",
    "cite_text",
    "csv_text",
    "export_text",
    "load_bench",
    "load_runs",
    "provenance",
    "tables",
]
