"""What an agent's class or factory declares about itself, read once by the registry
(:func:`~bco_gym.agents.registry.resolve_agent`): whether it is an agent factory at all,
its import path, name, summary, options, whether its defaults are a theorem's, and the
version of the distribution that installs it."""

from __future__ import annotations

import importlib.metadata
import inspect
from collections.abc import Mapping
from typing import Any

from bco_gym.agents.base import Agent

#: The name an Agent subclass has when it declares none.
DEFAULT_NAME = Agent.name


def check_factory(factory: Any, where: str) -> None:
    if isinstance(factory, type):
        if not issubclass(factory, Agent):
            raise TypeError(
                f"{where}: {factory.__qualname__} is a class but not a subclass of "
                "bco_gym.agents.Agent; an agent is an Agent subclass or a factory "
                "(problem, **kwargs) -> Agent"
            )
        if inspect.isabstract(factory):
            raise TypeError(
                f"{where}: {factory.__qualname__} is abstract (it must implement _reset, "
                "_act and _update)"
            )
        return
    if not callable(factory):
        raise TypeError(
            f"{where}: {factory!r} ({type(factory).__name__}) is not an agent; expected an "
            "Agent subclass or a factory (problem, **kwargs) -> Agent"
        )
    if inspect.isbuiltin(factory) or type(factory).__name__ in ("ufunc", "method-wrapper"):
        name = getattr(factory, "__qualname__", None) or repr(factory)
        module = getattr(factory, "__module__", None) or "builtins"
        raise TypeError(
            f"{where}: {module}.{name} is not an agent: it is a function compiled into "
            f"{module}, not an Agent subclass or a factory (problem, **kwargs) -> Agent"
        )


def theory_defaults(factory: Any) -> bool:
    """Whether ``factory``'s defaults come from a theorem (``THEORY_DEFAULTS``).

    The library's classes say it of themselves, and a class from outside built on the
    protocol (:class:`~bco_gym.agents.Agent`, ``BatchAgent``) inherits the protocol's
    True unless it declares otherwise. A subclass of a built-in agent is credited with
    the built-in's theorem only when it, or a base class from outside, declares
    ``THEORY_DEFAULTS`` itself: one that declares nothing may have changed the
    defaults, so it is labelled "default" and shows its constant, never "theory".
    """
    if not isinstance(factory, type):
        return bool(getattr(factory, "THEORY_DEFAULTS", True))
    if is_library_class(factory):
        return bool(factory.THEORY_DEFAULTS)
    from bco_gym.agents.batch import BatchAgent

    for cls in factory.__mro__:
        if "THEORY_DEFAULTS" in vars(cls) and not is_library_class(cls):
            return bool(vars(cls)["THEORY_DEFAULTS"])
        if is_library_class(cls) and cls not in (Agent, BatchAgent):
            return False  # a built-in reached with no declaration on the way
    return bool(factory.THEORY_DEFAULTS)


def is_library_class(cls: type) -> bool:
    return cls.__module__ == "bco_gym" or cls.__module__.startswith("bco_gym.")


def declared_name(factory: Any) -> str:
    declared = getattr(factory, "name", None)
    if isinstance(declared, str) and declared and declared != DEFAULT_NAME:
        return declared
    return str(getattr(factory, "__qualname__", type(factory).__name__))


def options_of(cls: type) -> tuple[str, ...] | None:
    """OPTIONS if declared, else the keyword parameters of ``__init__`` (None: **kwargs)."""
    declared = tuple(getattr(cls, "OPTIONS", ()))
    if declared:
        return declared
    parameters = list(inspect.signature(cls.__init__).parameters.values())[2:]
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return tuple(p.name for p in parameters if p.kind in kinds)


def import_path_of(factory: Any) -> str:
    module = getattr(factory, "__module__", None) or type(factory).__module__
    qualname = getattr(factory, "__qualname__", None) or type(factory).__qualname__
    return f"{module}:{qualname}"


def first_line(factory: Any) -> str | None:
    doc = inspect.getdoc(factory)
    return doc.strip().splitlines()[0] if doc else None


_PACKAGES: Mapping[str, list[str]] | None = None
#: Each top-level package's distribution version, once read (:func:`distribution_version`).
_VERSIONS: dict[str, str | None] = {}


def distribution_version(factory: Any) -> str | None:
    """The version of the installed distribution whose top-level package holds it (read
    once per process and package: each reading scans the installed distributions)."""
    global _PACKAGES
    module = getattr(factory, "__module__", None) or ""
    top = module.split(".", 1)[0]
    if not top or top == "__main__":
        return None
    if _PACKAGES is None:  # (re)read: the versions read before go with it
        _PACKAGES = importlib.metadata.packages_distributions()
        _VERSIONS.clear()
    if top not in _VERSIONS:
        _VERSIONS[top] = None
        for dist in _PACKAGES.get(top, []):
            try:
                _VERSIONS[top] = importlib.metadata.version(dist)
                break
            except importlib.metadata.PackageNotFoundError:
                continue
    return _VERSIONS[top]
