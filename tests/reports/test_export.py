"""``bco-gym export`` and ``bco-gym cite`` on a real bench directory (issue 41).

One bench of a tiny two-scenario suite (bandit and full-information feedback, 400 rounds,
4 seeds): the built-in references, ogd (full information), fkm under a label made of
LaTeX's and Markdown's special characters, and two user agents declaring papers.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess

import pytest

from bco_gym.agents import AGENTS
from bco_gym.cli import main
from bco_gym.reports import bench, citations, export, export_render
from bco_gym.reports.page import md_text
from bco_gym.reports.suites import SUITES, Scenario
from tests.support.bench_fixtures import plain_report

LABEL = "x&%$#_{}~^\\ <b>|*[y](z)"
#: Its rows' label (fkm[c=2]'s constants are not theory's).
SHOWN = f"{LABEL} (custom)"
SUITE = "tiny-export"
SCENARIOS = (
    Scenario(
        name="bandit-ball",
        title="3-ball, i.i.d. linear",
        env_id="BCO-Ball-v0",
        agents=("bbcg", "fkm", "random"),
        horizon=400,
        seeds=(0, 1, 2, 3),
        env_kwargs={"n": 3},
        references=("random", "fkm"),
    ),
    Scenario(
        name="full-ball",
        title="3-ball, i.i.d. linear, full feedback",
        env_id="BCO-Ball-v0",
        agents=("bbcg", "fkm", "random"),
        horizon=400,
        seeds=(0, 1, 2, 3),
        env_kwargs={"n": 3, "feedback": "full"},
    ),
)
GIVEN = ["ogd", "fkm[c=2]", "tests.support.cited_agents:CitedAgent"]


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory):
    """(directory, Bench) of one bench; the tiny suite registered for the module."""
    out = tmp_path_factory.mktemp("export") / "bench"
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(SUITES, SUITE, SCENARIOS)
        plain_report(patch)
        bench.run_bench(
            [*GIVEN, "tests.support.cited_agents:BrokenCitation"],
            out,
            suite=SUITE,
            progress=False,
            labels={"fkm[c=2]": LABEL},
        )
        yield out, export.load_bench(out, reps=200)


def test_csv_round_trips_every_number_and_label(bench_dir):
    _, found = bench_dir
    rows = list(csv.DictReader(io.StringIO(export.csv_text(found))))
    assert tuple(rows[0]) == export.CSV_COLUMNS
    provenance = {row["statistic"]: row["text"] for row in rows if row["table"] == "provenance"}
    assert set(provenance) == {"suite", "archive", "library", "seeds"}
    assert provenance["seeds"] == "0-3 in every scenario"
    read = {
        (row["agent"], row["statistic"], row["against"]): row
        for row in rows
        if row["table"] == "aggregate"
    }
    for agent, estimates in found.stats.estimates.items():
        for name in ("iqm", "mean"):
            row = read[(agent, f"{name}_score", "")]
            expected = estimates[name]
            assert (float(row["value"]), float(row["low"]), float(row["high"])) == (
                expected.value,
                expected.low,
                expected.high,
            )
    assert (SHOWN, "iqm_score", "") in read  # the label read back as it was
    scenario = [
        r
        for r in rows
        if r["table"] == "scenarios"
        and r["agent"].startswith(LABEL)
        and r["statistic"] == "final_regret"
    ]
    regrets = [r.regret for r in found.rows if r.agent == SHOWN and r.scenario == "bandit-ball"]
    assert float(scenario[0]["value"]) == sum(regrets) / len(regrets)
    assert scenario[0]["n"] == "4"


def test_paired_differences_are_the_reports(bench_dir):
    from bco_gym.stats.paired import paired_table

    _, found = bench_dir
    (table,) = [t for t in export.tables(found) if t.name == "paired"]
    run = next(run for run in found.runs if run.scenario.name == "bandit-ball")
    expected = {row.label: row for row in paired_table(run.results, "fkm")}
    ours = {
        row.agent: row
        for row in table.rows
        if row.against == "fkm" and row.scenario == "bandit-ball"
    }
    assert set(ours) == set(expected) - {"fkm"}
    for label, row in ours.items():
        difference = row.values["difference"]
        assert difference.value == expected[label].difference_mean
        assert (difference.low, difference.high) == (
            expected[label].difference_low,
            expected[label].difference_high,
        )
        assert row.values["wins"] == expected[label].wins
    # against the paired seeds by hand: the mean of the per-seed differences
    by_seed = {
        label: {r.seed: r.final_regret for r in run.results if r.agent == label}
        for label in ("fkm", "bbcg")
    }
    hand = sum(by_seed["bbcg"][s] - by_seed["fkm"][s] for s in range(4)) / 4
    assert ours["bbcg"].values["difference"].value == pytest.approx(hand, rel=1e-12)


def test_full_information_rows_are_marked_and_ranked_apart(bench_dir):
    _, found = bench_dir
    aggregate, scenarios, _ = export.tables(found)
    assert [row.shown for row in aggregate.rows][-1] == "ogd (full info)"
    assert all(row.ranked == "bandit" for row in aggregate.rows[:-1])
    ogd = [row for row in scenarios.rows if row.feedback == "full"]
    assert [row.shown for row in ogd] == ["ogd (full info)"]
    assert ogd[0].group is None
    assert any(row.group == 1 for row in scenarios.rows)  # the best group is marked
    text = export.export_text(found, "latex")
    apart = text.index(export_render.APART.split(":")[0])
    assert text.index("ogd (full info)") > apart
    rows = list(csv.DictReader(io.StringIO(export.csv_text(found))))
    assert {row["ranked"] for row in rows if row["agent"].startswith("ogd")} == {"apart"}


def _latex_rows(text):
    """The table rows of the LaTeX (lines ending in \\\\), rules and captions left out."""
    return [
        line
        for line in text.splitlines()
        if line.endswith("\\\\") and not line.startswith(("\\caption", "\\multicolumn"))
    ]


def test_latex_escapes_every_special_character(bench_dir):
    _, found = bench_dir
    text = export.export_text(found, "latex")
    escaped = citations.latex_text(SHOWN)
    assert escaped in text
    assert LABEL not in text
    body = "\n".join(line for line in text.splitlines() if not line.startswith("%"))
    # outside commands, no special character stands unescaped
    bare = re.sub(
        r"\\(textbackslash|textasciitilde|textasciicircum|textless|textgreater|textbar)\{\}",
        "",
        body,
    )
    bare = re.sub(r"\\[&%$#_{}]", "", bare)
    bare = re.sub(r"\\[A-Za-z]+(\{[^{}]*\})*", "", bare)
    for char in "%$#_^~":
        assert char not in bare, char
    # every row has exactly its columns' cells (no label adds an &)
    for table in export.tables(found):
        width = len(export_render._lead(table)) + len(table.columns)
        head = export_render.latex([table], export.provenance(found))
        for line in _latex_rows(head):
            assert len(re.findall(r"(?<!\\)&", line)) == width - 1, line
    # braces balance once the escaped ones are taken out
    plain = re.sub(r"\\[{}]", "", body)
    depth = 0
    for char in plain:
        depth += {"{": 1, "}": -1}.get(char, 0)
        assert depth >= 0
    assert depth == 0
    assert "reference archive none ships for tiny-export" in text
    assert "evaluation seeds 0-3 in every scenario" in text


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no TeX engine (pdflatex) here")
def test_latex_compiles(bench_dir, tmp_path):
    _, found = bench_dir
    document = tmp_path / "tables.tex"
    document.write_text(
        "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs,longtable}\n"
        "\\begin{document}\n" + export.export_text(found, "latex") + "\n\\end{document}\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [
            "pdflatex",
            "-halt-on-error",
            "-interaction=nonstopmode",
            "-no-shell-escape",
            document.name,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    if shutil.which("pdftotext"):
        shown = subprocess.run(
            ["pdftotext", "tables.pdf", "-"], cwd=tmp_path, capture_output=True, text=True
        ).stdout
        assert "x&%$#_{}~^\\ <b>|*[y](z)" in shown.replace("\n", " ")


def test_markdown_shows_user_text_as_text(bench_dir):
    _, found = bench_dir
    text = export.export_text(found, "markdown")
    assert md_text(SHOWN, in_table=True).replace("|", "\\|") in text
    assert "[y](z)" not in text  # no link
    assert "### Scores across scenarios" in text and "**suite**" in text
    assert "ogd (full info)" in text


def test_export_refuses_a_scores_csv_that_disagrees_with_the_cells(bench_dir, tmp_path):
    out, _ = bench_dir
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    scores = (copy / "scores.csv").read_text(encoding="utf-8").splitlines()
    header, first = scores[0].split(","), scores[1].split(",")
    first[header.index("regret")] = "0.5"
    (copy / "scores.csv").write_text("\n".join([scores[0], ",".join(first), *scores[2:]]) + "\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(SUITES, SUITE, SCENARIOS)
        with pytest.raises(ValueError, match="disagrees with the stored cells"):
            export.load_runs(copy)


def test_cite_prints_the_library_the_suite_and_every_agents_paper(bench_dir):
    out, _ = bench_dir
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(SUITES, SUITE, SCENARIOS)
        text = export.cite_text(out)
    entries = re.split(r"\n(?=@)", text[text.index("\n@") + 1 :])
    keys = [citations.entry_key(entry) for entry in entries]
    for entry in entries:
        assert citations.entry_problem(entry) is None, entry
    assert keys[:2] == ["bco_gym", "bco_gym_tiny_export"]
    assert {"garber2020improved", "flaxman2005online", "zinkevich2003online"} <= set(keys)
    assert "doe2024braces" in keys and "bad" not in keys  # the user's entry, not the broken one
    assert len(keys) == len(set(keys))  # each paper once
    import bco_gym

    assert f"version = {{{bco_gym.__version__}}}" in text
    comments = [line for line in text.splitlines() if line.startswith("%")]
    assert any(
        line.startswith(f"% {SHOWN} (bco_gym.agents.fkm.agent:FlaxmanAgent): flaxman2005online")
        for line in comments
    )
    assert any("a brace is not closed" in line for line in comments)
    assert any("'nobody2099unknown' is neither a key" in line for line in comments)
    assert any(line.startswith("% random ") and "no paper declared" in line for line in comments)


def test_cli_export_and_cite(bench_dir, tmp_path, capsys):
    out, _ = bench_dir
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(SUITES, SUITE, SCENARIOS)
        patch.setattr("bco_gym.stats.scores.BOOTSTRAP_REPS", 200)
        assert main(["export", str(out), "--format", "csv", "--out", str(tmp_path / "t.csv")]) == 0
        assert main(["cite", str(out)]) == 0
    assert (tmp_path / "t.csv").read_text().startswith(",".join(export.CSV_COLUMNS))
    assert "@software{bco_gym," in capsys.readouterr().out
    assert main(["export", str(tmp_path), "--format", "latex"]) == 2
    assert "not a bench directory" in capsys.readouterr().err


def test_every_built_in_agent_declares_its_paper():
    for name, cls in AGENTS.items():
        assert "REFERENCE" in vars(cls), name
        entries, problems = citations.agent_entries(cls)
        assert not problems, (name, problems)
        assert entries or name == "random", name
    for key, (kind, fields) in citations.BIBLIOGRAPHY.items():
        entry = citations.bibliography_entry(key)
        assert citations.entry_problem(entry) is None and citations.entry_key(entry) == key
        assert {"author", "title", "year"} <= set(fields), key
        assert kind in ("article", "inproceedings", "misc"), key


def test_the_library_entry_is_citation_cff(request):
    import bco_gym

    root = request.config.rootpath
    text = (root / "CITATION.cff").read_text(encoding="utf-8")
    top = dict(re.findall(r'^(title|version|license): "?([^"\n]+)"?$', text, flags=re.MULTILINE))
    assert top == {
        "title": citations.LIBRARY["title"],
        "version": bco_gym.__version__,
        "license": citations.LIBRARY["license"],
    }
    assert (
        '- name: "The bco_gym authors"' in text
        and citations.LIBRARY["author"] == "{The bco_gym authors}"
    )


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("@article{k, title = {a {b} c}}", None),
        ("@article{k, title = {a}", "a brace is not closed"),
        ("@article{k, title = {a}}}", "text follows the entry's closing brace"),
        ("@article{k, title = {a}} extra", "text follows the entry's closing brace"),
        ("article{k, title = {a}}", "it does not start with @type{key,"),
        ("@article{k x, title = {a}}", "it does not start with @type{key,"),
    ],
)
def test_a_user_entry_is_checked_before_it_is_printed(entry, problem):
    assert citations.entry_problem(entry) == problem
