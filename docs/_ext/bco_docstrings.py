"""Docstring conventions of bco_gym that Sphinx needs told about.

* Env docstrings follow Gymnasium's template with ``## Heading`` lines; they become
  rubrics (``.. rubric:: Heading``) instead of stray paragraphs.
* References to types of other projects (Python's standard library, NumPy, Gymnasium,
  stable-baselines3) cannot be resolved: the build machine cannot fetch their
  intersphinx inventories. They are ignored by name, listed below, and nothing else is:
  every reference to a bco_gym name must resolve (``nitpicky = True``).
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

#: Builtin and standard-library names that appear in signatures and docstrings.
STANDARD = (
    "int float str bool bytes complex object type None dict list tuple set frozenset "
    "Exception ValueError TypeError RuntimeError NotImplementedError ImportError "
    "UserWarning KeyError callable"
).split()
#: Module prefixes of other projects; a reference under one of them is not ours to resolve.
EXTERNAL_PREFIXES = (
    "numpy",
    "np",
    "gymnasium",
    "gym",
    "stable_baselines3",
    "torch",
    "scipy",
    "sparse",  # scipy.sparse, as modules that load SciPy where used import it for type hints
    "matplotlib",
    "ray",
    "typing",
    "collections",
    "concurrent",
    "pathlib",
    "os",
    "io",
    "types",
    "dataclasses",
    "abc",
    "enum",
    "contextlib",
    "numbers",
    "random",
    "math",
    "functools",
    "itertools",
    "json",
    "argparse",
    "threading",
    "multiprocessing",
    "logging",
    "subprocess",
    "tempfile",
    "shutil",
    "hashlib",
    "warnings",
    "inspect",
    "datetime",
    "time",
    "csv",
    "fractions",
    "decimal",
    "queue",
    "weakref",
    "operator",
)
#: Names the standard library exports unqualified in annotations.
TYPING = "Any Callable Iterable Iterator Mapping Sequence ClassVar Path Future ModuleType".split()


#: Attributes every Gymnasium env or wrapper has, referred to from our env docstrings.
GYMNASIUM_ATTRIBUTES = (
    "env np_random np_random_seed observation_space action_space unwrapped".split()
)
#: Type variables of Gymnasium's generic classes, as they appear in signatures.
GYMNASIUM_TYPEVARS = "ActType ObsType WrapperActType WrapperObsType RenderFrame".split()


def nitpick_ignores() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(nitpick_ignore, nitpick_ignore_regex) for the external names above."""
    exact = [
        (role, name) for role in ("py:class", "py:obj", "py:exc") for name in STANDARD + TYPING
    ]
    exact += [("py:attr", name) for name in GYMNASIUM_ATTRIBUTES]
    exact += [("py:class", name) for name in GYMNASIUM_TYPEVARS]
    prefixes = "|".join(re.escape(prefix) for prefix in EXTERNAL_PREFIXES)
    regex = [(r"py:(class|obj|exc|func|meth|attr|mod|data)", rf"({prefixes})(\..+)?")]
    return exact, regex


LIST_ITEM = re.compile(r"^\s*([*+-]|\d+\.|#\.|\(?[a-z0-9]\)|:[^:]+:|\.\.|>>>)(\s|$)")


def plain_text(lines: list[str]) -> list[str]:
    """The project's plain-text conventions made valid reStructuredText.

    Docstrings here write mathematics as plain text: ``|x|`` is an absolute value (not a
    substitution), ``*shape`` unpacks (not emphasis), and a displayed formula is a more
    indented block, sometimes right under its sentence. So: a block indented deeper
    than the paragraph before it becomes a literal (preformatted) block, as it reads in
    the source; a bullet list right under a sentence gets the blank line RST needs; and
    ``|`` and unpaired ``*``/``**`` are escaped outside inline literals. Directives,
    field and bullet lists, literal blocks (after ``::``) and doctests are left alone.
    """
    out: list[str] = []
    literal_indent: int | None = None
    last = ""  # the last non-blank line outside literal blocks
    in_doctest = in_table = False
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if literal_indent is not None:
            if not line.strip() or indent > literal_indent:
                out.append(line)
                continue
            literal_indent = None
            if out and out[-1].strip():
                out.append("")
        in_doctest = bool(line.strip()) and (in_doctest or line.lstrip().startswith(">>>"))
        in_table = in_table and bool(line.strip())
        if in_doctest or not line.strip():
            out.append(line)
            continue
        in_table = in_table or bool(TABLE_BORDER.match(line))
        if in_table:
            out.append(escape_table_row(line))
            continue
        last_indent = len(last) - len(last.lstrip())
        if last and indent > last_indent and not LIST_ITEM.match(last):
            if out and out[-1].strip():
                out.append("")
            out.extend([" " * last_indent + "::", "", line])
            literal_indent = last_indent
            continue
        starts_list = re.match(r"^\s*[*-]\s", line) and re.search(r"[.:]\s*$", last)
        if out and out[-1].strip() and indent == last_indent and starts_list:
            if not LIST_ITEM.match(last):
                out.append("")
        out.append(escape_inline(line))
        last = line
        if line.rstrip().endswith("::"):
            literal_indent = indent
    return out


def escape_table_row(line: str) -> str:
    """A simple-table row with ``|`` escaped, each cell still starting in its column.

    Every inserted backslash is taken back from the next run of two or more spaces (the
    gap before the next cell), so the columns stay where the table's borders put them.
    """
    pieces = re.split(r"( {2,})", line)
    shift = 0
    for index, piece in enumerate(pieces):
        if index % 2 == 0:
            escaped = escape_inline(piece)
            shift += len(escaped) - len(piece)
            pieces[index] = escaped
        elif shift:
            taken = min(shift, len(piece) - 1)
            pieces[index] = piece[taken:]
            shift -= taken
    return "".join(pieces)


def escape_inline(line: str) -> str:
    """Escape ``|`` and unpaired ``*``/``**`` outside ````literals```` and roles."""
    if line.lstrip().startswith(">>>") or line.lstrip().startswith(".. "):
        return line
    pieces = re.split(r"(``.+?``|:[a-z:]+:`[^`]+`|`[^`]+`_?)", line)
    for index in range(0, len(pieces), 2):
        text = pieces[index].replace("|", "\\|")
        if text.count("**") % 2 == 1 or ("**" in text and not re.search(r"\*\*\S.*?\S\*\*", text)):
            text = text.replace("**", "\\*\\*")
        if re.search(r"(^|[\s(\[{,])\*[A-Za-z_(]", text) and not re.search(
            r"(^|\s)\*\S[^*]*\S\*(\s|$|[.,;:)])", text
        ):
            text = re.sub(r"(^|[\s(\[{,])\*(?=[A-Za-z_(])", r"\1\\*", text)
        pieces[index] = text
    return "".join(pieces)


def process_docstring(
    app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """Gymnasium ``## Heading`` lines become rubrics; plain-text maths becomes valid RST."""
    for index, line in enumerate(lines):
        match = re.match(r"^(\s*)##\s+(.+?)\s*$", line)
        if match:
            lines[index] = f"{match.group(1)}.. rubric:: {match.group(2)}"
    lines[:] = plain_text(lines)
    if inspect.isclass(obj):
        lines[:] = unindexed_properties(obj, lines)


def unindexed_properties(cls: type, lines: list[str]) -> list[str]:
    """An ``Attributes:`` entry naming a property of the class (documented as a member
    too, e.g. ``Agent.stats``) is shown without a second index entry."""
    out = []
    for line in lines:
        out.append(line)
        match = re.match(r"^(\s*)\.\. attribute:: (\w+)\s*$", line)
        if match and isinstance(inspect.getattr_static(cls, match.group(2), None), property):
            out.append(f"{match.group(1)}   :no-index:")
    return out


def clean(text: str) -> str:
    """:func:`plain_text` on a whole docstring (the generated pages include some raw)."""
    return "\n".join(plain_text(text.splitlines()))


def napoleon_except_attributes(
    app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """Napoleon's Google-style parsing, except for properties and attributes.

    Napoleon reads an attribute docstring's first line ``text: more`` as ``type:
    description``; this project's property docstrings are sentences (``Inner radius:
    r > 0 with ...``), not typed, so they are left as written.
    """
    if what in ("attribute", "property", "data"):
        return
    from sphinx.ext.napoleon import _process_docstring

    _process_docstring(app, what, name, obj, options, lines)


TABLE_BORDER = re.compile(r"^\s*=+(\s+=+)+\s*$")
MISSING = object()


def lookup(target: str) -> Any:
    """The object a dotted ``bco_gym...`` path names (importing as needed), or MISSING."""
    parts = target.split(".")
    for split in range(len(parts), 0, -1):
        try:
            value: Any = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            value = inspect.getattr_static(value, attribute, MISSING)
            if value is MISSING:
                return MISSING
        return value
    return MISSING


def canonical_of(value: Any) -> str | None:
    """``module.qualname`` where a class, function, method or property is defined."""
    if isinstance(value, property):
        value = value.fget
    if isinstance(value, staticmethod | classmethod):
        value = value.__func__
    if inspect.ismodule(value):
        return value.__name__
    module, name = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if module and name and (inspect.isclass(value) or inspect.isfunction(value)):
        return f"{module}.{name}"
    return None


def candidates(node: Any) -> list[str]:
    """Full paths a reference may mean: as written, in its class, in its module, then in
    each enclosing package (``fit_exponents`` from a module of ``bco_gym.experiment``
    names the package's re-export). A target broken over two docstring lines is joined."""
    target = re.sub(r"\s+", "", node.get("reftarget", "")).lstrip("~.")
    if target.startswith("bco_gym."):
        return [target]
    module, owner = node.get("py:module") or "", node.get("py:class") or ""
    if not module.startswith("bco_gym"):
        return []
    found = [f"{module}.{owner}.{target}"] if owner else []
    parts = module.split(".")
    return found + [".".join([*parts[:end], target]) for end in range(len(parts), 0, -1)]


def resolve_alias(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """Resolve a reference to a bco_gym object by where it is defined.

    Objects are documented once, in their defining module; a reference through a
    package's re-export (``bco_gym.sets.Simplex``) or to a method a class inherits
    (``contains`` from a subclass) is resolved to that definition. A reference to a
    private object or to undocumented module data that exists renders as plain text
    (private names are deliberately not in the reference); anything else that does not
    exist stays a warning.
    """
    if node.get("refdomain") != "py":
        return None
    domain = env.get_domain("py")
    from sphinx.util.nodes import make_refnode

    for candidate in candidates(node):
        value = lookup(candidate)
        if value is MISSING:
            continue
        canonical = canonical_of(value)
        if canonical is None and "." in candidate:  # an attribute: its owner's definition
            owner = canonical_of(lookup(candidate.rsplit(".", 1)[0]))
            canonical = f"{owner}.{candidate.rsplit('.', 1)[1]}" if owner else None
        if canonical in domain.objects:
            entry = domain.objects[canonical]
            return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode)
        private = any(part.startswith("_") for part in candidate.split("."))
        data = not (inspect.isclass(value) or inspect.isfunction(value) or inspect.ismodule(value))
        if private or (data and not isinstance(value, property)):
            return contnode
    return None


def dataclass_factories(
    app: Any,
    what: str,
    name: str,
    obj: Any,
    options: Any,
    signature: str | None,
    return_annotation: str | None,
) -> tuple[str | None, str | None] | None:
    """Dataclass fields with ``default_factory`` show their default as ``<factory>``,
    which Sphinx cannot parse as Python; write it as the field declaration instead."""
    if signature and "<factory>" in signature:
        return signature.replace("<factory>", "field(default_factory=...)"), return_annotation
    return None


def setup(app: Any) -> dict[str, Any]:
    app.connect("autodoc-process-signature", dataclass_factories)
    app.setup_extension("sphinx.ext.napoleon")
    from sphinx.ext.napoleon import _process_docstring

    listeners = app.events.listeners["autodoc-process-docstring"]
    listeners[:] = [entry for entry in listeners if entry.handler is not _process_docstring]
    app.connect("autodoc-process-docstring", napoleon_except_attributes, priority=400)
    app.connect("autodoc-process-docstring", process_docstring, priority=600)
    app.connect("missing-reference", resolve_alias)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
