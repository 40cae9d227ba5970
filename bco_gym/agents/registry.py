"""Every way to name an agent, read by one resolver: :func:`resolve_agent`.

An agent may be given as

* a built-in name (``"bbcg"``, ``"fkm"``, ... the classes of ``bco_gym.agents.AGENTS``);
* a name registered in this process with :func:`register`;
* a name an installed package declares in the entry-point group ``bco_gym.agents``
  (``[project.entry-points."bco_gym.agents"] myagent = "pkg.mod:MyAgent"``), read lazily
  the first time a name is not found among the above;
* an import path ``"package.module:ClassName"`` (or ``"package.module:factory"``);
* an :class:`~bco_gym.agents.base.Agent` subclass, or a factory ``(problem, **kwargs) ->
  Agent``.

:func:`resolve_agent` turns any of these into one frozen :class:`AgentSpec` (its name,
import path, distribution version, factory and declared constants), and every tool of
the library resolves an agent once, where it is entered, and passes the spec down. A
plugin that fails to load is reported with its name and error (:func:`plugin_errors`)
and never breaks the built-ins.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from bco_gym.agents.base import Agent

ENTRY_POINT_GROUP = "bco_gym.agents"
SOURCES = ("builtin", "registered", "entry-point", "import-path", "object")
_DEFAULT_NAME = Agent.name


@dataclasses.dataclass(frozen=True)
class AgentSpec:
    """An agent resolved once: what builds it and what results record about it.

    Attributes:
        name: the label results carry (``RunResult.agent``): the name or import path as
            given, or, for a class or factory, its ``name`` attribute (else its
            qualified name; its import path when that attribute is a built-in agent's
            name and the class comes from outside bco_gym).
        import_path: ``"module:qualname"`` of the class or factory (what a worker
            process imports; a ``__main__`` path cannot be imported there).
        version: the version of the installed distribution providing it (None for the
            built-ins' own package outside an install, or a script).
        factory: the Agent subclass or the callable ``(problem, **kwargs) -> Agent``.
        source: how it was found, one of ``SOURCES``.
        summary: one line saying what it is.
        feedback: "bandit", "full" or "two-point" (the class's, or the factory's
            ``feedback`` attribute; default "bandit"; for a factory without one, the
            class of the agent it builds, once built: :meth:`labelled`).
        scale_param: the keyword of its one free scale constant (``SCALE_PARAM``) or None.
        regret_exponent: a in its O(T^a) regret guarantee, or None.
        theory_defaults: whether its defaults come from a theorem (``THEORY_DEFAULTS``).
        batched: whether it has a batched implementation (a ``BatchAgent`` subclass).
        options: the keywords its constructor accepts (None: not declared, any keyword
            is passed to the factory).
        label_from_agent: a factory declaring no ``name``: the agents it builds name
            the results (:meth:`labelled`), e.g. ``SB3Agent(model, problem, name=...)``.
    """

    name: str
    import_path: str
    version: str | None
    factory: Callable[..., Any]
    source: str
    summary: str | None = None
    feedback: str = "bandit"
    scale_param: str | None = None
    regret_exponent: float | None = None
    theory_defaults: bool = True
    batched: bool = False
    options: tuple[str, ...] | None = None
    label_from_agent: bool = False

    @property
    def constants_free(self) -> bool:
        """Whether its defaults have a free constant from a theorem (labelled "theory")."""
        return self.scale_param is not None and self.theory_defaults

    def build(self, problem: Any, batch_size: int | None = None, **overrides: Any) -> Agent:
        """The agent for ``problem`` (batched with ``batch_size`` S, which needs
        ``batched``), with ``overrides`` checked against ``options``."""
        self.check_overrides(overrides)
        if batch_size is not None and not self.batched:
            raise ValueError(
                f"agent {self.name!r} has no batched form (got batch_size={batch_size}); "
                "run_many plays it as one single agent per seed"
            )
        rows = {} if batch_size is None else {"batch_size": batch_size}
        self._check_call(problem, {**rows, **overrides})
        try:
            agent = self.factory(problem, **rows, **overrides)
        except OverflowError as error:  # a constant so large or small that float64 overflows
            raise ValueError(
                f"agent {self.name!r} with {_shown(overrides)}: its parameters overflow "
                f"float64 ({error}); give a constant nearer the default"
            ) from None
        if not isinstance(agent, Agent):
            raise TypeError(
                f"agent {self.name!r}: the factory {self.import_path} returned "
                f"{type(agent).__name__}, not a bco_gym.agents.Agent"
            )
        try:
            agent.check_parameters()
        except ValueError as error:
            raise ValueError(
                f"agent {self.name!r} with {_shown(overrides)}: {error}; give a constant "
                "nearer the default"
            ) from None
        return agent

    def _check_call(self, problem: Any, keywords: Mapping[str, Any]) -> None:
        """TypeError naming the factory when it cannot be called as factory(problem,
        **keywords) (a function that is not an agent factory, a wrong signature)."""
        if isinstance(self.factory, type):
            return
        try:
            signature = inspect.signature(self.factory)
        except (TypeError, ValueError):  # no signature to read: the call will tell
            return
        try:
            signature.bind(problem, **keywords)
        except TypeError as error:
            given = "".join(f", {key}=..." for key in keywords)
            raise TypeError(
                f"agent {self.name!r}: the factory {self.import_path}{signature} cannot be "
                f"called as factory(problem{given}) ({error}); an agent factory takes the "
                "Problem first, then the agent's keywords"
            ) from None

    def labelled(self, agent: Agent) -> AgentSpec:
        """This spec, named after ``agent`` (one it built) when ``label_from_agent``; a
        factory (not a class) declaring no ``feedback`` or ``regret_exponent`` of its own
        takes them from the agent's class, so that a factory's full-information agent is
        labelled as one and its exponent is drawn, as when its class is given."""
        spec = self
        if not isinstance(self.factory, type):
            declared = {
                "feedback": getattr(self.factory, "feedback", None),
                "regret_exponent": getattr(self.factory, "regret_exponent", None),
            }
            exponent = getattr(type(agent), "regret_exponent", None)
            built = {
                "feedback": str(type(agent).feedback),
                "regret_exponent": None if exponent is None else float(exponent),
            }
            found = {
                k: v for k, v in built.items() if declared[k] is None and v != getattr(self, k)
            }
            spec = dataclasses.replace(self, **found) if found else self
        if not spec.label_from_agent or agent.name == spec.name:
            return spec
        return dataclasses.replace(spec, name=_own_label(str(agent.name), type(agent)))

    def check_overrides(self, overrides: Mapping[str, Any]) -> None:
        """ValueError naming the keywords the agent does not accept."""
        if self.options is None:
            return
        unknown = sorted(set(overrides) - set(self.options))
        if unknown:
            allowed = ", ".join(self.options) or "none"
            raise ValueError(
                f"agent {self.name!r} ({self.import_path}) got unknown keyword(s) "
                f"{', '.join(unknown)}; allowed: {allowed}"
            )

    def describe(self) -> dict[str, Any]:
        """What a result records: name, import path, version, source, feedback and
        regret exponent (JSON), so reports read them without importing the agent."""
        return {
            "name": self.name,
            "import_path": self.import_path,
            "version": self.version,
            "source": self.source,
            "feedback": self.feedback,
            "regret_exponent": self.regret_exponent,
        }


# Names registered in this process: name -> (factory, summary).
_REGISTERED: dict[str, tuple[Callable[..., Any], str | None]] = {}
# Entry points, read once: name -> EntryPoint; load failures: name -> message.
_ENTRY_POINTS: dict[str, importlib.metadata.EntryPoint] | None = None
_PLUGIN_ERRORS: dict[str, str] = {}


def register(
    name: str,
    factory: Callable[..., Any],
    *,
    summary: str | None = None,
    replace: bool = False,
) -> AgentSpec:
    """Make ``name`` an agent name in this process (every tool then accepts it).

    Args:
        name: the new name: a non-empty string without ``":"``, ``","`` or surrounding
            spaces, and no built-in's name in any case.
        factory: an Agent subclass or a callable ``(problem, **kwargs) -> Agent``.
        summary: one line shown by ``bco-gym list``; default the first docstring line.
        replace: allow replacing a name already registered (never a built-in).

    Returns:
        The name's :class:`AgentSpec`.

    Names registered here exist only in this process: a sweep on the process or Ray
    backend needs an import path or an entry point instead.
    """
    from bco_gym.agents import AGENTS

    if (
        not isinstance(name, str)
        or not name.strip()
        or name != name.strip()
        or ":" in name
        or "," in name
    ):
        raise ValueError(
            f"register: name={name!r} must be a non-empty string without ':' (':' marks an "
            "import path 'package.module:ClassName'), ',' (it separates the names of "
            "'--agents A,B') or surrounding spaces"
        )
    _check_factory(factory, f"register({name!r})")
    builtin = {known.casefold(): known for known in AGENTS}.get(name.casefold())
    if builtin is not None:
        raise ValueError(
            f"register: {name!r} is the built-in agent {builtin!r} (names are compared "
            f"ignoring case, so that no report shows two of them) and cannot be replaced; "
            f"built-ins: {', '.join(AGENTS)}"
        )
    if name in _REGISTERED and not replace:
        raise ValueError(
            f"register: an agent named {name!r} is already registered "
            f"({_import_path_of(_REGISTERED[name][0])}); pass replace=True to replace it"
        )
    _REGISTERED[name] = (factory, summary)
    return resolve_agent(name)


def unregister(name: str) -> None:
    """Forget a name given to :func:`register` (KeyError if it was not registered)."""
    if name not in _REGISTERED:
        raise KeyError(f"no agent named {name!r} was registered; registered: {list(_REGISTERED)}")
    del _REGISTERED[name]


def resolve_agent(agent: Any) -> AgentSpec:
    """The :class:`AgentSpec` of a name, import path, Agent subclass, factory or spec.

    ValueError for an unknown name or an unimportable path (listing what is allowed),
    TypeError for an object that is neither an Agent subclass nor a callable.
    """
    if isinstance(agent, AgentSpec):
        return agent
    if isinstance(agent, str):
        return _resolve_string(agent)
    if isinstance(agent, Agent):
        raise TypeError(
            f"resolve_agent needs a name, an import path, an Agent subclass or a factory, "
            f"got an agent instance {agent!r}; pass its class, or use spec_of_instance"
        )
    _check_factory(agent, "resolve_agent")
    spec = _spec(agent, name=_own_label(_declared_name(agent), agent), source="object")
    if isinstance(agent, type) or isinstance(getattr(agent, "name", None), str):
        return spec
    return dataclasses.replace(spec, label_from_agent=True)


#: Built-in agents renamed after results naming them were saved: old name -> (the
#: import paths those results record, the current name). "so-bgd" was the library's own
#: separation-step derivation (issue 19) until Garber & Kretzu's Algorithm 10, read in
#: issue 32, took the paper's name; the derivation is now "fejer-bgd".
RENAMED: dict[str, tuple[tuple[str, ...], str]] = {
    "so-bgd": (("bco_gym.agents.separation:SeparationBanditGD",), "fejer-bgd"),
}


def current_agent_name(name: Any, import_path: Any = None) -> Any:
    """The current name of the agent that a stored result (or tuned-constants file)
    calls ``name``, built from ``import_path`` (None when not recorded: saved before
    results recorded it, hence before any rename): the new name when ``name`` is one of
    :data:`RENAMED`'s with one of its old import paths, else ``name`` unchanged."""
    entry = RENAMED.get(name) if isinstance(name, str) else None
    if entry is None:
        return name
    paths, current = entry
    return current if import_path is None or import_path in paths else name


def find_agent(agent: Any) -> AgentSpec | None:
    """The spec of ``agent`` if it resolves, else None (for names read back from stored
    results, whose agent may no longer be importable here); never raises."""
    try:
        return resolve_agent(agent)
    except (ValueError, TypeError, ImportError):
        return None


def spec_of_instance(agent: Agent) -> AgentSpec:
    """The spec of an agent already built: its class's, named ``agent.name``."""
    if not isinstance(agent, Agent):
        raise TypeError(f"expected a bco_gym Agent, got {type(agent).__name__}")
    return _spec(type(agent), name=_own_label(str(agent.name), type(agent)), source="object")


def available_agents() -> dict[str, str]:
    """Every agent name that resolves (built-in, registered, plugins) -> its source."""
    from bco_gym.agents import AGENTS

    names = dict.fromkeys(AGENTS, "builtin")
    names.update(dict.fromkeys(_REGISTERED, "registered"))
    for name in _entry_points():
        names.setdefault(name, "entry-point")
    return names


def plugin_errors() -> dict[str, str]:
    """Entry points of ``bco_gym.agents`` that failed to load: name -> error (all tried)."""
    for name in list(_entry_points()):
        if name not in _PLUGIN_ERRORS:
            try:
                _load_entry_point(name)
            except ValueError:
                pass
    return dict(_PLUGIN_ERRORS)


def refresh_plugins() -> None:
    """Forget the entry points read so far (read again at the next lookup)."""
    global _ENTRY_POINTS
    _ENTRY_POINTS = None
    _PLUGIN_ERRORS.clear()


def allowed_forms() -> str:
    """The names that resolve and the other allowed forms, for error messages."""
    names = ", ".join(available_agents())
    return (
        f"valid names: {names}; or an import path 'package.module:ClassName', or an "
        "Agent subclass or factory (problem, **kwargs) -> Agent"
    )


# -- strings ---------------------------------------------------------------------------------
def _resolve_string(text: str) -> AgentSpec:
    from bco_gym.agents import AGENTS

    if text in AGENTS:
        return _spec(AGENTS[text], name=text, source="builtin")
    if text in _REGISTERED:
        factory, summary = _REGISTERED[text]
        return _spec(factory, name=text, source="registered", summary=summary)
    if ":" in text:
        return _spec(_import_path(text), name=text, source="import-path")
    if text in _entry_points():
        factory, version = _load_entry_point(text)
        return _spec(factory, name=text, source="entry-point", version=version)
    raise ValueError(f"unknown agent {text!r}; {allowed_forms()}")


def _import_path(path: str) -> Any:
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise ValueError(
            f"agent import path {path!r} must read 'package.module:ClassName'; {allowed_forms()}"
        )
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(
            f"agent import path {path!r}: cannot import module {module_name!r} ({error})"
        ) from error
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise ValueError(
                f"agent import path {path!r}: module {module_name!r} has no attribute {attribute!r}"
            )
        target = getattr(target, part)
    _check_factory(target, f"agent import path {path!r}")
    return target


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    global _ENTRY_POINTS
    if _ENTRY_POINTS is None:
        found = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
        _ENTRY_POINTS = {entry.name: entry for entry in found}
    return _ENTRY_POINTS


def _load_entry_point(name: str) -> tuple[Any, str | None]:
    entry = _entry_points()[name]
    try:
        factory = entry.load()
        _check_factory(factory, f"plugin {name!r} ({entry.value})")
    except Exception as error:  # a broken plugin must not break anything else
        message = f"{type(error).__name__}: {error}"
        _PLUGIN_ERRORS[name] = message
        raise ValueError(
            f"agent plugin {name!r} (entry point {entry.value!r} of group "
            f"{ENTRY_POINT_GROUP!r}) failed to load: {message}"
        ) from error
    _PLUGIN_ERRORS.pop(name, None)
    dist = getattr(entry, "dist", None)
    return factory, (getattr(dist, "version", None) if dist is not None else None)


# -- specs -------------------------------------------------------------------------------------
def _check_factory(factory: Any, where: str) -> None:
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


def _spec(
    factory: Any,
    *,
    name: str,
    source: str,
    summary: str | None = None,
    version: str | None = None,
) -> AgentSpec:
    from bco_gym.agents.batch import BatchAgent

    is_class = isinstance(factory, type)
    exponent = getattr(factory, "regret_exponent", None)
    return AgentSpec(
        name=name,
        import_path=_import_path_of(factory),
        version=version if version is not None else _distribution_version(factory),
        factory=factory,
        source=source,
        summary=summary if summary is not None else _first_line(factory),
        feedback=str(getattr(factory, "feedback", "bandit")),
        scale_param=getattr(factory, "SCALE_PARAM", None),
        regret_exponent=None if exponent is None else float(exponent),
        theory_defaults=_theory_defaults(factory),
        batched=is_class and issubclass(factory, BatchAgent),
        options=_options_of(factory) if is_class else None,
    )


def _theory_defaults(factory: Any) -> bool:
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
    if _is_library_class(factory):
        return bool(factory.THEORY_DEFAULTS)
    from bco_gym.agents.batch import BatchAgent

    for cls in factory.__mro__:
        if "THEORY_DEFAULTS" in vars(cls) and not _is_library_class(cls):
            return bool(vars(cls)["THEORY_DEFAULTS"])
        if _is_library_class(cls) and cls not in (Agent, BatchAgent):
            return False  # a built-in reached with no declaration on the way
    return bool(factory.THEORY_DEFAULTS)


def _is_library_class(cls: type) -> bool:
    return cls.__module__ == "bco_gym" or cls.__module__.startswith("bco_gym.")


def _declared_name(factory: Any) -> str:
    declared = getattr(factory, "name", None)
    if isinstance(declared, str) and declared and declared != _DEFAULT_NAME:
        return declared
    return str(getattr(factory, "__qualname__", type(factory).__name__))


def _own_label(name: str, factory: Any) -> str:
    """``name``, or the import path of ``factory`` when ``name`` is a built-in agent's
    and ``factory`` is code from outside bco_gym (a user's subclass of BlockBanditCG
    inherits ``name = "bbcg"``): its results must not read as the built-in's, nor be
    grouped with them in a table."""
    from bco_gym.agents import AGENTS

    path = _import_path_of(factory)
    if name in AGENTS and factory is not AGENTS[name] and not path.startswith("bco_gym."):
        return path
    return name


def _options_of(cls: type) -> tuple[str, ...] | None:
    """OPTIONS if declared, else the keyword parameters of ``__init__`` (None: **kwargs)."""
    declared = tuple(getattr(cls, "OPTIONS", ()))
    if declared:
        return declared
    parameters = list(inspect.signature(cls.__init__).parameters.values())[2:]
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return tuple(p.name for p in parameters if p.kind in kinds)


def _import_path_of(factory: Any) -> str:
    module = getattr(factory, "__module__", None) or type(factory).__module__
    qualname = getattr(factory, "__qualname__", None) or type(factory).__qualname__
    return f"{module}:{qualname}"


def _first_line(factory: Any) -> str | None:
    doc = inspect.getdoc(factory)
    return doc.strip().splitlines()[0] if doc else None


_PACKAGES: Mapping[str, list[str]] | None = None


def _distribution_version(factory: Any) -> str | None:
    """The version of the installed distribution whose top-level package holds it."""
    global _PACKAGES
    module = getattr(factory, "__module__", None) or ""
    top = module.split(".", 1)[0]
    if not top or top == "__main__":
        return None
    if _PACKAGES is None:
        _PACKAGES = importlib.metadata.packages_distributions()
    for dist in _PACKAGES.get(top, []):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def _shown(overrides: Mapping[str, Any]) -> str:
    """``overrides`` as ``key=value`` pairs (the defaults when there are none)."""
    return ", ".join(f"{key}={value!r}" for key, value in overrides.items()) or "its defaults"
