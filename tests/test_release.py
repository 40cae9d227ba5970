"""A release a lab can adopt: one version number everywhere, a licence, a citation, a
changelog, and ``bco-gym --version`` naming what a result depends on."""

from __future__ import annotations

import hashlib
import importlib.metadata
import re
from pathlib import Path

import pytest

import bco_gym
from bco_gym.cli import main
from bco_gym.provenance import result_code_digest
from bco_gym.reports import references
from bco_gym.reports.suites import SUITES

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_is_semantic_and_at_least_0_2_0():
    match = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", bco_gym.__version__)
    assert match, bco_gym.__version__
    assert tuple(map(int, match.groups())) >= (0, 2, 0)


def test_one_version_number_everywhere():
    version = bco_gym.__version__
    assert importlib.metadata.version("bco_gym") == version  # the packaging reads it
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in pyproject and 'attr = "bco_gym.__version__"' in pyproject
    citation = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert re.search(rf"^version: {re.escape(version)}$", citation, re.M)
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## .*\b{re.escape(version)}\b", changelog, re.M), "no section"


def test_the_licence_files_are_there_and_say_what_they_cover():
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License") and "The bco_gym authors" in licence
    notice = (ROOT / "NOTICE.md").read_text(encoding="utf-8")
    for dataset in ("nyse_o", "nyse_n", "tse", "sp500", "msci", "djia"):
        assert f"`{dataset}`" in notice
    assert "Feedback MIT License" in notice and "PROVENANCE.md" in notice
    provenance = ROOT / "bco_gym" / "data" / "portfolio" / "PROVENANCE.md"
    assert "Person obtaining a copy must return feedback" in provenance.read_text("utf-8")
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'license = "MIT"' in pyproject and '"NOTICE.md"' in pyproject


def test_the_citation_file_parses_and_cites_the_paper():
    yaml = pytest.importorskip("yaml")
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["cff-version"] == "1.2.0" and citation["license"] == "MIT"
    assert str(citation["version"]) == bco_gym.__version__
    (paper,) = citation["references"]
    assert paper["volume"] == 108 and (paper["start"], paper["end"]) == (2196, 2206)


def test_version_names_the_library_the_suites_and_each_archive(capsys):
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == f"bco_gym {bco_gym.__version__}"
    assert lines[1] == f"suites: {', '.join(SUITES)}"
    assert f"result code: {result_code_digest()}" in lines
    for suite in references.ARCHIVED:
        index = references.root() / suite / references.INDEX
        if not index.is_file():  # standard-v3's, until the archive is rebuilt
            where = lines.index(f"  {suite}: sha256 -")
            assert lines[where + 1].strip() == "none shipped"
            continue
        digest = hashlib.sha256(index.read_bytes()).hexdigest()  # what sha256sum prints
        where = lines.index(f"  {suite}: sha256 {digest}")
        status = lines[where + 1].strip()
        assert status == references.archive_status(suite)
        assert status.startswith(("valid for this code", "stale: computed by other code"))


def test_version_says_when_an_archive_is_stale(capsys, monkeypatch, tmp_path):
    copy = tmp_path / "references" / "quick-v2"
    copy.mkdir(parents=True)
    index = (references.root() / "quick-v2" / references.INDEX).read_text(encoding="utf-8")
    (copy / references.INDEX).write_text(
        re.sub(r'"code_digest": "[0-9a-f]+"', '"code_digest": "' + "0" * 64 + '"', index)
    )
    monkeypatch.setattr(references, "root", lambda: tmp_path / "references")
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert "stale: computed by other code (code 000000000000" in out
    assert "rebuild it with `python -m bco_gym.reports.references quick-v2" in out
    assert "standard-v2: sha256 -\n    none shipped" in out
