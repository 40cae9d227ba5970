"""The code an agent's results depend on, as one digest: what says a stored cell is stale.

:func:`agent_code` takes an agent's class or factory and returns its
:class:`AgentCode`: a digest of every file of code its results can depend on, or, where
no such digest can be taken, why not (the sweeps then never reuse its stored cells and
say so: :func:`~bco_gym.sweeps.sweep.run_cells`).

What the digest covers, for an agent from outside bco_gym:

* its own package: every source file of the top-level package that defines it (all of
  ``mypkg/`` for ``mypkg.agents.mine:Mine``, helpers and subpackages included), or the
  file itself for a top-level module or a script;
* the code it imports from outside the standard library and the installed packages: the
  ``import`` statements of those files are read (without running them) and every module
  they name that lives in a plain directory (a sibling ``helpers.py``, a package under
  development) is covered the same way, transitively; modules installed in
  site-packages are covered by their distribution's version instead;
* bco_gym's own result code (:func:`bco_gym.provenance.result_code_digest`: the agent runs on its
  engine, and may subclass its agents), and the version of the distribution providing the
  agent, when it is installed;
* for a module imported from a zip archive, the whole archive file.

Covering the whole top-level package rather than following only the imports of the
defining module is the safer of the two readings: an edit anywhere in the package (a
helper imported inside a function, or through ``importlib``, which no reading of the
``import`` statements finds) makes the agent's cells stale; the price is that an edit to
an unrelated module of the same package recomputes them too. The imports are followed
only to reach code outside the package.

No digest is taken, and the reason is given, for code that has no file to digest: a
class or function defined in ``python -c``, an interactive session or a notebook; a
class made with ``type()`` (its import path does not lead back to it: all of them named
``T`` would share the identity ``abc:T``); a method compiled from a string; a callable
object (a ``functools.partial``, an instance with ``__call__``), whose state is no code.

The library's own agents keep the digest they have always had: the source of the module
defining the agent and the library's result code (which covers every module of
``agents/``, ``engine/``, ... already), so the identities and digests of the shipped
reference archive's cells are unchanged.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import inspect
import os
import site
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bco_gym.io import file_set_digest

#: The files of code read in a package (sources and compiled extensions).
CODE_SUFFIXES = (".py", ".pyx", ".pxd", ".so", ".pyd")
#: More files than this in what an agent's digest would cover: no digest (a package that
#: large is not an agent's own; say so rather than hash a monorepo at every lookup).
MAX_FILES = 5_000


@dataclass(frozen=True)
class AgentCode:
    """An agent's code digest (16 hex digits) and the files it covers, or None and the
    reason none can be taken."""

    digest: str | None
    reason: str | None = None
    files: tuple[str, ...] = ()


def agent_code(factory: Any, version: str | None = None) -> AgentCode:
    """The :class:`AgentCode` of an agent class or factory (module docstring); ``version``
    is the version of the installed distribution providing it, or None.

    The files of a module are cached: a later call reads them again only when one of
    them, or a directory holding them, changed (its modification time or size)."""
    name = str(getattr(factory, "__module__", None) or type(factory).__module__ or "")
    if name.split(".", 1)[0] == "bco_gym":
        return _library_agent(name, version)
    reason = _no_source_of_its_own(factory) or _compiled_from_a_string(factory)
    if reason is not None:
        return AgentCode(None, reason)
    cached = _CACHE.get((name, version))
    if cached is not None and cached[0] == _signature(cached[1].files):
        return cached[1]
    found = _module_code(name, version)
    if found.digest is not None:
        _CACHE[(name, version)] = (_signature(found.files), found)
    return found


_CACHE: dict[tuple[str, str | None], tuple[tuple[Any, ...], AgentCode]] = {}


def _signature(files: tuple[str, ...]) -> tuple[Any, ...]:
    """Modification time and size of ``files`` and of the directories holding them."""
    found = []
    for path in (*files, *sorted({os.path.dirname(path) for path in files})):
        try:
            status = os.stat(path)
        except OSError:
            return (None,)
        found.append((path, status.st_mtime_ns, status.st_size))
    return tuple(found)


def _module_code(name: str, version: str | None) -> AgentCode:
    """The digest of the code of the module ``name`` (outside bco_gym): its unit, the
    local code it imports, the library's result code and ``version``."""
    from bco_gym.provenance import result_code_digest as library_code

    found = _unit_of_module(sys.modules.get(name), name)
    if isinstance(found, str):
        return AgentCode(None, found)
    files = _closure(found)
    if isinstance(files, str):
        return AgentCode(None, files)
    # each file by the name it is imported under: a moved project keeps its digest
    named = ((_label(path), path) for path in files)
    digest = file_set_digest(named, b"bco_gym-agent/2\0", separator=b"\0")
    digest.update(f"version:{version or ''}\0bco_gym-code:{library_code()}".encode())
    return AgentCode(digest.hexdigest()[:16], None, tuple(files))


# -- the library's own agents ------------------------------------------------------------------
def _library_agent(name: str, version: str | None) -> AgentCode:
    """The module's source and the library's result code (its digest before this module
    existed, kept so that stored cells of the built-ins stay valid)."""
    from bco_gym.provenance import result_code_digest as library_code

    module = sys.modules.get(name)
    try:
        path = inspect.getsourcefile(module) if module is not None else None
    except TypeError:
        path = None
    if path is None or not os.path.isfile(path):
        return AgentCode(None, f"module {name!r} has no source file")
    body = Path(path).read_bytes() + b"\0" + ("bco_gym-code:" + library_code()).encode()
    return AgentCode(hashlib.sha256(body).hexdigest()[:16], None, (path,))


# -- what has no source of its own ---------------------------------------------------------------
def _no_source_of_its_own(factory: Any) -> str | None:
    """Why ``factory``'s code is not in the file of its module, or None when it is."""
    if not isinstance(factory, type) and not inspect.isfunction(factory):
        return (
            f"it is a callable object ({type(factory).__module__}.{type(factory).__qualname__}),"
            " whose state is no code that can be digested; give a class or a function"
        )
    module_name = str(factory.__module__)
    qualname = str(getattr(factory, "__qualname__", ""))
    if "<locals>" not in qualname and _resolved(module_name, qualname) is not factory:
        return (
            f"its import path {module_name}:{qualname} does not lead back to it (a class "
            "made with type(), or renamed): there is no source of its own to digest"
        )
    return None


def _resolved(module_name: str, qualname: str) -> Any:
    target: Any = sys.modules.get(module_name)
    for part in qualname.split("."):
        target = getattr(target, part, None)
    return target


#: Methods a dataclass writes from its fields (compiled from a string by ``dataclasses``).
DATACLASS_METHODS = frozenset(
    {"__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"}
    | {"__lt__", "__le__", "__gt__", "__ge__", "__getstate__", "__setstate__"}
)


def _compiled_from_a_string(factory: Any) -> str | None:
    """Why one of ``factory``'s own functions was compiled from a string rather than a
    file (``exec``; a dataclass's generated methods excepted: its fields are in its
    source), or None."""
    dataclass = hasattr(factory, "__dataclass_fields__")
    for name, function in _own_functions(factory):
        source = function.__code__.co_filename
        if source.startswith("<") and not (dataclass and name in DATACLASS_METHODS):
            return (
                f"its {'method ' if isinstance(factory, type) else ''}{name} was compiled "
                f"from {source!r}, not from a file"
            )
    return None


def _own_functions(factory: Any) -> list[tuple[str, Any]]:
    if inspect.isfunction(factory):
        return [(factory.__qualname__, factory)]
    found = []
    for name, value in vars(factory).items():
        for candidate in (value, getattr(value, "__func__", None), getattr(value, "fget", None)):
            if inspect.isfunction(candidate):
                found.append((name, candidate))
                break
    return found


# -- the files covered ---------------------------------------------------------------------------
def _unit_of_module(module: Any, name: str) -> list[str] | str:
    """The files of the unit ``module`` belongs to (its top-level package, or itself),
    or why there are none."""
    if module is None:
        return f"its module {name!r} is not imported"
    loader = getattr(module, "__loader__", None)
    archive = getattr(loader, "archive", None)  # zipimport.zipimporter
    if isinstance(archive, str):
        return [archive] if os.path.isfile(archive) else f"its zip archive {archive!r} is gone"
    path = getattr(module, "__file__", None)
    if not path:
        where = "python -c, an interactive session or a notebook"
        return (
            f"it is defined in {where} (module {name!r} has no source file)"
            if name == "__main__"
            else f"its module {name!r} has no source file"
        )
    if not os.path.isfile(path):
        return f"its module's file {path!r} cannot be read"
    top = sys.modules.get(name.split(".", 1)[0]) if name != "__main__" else None
    return _unit_files(top, path)


def _unit_files(top: Any, path: str) -> list[str]:
    """Every code file of the package ``top`` (all its directories), or ``[path]``."""
    directories = list(getattr(top, "__path__", None) or [])
    if not directories:
        return [os.path.realpath(path)]
    files = set()
    for directory in directories:
        for root, subdirectories, names in os.walk(directory):
            subdirectories[:] = sorted(
                d for d in subdirectories if not d.startswith((".", "__pycache__"))
            )
            files.update(
                os.path.realpath(os.path.join(root, name))
                for name in names
                if name.endswith(CODE_SUFFIXES)
            )
    return sorted(files)


def _closure(files: list[str]) -> list[str] | str:
    """``files`` and, transitively, the units of the local modules their sources import."""
    covered = set(files)
    queue = [path for path in files if path.endswith(".py")]
    seen_names: set[str] = set()
    while queue:
        for top in _imported_tops(queue.pop()):
            if top in seen_names or top in sys.builtin_module_names or top == "bco_gym":
                continue
            seen_names.add(top)
            unit = _local_unit(top)
            for path in unit:
                if path not in covered:
                    covered.add(path)
                    if path.endswith(".py"):
                        queue.append(path)
        if len(covered) > MAX_FILES:
            return (
                f"it would cover more than {MAX_FILES:,} files of code (its package and the "
                "local code it imports); too large to digest"
            )
    return sorted(covered)


def _imported_tops(path: str) -> set[str]:
    """The top-level names of the absolute imports of ``path`` (relative ones stay in
    its package, which is covered already)."""
    try:
        tree = ast.parse(Path(path).read_bytes(), filename=path)
    except (SyntaxError, ValueError, OSError):
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".", 1)[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".", 1)[0])
    return found


def _local_unit(top: str) -> list[str]:
    """The files of the top-level module ``top`` when it lives outside the standard
    library and the installed packages (a plain directory), else none."""
    module = sys.modules.get(top)
    origin = getattr(module, "__file__", None) if module is not None else None
    if module is None:
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            return []
        origin = spec.origin if spec is not None else None
        directories = list(spec.submodule_search_locations or []) if spec is not None else []
    else:
        directories = list(getattr(module, "__path__", None) or [])
    if not origin and not directories:
        return []
    anchor = origin or directories[0]
    if not os.path.exists(anchor) or _installed(anchor):
        return []
    if directories:
        return _unit_files(type("Unit", (), {"__path__": directories}), anchor)
    return [os.path.realpath(anchor)] if anchor.endswith(CODE_SUFFIXES) else []


def _installed(path: str) -> bool:
    """Whether ``path`` is in the standard library or an installed-packages directory."""
    real = os.path.realpath(path)
    return any(real == root or real.startswith(root + os.sep) for root in _installed_roots())


_ROOTS: tuple[str, ...] | None = None


def _installed_roots() -> tuple[str, ...]:
    global _ROOTS
    if _ROOTS is None:
        paths = sysconfig.get_paths()
        roots = [paths.get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")]
        roots += list(getattr(site, "getsitepackages", lambda: [])())
        roots.append(site.getusersitepackages() if hasattr(site, "getusersitepackages") else None)
        roots += [entry for entry in sys.path if entry.endswith(("site-packages", "dist-packages"))]
        _ROOTS = tuple(sorted({os.path.realpath(root) for root in roots if root}))
    return _ROOTS


def _label(path: str) -> str:
    """``path`` relative to the entry of ``sys.path`` it is imported from (the file's
    name when none holds it)."""
    for entry in sorted((os.path.realpath(e or ".") for e in sys.path), key=len, reverse=True):
        if path.startswith(entry + os.sep):
            return os.path.relpath(path, entry)
    return os.path.basename(path)


__all__ = ["AgentCode", "agent_code"]
