"""``scores.csv`` and where a scenario's rows come from: the shipped reference archive's
own cells, or cells computed here."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from pathlib import Path

from bco_gym import io as files
from bco_gym.engine.result import RunResult
from bco_gym.reports.references import ARCHIVED
from bco_gym.reports.suites import Scenario
from bco_gym.stats.paired import series_label
from bco_gym.stats.scores import COLUMNS, ScoreRow


def archived_rows(suite: str, scenario: Scenario, results: Sequence[RunResult]) -> frozenset[str]:
    """The series labels of ``results`` whose every run is the shipped archive's own cell
    (the same agent, constants, seed and time of computation): rows read from the
    archive, not computed here (an archive of other code is materialised, then its cells
    are recomputed as stale: those rows are computed here)."""
    from bco_gym.reports.references import ArchiveCorruptError, ArchiveVersionError, load_scenario

    if suite not in ARCHIVED:
        return frozenset()
    try:
        found = load_scenario(suite, scenario.name, check_version=False) or {}
    except (ArchiveCorruptError, ArchiveVersionError):
        return frozenset()
    shipped = {
        (result.agent, result.constants, result.seed, result.computed_at)
        for _, cells in found.values()
        for _, result in cells
    }
    rows: dict[str, bool] = {}
    for result in results:
        key = (result.agent, result.constants, result.seed, result.computed_at)
        label = series_label(result)
        rows[label] = rows.get(label, True) and key in shipped
    return frozenset(label for label, every in rows.items() if every)


def rows_source(
    results: Sequence[RunResult], archived: frozenset[str], references: Sequence[str]
) -> str:
    """Where a scenario's reference rows come from: "archive", "computed here" or
    "archive in part" (some of its rows)."""
    rows = {series_label(result) for result in results if result.agent in references}
    if rows and rows <= archived:
        return "archive"
    return "archive in part" if rows & archived else "computed here"


def label_of(agent: str) -> str:
    from bco_gym.agents.registry import resolve_agent

    return resolve_agent(agent).name


def write_scores(path: Path, rows: Sequence[ScoreRow]) -> Path:
    """``scores.csv`` (:data:`~bco_gym.stats.scores.COLUMNS`), sorted, 17 significant
    digits; written atomically, never through a symlink (:func:`bco_gym.io.atomic_write`)."""
    ordered = sorted(rows, key=lambda r: (r.scenario, r.agent, r.seed))
    text = io.StringIO(newline="")
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in ordered:
        writer.writerow(
            [
                row.suite,
                row.scenario,
                row.agent,
                row.feedback,
                row.seed,
                row.horizon,
                repr(row.regret),
                "" if math.isnan(row.score) else repr(row.score),
                "" if row.adaptive_regret is None else repr(row.adaptive_regret),
                "" if row.dynamic_regret is None else repr(row.dynamic_regret),
                row.version or "",
                row.computed_at or "",
            ]
        )
    files.write_text(path, text.getvalue())
    return path


__all__ = ["archived_rows", "label_of", "rows_source", "write_scores"]
