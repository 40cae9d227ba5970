"""Each algorithm is one folder now, so the built-in agents' identities changed with their
modules; what was written under an old path still means the same class: old imports,
import paths and entry points resolve, and result files, sweep cells and tuned-constants
files naming an old path load under the new identity, one test per old path."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import json
import warnings

import pytest

from bco_gym.agents import AGENTS, FejerBanditGD, SeparationOracleBanditGD, registry
from bco_gym.agents.moved import FOLDERS, MOVED_MODULES, current_identity
from bco_gym.agents.registry import identity_of_result, resolve_agent
from bco_gym.engine.runner import run
from bco_gym.sweeps import load_result, load_sweep, save_result
from bco_gym.sweeps.results import _digest
from bco_gym.sweeps.sweep import Cell, sweep
from bco_gym.sweeps.tuning import TunedConstant, Tuning, load_tuned, save_tuned

#: Every built-in agent's import path before the move -> its name.
OLD_PATHS = {
    "bco_gym.agents.fkm:FlaxmanAgent": "fkm",
    "bco_gym.agents.fkm2:FlaxmanTwoPoint": "fkm2",
    "bco_gym.agents.bfw:BanditFrankWolfe": "bfw",
    "bco_gym.agents.ofw:OnlineFrankWolfe": "ofw",
    "bco_gym.agents.ogd:OnlineGradientDescent": "ogd",
    "bco_gym.agents.bbcg:BlockBanditCG": "bbcg",
    "bco_gym.agents.bbcg2:BlockBanditCG2": "bbcg2",
    "bco_gym.agents.loo_bbgd:LOOBlockBanditGD": "loo-bbgd",
    "bco_gym.agents.so_bgd:SeparationOracleBanditGD": "so-bgd",
    "bco_gym.agents.separation:FejerBanditGD": "fejer-bgd",
    "bco_gym.agents.saha_tewari:SahaTewari": "saha-tewari",
    "bco_gym.agents.random:RandomAgent": "random",
    "bco_gym.agents.sb3:PPOAgent": "sb3-ppo",
    "bco_gym.agents.sb3:A2CAgent": "sb3-a2c",
    "bco_gym.agents.sb3:SACAgent": "sb3-sac",
    "bco_gym.agents.sb3:TD3Agent": "sb3-td3",
}
#: Old paths whose agents play quickly on a small ball (the file tests run them).
PLAYED = [path for path, name in OLD_PATHS.items() if not name.startswith("sb3-")]
BALL = {"n": 3}


def _new(old: str) -> str:
    name = OLD_PATHS[old]
    cls = AGENTS[name]
    return f"{cls.__module__}:{cls.__qualname__}"


@pytest.mark.parametrize("old", list(OLD_PATHS))
def test_an_old_import_path_resolves_to_the_current_identity(old):
    spec = resolve_agent(old)
    assert spec.factory is AGENTS[OLD_PATHS[old]]
    assert spec.identity() == _new(old) == current_identity(old)
    assert current_identity(old + "[c=2]") == _new(old) + "[c=2]"
    module, name = old.split(":")
    assert getattr(importlib.import_module(module), name) is spec.factory  # an old import


@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_every_old_module_imports_as_the_module_holding_its_code(old):
    module, new = importlib.import_module(old), importlib.import_module(MOVED_MODULES[old])
    assert module is new  # patching the old name patches the code that runs
    assert new.__spec__.name == new.__name__ == MOVED_MODULES[old]  # its own spec kept


def test_old_names_of_the_separation_agents_still_import():
    from bco_gym.agents.separation import SeparationBanditGD
    from bco_gym.agents.so_bgd import SeparationOracleBanditGD as Paper

    assert SeparationBanditGD is FejerBanditGD and Paper is SeparationOracleBanditGD


def test_folders_are_their_old_modules_names():
    for old, new in FOLDERS.items():
        folder, module = importlib.import_module(old), importlib.import_module(new)
        classes = [v for v in vars(module).values() if isinstance(v, type)]
        agents = [c for c in classes if c.__module__ == new and c in AGENTS.values()]
        assert agents and all(getattr(folder, c.__name__) is c for c in agents)


def test_an_entry_point_naming_an_old_path_loads(monkeypatch):
    entry = importlib.metadata.EntryPoint(
        name="old-fkm2", value="bco_gym.agents.fkm2:FlaxmanTwoPoint", group="bco_gym.agents"
    )
    monkeypatch.setattr(registry, "_ENTRY_POINTS", {"old-fkm2": entry})
    spec = resolve_agent("old-fkm2")
    assert spec.source == "entry-point" and spec.identity() == _new(entry.value)


def _played(name: str):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        feedback = {"ofw": "full", "ogd": "full", "fkm2": "two-point", "bbcg2": "two-point"}
        env_kwargs = {**BALL, "feedback": feedback[name]} if name in feedback else BALL
        return run("BCO-Ball-v0", name, horizon=40, seed=5, env_kwargs=env_kwargs)


def _as_saved_before_the_move(result, old: str):  # type: ignore[no-untyped-def]
    spec = {**result.agent_spec, "import_path": old, "identity": old}
    return dataclasses.replace(result, agent_spec=spec)


@pytest.mark.parametrize("old", PLAYED)
def test_a_result_file_naming_an_old_path_loads_under_the_new_identity(tmp_path, old):
    result = _played(OLD_PATHS[old])
    path = save_result(tmp_path / "old.json", _as_saved_before_the_move(result, old))
    loaded = load_result(path)
    assert loaded.agent == OLD_PATHS[old]
    assert identity_of_result(loaded) == identity_of_result(result) == _new(old)
    # without a recorded identity (older files): from the recorded import path
    del loaded.agent_spec["identity"]
    assert identity_of_result(loaded) == _new(old)


def test_a_sweep_finds_its_cells_written_under_old_paths(tmp_path):
    """Cells whose manifest and result name the old paths are the current agents' cells:
    loaded, not recomputed."""
    agents = ["fkm", "bbcg", "loo-bbgd"]
    kwargs = dict(out=tmp_path, env_kwargs=BALL, progress=False)
    grid = dict(envs="BCO-Ball-v0", agents=agents, horizons=30, seeds=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        first = sweep(**grid, **kwargs)
    old_of = {_new(old): old for old in OLD_PATHS}
    manifest_path = tmp_path / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    for cell in manifest["spec"]["cells"]:  # the directory as a sweep before the move left it
        new_key = Cell.from_dict(cell).key
        cell["identity"] = old_of[cell["identity"]]
        old_key = Cell.from_dict(cell).key
        cell_path = tmp_path / "cells" / f"{new_key}.json"
        document = json.loads(cell_path.read_text())
        document["key"]["identity"] = cell["identity"]
        document["arrays"] = f"{old_key}.npz"
        spec = document["result"]["agent_spec"]
        spec["identity"] = spec["import_path"] = cell["identity"]
        payload = cell_path.with_suffix(".npz").read_bytes()
        document["sha256"] = _digest(document, payload)
        (tmp_path / "cells" / f"{old_key}.json").write_text(json.dumps(document))
        cell_path.with_suffix(".npz").rename(cell_path.with_name(f"{old_key}.npz"))
        cell_path.unlink()
    manifest_path.write_text(json.dumps(manifest))
    stored = {r.agent: r for r in load_sweep(tmp_path)}
    assert {identity_of_result(r) for r in stored.values()} == {
        _new(old) for old in old_of.values() if OLD_PATHS[old] in agents
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no cell is recomputed, none is called stale
        again = sweep(**grid, **kwargs)
    by_agent = {r.agent: r for r in again}
    for result in first:
        found = by_agent[result.agent]
        assert found.agent_spec["identity"] == old_of[result.agent_spec["identity"]]  # as stored
        assert found.computed_at == result.computed_at  # loaded, not computed again


@pytest.mark.parametrize(
    "old", ["bco_gym.agents.bbcg:BlockBanditCG", "bco_gym.agents.fkm2:FlaxmanTwoPoint"]
)
def test_a_tuned_file_keyed_by_old_paths_reads_under_the_new_identity(tmp_path, old):
    constant = TunedConstant("c", 0.5, 1.0, 0.7, (0.5, 1.0), (1.0, 2.0))
    tuning = Tuning(
        "BCO-Ball-v0", {}, 100, (0,), {old: constant}, {}, {old: {"c": 1.0}}, labels={old: "x"}
    )
    loaded = load_tuned(save_tuned(tmp_path / "tuned.json", tuning))
    assert set(loaded.constants) == set(loaded.fixed) == set(loaded.labels) == {_new(old)}
    assert loaded.constants[OLD_PATHS[old]] == constant  # found by the agent's name too
    assert loaded.label(_new(old)) == "x"
