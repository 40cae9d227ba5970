"""What old records mean now: built-in agents renamed, and their modules moved.

Renamed: a stored result, cell or tuned-constants file naming an agent by a name since
given to another (the old "so-bgd") reads as the agent's current name
(:data:`RENAMED`, :func:`current_agent_name`).

Moved: the library's agents once lived in one module each at the top of
``bco_gym.agents`` (``bco_gym.agents.fkm``, ``bco_gym.agents.fkm2``, ...); each
algorithm is now a folder (``bco_gym.agents.fkm`` holds fkm and fkm2 and their kernel,
``bco_gym.agents.gk22`` loo-bbgd, so-bgd and fejer-bgd). Identities carry the defining
module's path (:meth:`~bco_gym.agents.registry.AgentSpec.identity`), so they changed
with the move. What was written under an old path still means the same class:

* an import of an old module (``from bco_gym.agents.fkm2 import FlaxmanTwoPoint``, an
  entry point or an import path ``"bco_gym.agents.so_bgd:SeparationOracleBanditGD"``):
  an old module that is a folder now re-exports its classes; any other imports as the
  module that now holds its code (:data:`MOVED_MODULES`, installed by :func:`install`);
* an identity or import path recorded in a result file, a sweep cell or a tuned-constants
  file: :func:`current_identity` gives the current one (the results' readers call it).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any

from bco_gym.agents.variants import identity_text

#: Old modules that are no module now -> the module that holds their code.
MOVED_MODULES: dict[str, str] = {
    "bco_gym.agents.fkm2": "bco_gym.agents.fkm.two_point",
    "bco_gym.agents.bbcg2": "bco_gym.agents.bbcg.two_point",
    "bco_gym.agents.bbcg_bounds": "bco_gym.agents.bbcg.bounds",
    "bco_gym.agents.gk22_bounds": "bco_gym.agents.gk22.bounds",
    "bco_gym.agents.loo_bbgd": "bco_gym.agents.gk22.loo_bbgd",
    "bco_gym.agents.so_bgd": "bco_gym.agents.gk22.so_bgd",
    "bco_gym.agents.separation": "bco_gym.agents.gk22.fejer_bgd",
    "bco_gym.agents.infeasible": "bco_gym.agents.gk22.oracles",
    "bco_gym.agents.sb3_drivers": "bco_gym.agents.sb3.drivers",
    "bco_gym.agents.sb3_options": "bco_gym.agents.sb3.options",
    "bco_gym.agents.kernels.separation": "bco_gym.agents.gk22.kernel",
    "bco_gym.agents.kernels.barrier": "bco_gym.agents.saha_tewari.kernel",
}
#: Old modules that are a folder now (re-exporting their classes) -> the defining module.
FOLDERS: dict[str, str] = {
    f"bco_gym.agents.{name}": f"bco_gym.agents.{name}.agent"
    for name in ("fkm", "bfw", "ofw", "ogd", "bbcg", "saha_tewari", "random", "sb3")
}
_PATHS = {**MOVED_MODULES, **FOLDERS}


#: Built-in agents renamed after results naming them were saved: old name -> (the
#: import paths those results record, the current name). "so-bgd" once named the
#: library's own separation-step derivation; the name is now Garber & Kretzu's
#: Algorithm 10's, and the derivation is "fejer-bgd".
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


def identity_of_result(result: Any) -> str:
    """The identity of the agent of a stored result: recorded since identities exist,
    else rebuilt from its import path (or label) and keyword arguments; a built-in
    agent's path recorded before its algorithm became a folder reads as its current one
    (:func:`~bco_gym.agents.moved.current_identity`)."""
    spec = getattr(result, "agent_spec", None) or {}
    recorded = spec.get("identity")
    if isinstance(recorded, str):
        return str(current_identity(recorded))
    base = current_import_path(str(spec.get("import_path") or getattr(result, "agent", "?")))
    return identity_text(base, dict(getattr(result, "agent_kwargs", None) or {}))


def current_import_path(path: str) -> str:
    """The current ``"module:Class"`` of a built-in agent's import path recorded before
    the move (``"bco_gym.agents.fkm:FlaxmanAgent"`` -> ``"bco_gym.agents.fkm.agent:
    FlaxmanAgent"``); any other path unchanged."""
    module, colon, name = path.partition(":")
    if not colon or module not in _PATHS:
        return path
    return f"{_PATHS[module]}:{name}"


def current_identity(identity: Any) -> Any:
    """:func:`current_import_path` of an identity's path, its keyword arguments kept
    (``"bco_gym.agents.bbcg:BlockBanditCG[c=2]"`` -> ``"bco_gym.agents.bbcg.agent:
    BlockBanditCG[c=2]"``); anything but a string unchanged."""
    if not isinstance(identity, str):
        return identity
    path, bracket, rest = identity.partition("[")
    return current_import_path(path) + bracket + rest


class _Alias(importlib.abc.Loader):
    """Loads an old module as the module that now holds its code (the same object, so
    its attributes, patched or not, are the new module's)."""

    def __init__(self, target: str):
        self.target = target
        self.spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self.spec  # the import machinery set the old name's spec


class _OldModules(importlib.abc.MetaPathFinder):
    """Finds the old modules of :data:`MOVED_MODULES` (imported when asked for: the
    kernels' new modules import numba)."""

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED_MODULES.get(fullname)
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _Alias(new))


def install() -> None:
    """Let the old modules of :data:`MOVED_MODULES` be imported (once per process)."""
    if not any(isinstance(finder, _OldModules) for finder in sys.meta_path):
        sys.meta_path.append(_OldModules())
