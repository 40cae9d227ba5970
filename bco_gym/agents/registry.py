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

Identity. Every spelling of one agent resolves to one *identity* (:meth:`AgentSpec.identity`):
the import path of its class (or factory) and its keyword arguments, written
``"package.module:Class[key=value,...]"`` (keys sorted, numbers canonical); beside it
:attr:`AgentSpec.digest`, a digest of the code its results depend on
(:func:`~bco_gym.agents.sources.agent_code`: for an agent from outside bco_gym, every
source file of its top-level package and of the local code it imports, bco_gym's result
code and its distribution's version; for the library's own agents, the module that
defines it and the library's result code), which says when stored results of the agent
were computed by other code. Where no digest can be taken (a class defined in
``python -c`` or a notebook, made with ``type()``, a callable object),
:attr:`AgentSpec.no_digest_reason` says why, and its stored cells are never reused. Results, sweep
cells, tuned constants and pairing use the identity; the *label* (:attr:`AgentSpec.name`:
the built-in, registered or entry-point name as given, else the class's own ``name`` or
its class name) is for people only.

Variants. ``"NAME[key=value,...]"`` (e.g. ``"fkm[c=2,estimator=residual]"``) is the
agent NAME (any string form above) with those keyword arguments bound; each value is
parsed by the type of the constructor's parameter (its default or annotation) and the
keywords are checked as :func:`~bco_gym.agents.make_agent` checks them.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any

from bco_gym.agents.base import Agent
from bco_gym.agents.declared import (
    check_factory,
    declared_name,
    distribution_version,
    first_line,
    import_path_of,
    options_of,
    theory_defaults,
)
from bco_gym.agents.moved import RENAMED as RENAMED
from bco_gym.agents.moved import current_agent_name as current_agent_name
from bco_gym.agents.moved import identity_of_result as identity_of_result
from bco_gym.agents.variants import canonical_value, identity_text, parse_variant
from bco_gym.errors import AgentError

ENTRY_POINT_GROUP = "bco_gym.agents"
SOURCES = ("builtin", "registered", "entry-point", "import-path", "object")
_DEFAULT_NAME = Agent.name
#: ``NAME[key=value,...]``: an agent with keyword arguments bound (a variant).
_VARIANT = re.compile(r"^(?P<base>[^\[\]]+)\[(?P<body>[^\[\]]*)\]$", re.DOTALL)


class AgentLoadError(ValueError):
    """An agent's code failed to load (its module raised, had a syntax error or called
    ``sys.exit`` at import), or the path given does not lead to an agent."""


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
        kwargs: the keyword arguments bound by a variant ``NAME[key=value,...]`` (sorted
            (key, value) pairs), passed to the factory under any overrides.
        digest: a digest of the code its results depend on
            (:func:`~bco_gym.agents.sources.agent_code`); None when none can be taken.
        no_digest_reason: why no digest can be taken (None when there is one).
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
    kwargs: tuple[tuple[str, Any], ...] = ()
    digest: str | None = None
    no_digest_reason: str | None = None

    def identity(self, overrides: Mapping[str, Any] | None = None) -> str:
        """``"module:Class[key=value,...]"``: the import path and the keyword arguments
        (the bound ones and ``overrides``), the same for every spelling of the agent."""
        return identity_text(self.import_path, {**dict(self.kwargs), **dict(overrides or {})})

    def with_label(self, label: str) -> AgentSpec:
        """This spec with another label (what results, tables and figures show)."""
        if not isinstance(label, str) or not label.strip() or label != label.strip():
            raise ValueError(
                f"label {label!r} must be a non-empty string without surrounding spaces"
            )
        return dataclasses.replace(self, name=label, label_from_agent=False)

    @property
    def constants_free(self) -> bool:
        """Whether its defaults have a free constant from a theorem (labelled "theory")."""
        return self.scale_param is not None and self.theory_defaults

    def build(self, problem: Any, batch_size: int | None = None, **overrides: Any) -> Agent:
        """The agent for ``problem`` (batched with ``batch_size`` S, which needs
        ``batched``), with ``overrides`` checked against ``options``."""
        overrides = {**dict(self.kwargs), **overrides}
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
        except (ValueError, TypeError):
            raise  # a refused keyword, already naming itself
        except Exception as error:  # the user's constructor raised: name the agent
            raise AgentError(
                f"agent {self.name!r} ({self.import_path}) failed to build with "
                f"{_shown(overrides)}: {type(error).__name__}: {error}"
            ) from error
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
            "digest": self.digest,
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
    check_factory(factory, f"register({name!r})")
    if summary is not None and not isinstance(summary, str):
        raise TypeError(
            f"register({name!r}): summary={summary!r} ({type(summary).__name__}) must be a "
            "string (one line shown by `bco-gym list`) or None"
        )
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
            f"({import_path_of(_REGISTERED[name][0])}); pass replace=True to replace it"
        )
    _REGISTERED[name] = (factory, summary)
    return resolve_agent(name)


def unregister(name: str) -> None:
    """Forget a name given to :func:`register` (KeyError if it was not registered)."""
    if name not in _REGISTERED:
        raise KeyError(f"no agent named {name!r} was registered; registered: {list(_REGISTERED)}")
    del _REGISTERED[name]


def resolve_agent(agent: Any) -> AgentSpec:
    """The :class:`AgentSpec` of a name, import path, variant, Agent subclass, factory or spec.

    ValueError for an unknown name, an unimportable path or a variant's bad keyword
    (listing what is allowed); :class:`AgentLoadError` (a ValueError) naming the agent
    when its module fails to load; TypeError for an object that is neither an Agent
    subclass nor a callable.
    """
    if isinstance(agent, AgentSpec):
        return agent
    if isinstance(agent, str):
        return _resolve_variant(agent)
    if isinstance(agent, Agent):
        raise TypeError(
            f"resolve_agent needs a name, an import path, an Agent subclass or a factory, "
            f"got an agent instance {agent!r}; pass its class, or use spec_of_instance"
        )
    check_factory(agent, "resolve_agent")
    spec = _spec(agent, name=_label_of(agent), source="object")
    if isinstance(agent, type) or isinstance(getattr(agent, "name", None), str):
        return spec
    return dataclasses.replace(spec, label_from_agent=True)


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
def _resolve_variant(text: str) -> AgentSpec:
    """A string form, with ``[key=value,...]`` bound when it ends in one."""
    found = _VARIANT.match(text.strip()) if text.rstrip().endswith("]") else None
    if found is None:
        if "[" in text or "]" in text:
            raise ValueError(
                f"agent {text!r}: a variant reads 'NAME[key=value,...]' (one pair of brackets "
                "at the end, e.g. 'fkm[c=2,estimator=residual]')"
            )
        return _resolve_string(text)
    base = _resolve_string(found.group("base").strip())
    if base.kwargs:
        raise ValueError(f"agent {text!r} binds keyword arguments twice")
    kwargs = parse_variant(base.factory, found.group("body"), text)
    base.check_overrides(kwargs)
    pairs = tuple(sorted(kwargs.items()))
    label = f"{base.name}[{','.join(f'{k}={canonical_value(v)}' for k, v in pairs)}]"
    return dataclasses.replace(base, kwargs=pairs, name=label)


def _resolve_string(text: str) -> AgentSpec:
    from bco_gym.agents import AGENTS

    if text in AGENTS:
        return _spec(AGENTS[text], name=text, source="builtin")
    if text in _REGISTERED:
        factory, summary = _REGISTERED[text]
        return _spec(factory, name=text, source="registered", summary=summary)
    if ":" in text:
        factory = _import_path(text)
        return _spec(factory, name=_label_of(factory), source="import-path")
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
    if module_name.startswith("."):
        raise AgentLoadError(
            f"agent import path {path!r} is not an agent: {module_name!r} is a relative module "
            "name; give the absolute one, 'package.module:ClassName'"
        )
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(
            f"agent import path {path!r}: cannot import module {module_name!r} ({error})"
        ) from error
    except (Exception, SystemExit) as error:  # the module's own code failed at import
        raise AgentLoadError(
            f"agent {path!r} failed to load: importing {module_name!r} raised {_error_text(error)}"
        ) from error
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise ValueError(
                f"agent import path {path!r}: module {module_name!r} has no attribute {attribute!r}"
            )
        target = getattr(target, part)
    check_factory(target, f"agent import path {path!r}")
    return target


def _error_text(error: BaseException) -> str:
    if isinstance(error, SystemExit):
        return f"SystemExit (sys.exit({error.code!r}) at import)"
    return f"{type(error).__name__}: {' '.join(str(error).split())}"


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
        check_factory(factory, f"plugin {name!r} ({entry.value})")
    except (Exception, SystemExit) as error:  # a broken plugin must not break anything else
        message = _error_text(error)
        _PLUGIN_ERRORS[name] = message
        raise AgentLoadError(
            f"agent plugin {name!r} (entry point {entry.value!r} of group "
            f"{ENTRY_POINT_GROUP!r}) failed to load: {message}"
        ) from error
    _PLUGIN_ERRORS.pop(name, None)
    dist = getattr(entry, "dist", None)
    return factory, (getattr(dist, "version", None) if dist is not None else None)


# -- specs -------------------------------------------------------------------------------------


def _spec(
    factory: Any,
    *,
    name: str,
    source: str,
    summary: str | None = None,
    version: str | None = None,
) -> AgentSpec:
    from bco_gym.agents.batch import BatchAgent
    from bco_gym.agents.sources import agent_code

    is_class = isinstance(factory, type)
    exponent = getattr(factory, "regret_exponent", None)
    version = version if version is not None else distribution_version(factory)
    code = agent_code(factory, version)
    return AgentSpec(
        name=name,
        import_path=import_path_of(factory),
        version=version,
        factory=factory,
        source=source,
        summary=summary if summary is not None else first_line(factory),
        feedback=str(getattr(factory, "feedback", "bandit")),
        scale_param=getattr(factory, "SCALE_PARAM", None),
        regret_exponent=None if exponent is None else float(exponent),
        theory_defaults=theory_defaults(factory),
        batched=is_class and issubclass(factory, BatchAgent),
        options=options_of(factory) if is_class else None,
        digest=code.digest,
        no_digest_reason=code.reason,
    )


def _label_of(factory: Any) -> str:
    """The default label of a class or factory given as an object or import path: the
    name it is known by here (a built-in or registered name), else its own declared
    ``name``, else its class name (never a long import path)."""
    from bco_gym.agents import AGENTS

    for name, known in (*AGENTS.items(), *((n, f) for n, (f, _) in _REGISTERED.items())):
        if known is factory:
            return name
    declared = declared_name(factory)
    if declared in AGENTS and AGENTS[declared] is not factory:
        return str(getattr(factory, "__name__", None) or _short(factory))
    return declared


def _short(factory: Any) -> str:
    return import_path_of(factory).rsplit(":", 1)[-1]


def _own_label(name: str, factory: Any) -> str:
    """``name``, or the import path of ``factory`` when ``name`` is a built-in agent's
    and ``factory`` is code from outside bco_gym (a user's subclass of BlockBanditCG
    inherits ``name = "bbcg"``): its results must not read as the built-in's, nor be
    grouped with them in a table."""
    from bco_gym.agents import AGENTS

    path = import_path_of(factory)
    if name in AGENTS and factory is not AGENTS[name] and not path.startswith("bco_gym."):
        return _short(factory)
    return name


def code_digest(factory: Any, version: str | None = None) -> str | None:
    """16 hex digits of SHA-256 over the code ``factory``'s results depend on, with the
    installed distribution's ``version`` (:func:`~bco_gym.agents.sources.agent_code`);
    None when no digest can be taken."""
    from bco_gym.agents.sources import agent_code

    return agent_code(factory, version).digest


def _shown(overrides: Mapping[str, Any]) -> str:
    """``overrides`` as ``key=value`` pairs (the defaults when there are none)."""
    return ", ".join(f"{key}={value!r}" for key, value in overrides.items()) or "its defaults"
