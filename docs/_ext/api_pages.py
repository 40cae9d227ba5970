"""The API reference: one page per public module of bco_gym, from its docstrings."""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

from page_text import heading


def public_modules() -> list[str]:
    """Every module of bco_gym whose dotted name has no ``_``-prefixed part."""
    import pkgutil

    import bco_gym

    names = ["bco_gym"]
    for info in pkgutil.walk_packages(bco_gym.__path__, "bco_gym."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def api_page(module_name: str) -> str:
    """A module's page: a package shows its docstring and public names (``__all__``), a
    module, or a package without ``__all__``, its members.

    Objects are documented once, in their defining module; a package's re-exports link
    there (``bco_docstrings`` resolves the public spellings).
    """
    module = importlib.import_module(module_name)
    is_package = hasattr(module, "__path__")
    parts = [heading(module_name), f".. automodule:: {module_name}\n"]
    if ">>>" in inspect.getsource(module):  # docstring examples run in their module's namespace
        parts.insert(1, DOCTEST_NAMESPACE.format(module=module_name))
    if not is_package or not hasattr(module, "__all__"):  # a package without __all__: as a module
        members = [name for name in vars(module) if defined_in(module, name)]
        data = documented_data(module_name) & set(vars(module))
        # a package's private data stays out (a module's documented private data is shown)
        members += sorted(n for n in data if not (is_package and n.startswith("_")))
        if members:
            parts[-1] += "   :members: " + ", ".join(members) + "\n"
        return "\n".join(parts)
    exported = [name for name in getattr(module, "__all__", []) if not name.startswith("_")]
    source = inspect.getsource(module)
    defined = [name for name in exported if defined_in(module, name)]
    data = [n for n in exported if re.search(rf"^{re.escape(n)}\s*[:=]", source, re.M)]
    documented = documented_data(module_name)
    others = [n for n in exported if n not in defined and n not in data]
    others += [n for n in data if n not in documented]
    data = [n for n in data if n in documented]
    if others:
        parts.append("Public names (documented where they are defined):\n")
        parts.append("\n".join(f"* {reference(module, name)}" for name in others) + "\n")
    if defined:
        parts[1] += "   :members: " + ", ".join(defined) + "\n"
    parts.extend(f".. autodata:: {module_name}.{name}\n   :no-value:\n" for name in data)
    return "\n".join(parts)


DOCTEST_NAMESPACE = """.. testsetup:: *

   import importlib
   globals().update(vars(importlib.import_module("{module}")))
"""


def documented_data(module_name: str) -> set[str]:
    """Module-level names with a ``#:`` doc comment or a docstring after them."""
    from sphinx.pycode import ModuleAnalyzer

    attributes = ModuleAnalyzer.for_module(module_name).find_attr_docs()
    return {name for (scope, name) in attributes if scope == ""}


def reference(module: Any, name: str) -> str:
    """A cross-reference to a re-exported class, function or module; a literal otherwise."""
    value = getattr(module, name, None)
    if inspect.ismodule(value):
        return f":mod:`{value.__name__}`"
    if inspect.isclass(value) or inspect.isfunction(value):
        return f":py:obj:`{module.__name__}.{name}`"
    return f"``{name}`` (from :mod:`{find_module_of(module, name)}`)"


def find_module_of(package: Any, name: str) -> str:
    """The submodule of ``package`` that assigns ``name`` at top level."""
    for module_name in public_modules():
        if module_name.startswith(package.__name__ + ".") and module_name != package.__name__:
            module = importlib.import_module(module_name)
            if re.search(rf"^{re.escape(name)}\s*[:=]", inspect.getsource(module), re.M):
                return module_name
    return package.__name__


def defined_in(module: Any, name: str) -> bool:
    """Whether ``name`` is a public class or function defined in ``module`` itself."""
    if name.startswith("_"):
        return False
    value = getattr(module, name, None)
    return getattr(value, "__module__", None) == module.__name__ and (
        inspect.isclass(value) or inspect.isfunction(value)
    )
