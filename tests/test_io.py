"""bco_gym.io: atomic writes, canonical JSON, content digests and directory claims.

The digests below name files already on disk (sweep cells, output directories), bind
stored results and decide when two runs pair; they were computed before the helpers moved
into ``bco_gym.io`` and must never change.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import numpy as np
import pytest

from bco_gym import io as files
from bco_gym.cli_commands import default_out
from bco_gym.losses import make_losses
from bco_gym.provenance import RESULT_CODE, ROOT_MODULES, SUFFIXES, result_code_digest
from bco_gym.sets import L2Ball
from bco_gym.sweeps import results
from bco_gym.sweeps.sweep import Cell


# -- digests unchanged ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("family", "expected"),
    [
        ("linear", "601c3830b5820d46cf8c0feb3472c5d2de4e0a3f4624b4ae4f24ad4d57677156"),
        ("quadratic", "8684e85b05c14d5c6c995825eb78483b9ea5a040115dc78b70e3aa4dd113decc"),
        ("linear-switching", "c3f73dc0dec80cc9ea3f71fb2e82bac41f8b22cf0ff89ac34e5cff5655572eec"),
    ],
)
def test_a_loss_sequences_digest_is_unchanged(family, expected):
    losses = make_losses(family, L2Ball(3))
    losses.reset(np.random.default_rng(1))
    assert losses.digest() == expected


def test_a_sweep_cells_key_and_a_results_digest_are_unchanged():
    cell = Cell(
        env_id="BCO-Ball-v0",
        agent="bbcg",
        horizon=50,
        seed=3,
        env_kwargs={"n": 3},
        agent_kwargs={"x": 1.5},
    )
    assert cell.key == "BCO-Ball-v0_bbcg_T50_s3_853f413b5b"
    document = {"format": 1, "key": {"b": [1, 2.5, None], "a": "é"}, "sha256": "x"}
    assert (
        results._digest(document, b"payload\0")
        == "391f7bbae20e77d0aabb9e3a8d70fe15f1305c0e0ddb36d56a3aa375a03e53a4"
    )


def test_a_default_output_directorys_name_is_unchanged():
    args = argparse.Namespace(env="BCO-Ball-v0", env_kwargs={"n": 4}, tuned=None, gym_loop=True)
    out = default_out("compare", args, ["bbcg", "fkm"], "T")
    assert out == Path("results/compare/BCO-Ball-v0_bbcg-fkm_T_f95b2b78")


def test_the_result_code_digest_is_the_file_set_digest_it_always_was():
    """SHA-256 of a domain, then per file (sorted by path) its relative path, NUL and the
    SHA-256 of its bytes: written out here independently of bco_gym.io."""
    package = Path(files.__file__).resolve().parent
    paths = [package / name for name in ROOT_MODULES]
    for name in RESULT_CODE:
        paths += [
            path
            for path in (package / name).rglob("*")
            if path.is_file()
            and path.suffix in SUFFIXES
            and "references" not in path.relative_to(package).parts
            and "__pycache__" not in path.parts
        ]
    digest = hashlib.sha256(b"bco_gym-code/1\0")
    for path in sorted(paths):
        digest.update(str(path.relative_to(package)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    assert result_code_digest() == digest.hexdigest()
    assert "io.py" in ROOT_MODULES  # result digests are taken with its canonical JSON


# -- canonical JSON -------------------------------------------------------------------------------
def test_canonical_json_is_sorted_compact_utf8():
    document = {"b": [1, 2.5], "a": {"d": None, "c": "é"}}
    assert files.canonical_json(document) == b'{"a":{"c":"\\u00e9","d":null},"b":[1,2.5]}'
    assert files.json_digest(document) == hashlib.sha256(files.canonical_json(document)).hexdigest()
    with pytest.raises(TypeError):
        files.canonical_json({"set": L2Ball(2)})
    expected = b'{"set":"' + repr(L2Ball(2)).encode() + b'"}'
    assert files.canonical_json({"set": L2Ball(2)}, repr) == expected


def test_name_digest_keeps_pythons_default_separators():
    expected = hashlib.sha256(b'{"a": 1, "b": [2, 3]}').hexdigest()[:8]
    assert files.name_digest({"b": [2, 3], "a": 1}, 8) == expected


def test_file_set_digest_depends_on_names_and_contents(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")

    def digest(names):
        return files.file_set_digest(((n, tmp_path / n) for n in names), b"d\0").hexdigest()

    before = digest(["a.py", "b.py"])
    assert digest(["a.py", "b.py"]) == before
    assert digest(["b.py", "a.py"]) != before  # the caller's order is the set's order
    (tmp_path / "b.py").write_text("y = 3\n")
    assert digest(["a.py", "b.py"]) != before


# -- atomic writes --------------------------------------------------------------------------------
def test_atomic_write_leaves_the_old_file_when_the_writer_fails(tmp_path):
    target = tmp_path / "file.bin"
    files.atomic_write(target, lambda stream: stream.write(b"old"))

    def crash(stream):
        stream.write(b"half")
        raise RuntimeError("killed mid-write")

    with pytest.raises(RuntimeError, match="killed"):
        files.atomic_write(target, crash)
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["file.bin"]


def test_writing_replaces_a_symlink_instead_of_writing_through_it(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / "table.md"
    link.symlink_to(victim)
    files.atomic_write(link, lambda stream: stream.write(b"table"))
    assert victim.read_text() == "precious"
    assert not link.is_symlink() and link.read_text() == "table"


def test_write_json_is_indented_sorted_and_ends_in_a_newline(tmp_path):
    files.write_json(tmp_path / "a.json", {"b": 1, "a": [1]})
    assert (tmp_path / "a.json").read_text() == '{\n  "a": [\n    1\n  ],\n  "b": 1\n}\n'


# -- directory claims -----------------------------------------------------------------------------
def test_a_claim_is_written_once_and_read_back(tmp_path):
    where = tmp_path / "out" / "deep"
    assert files.read_marker(tmp_path, "mark.json") is None
    assert files.claim_directory(where, "mark.json", {"command": "plot"}) == where
    files.claim_directory(where, "mark.json", {"command": "other"})  # the first claim stays
    assert files.read_marker(where, "mark.json") == {"command": "plot"}
    assert [p.name for p in where.iterdir()] == ["mark.json"]


@pytest.mark.parametrize("kind", ["symlink", "list", "garbage", "large"])
def test_a_marker_that_cannot_be_trusted_is_refused(tmp_path, kind):
    marker = tmp_path / "mark.json"
    if kind == "symlink":
        (tmp_path / "elsewhere.json").write_text('{"command": "plot"}')
        marker.symlink_to(tmp_path / "elsewhere.json")
    else:
        text = {"list": "[1]", "garbage": "{", "large": " " * 5000 + "{}"}[kind]
        marker.write_text(text)
    with pytest.raises(ValueError, match=r"mark\.json"):
        files.read_marker(tmp_path, "mark.json")
