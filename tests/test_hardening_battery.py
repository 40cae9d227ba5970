"""The hardening battery (issue 23): each case a clean typed error naming the value, or
the right behaviour, on the surfaces of the third round: user losses, the vector env,
batched agents, two-point feedback, portfolio data, wrappers, result directories under
faults, and the CLI's newer commands.

Every case is fast (no case plays more than a few hundred rounds).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bco_gym.cli import main
from bco_gym.cli_checks import (
    OWNER_FILE,
    UsageError,
    check_command_directory,
    claim_command_directory,
)


def _cli(argv, capsys):
    """(exit code, stdout, stderr) of ``bco-gym argv``."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as stop:
        code = stop.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _tree(path: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes() if p.is_file() else b"<dir>"
        for p in sorted(path.rglob("*"))
    }


# -- directories a command owns (demo, bench) ---------------------------------------------------
def _layout(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if text == "<dir>":
            target.mkdir(exist_ok=True)
        else:
            target.write_text(text)
    return root


OWNED_REFUSED = [
    ({"report.md": "my own notes"}, "found report.md"),
    ({"scores.csv": "a,b"}, "found scores.csv"),
    ({"notes/x.txt": "x"}, "found notes"),
    ({OWNER_FILE: '{"command": "bench"}'}, "written by `bco-gym bench`"),
    ({OWNER_FILE: "{broken"}, "unreadable"),
    ({OWNER_FILE: '{"command": 3}'}, "unreadable"),
    ({OWNER_FILE: "[]"}, "unreadable"),
    ({"runs/a/x.json": "{}"}, "found runs"),  # runs/ without sweeps is not a demo's
    ({"manifest.json": "{}"}, "found manifest.json"),  # a sweep is compare's, not demo's
]


@pytest.mark.parametrize(("files", "expected"), OWNED_REFUSED)
def test_demo_refuses_a_directory_it_did_not_write(tmp_path, capsys, files, expected):
    out = _layout(tmp_path / "out", files)
    before = _tree(out)
    code, _, err = _cli(["demo", "--quick", "--out", out], capsys)
    assert code == 2
    assert expected in err and str(out) in err
    assert _tree(out) == before  # nothing written, nothing overwritten


OWNED_ALLOWED = [
    {},
    {OWNER_FILE: '{"command": "demo"}', "report.md": "an earlier demo"},
    {"runs/iid-ball/manifest.json": "{}", "report.md": "a demo from before the marker"},
    {"compare/x/manifest.json": "{}", "tuned_constants.json": "{}", ".lock": ""},
]


@pytest.mark.parametrize("files", OWNED_ALLOWED)
def test_demo_accepts_a_new_empty_or_own_directory(tmp_path, files):
    from bco_gym.cli_commands import DEMO_SHARED, _demo_written

    out = _layout(tmp_path / "out", files) if files else tmp_path / "out"
    kwargs = {"shared": DEMO_SHARED, "recognise": _demo_written}
    assert check_command_directory(out, "demo", outputs=("report.md",), **kwargs) == out
    claim_command_directory(out, "demo")
    assert json.loads((out / OWNER_FILE).read_text()) == {"command": "demo"}
    assert check_command_directory(out, "demo", **kwargs) == out
    with pytest.raises(UsageError, match="written by `bco-gym demo`"):
        check_command_directory(out, "bench")


def test_an_owned_directory_refuses_an_output_that_is_a_directory(tmp_path):
    out = _layout(tmp_path / "out", {OWNER_FILE: '{"command": "bench"}', "report.md": "<dir>"})
    with pytest.raises(UsageError, match=r"report\.md is a directory"):
        check_command_directory(out, "bench", outputs=("report.md",))


def test_an_owned_directory_must_be_writable(tmp_path, monkeypatch):
    out = claim_command_directory(tmp_path / "out", "bench")
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # as for a non-root user
    with pytest.raises(UsageError, match="is not writable"):
        check_command_directory(out, "bench")
