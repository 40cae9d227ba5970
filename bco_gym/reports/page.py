"""``index.html``: a report.md as one self-contained page to open in a browser.

The reports (:mod:`~bco_gym.reports.report` of ``bco-gym demo``,
:mod:`~bco_gym.reports.bench_report` of ``bco-gym bench``) are written as markdown with
their PNG figures beside them. :func:`write_page` renders that markdown to ``index.html``
beside it, the same content in the same order:

* the markdown is rendered by markdown-it-py (CommonMark with GitHub's tables), a small
  pure-Python library, rather than by a parser of our own;
* every heading gets GitHub's anchor id, so the links of the report's table of contents
  and of its headline table work in the page as on GitHub;
* every figure is inlined as a ``data:image/png;base64`` URI: the page is one file, and
  nothing is fetched from the network (no script, no font, no style sheet: the style is
  inline).

The markdown side has the pieces both views share: :func:`figure_lines` (a figure
and, under it, the sentence saying what to read in it), :func:`contents_lines` (the
table of contents of the ``##`` sections), and the escaping of user text: labels, suite
titles, descriptions, purposes and agents' error messages go through :func:`md_text`
(one line, every character that could start a link, an image, HTML, emphasis or code
escaped) or :func:`code_span` before they reach the markdown, so they show as text.

The page inlines only the figures the report wrote: an image whose source is a plain
file name of a PNG beside the report. Any other image (a URL, an absolute path, a path
out of the directory) is shown as its text, never fetched, never read and never fatal.
"""

from __future__ import annotations

import base64
import html
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bco_gym.io import write_text

#: The page's name beside report.md.
PAGE_NAME = "index.html"

STYLE = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f;
       max-width: 1100px; margin: 0 auto; padding: 1.5rem 2rem 4rem; }
h1 { font-size: 1.8rem; margin-bottom: 0.3rem; }
h2 { border-bottom: 1px solid #d0d7de; padding-bottom: 0.2rem; margin-top: 2.2rem; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.86rem; display: block;
        overflow-x: auto; }
th, td { border: 1px solid #d0d7de; padding: 0.25rem 0.5rem; text-align: left;
         vertical-align: top; }
th { background: #f6f8fa; }
tr:nth-child(2n) td { background: #fafbfc; }
img { max-width: 100%; height: auto; display: block; margin: 0.6rem 0 0.2rem; }
code { background: #f3f4f6; padding: 0.05rem 0.3rem; border-radius: 3px; font-size: 0.9em; }
pre code { display: block; padding: 0.6rem; overflow-x: auto; }
p > em:only-child { color: #57606a; }
a { color: #0969da; text-decoration: none; } a:hover { text-decoration: underline; }
"""


# -- the markdown side ----------------------------------------------------------------------------
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def sanitize_text(text: str) -> str:
    """``text`` with every control character (ESC included) shown as ``\\xNN``: no
    terminal escape sequence survives into a table or a message."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", str(text))


class Markdown(str):
    """Text that is markdown already (a link, a code span, bold numbers): the tables of
    :func:`~bco_gym.reports.summary.render_markdown` take it as it is, where they escape
    any other cell (:func:`md_text`)."""


_ALWAYS = re.compile(r"([\\`*#~$])")
_LINK = re.compile(r"\]\s*[(\[:]|\[\s*\]")
_TAG = re.compile(r"<(?=[A-Za-z/!?])")
_ENTITY = re.compile(r"&(?=#?\w+;)")
_LOOSE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_BLOCK_START = re.compile(r"^(?:>|[-+=](?=[\s\-=]|$)|\d{1,9}(?=[.)](?:\s|$)))")


def md_text(text: object, *, in_table: bool = False) -> str:
    """``text`` (user text: a label, a title, an error message) as markdown that shows it
    as it is: on one line (control characters shown as ``\\xNN``, whitespace runs as one
    space); ``\\ ` * # ~ $`` escaped (``$`` so that a renderer with maths, GitHub's,
    does not read ``$...$`` as a formula); ``[`` and ``]`` escaped where they could make a link
    or an image (``](``, ``][``, ``]:``, ``[]``); ``<`` before a tag or an autolink, an
    entity's ``&``, an underscore that could open emphasis, and (``in_table`` False: where
    the text may start a block) a leading list, quote or heading marker escaped. Ordinary
    labels (``fkm[c=2]``, ``bbcg (tuned, c=100)``) are left as they are."""
    shown = sanitize_text(" ".join(str(text).split()))
    shown = _ALWAYS.sub(r"\\\1", shown)
    if _LINK.search(shown):
        shown = shown.replace("[", "\\[").replace("]", "\\]")
    shown = _TAG.sub("\\\\<", shown)
    shown = _ENTITY.sub("\\\\&", shown)
    shown = _LOOSE_UNDERSCORE.sub("\\\\_", shown)
    return shown if in_table else _BLOCK_START.sub(_escape_marker, shown)


def _escape_marker(found: re.Match[str]) -> str:
    """A leading list, quote or setext marker escaped (an ordered list's at its dot)."""
    marker = found.group()
    return marker + "\\" if marker[0].isdigit() else "\\" + marker


def code_span(text: object) -> Markdown:
    """``text`` as an inline code span whatever backticks it holds (a fence longer than
    its longest run of them), on one line."""
    shown = sanitize_text(" ".join(str(text).split()))
    longest = max((len(run) for run in re.findall(r"`+", shown)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") or not shown.strip() else ""
    return Markdown(f"{fence}{pad}{shown}{pad}{fence}")


def figure_lines(name: str, caption: str, reading: str) -> list[str]:
    """A figure of the report (``name`` beside it, ``caption`` its alt text) and, under
    it, in italics, the one sentence ``reading`` that says what to read in it."""
    reading = reading.strip()
    if not reading:
        raise ValueError(f"figure {name!r} needs a sentence saying what to read in it")
    alt = re.sub(r"(?<!\\)([\[\]])", r"\\\1", md_text(caption))  # no bracket closes it
    return [f"![{alt}]({name})", "", f"*{reading}*", ""]


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading's text: lower case, punctuation dropped, spaces to "-"."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def contents_lines(lines: Sequence[str], title: str = "Contents") -> list[str]:
    """A ``## title`` section listing the ``##`` sections of ``lines`` as links."""
    items = []
    for line in lines:
        if line.startswith("## "):
            heading = line[3:].strip()
            items.append(f"- [{heading}](#{anchor(heading)})")
    if not items:
        return []
    return [f"## {title}", "", *items, ""]


def untitled(paragraph: str, title: str = "How to read: ") -> str:
    """``paragraph`` without its leading ``title`` (it goes under a heading of that name),
    its first letter capitalised."""
    text = paragraph.removeprefix(title)
    return text[:1].upper() + text[1:]


# -- the page -------------------------------------------------------------------------------------
def render_page(markdown: str, directory: str | os.PathLike, title: str | None = None) -> str:
    """The self-contained HTML of ``markdown`` whose figures are files of ``directory``
    (module docstring). ValueError naming a figure that is missing or not beside it."""
    from markdown_it import MarkdownIt

    directory = Path(directory)
    parser = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = parser.parse(markdown)
    seen: dict[str, int] = {}
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            text = tokens[index + 1].content
            slug = anchor(text)
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            token.attrSet("id", slug if count == 0 else f"{slug}-{count}")
            if title is None and token.tag == "h1":
                title = text
        if token.children:
            token.children = [_inlined(child, directory) for child in token.children]
    body = parser.renderer.render(tokens, parser.options, {})
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{html.escape(title or 'bco_gym report')}</title>",
            f"<style>{STYLE}</style>",
            "</head>",
            "<body>",
            body,
            "</body>",
            "</html>",
            "",
        ]
    )


#: A figure the report wrote: a plain PNG file name (no directory, no scheme).
FIGURE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\.png")


def _inlined(token: Any, directory: Path) -> Any:
    """An image token of a figure beside the report with its PNG inlined; any other
    image (a URL, an absolute path, a path out of the directory, not a PNG) as its text:
    never fetched, never read."""
    if token.type != "image":
        return token
    source = str(token.attrGet("src") or "")
    if FIGURE_NAME.fullmatch(source):
        token.attrSet("src", _data_uri(directory, source))
        return token
    from markdown_it.token import Token

    text = Token("text", "", 0)
    text.content = f"![{token.content}]({source})"
    return text


def _data_uri(directory: Path, source: str) -> str:
    """The PNG ``source`` (a plain file name, :data:`FIGURE_NAME`) of ``directory`` as a
    data URI; ValueError when it is missing or not a regular file (the report's own
    figure: a bug, said)."""
    path = directory / source
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise ValueError(f"figure {source!r} is not a regular file beside the report")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ValueError(f"figure {source!r} of the report cannot be read: {error}") from None
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def write_page(report: str | os.PathLike, out: str | os.PathLike | None = None) -> Path:
    """Render the markdown file ``report`` to ``out`` (default ``index.html`` beside it),
    its figures read from the report's directory; returns the page's path."""
    report = Path(report)
    out = report.with_name(PAGE_NAME) if out is None else Path(out)
    text = render_page(report.read_text(encoding="utf-8"), report.parent)
    write_text(out, text)  # atomically, never through a link
    return out
