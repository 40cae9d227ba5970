"""Like-with-like timings (issue 43: the references' µs per round came from the archive,
measured on another machine on another day, beside a given agent's measured here)."""

from __future__ import annotations

import math
import re
from dataclasses import replace

from synthetic_results import synthetic_result

from bco_gym.reports import bench
from bco_gym.reports.bench_provenance import ScenarioRun, provenance_lines
from bco_gym.reports.bench_timing import PASSES
from bco_gym.reports.suites import SUITES, Scenario
from bco_gym.stats.paired import series_label

TINY = (
    Scenario(
        name="tiny-timed",
        title="3-ball, i.i.d. linear",
        env_id="BCO-Ball-v0",
        agents=("bbcg", "random"),
        horizon=150,
        seeds=(0, 1),
        env_kwargs={"n": 3},
    ),
)


def test_every_row_is_timed_here_in_turns_with_the_load(tmp_path, monkeypatch, plain):
    monkeypatch.setitem(SUITES, "tiny-timed", TINY)
    out = tmp_path / "b"
    outcome = bench.run_bench(["user_agents:Jitter"], out, suite="tiny-timed", timings=True)
    (run,) = outcome.runs
    timed = run.timings
    assert {row.label for row in timed.rows} == {series_label(r) for r in run.results}
    assert timed.rounds == 150 and timed.seed == 0 and timed.cores >= 1
    for row in timed.rows:
        assert len(row.microseconds) == PASSES and all(v > 0 for v in row.microseconds)
        assert min(row.microseconds) <= row.median <= max(row.microseconds)
        assert row.source == "here"  # no archive for this suite: every cell computed here
    assert all(math.isfinite(value) for value in timed.load)
    text = (out / "report.md").read_text()
    section = text[text.index("### Timings, like with like") :]
    assert re.search(r"load average \d+\.\d\d before and \d+\.\d\d after, on \d+ cores", section)
    for row in timed.rows:
        assert f"| {row.label} | {row.median:.3g} |" in section
    assert "- **Timings**:" not in text  # timed live: nothing to warn of


def _archived_run(timings=None):
    results = [
        synthetic_result(agent, seed, (1.0, 2.0, 3.0))
        for agent in ("bbcg", "random", "mine")
        for seed in (0, 1)
    ]
    stamped = [replace(result, computed_at="2026-11-27T16:12:46Z") for result in results]
    scenario = Scenario(
        name="s", env_id="BCO-Ball-v0", agents=("bbcg", "random"), horizon=100, seeds=(0, 1)
    )
    return ScenarioRun(scenario, scenario.agents, {}, stamped, references="archive",
                       timings=timings)  # fmt: skip


def test_without_live_timings_the_archives_are_said_to_be_measured_elsewhere():
    lines = provenance_lines("standard-v2", [_archived_run()])
    (line,) = [line for line in lines if line.startswith("- **Timings**")]
    assert "measured when it was built (2026-11-27, on the machine that built it), not here" in (
        line
    )
    assert "`--timings` times every row here, in turns, side by side" in line
    assert not [
        x for x in provenance_lines("s", [_archived_run(timings=object())]) if "Timings" in x
    ]


def test_time_rows_plays_each_row_the_same_number_of_rounds():
    from bco_gym.experiment import run_many
    from bco_gym.reports.bench_timing import time_rows

    results = [
        *run_many("BCO-Ball-v0", "bbcg", [0, 1], horizon=40, env_kwargs={"n": 3}),
        *run_many("BCO-Ball-v0", "random", [0, 1], horizon=40, env_kwargs={"n": 3}),
    ]
    timed = time_rows(results, {"random"}, rounds=10, passes=2)
    assert timed.rounds == 10 and timed.horizon == 40
    assert {row.label: row.source for row in timed.rows} == {"bbcg": "here", "random": "archive"}
    assert all(len(row.microseconds) == 2 for row in timed.rows)
