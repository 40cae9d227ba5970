"""Small text helpers shared by the page generators (RST strings, files)."""

from __future__ import annotations

import importlib
import inspect
import re
import textwrap
from pathlib import Path
from typing import Any


def write_if_changed(path: Path, content: str | bytes) -> None:
    """Write ``content`` unless the file already holds it (keeps Sphinx's cache valid)."""
    data = content.encode() if isinstance(content, str) else content
    if path.exists() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def slug(name: str) -> str:
    """A file name for an id, agent or family name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name)


def heading(title: str, char: str = "=") -> str:
    return f"{title}\n{char * len(title)}\n"


def indent(text: str, prefix: str = "   ") -> str:
    return textwrap.indent(text, prefix, lambda line: bool(line.strip()))


def docstring(obj: Any) -> str:
    """The cleaned docstring, made valid RST by :func:`bco_docstrings.clean`."""
    from bco_docstrings import clean

    return clean(inspect.getdoc(obj) or "")


def first_paragraph(text: str) -> str:
    return text.strip().split("\n\n")[0].replace("\n", " ").strip()


def markdown_sections(text: str) -> dict[str, str]:
    """``## Heading`` sections of a Gymnasium-style docstring: heading -> body."""
    sections: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        match = re.match(r"^##\s+(.+?)\s*$", line)
        if match:
            current = match.group(1)
            sections[current] = ""
        elif current is not None:
            sections[current] += line + "\n"
    return {name: body.strip() for name, body in sections.items()}


def bullet_arguments(text: str) -> dict[str, str]:
    """``* ``name``: text`` bullets (continuation lines indented) as name -> text."""
    arguments: dict[str, str] = {}
    name = None
    for line in text.splitlines():
        match = re.match(r"^\s*\*\s+``(\w+)``:\s*(.*)$", line)
        if match:
            name = match.group(1)
            arguments[name] = match.group(2).strip()
        elif name is not None and line.startswith("  ") and line.strip():
            arguments[name] += " " + line.strip()
        else:
            name = None
    return {key: value.rstrip(",;.") for key, value in arguments.items()}


def qualified(obj: Any) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


def public_path(cls: type, package: str) -> str:
    """``package.Name`` when the package re-exports the class, else its defining path."""
    module = importlib.import_module(package)
    if getattr(module, cls.__name__, None) is cls:
        return f"{package}.{cls.__name__}"
    return qualified(cls)


def table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """An RST list-table."""
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        lines.append(f"   * - {row[0]}")
        lines.extend(f"     - {cell}" for cell in row[1:])
    return "\n".join(lines) + "\n"


def section(title: str, *body: str) -> str:
    """A second-level section of a generated page."""
    return heading(title, "-") + "\n" + "\n\n".join(part for part in body if part) + "\n"
