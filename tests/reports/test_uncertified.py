"""An uncertified comparator is said wherever its regret is shown: tables, CLI, reports."""

from __future__ import annotations

import numpy as np
import pytest

from bco_gym.cli_reports import regret_line, report_compare
from bco_gym.engine import run_many
from bco_gym.envs import BanditConvexEnv
from bco_gym.losses import from_function
from bco_gym.losses.verification import comparator_status
from bco_gym.reports.bench_provenance import ScenarioRun
from bco_gym.reports.bench_report import _scenario_lines
from bco_gym.reports.report import ReportSection, write_report
from bco_gym.reports.suites import Scenario as SuiteScenario
from bco_gym.reports.summary import (
    comparator_text,
    compare_columns,
    exponent_columns,
    fit_exponents,
    summarize,
)
from bco_gym.sets import L2Ball

HORIZON, SEEDS = 40, (0, 1, 2)


def _square(t, x):
    return float(np.sum((x - 0.1 * np.cos(t)) ** 2))


def _square_gradient(t, x):
    return 2.0 * (x - 0.1 * np.cos(t))


def _results(verify: bool, horizon: int = HORIZON) -> list:
    ball = L2Ball(3)
    losses = from_function(ball, _square, _square_gradient, horizon, 5.0, 5.0, verify=verify)
    env = BanditConvexEnv(ball, losses)
    return [r for agent in ("random", "fkm") for r in run_many(env, agent, SEEDS)]


@pytest.fixture(scope="module")
def unchecked():
    return _results(verify=False)


@pytest.fixture(scope="module")
def checked():
    return _results(verify=True)


def test_comparator_status_reads_the_label_then_the_gap():
    assert comparator_status({"comparator": "uncertified"}, 0.0) == "uncertified"
    assert comparator_status({"comparator": "uncertified"}, 1e-3) == "uncertified"
    assert comparator_status({"comparator": "certified"}, 1e-9) == "certified"  # old files
    assert comparator_status({"comparator": "checked on 48 samples"}, 1e-9) == "sampled"
    assert comparator_status({"name": "linear"}, 0.0) == "exact"
    assert comparator_status({"name": "quadratic"}, 2e-7) == "certified"


def test_the_results_carry_the_labels_the_tables_read(unchecked, checked, tiny_results):
    assert {r.loss["comparator"] for r in unchecked} == {"uncertified"}
    assert {r.loss["comparator"] for r in checked} == {"checked on 48 samples"}
    assert comparator_text(unchecked) == "uncertified"
    gap = max(r.final_gap for r in checked)
    assert gap > 0  # a Frank-Wolfe gap, a bound only if the losses are convex
    assert comparator_text(checked) == f"checked on 48 samples (not certified), gap <= {gap:.2g}"
    assert comparator_text(tiny_results) == "exact"  # linear losses: one LMO
    assert comparator_text([*checked, unchecked[0]]) == "uncertified"  # one is enough


def test_the_compare_table_has_the_comparator_column(unchecked, checked, tiny_results):
    for results, expected in (
        (unchecked, "uncertified"),
        (checked, comparator_text(checked)),
        (tiny_results, "exact"),
    ):
        header, body = compare_columns(summarize(results))
        column = header.index("comparator")
        assert header[column - 1] == "regret (mean ± std)"
        assert {cells[column] for cells in body} == {expected}


def test_the_exponents_table_has_the_comparator_column(unchecked):
    longer = [r for r in _results(verify=False, horizon=2 * HORIZON) if r.agent == "fkm"]
    fits = fit_exponents([r for r in unchecked if r.agent == "fkm"] + longer)
    header, body = exponent_columns(fits)
    assert body[0][header.index("comparator")] == "uncertified"


def test_bco_gym_run_line_says_uncertified(unchecked, checked, tiny_results):
    line = regret_line(unchecked[0])
    assert "(comparator uncertified)" in line
    assert "warning: comparator uncertified" in line and "verify=False" in line
    assert "(comparator exact)" in regret_line(tiny_results[0])
    certified = regret_line(checked[0])
    assert "(comparator checked on 48 samples (not certified), gap <= " in certified
    assert "warning" not in certified


def test_the_compare_and_exponents_commands_warn_under_the_table(unchecked, checked, capsys):
    report_compare(unchecked, None)
    printed = capsys.readouterr().out
    assert "warning (random, fkm): comparator uncertified" in printed
    report_compare(checked, None)
    assert "uncertified" not in capsys.readouterr().out


def test_the_report_says_uncertified_in_the_headline_and_the_section(unchecked, checked, tmp_path):
    scenarios = [ReportSection("Unchecked", unchecked), ReportSection("Checked", checked)]
    text = write_report(tmp_path / "report.md", scenarios, command="test").read_text("utf-8")
    headline = text[text.index("## Headline") : text.index("## 1. Unchecked")]
    header = next(line for line in headline.splitlines() if line.startswith("| scenario"))
    rows = [line for line in headline.splitlines() if line.startswith("| [")]
    column = [cell.strip() for cell in header.split("|")].index("comparator")
    assert [[c.strip() for c in row.split("|")][column] for row in rows] == [
        "uncertified",
        comparator_text(checked),
    ]
    first = text[text.index("## 1. Unchecked") : text.index("## 2. Checked")]
    second = text[text.index("## 2. Checked") :]
    assert "**Warning: comparator uncertified: the losses come from from_function" in first
    assert f"Comparator: {comparator_text(checked)}." in second
    assert "uncertified" not in second


def test_the_bench_report_section_says_uncertified(unchecked, tmp_path):
    scenario = SuiteScenario("mine", "BCO-Ball-v0", ("random", "fkm"), HORIZON, SEEDS)
    run = ScenarioRun(scenario, ("random", "fkm"), {}, unchecked)
    lines = _scenario_lines(tmp_path, 1, run, None)
    assert any(line.startswith("**Warning: comparator uncertified") for line in lines)
