"""The report's changing-environment part: static, adaptive, dynamic and switching regret
per agent, the winner on each yardstick, and the interval-regret figure."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from bco_gym.engine.many import run_many
from bco_gym.reports.report import ReportSection, write_report
from bco_gym.reports.suites import SUITES
from bco_gym.reports.summary import changing_columns, changing_rows, compare_columns, summarize

SWITCHING = {"n": 3, "loss": "linear-switching", "loss_kwargs": {"segments": 4}}


@pytest.fixture(scope="module")
def switching_results():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return [
            result
            for agent in ("random", "so-bgd", "fkm")
            for result in run_many(
                "BCO-Ball-v0", agent, [0, 1, 2], horizon=256, env_kwargs=SWITCHING
            )
        ]


def test_rows_are_the_means_over_seeds_and_the_winners_the_lowest(switching_results):
    rows = changing_rows(switching_results)
    assert [row.label.split(" ")[0] for row in rows] == ["random", "so-bgd", "fkm"]
    for row in rows:
        runs = [r for r in switching_results if r.agent == row.label.split(" ")[0]]
        assert row.adaptive[0] == pytest.approx(np.mean([r.adaptive_regret for r in runs]))
        assert row.dynamic[0] == pytest.approx(np.mean([r.dynamic_regret for r in runs]))
        switching = [r.interval_regret["switching_regret"] for r in runs]
        assert row.switching[0] == pytest.approx(np.mean(switching))
        assert row.static[0] == pytest.approx(np.mean([r.final_regret for r in runs]))
    header, body, winners = changing_columns(rows)
    assert header[2:] == [
        "static regret (mean ± std)",
        "adaptive regret (mean ± std)",
        "dynamic regret (mean ± std)",
        "switching regret (mean ± std)",
    ]
    assert len(body) == 3
    best_adaptive = min(rows, key=lambda row: row.adaptive[0]).label
    assert f"adaptive regret: {best_adaptive}" in winners


def test_compare_table_has_adaptive_and_dynamic_columns(switching_results):
    summary = summarize(switching_results)
    header, body = compare_columns(summary)
    column = header.index("adaptive")
    assert header[column + 1] == "dynamic"
    for row, cells in zip(summary, body, strict=True):
        runs = [r for r in switching_results if r.agent == row.agent]
        assert row.adaptive_mean == pytest.approx(np.mean([r.adaptive_regret for r in runs]))
        assert float(cells[column]) == pytest.approx(row.adaptive_mean, rel=1e-3)


def test_report_has_the_part_and_the_figure(switching_results, tmp_path):
    scenario = ReportSection("Ball, switching", switching_results)
    path = write_report(tmp_path / "report.md", [scenario], command="bco-gym demo")
    text = path.read_text(encoding="utf-8")
    assert "### Static, adaptive and dynamic regret" in text
    assert "Lowest mean on each yardstick: static regret:" in text
    figure = tmp_path / "01-ball-switching-intervals.png"
    assert f"]({figure.name})" in text and figure.stat().st_size > 0


def test_no_part_for_families_without_interval_regrets(tmp_path):
    results = run_many(
        "BCO-Ball-v0", "random", [0, 1], horizon=50, env_kwargs={"loss": "quadratic"}
    )
    path = write_report(tmp_path / "report.md", [ReportSection("Q", results)], command="x")
    assert "adaptive" not in path.read_text(encoding="utf-8").lower()


def test_standard_suite_has_the_switching_scenario():
    (scenario,) = [s for s in SUITES["standard-v1"] if s.name == "ball-switching"]
    assert scenario.env_kwargs["loss"] == "linear-switching"
    # the library's separation-step agent, named "so-bgd" when standard-v1 was published
    assert "fejer-bgd" in scenario.agents and scenario.horizon == 100_000
