"""The README is the front door: at most 300 lines, and every page, figure and file it
links to exists (the long sections live on docs pages, each in the site's toctree)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_at_most_300_lines():
    assert len(README.splitlines()) <= 300


def test_every_local_link_of_the_readme_exists():
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [link for link in links if not re.match(r"^[a-z]+:", link)]
    assert local, "the README links to its docs pages"
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, f"the README links to missing files: {missing}"


def test_the_docs_pages_it_sends_readers_to_are_in_the_site():
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    pages = set(re.findall(r"\]\(docs/([a-z_]+)\.md", README))
    assert {"usage", "results", "scale", "performance", "benchmark", "your_own_agent"} <= pages
    assert "api" in pages
    toctree = "\n".join(re.findall(r"```\{toctree\}(.*?)```", index, flags=re.S))
    assert all(re.search(rf"^{page}$", toctree, flags=re.M) for page in pages), pages


def test_the_quick_start_is_the_two_commands():
    start = README.index("## Quick start")
    commands = re.findall(r"^make (\w+)", README[start : README.index("\n## ", start + 1)], re.M)
    assert commands == ["demo", "test"]
