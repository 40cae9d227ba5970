"""Tables: means over seeds, the exponent fit and its interval, the renderings."""

from __future__ import annotations

import csv
import dataclasses
import io
import math

import numpy as np
import pytest

from bco_gym.reports.summary import (
    compare_columns,
    exponent_columns,
    fit_exponent,
    fit_exponents,
    format_column,
    render_csv,
    render_markdown,
    render_text,
    sanitize_text,
    summarize,
)


def test_summaries_average_over_seeds(tiny_results):
    rows = summarize(tiny_results)
    assert [(row.agent, row.seeds) for row in rows] == [("bbcg", 2), ("random", 2)]
    bbcg = [r for r in tiny_results if r.agent == "bbcg"]
    regrets = [r.final_regret for r in bbcg]
    assert rows[0].regret_mean == pytest.approx(np.mean(regrets), rel=1e-14)
    assert rows[0].regret_std == pytest.approx(np.std(regrets, ddof=1), rel=1e-14)
    assert rows[0].lmo_per_round == sum(r.lmo_calls for r in bbcg) / (2 * bbcg[0].horizon)
    assert rows[0].scaled_regret == pytest.approx(rows[0].regret_mean / 200**0.75)
    assert rows[0].constants == "theory" and rows[0].scale.startswith("c=")


def test_exponent_fit_recovers_a_known_power_law_and_its_interval_covers():
    """On synthetic regrets 3 T^0.75 x lognormal noise over 20 seeds, repeated 200 times:
    the slope is close and the 95% bootstrap interval covers 0.75 about 95% of the time
    (accepted: 85%..99%, several binomial standard deviations either side)."""
    rng = np.random.default_rng(0)
    horizons = np.array([1000, 4000, 16000, 64000])
    exponent, covered, widths = 0.75, 0, []
    for trial in range(200):
        regrets = 3.0 * horizons[:, None] ** exponent * rng.lognormal(0, 0.1, (4, 20))
        slope, low, high, dropped = fit_exponent(horizons, regrets, resamples=500, seed=trial)
        assert abs(slope - exponent) < 0.05 and dropped == 0 and low <= slope <= high
        covered += low < exponent < high
        widths.append(high - low)
    assert 0.85 <= covered / 200 <= 0.99
    assert np.median(widths) < 0.05
    exact = 2.0 * horizons[:, None].astype(float) ** 0.5 * np.ones((4, 3))
    slope, low, high, _ = fit_exponent(horizons, exact)
    assert slope == pytest.approx(0.5, abs=1e-12)
    assert low == pytest.approx(0.5, abs=1e-12) and high == pytest.approx(0.5, abs=1e-12)


def test_exponent_fit_edge_cases():
    slope, low, high, _ = fit_exponent([10, 100], np.array([[1.0], [10.0]]))
    assert slope == pytest.approx(1.0) and math.isnan(low) and math.isnan(high)
    slope, *_ = fit_exponent([10, 100], np.array([[-1.0, -2.0], [10.0, 11.0]]))
    assert math.isnan(slope)
    with pytest.raises(ValueError, match="shape"):
        fit_exponent([10], np.ones((1, 3)))


def test_fit_exponents_groups_by_agent_and_needs_a_full_grid(tiny_results):
    doubled = [
        dataclasses.replace(r, horizon=h, final_regret=r.final_regret * f)
        for r in tiny_results
        for h, f in ((200, 1.0), (800, 8.0))
    ]
    fits = fit_exponents(doubled)
    assert [fit.agent for fit in fits] == ["bbcg", "random"]
    assert fits[0].slope == pytest.approx(math.log(8) / math.log(4), rel=1e-12)
    assert fits[0].theory == 0.75 and fits[1].theory == 1.0
    with pytest.raises(ValueError, match="no result for"):
        fit_exponents(doubled[:-1])
    header, body = exponent_columns(fits)
    assert header[5] == "slope" and body[0][5] == "1.500"


def test_renderings_hold_the_same_numbers(tiny_results):
    rows = summarize(tiny_results)
    header, body = compare_columns(rows)
    text = render_text(header, body)
    markdown = render_markdown(header, body)
    assert text.splitlines()[0].split()[0] == "agent"
    assert markdown.splitlines()[1].count("---") == len(header)
    assert all(cell in markdown for cell in body[0])
    parsed = list(csv.DictReader(io.StringIO(render_csv(rows))))
    assert [p["agent"] for p in parsed] == ["bbcg", "random"]
    assert float(parsed[0]["regret_mean"]) == rows[0].regret_mean
    assert float(parsed[0]["scaled_regret"]) == rows[0].scaled_regret


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([16600.0, 20030.0, 173.5], ["16600", "20030", "174"]),
        ([16600.0, 20030.0, 17.35], ["16600.0", "20030.0", "17.4"]),
        ([0.0035, 1.0, 0.0], ["0.00350", "1.00000", "0.00000"]),
        ([1.83e5, 316.0, None], ["183000", "316", "-"]),
        ([1.2e-5, 3.0], ["1.20e-05", "3.00e+00"]),
        ([2e8, 5.0, math.nan], ["2.00e+08", "5.00e+00", "-"]),
        ([0.0, 0.0], ["0", "0"]),
        ([math.inf, 2.0], ["inf", "2.00"]),
    ],
)
def test_a_column_is_formatted_alike(values, expected):
    assert format_column(values, 3) == expected


def test_control_characters_never_reach_a_table():
    nasty = "bbcg\x1b[31m\x07red\x9b2J"
    text = render_text(["agent"], [[nasty]])
    markdown = render_markdown(["agent"], [[nasty + "|x"]])
    for rendered in (text, markdown, sanitize_text(nasty)):
        assert "\x1b" not in rendered and "\x07" not in rendered and "\x9b" not in rendered
    assert "bbcg\\x1b[31m\\x07red\\x9b2J" in text
    assert "\\|x" in markdown


@pytest.mark.parametrize("text", ["=cmd|'/c calc'!A1", "+1+2", "-2+3*cmd", "@SUM(A1)", "\tx"])
def test_csv_cells_a_spreadsheet_would_run_are_made_inert(tiny_results, text):
    row = dataclasses.replace(summarize(tiny_results)[0], agent=text, scale=text)
    parsed = list(csv.reader(io.StringIO(render_csv([row]))))
    header, values = parsed[0], parsed[1]
    for name in ("agent", "scale"):
        cell = values[header.index(name)]
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")) and "\t" not in cell
        assert cell in ("'" + text, "\\x09x")
    assert float(values[header.index("regret_mean")]) == row.regret_mean
    negative = dataclasses.replace(row, regret_mean=-1.5, scale="-")
    values = list(csv.reader(io.StringIO(render_csv([negative]))))[1]
    assert values[header.index("regret_mean")] == "-1.5"
    assert values[header.index("scale")] == "-"
