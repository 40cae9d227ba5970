"""The house's floors: every import inside ``bco_gym`` points down, and none forms a cycle.

The floors (``docs/architecture.md``), lowest first (and no module outside
``bco_gym/agents`` over :data:`MAX_LINES` lines)::

    io, sets, errors, portable, data, provenance < losses, problem < envs, agents < wrappers
    < engine < sweeps < stats < plotting < reports < experiment, cli

A module may import its own floor and the floors below. Envs and agents share a floor
but never import each other (an agent knows a Problem, never an env). Every import
counts, at module level or inside a function (a lazy import is still an arrow), and so
does the package ``__init__`` that importing a submodule runs. The graph of modules must
have no cycle.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import bco_gym

PACKAGE = Path(bco_gym.__file__).parent

FLOORS: dict[str, int] = {
    "io": 0,
    "sets": 0,
    "errors": 0,
    "portable": 0,
    "data": 0,
    "provenance": 0,
    "losses": 1,
    "problem": 1,
    "envs": 2,
    "agents": 2,
    "wrappers": 3,
    "engine": 4,
    "sweeps": 5,
    "stats": 6,
    "plotting": 7,
    "reports": 8,
    "experiment": 9,
    "cli": 9,
    "cli_arguments": 9,
    "cli_bench": 9,
    "cli_checks": 9,
    "cli_commands": 9,
    "cli_reports": 9,
}
#: The most lines a module may have (one idea per module).
MAX_LINES = 600
#: Pairs of rooms on one floor that must not import each other (either way).
SEPARATE = {frozenset({"envs", "agents"})}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported(path: Path, name: str, known: set[str]) -> set[str]:
    """The bco_gym modules ``path`` imports (and the packages those imports initialise)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        for target in targets:
            if target in known:
                found.add(target)
    # Importing a.b.c runs a.b's __init__ too, unless a.b is the importer's own package
    # (already running); the root package's is everyone's and left out.
    own = {".".join(name.split(".")[:k]) for k in range(1, name.count(".") + 2)}
    for target in list(found):
        parts = target.split(".")
        found.update(".".join(parts[:k]) for k in range(2, len(parts)))
    return found - own - {"bco_gym"}


def room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


MODULES = modules()
GRAPH = {name: imported(path, name, set(MODULES)) for name, path in MODULES.items()}


def test_every_room_has_a_floor():
    rooms = {room(name) for name in GRAPH} - {None}
    assert rooms <= set(FLOORS), f"rooms without a floor: {sorted(rooms - set(FLOORS))}"


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_imports_point_down(name):
    here = room(name)
    if here is None:
        return  # bco_gym/__init__.py: the front door re-exports from every floor
    upward = []
    for target in sorted(GRAPH[name]):
        there = room(target)
        if there is None or there == here:
            continue
        if FLOORS[there] > FLOORS[here] or frozenset({here, there}) in SEPARATE:
            upward.append(f"{target} ({there}, floor {FLOORS[there]})")
    assert not upward, f"{name} (floor {FLOORS[here]}) imports upward: {upward}"


def test_no_import_cycle():
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        stack.append(name)
        for target in sorted(GRAPH[name]):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        stack.pop()
        state[name] = 2
        return None

    for name in sorted(GRAPH):
        if name not in state:
            cycle = visit(name)
            assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_plotting_imports_no_report():
    """The figures read the statistics (stats), never the reports that draw with them."""
    found = {
        f"{name} -> {target}"
        for name in GRAPH
        if room(name) == "plotting"
        for target in GRAPH[name]
        if room(target) == "reports"
    }
    assert not found


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_no_module_is_over_the_line_limit(name):
    lines = len(modules()[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines (at most {MAX_LINES}): split it"


def test_io_is_the_bottom_of_the_house():
    """bco_gym.io (files: atomic writes, canonical JSON, digests) imports no bco_gym module."""
    assert GRAPH["bco_gym.io"] == set()


def test_the_graph_sees_lazy_imports():
    """The walker counts imports inside functions (a lazy import is still an arrow)."""
    assert "bco_gym.plotting" in GRAPH["bco_gym.reports.report"]
    assert "bco_gym.engine.runner" in GRAPH["bco_gym.sweeps.failures"]


# -- the agents' rooms: an algorithm is one folder ---------------------------------------------
AGENTS_ROOM = PACKAGE / "agents"
#: Folders of agents/ that hold no algorithm: what several share.
SHARED_FOLDERS = {"kernels"}


def algorithm_folders() -> set[str]:
    return {
        path.name
        for path in AGENTS_ROOM.iterdir()
        if (path / "__init__.py").is_file() and path.name not in SHARED_FOLDERS
    }


def test_an_algorithm_is_one_folder_with_its_kernel():
    """Every built-in agent is defined in a folder of agents/ (its family), and the kernel
    its class declares lives in that folder too: "where does X live?" is one folder name."""
    from bco_gym.agents import AGENTS

    folders = algorithm_folders()
    for name, cls in AGENTS.items():
        parts = cls.__module__.split(".")
        assert parts[:2] == ["bco_gym", "agents"] and len(parts) == 4, (name, cls.__module__)
        assert parts[2] in folders, f"{name} ({cls.__module__}) is outside an algorithm's folder"
        kernel = vars(cls).get("KERNEL")
        if kernel is not None:
            assert kernel.module.split(".")[:3] == parts[:3], (name, kernel.module)
            assert callable(kernel.function(kernel.window))
    assert len({AGENTS[name].__module__.split(".")[2] for name in ("fkm", "fkm2")}) == 1
    assert {AGENTS[n].__module__.split(".")[2] for n in ("loo-bbgd", "so-bgd")} == {"gk22"}


def test_shared_rooms_import_no_algorithm_and_no_engine_module_pairs_agents_with_kernels():
    """agents/kernels/ keeps only what several algorithms share, and the compiled loop
    finds an agent's kernel through the agent's class, never through a table of its own."""
    families = tuple(f"bco_gym.agents.{folder}" for folder in algorithm_folders())
    for name, targets in GRAPH.items():
        shared = name.startswith("bco_gym.agents.kernels") or room(name) == "engine"
        reached = [t for t in targets if t.startswith(families)]
        assert not (shared and reached), f"{name} imports algorithm folders: {reached}"


def test_importing_the_package_loads_no_scipy():
    """Every worker process (the process backend's, an isolated agent's) imports bco_gym
    first: SciPy, about half of that import, loads where a set or a comparator calls it."""
    code = "import sys, bco_gym; print(sorted(m for m in sys.modules if m.startswith('scipy')))"
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert completed.stdout.strip() == "[]", completed.stdout[:500]
