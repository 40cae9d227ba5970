"""What a reviewer asks for first: the suite, the archive's digest, the library version, the
evaluation seeds; and the docs' example digest is the shipped archive's."""

from __future__ import annotations

import re
from pathlib import Path

from synthetic_results import synthetic_result

from bco_gym.reports import references
from bco_gym.reports.bench_provenance import Coverage, ScenarioRun, provenance_lines, seed_text
from bco_gym.reports.suites import SUITES

BENCHMARK_DOC = Path(__file__).resolve().parents[2] / "docs" / "benchmark.md"
#: A run of no stated time: the first lines are tested, not the rows.
RESULT = synthetic_result("random", 0, (1.0, 2.0, 3.0))


def test_the_docs_cite_the_shipped_archive_digest():
    """docs/benchmark.md's example is the digest of the shipped standard-v2 INDEX.json: a
    rebuilt archive fails this test until the docs are brought up to date."""
    text = BENCHMARK_DOC.read_text()
    cited = re.findall(r"reference\s+archive\s+sha256:([0-9a-f]{64})", text)
    assert cited, "docs/benchmark.md cites no reference archive digest"
    shipped = references.archive_digest("standard-v2")
    assert set(cited) == {shipped}, (cited, shipped)
    assert "3e1bde95" not in text  # the stale digest the issue found


def test_the_first_lines_name_suite_archive_library_and_seeds():
    scenarios = SUITES["standard-v2"]
    runs = [
        ScenarioRun(scenario, scenario.agents, {}, [RESULT], references=source)
        for scenario, source in zip(scenarios[:2], ("archive", "computed here"), strict=True)
    ]
    lines = provenance_lines("standard-v2", runs, Coverage("standard-v2", ["a", "b"], 18))
    assert lines[0] == (
        f"- **Suite**: standard-v2; this report covers 2 of its 18 scenarios: "
        f"{scenarios[0].name}, {scenarios[1].name}."
    )
    digest = references.archive_digest("standard-v2")
    assert lines[1].startswith(f"- **Reference archive**: `sha256:{digest}` (bco_gym/data/")
    assert lines[1].endswith(
        "its cells read in 1 scenario; not used (refused, or its cells of other code), the "
        "reference cells computed here in 1 scenario."
    )
    assert lines[2].startswith(f"- **Library**: bco_gym {references.library_version()} ")
    assert lines[3] == (
        "- **Evaluation seeds**: 0-7 in every scenario; the references' constants tuned on "
        "seeds 100-101 in every scenario."
    )
    plain = [ScenarioRun(SUITES["quick-v1"][0], (), {}, [RESULT])]
    assert "none ships for quick-v1" in provenance_lines("quick-v1", plain)[1]


def test_seeds_are_written_as_ranges_where_they_run():
    assert seed_text((0, 1, 2, 3)) == "0-3"
    assert seed_text((100, 101)) == "100-101"
    assert seed_text((3, 1)) == "1, 3"
    assert seed_text((5,)) == "5"
