"""A bench directory accumulates: every earlier agent's and scenario's rows stay.

Issue 43: a second bench into a standard-v2 directory dropped the first agents' rows (the
branch for scenarios with tuned rows returned before it read the earlier cells). Issue 40:
``--scenarios box-3`` after a two-scenario bench rewrote scores.csv and report.md with
box-3 alone. Here both, on the shipped archive (re-stamped with this code's digest, as
tests/reports/test_references.py does: that its cells are still right is the bit-for-bit
test's question) and on a tiny suite; and a verdict that other agents cannot move.
"""

from __future__ import annotations

import csv
import json
import re
import shutil

import pytest
from test_bench import TINY

from bco_gym.reports import bench, references
from bco_gym.reports.page import md_text
from bco_gym.reports.suites import SUITES

#: Two standard-v2 scenarios, each with tuned reference rows.
CHOSEN = ("ball-iid-10", "box-iid-10")
#: scores.csv's label of the variant Jitter[spread=0.9] (its constants are not its defaults).
VARIANT = "jitter[spread=0.9] (custom)"


@pytest.fixture
def archive(tmp_path, monkeypatch):
    """standard-v2's shipped archive, two of its scenarios, stamped with this code."""
    source = references.root() / "standard-v2"
    copy = tmp_path / "references" / "standard-v2"
    copy.mkdir(parents=True)
    index = json.loads((source / references.INDEX).read_text())
    index["files"] = {name: digest for name, digest in index["files"].items() if
                      name.removesuffix(".json.gz") in CHOSEN}  # fmt: skip
    index["code_digest"] = references.result_code_digest()
    index["complete"] = False
    for name in index["files"]:
        shutil.copyfile(source / name, copy / name)
    (copy / references.INDEX).write_text(json.dumps(index))
    monkeypatch.setattr(references, "root", lambda: copy.parent)


def scores(out):
    with (out / "scores.csv").open() as handle:
        return list(csv.DictReader(handle))


def verdict_lines(text, agent):
    """The verdict of ``agent`` in report.md: its line and its items."""
    start = text.index(f"- **{agent}**")
    lines = text[start:].splitlines()
    return [lines[0], *(line for line in lines[1:] if line.startswith("  - "))][: 1 + 5]


def rows_of(out, agent):
    return {(r["scenario"], r["seed"]) for r in scores(out) if r["agent"] == agent}


def test_a_second_bench_into_a_standard_v2_directory_keeps_every_earlier_row(
    tmp_path, archive, plain
):
    out = tmp_path / "bench"
    # reuse_stale: the archive's cells are kept though this round's code changed their
    # agents' digests (the archive is rebuilt at the end of a round)
    common = {"suite": "standard-v2", "seeds": 2, "progress": False, "reuse_stale": True}
    bench.run_bench(["user_agents:Jitter"], out, scenarios=["box-iid-10"], **common)
    first = (out / "report.md").read_text()
    assert rows_of(out, "jitter") == {("box-iid-10", "0"), ("box-iid-10", "1")}
    # a subset of the suite says so, in its title and in scores.csv
    assert first.startswith("# bco-gym bench: suite standard-v2, subset: 1 of 18 scenarios\n")
    assert {r["suite"] for r in scores(out)} == {"standard-v2 (subset: 1 of 18 scenarios)"}

    # another agent set, into the same directory: the first agent's rows stay
    bench.run_bench(["user_agents:Jitter[spread=0.9]"], out, scenarios=["box-iid-10"], **common)
    second = (out / "report.md").read_text()
    assert rows_of(out, "jitter") == {("box-iid-10", "0"), ("box-iid-10", "1")}
    assert rows_of(out, VARIANT) == {("box-iid-10", "0"), ("box-iid-10", "1")}
    assert {r["agent"] for r in scores(out)} >= {"bbcg (tuned)", "fkm (tuned)", "bfw (tuned)"}
    assert "| jitter |" in second and f"| {md_text(VARIANT, in_table=True)} |" in second
    # and the first agent's verdict is the same: a neighbour does not move it
    assert verdict_lines(second, "jitter") == verdict_lines(first, "jitter")
    assert "against bbcg (tuned, c=" in verdict_lines(second, "jitter")[1]

    # another scenario: box-iid-10's rows stay, and the report covers both scenarios
    bench.run_bench(["user_agents:Jitter"], out, scenarios=["ball-iid-10"], **common)
    third = (out / "report.md").read_text()
    assert rows_of(out, "jitter") == {(s, seed) for s in CHOSEN for seed in ("0", "1")}
    assert rows_of(out, VARIANT) == {("box-iid-10", "0"), ("box-iid-10", "1")}
    assert {r["scenario"] for r in scores(out) if r["agent"] == "bbcg (tuned)"} == set(CHOSEN)
    assert third.startswith("# bco-gym bench: suite standard-v2, subset: 2 of 18 scenarios\n")
    assert "## 1. ball-iid-10" in third and "## 2. box-iid-10" in third
    assert "- **jitter[spread=0.9]** (1 scenario):" in third
    assert "- **jitter** (2 scenarios):" in third
    assert {r["suite"] for r in scores(out)} == {"standard-v2 (subset: 2 of 18 scenarios)"}
    # the first lines name the archive by its digest, and where its cells were read
    digest = references.archive_digest("standard-v2")
    assert f"- **Reference archive**: `sha256:{digest}`" in third
    assert "its cells read in 1 scenario; from an earlier bench into this directory in 1" in third


def test_a_scenario_subset_keeps_the_other_scenarios_rows(tmp_path, monkeypatch, plain):
    """Issue 40's case: a two-scenario bench, then ``--scenarios`` one of them."""
    monkeypatch.setitem(SUITES, "tiny", TINY)
    out = tmp_path / "o"
    bench.run_bench(["bfw"], out, suite="tiny", progress=False)
    before = scores(out)
    assert {r["scenario"] for r in before} == {"tiny-ball", "tiny-drift"}
    assert {r["suite"] for r in before} == {"tiny"}
    bench.run_bench(["bfw"], out, suite="tiny", scenarios=["tiny-drift"], progress=False)
    after = scores(out)
    assert after == before  # the same rows, the same values: nothing dropped, nothing new
    text = (out / "report.md").read_text()
    assert text.startswith("# bco-gym bench: suite tiny\n")  # every scenario is covered
    assert "## 1. tiny-ball" in text and "## 2. tiny-drift" in text
    # a new agent on one scenario: the other scenario's rows and the earlier agent's stay
    bench.run_bench(["user_agents:Jitter"], out, suite="tiny", scenarios=["tiny-ball"])
    grown = scores(out)
    assert {(r["scenario"], r["agent"]) for r in grown} >= {
        (r["scenario"], r["agent"]) for r in before
    }
    assert {r["scenario"] for r in grown if r["agent"] == "jitter"} == {"tiny-ball"}
    # --agents-only reports this command's scenarios and agents alone, and says it is a subset
    bench.run_bench(["bfw"], out, suite="tiny", scenarios=["tiny-drift"], agents_only=True)
    assert {r["scenario"] for r in scores(out)} == {"tiny-drift"}
    assert {r["suite"] for r in scores(out)} == {"tiny (subset: 1 of 2 scenarios)"}
    assert re.match(r"# bco-gym bench: suite tiny, subset: 1 of 2 scenarios\n", (
        out / "report.md").read_text())  # fmt: skip
