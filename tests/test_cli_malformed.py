"""Malformed bco-gym invocations: each exits 2 with a one-line error and writes nothing.

Every case runs in a temporary working directory holding a few fixtures (a file, a
directory named like a JSON file, a foreign directory, malformed tuned-constants files
and manifests); afterwards the directory must hold exactly what it held before: a
mistyped command leaves nothing behind that could block the corrected one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from bco_gym.cli import main

BALL = ["--env", "BCO-Ball-v0", "--env-kwargs", '{"n": 3}']
TUNED = {
    "format": "bco_gym-tuned-constants/1",
    "env_id": "BCO-Ball-v0",
    "env_kwargs": {"n": 3},
    "horizon": 50,
    "tune_seeds": [0, 1],
    "constants": {
        "bbcg": {
            "param": "c",
            "value": 1.0,
            "mean_regret": 3.0,
            "theory_value": 1.7,
            "grid": [0.1, 1.0],
            "scores": [4.0, 3.0],
        }
    },
    "skipped": {},
}
CELL = {
    "env_id": "BCO-Ball-v0",
    "agent": "bbcg",
    "horizon": 50,
    "seed": 0,
    "env_kwargs": {},
    "agent_kwargs": {},
    "constants": "theory",
    "checkpoints": None,
    "fast": None,
}


def _tuned(**changes):
    return json.dumps({**TUNED, **changes})


def _manifest(spec, version=2):
    return json.dumps({"format": version, "spec": spec})


FIXTURES = {
    "afile": "not a directory",
    "foreign/notes.txt": "someone else's",
    "tuned/not_json.json": "{broken",
    "tuned/other_format.json": '{"format": "something else"}',
    "tuned/no_constants.json": _tuned(constants=None),
    "tuned/bad_value.json": _tuned(
        constants={"bbcg": {**TUNED["constants"]["bbcg"], "value": "x"}}
    ),
    "tuned/negative.json": _tuned(constants={"bbcg": {**TUNED["constants"]["bbcg"], "value": -1}}),
    "tuned/bad_seeds.json": _tuned(tune_seeds="0,1"),
    "tuned/bad_horizon.json": _tuned(horizon=-4),
    "tuned/list.json": "[1, 2, 3]",
    "tuned/good.json": _tuned(),
    "sweeps/no_manifest/cells/x.json": "{}",
    "sweeps/not_json/manifest.json": "{broken",
    "sweeps/old_format/manifest.json": _manifest({"cells": []}, version=1),
    "sweeps/cells_not_list/manifest.json": _manifest({"cells": "all"}),
    "sweeps/cell_missing_fields/manifest.json": _manifest({"cells": [{"env_id": "x"}]}),
    "sweeps/cell_strings/manifest.json": _manifest({"cells": ["a", "b"]}),
    "sweeps/cell_extra_field/manifest.json": _manifest({"cells": [{**CELL, "evil": 1}]}),
    "sweeps/cell_bad_checkpoints/manifest.json": _manifest({"cells": [{**CELL, "checkpoints": 5}]}),
    "sweeps/empty/manifest.json": _manifest({"cells": [CELL]}),
    "sweeps/no_spec/manifest.json": '{"format": 2}',
}

MALFORMED = [
    # -- run -----------------------------------------------------------------------------
    (["run", "--env", "CartPole-v1"], "unknown env id 'CartPole-v1'"),
    (["run", "--env", "BCO-Nope-v0"], "valid ids: BCO-Simplex-v0"),
    (["run", "--env", ""], "unknown env id ''"),
    (["run", "--agent", "zzz"], "unknown agent name(s) 'zzz'; valid names: bbcg"),
    (["run", "--agent", ""], "unknown agent name(s) ''"),
    (["run", "--horizon", "-5"], "'-5' must be a positive integer"),
    (["run", "--horizon", "0"], "'0' must be a positive integer"),
    (["run", "--horizon", "1e12"], "'1e12' exceeds the limit of 100,000,000"),
    (["run", "--horizon", "abc"], "'abc' is not a number"),
    (["run", "--horizon", "1.5"], "'1.5' must be a positive integer"),
    (["run", "--horizon", "inf"], "'inf' must be a positive integer"),
    (["run", "--horizon", "nan"], "'nan' must be a positive integer"),
    (["run", "--horizon", "99999999999999999999999"], "exceeds the limit"),
    (["run", "--seed", "-1"], "'-1' must be a non-negative integer"),
    (["run", "--seed", "1.5"], "'1.5' must be a non-negative integer"),
    (["run", "--seed", "1e30"], "'1e30' exceeds the limit"),
    (["run", "--env-kwargs", "{nope"], "is not valid JSON"),
    (["run", "--env-kwargs", "[1, 2]"], "must be a JSON object"),
    (["run", "--env-kwargs", '"n"'], "must be a JSON object"),
    (["run", "--env-kwargs", '{"zzz": 1}'], "BCO-Simplex-v0 refuses --env-kwargs"),
    (["run", "--env-kwargs", '{"dim": 5}'], 'refuses --env-kwargs {"dim": 5}'),
    (["run", "--env-kwargs", '{"n": -3}'], "n=-3"),
    (["run", "--env-kwargs", '{"n": "x"}'], "refuses --env-kwargs"),
    (["run", "--env-kwargs", '{"n": 1e30}'], "refuses --env-kwargs"),
    (["run", "--env-kwargs", '{"loss": "nope"}'], "nope"),
    (["run", "--env-kwargs", '{"feedback": "psychic"}'], "psychic"),
    (["run", "--horizon", "9", "--env-kwargs", '{"horizon": 5}'], "refuses --env-kwargs"),
    (["run", "--agent-kwargs", '{"zzz": 1}'], "agent 'bbcg' with {\"zzz\": 1}"),
    (["run", "--agent-kwargs", '{"c": -1}'], "agent 'bbcg' with {\"c\": -1}"),
    (["run", "--agent-kwargs", '{"c": "x"}'], "agent 'bbcg' with"),
    (["run", "--agent-kwargs", "3"], "must be a JSON object"),
    (["run", "--agent", "ofw", "--env-kwargs", '{"feedback": "bandit"}'], "feedback='full'"),
    (["run", "--out", "afile"], "must end in .json"),
    (["run", "--out", "afile/x.json"], "is not a directory"),
    (["run", "--out", "/dev/null"], "must end in .json"),
    (["run", "--out", "/proc/self/x.json"], "is not writable"),
    (["run", "--out", "adir.json"], "is a directory"),
    (["run", "--out", "foreign"], "must end in .json"),
    (["run", "--no-such-flag"], "unrecognized arguments: --no-such-flag"),
    (["run", "extra"], "unrecognized arguments: extra"),
    (["run", "--horizon"], "expected one argument"),
    (["run", "--env"], "expected one argument"),
    # -- compare -------------------------------------------------------------------------
    (["compare", "--agents", "bbcg,zzz"], "unknown agent name(s) 'zzz'"),
    (["compare", "--agents", ""], "names nothing"),
    (["compare", "--agents", ",,"], "names nothing"),
    (["compare", "--agents", "bbcg,bbcg"], "repeats a name"),
    (["compare", "--seeds", "0"], "'0' must be a positive integer"),
    (["compare", "--seeds", "5:2"], "seed range '5:2' is empty"),
    (["compare", "--seeds", "3:3"], "seed range '3:3' is empty"),
    (["compare", "--seeds", "1e9"], "'1e9' exceeds the limit of 10,000"),
    (["compare", "--seeds", "0:1e9"], "more than the limit of 10,000"),
    (["compare", "--seeds", "a:b"], "'a' is not a number"),
    (["compare", "--seeds", "-3"], "'-3' must be a positive integer"),
    (["compare", "--seeds", "1:2:3"], "is not a number"),
    (["compare", "--horizon", "1e12"], "exceeds the limit of 100,000,000"),
    (["compare", "--horizon", "0"], "must be a positive integer"),
    (["compare", "--out", "afile"], "'afile' exists and is not a directory"),
    (["compare", "--out", "afile/sub"], "afile' is not a directory"),
    (["compare", "--out", "/dev/null"], "'/dev/null' exists and is not a directory"),
    (["compare", "--out", "/proc/self/bco"], "is not writable"),
    (["compare", "--out", "foreign"], "is not empty and holds no sweep (found notes.txt)"),
    (["compare", "--env", "CartPole-v1"], "unknown env id 'CartPole-v1'"),
    (["compare", "--env-kwargs", '{"zzz": 1}'], "refuses --env-kwargs"),
    (["compare", "--tuned", "missing.json"], "cannot read tuned constants"),
    (["compare", "--tuned", "tuned/not_json.json"], "cannot read tuned constants"),
    (["compare", "--tuned", "tuned/other_format.json"], "is not a tuned-constants file"),
    (["compare", "--tuned", "tuned/no_constants.json"], "malformed tuned-constants file"),
    (["compare", "--tuned", "tuned/bad_value.json"], "malformed tuned-constants file"),
    (["compare", "--tuned", "tuned/negative.json"], "not a positive number"),
    (["compare", "--tuned", "tuned/bad_seeds.json"], "tune_seeds is str"),
    (["compare", "--tuned", "tuned/bad_horizon.json"], "horizon=-4"),
    (["compare", "--tuned", "tuned/list.json"], "is not a tuned-constants file"),
    (["compare", "--tuned", "/dev/zero"], "is not a regular file"),
    (["compare", "--tuned", "tuned"], "cannot read tuned constants"),
    (["compare", *BALL, "--tuned", "tuned/good.json", "--seeds", "2"], "overlap the evaluation"),
    (["compare", "--backend", "gpu"], "invalid choice: 'gpu'"),
    (["compare", "--agents", "ofw", "--env-kwargs", '{"feedback": "bandit"}'], "feedback='full'"),
    (["compare", "--agents", "bbcg", "--agent-kwargs", "[1]"], "must be a JSON object"),
    (["compare", "--agents", "bbcg", "--agent-kwargs", '{"fkm": {}}'], "not one of --agents"),
    (["compare", "--agents", "bbcg", "--agent-kwargs", '{"bbcg": 2}'], "expected an object"),
    (["compare", "--agents", "bbcg", "--label", "fkm=F"], "'fkm' is not one of --agents"),
    (["compare", "--agents", "bbcg", "--label", "bbcg"], "must read NAME=LABEL"),
    (["compare", "--agents", "bbcg[c=1", "--horizon", "10"], "one pair of brackets"),
    (["compare", "--agents", "bbcg[zz=1]", "--horizon", "10"], "unknown keyword(s) zz"),
    (["compare", "--gym-loop", "yes"], "unrecognized arguments: yes"),
    (["compare", "--env-kwargs", '{"n": 0}'], "refuses --env-kwargs"),
    # -- exponents -----------------------------------------------------------------------
    (["exponents", "--points", "1"], "at least 2 horizons"),
    (["exponents", "--points", "1e9"], "exceeds the limit of 1,000"),
    (["exponents", "--points", "0"], "must be a positive integer"),
    (["exponents", "--horizons", "5:1"], "must satisfy 0 < LOW < HIGH"),
    (["exponents", "--horizons", "abc"], "must be a range LOW:HIGH"),
    (["exponents", "--horizons", "0:10"], "must satisfy 0 < LOW < HIGH"),
    (["exponents", "--horizons", "1e3:1e12"], "exceeds the limit of 100,000,000 rounds"),
    (["exponents", "--horizons", "1:1.4", "--points", "2"], "give [1]"),
    (["exponents", "--horizons", "0.5:10"], "the smallest horizon is 1"),
    (["exponents", "--horizons", "inf:1e3"], "must be a range LOW:HIGH"),
    (["exponents", "--horizons", "1e3:nan"], "must be a range LOW:HIGH"),
    (["exponents", "--seeds", "1e9"], "exceeds the limit of 10,000"),
    (["exponents", "--out", "afile"], "exists and is not a directory"),
    (["exponents", "--env", "CartPole-v1"], "unknown env id"),
    (["exponents", "--agents", "zzz"], "unknown agent name(s) 'zzz'"),
    (["exponents", "--points", "20", "--seeds", "10000", "--agents", "bbcg"], "limit of 100000"),
    (["exponents", "--env-kwargs", '{"dim": 5}'], "refuses --env-kwargs"),
    (["exponents", "--tuned", "tuned/list.json"], "is not a tuned-constants file"),
    # -- tune ----------------------------------------------------------------------------
    (["tune", "--grid", "5:1"], "must satisfy 0 < LOW < HIGH"),
    (["tune", "--grid", "abc"], "must be a range LOW:HIGH"),
    (["tune", "--grid", "0:1"], "must satisfy 0 < LOW < HIGH"),
    (["tune", "--grid=-1:1"], "must satisfy 0 < LOW < HIGH"),
    (["tune", "--grid", "1:inf"], "must be a range LOW:HIGH"),
    (["tune", "--points", "1"], "a grid needs at least 2 points"),
    (["tune", "--points", "1e9"], "exceeds the limit of 1,000"),
    (["tune", "--tune-seeds", "1e9"], "exceeds the limit of 10,000"),
    (["tune", "--out", "afile"], "must end in .json"),
    (["tune", "--out", "adir.json"], "is a directory"),
    (["tune", "--out", "afile/t.json"], "is not a directory"),
    (["tune", "--out", "/dev/null"], "must end in .json"),
    (["tune", "--out", "/proc/self/t.json"], "is not writable"),
    (["tune", "--sweep-dir", "afile"], "--sweep-dir 'afile' exists and is not a directory"),
    (["tune", "--sweep-dir", "foreign"], "is not empty and holds no sweep"),
    (["tune", "--agents", "zzz"], "unknown agent name(s) 'zzz'"),
    (["tune", "--env", "CartPole-v1"], "unknown env id"),
    (["tune", "--horizon", "1e12"], "exceeds the limit"),
    (["tune", "--env-kwargs", '{"zzz": 1}'], "refuses --env-kwargs"),
    (["tune", "--points", "1000", "--tune-seeds", "200", "--agents", "bbcg"], "limit of 100000"),
    # -- plot ----------------------------------------------------------------------------
    (["plot", "missing"], "'missing' is not a directory"),
    (["plot", "afile"], "'afile' is not a directory"),
    (["plot", "/dev/null"], "'/dev/null' is not a directory"),
    (["plot", "foreign"], "not a bco_gym sweep"),
    (["plot", "sweeps/no_manifest"], "not a bco_gym sweep"),
    (["plot", "sweeps/not_json"], "not a bco_gym sweep"),
    (["plot", "sweeps/old_format"], "format 1"),
    (["plot", "sweeps/cells_not_list"], "has no list of cells"),
    (["plot", "sweeps/no_spec"], "has no list of cells"),
    (["plot", "sweeps/cell_missing_fields"], "lists a malformed cell"),
    (["plot", "sweeps/cell_strings"], "has no list of cells"),
    (["plot", "sweeps/cell_extra_field"], "lists a malformed cell"),
    (["plot", "sweeps/cell_bad_checkpoints"], "lists a malformed cell"),
    (["plot", "sweeps/empty"], "holds no finished cells yet"),
    (["plot"], "the following arguments are required: directory"),
    (["plot", "a", "b"], "unrecognized arguments: b"),
    # -- the command itself --------------------------------------------------------------
    ([], "the following arguments are required: COMMAND"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["list", "extra"], "unrecognized arguments: extra"),
    (["--no-such-flag"], "required: COMMAND"),
]


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """A working directory with the fixtures; yields a snapshot function of its tree."""
    for name, text in FIXTURES.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "adir.json").mkdir()
    monkeypatch.chdir(tmp_path)

    def snapshot():
        return sorted(
            (str(path.relative_to(tmp_path)), path.is_dir() or path.read_bytes())
            for path in tmp_path.rglob("*")
        )

    return snapshot


def test_at_least_100_malformed_invocations_are_enumerated():
    assert len(MALFORMED) >= 100
    assert len({tuple(argv) for argv, _ in MALFORMED}) == len(MALFORMED)


@pytest.mark.parametrize(("argv", "message"), MALFORMED, ids=[" ".join(a) for a, _ in MALFORMED])
def test_a_malformed_invocation_exits_2_with_one_line_and_writes_nothing(
    workspace, capsys, argv, message
):
    before = workspace()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning escaping the CLI would be a second line
        code = main(argv)
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert code == 2, captured.err
    assert len(lines) == 1, captured.err
    assert "error: " in lines[0] and message in lines[0], lines[0]
    assert "Traceback" not in captured.err + captured.out
    assert workspace() == before


def console_script() -> list[str]:
    script = Path(sys.executable).with_name("bco-gym")
    found = str(script) if script.exists() else shutil.which("bco-gym")
    return [found] if found else [sys.executable, "-m", "bco_gym.cli"]


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--env", "CartPole-v1"],
        ["compare", "--horizon", "1e12"],
        ["compare", "--out", "/dev/null"],
        ["plot", "sweeps/cell_missing_fields"],
    ],
)
def test_the_installed_command_exits_2_without_traceback(workspace, argv):
    before = workspace()
    environment = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    finished = subprocess.run(
        [*console_script(), *argv], capture_output=True, text=True, env=environment, timeout=120
    )
    assert finished.returncode == 2, finished.stderr
    lines = finished.stderr.strip().splitlines()
    assert len(lines) == 1 and "error: " in lines[0], finished.stderr
    assert workspace() == before
