"""User code that fails is reported as the user's, on one line (issue 35): an agent
module that raises, has a syntax error or exits at import is a load failure naming the
agent (CLI exit 2, the built-ins still listed); a path that is no agent says why; an
agent whose ``__init__`` or ``act`` raises is named with its seed and round."""

from __future__ import annotations

import importlib
import sys
import textwrap
import warnings

import pytest

from bco_gym.agents import declared, register, registry, resolve_agent
from bco_gym.agents.registry import AgentLoadError
from bco_gym.cli import main
from bco_gym.engine import run, run_many
from bco_gym.errors import AgentError, InfeasibleActionError

BALL, SMALL = "BCO-Ball-v0", {"n": 3}
CLI_BALL = ["--env", BALL, "--env-kwargs", '{"n": 3}']
MODULES = {
    "raising_agent": "raise RuntimeError('no GPU found')\n",
    "syntax_agent": "def broken(:\n    pass\n",
    "exiting_agent": "import sys\nsys.exit(3)\n",
}
BUILDING = """
from user_agents import Jitter

class Grumpy(Jitter):
    name = "grumpy"

    def __init__(self, problem, spread=0.5):
        raise RuntimeError("grumpy refuses to start")
"""


@pytest.fixture
def user_modules(tmp_path, monkeypatch):
    for name, source in {**MODULES, "building_agent": BUILDING}.items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        sys.modules.pop(name, None)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield tmp_path
    for name in [*MODULES, "building_agent"]:
        sys.modules.pop(name, None)


@pytest.fixture
def exiting_plugin(tmp_path, monkeypatch):
    """An installed distribution whose entry point's module calls sys.exit at import."""
    root = tmp_path / "site"
    root.mkdir()
    (root / "exitplug.py").write_text("import sys\nsys.exit('plugin gives up')\n")
    info = root / "exitplug-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: exitplug\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[bco_gym.agents]\nexiter = exitplug:Agent\n")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setattr(declared, "_PACKAGES", None)
    registry.refresh_plugins()
    yield
    registry.refresh_plugins()
    sys.modules.pop("exitplug", None)


@pytest.mark.parametrize(
    "module, said",
    [
        ("raising_agent", "RuntimeError: no GPU found"),
        ("syntax_agent", "SyntaxError"),
        ("exiting_agent", r"SystemExit \(sys.exit\(3\) at import\)"),
    ],
)
def test_a_module_failing_at_import_is_a_load_failure_naming_the_agent(user_modules, module, said):
    with pytest.raises(AgentLoadError, match=rf"agent '{module}:Agent' failed to load: .*{said}"):
        resolve_agent(f"{module}:Agent")


def test_the_cli_reports_a_load_failure_on_one_line_with_exit_2(user_modules, capsys):
    for command in (
        ["run", *CLI_BALL, "--agent", "exiting_agent:Agent", "--horizon", "20"],
        ["compare", *CLI_BALL, "--agents", "raising_agent:Agent,fkm", "--horizon", "20"],
        ["bench", "--agents", "syntax_agent:Agent", "--out", str(user_modules / "b")],
    ):
        assert main(command) == 2, command
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "failed to load" in err, err
        assert "Traceback" not in err


def test_list_survives_a_plugin_that_exits_at_import(exiting_plugin, capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "BlockBanditCG" in out and "FlaxmanAgent" in out  # the built-ins are listed
    assert "plugin 'exiter'" in out and "SystemExit" in out and "plugin gives up" in out
    with pytest.raises(AgentLoadError, match=r"agent plugin 'exiter'.*failed to load"):
        resolve_agent("exiter")


def test_paths_that_are_not_agents_say_why():
    with pytest.raises(AgentLoadError, match=r"'.mod:X' is not an agent: '.mod' is a relative"):
        resolve_agent(".mod:X")
    with pytest.raises(TypeError, match=r"math.sqrt is not an agent: it is a function compiled"):
        resolve_agent("math:sqrt")


def test_the_cli_says_a_path_is_not_an_agent(capsys):
    for path, said in ((".mod:X", "relative module name"), ("math:sqrt", "is not an agent")):
        assert main(["run", *CLI_BALL, "--agent", path, "--horizon", "20"]) == 2
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1


def test_an_agent_whose_init_raises_is_named(user_modules, capsys):
    with pytest.raises(
        AgentError,
        match=r"agent 'grumpy' \(building_agent:Grumpy\) failed to "
        r"build with its defaults: RuntimeError: grumpy refuses to start",
    ):
        run(BALL, "building_agent:Grumpy", horizon=20, env_kwargs=SMALL)
    for command, out in ((["run", "--agent"], "r.json"), (["compare", "--agents"], "cmp")):
        argv = [command[0], *CLI_BALL, command[1], "building_agent:Grumpy", "--horizon", "20"]
        assert main([*argv, "--out", str(user_modules / out)]) == 2
        err = capsys.readouterr().err
        assert "agent 'grumpy'" in err and "grumpy refuses to start" in err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_an_agent_whose_act_raises_is_named_with_its_seed_and_round(tmp_path, capsys):
    with pytest.raises(
        AgentError,
        match=r"^agent 'faulty' seed 4 failed in round 3: "
        r"RuntimeError: faulty agent gives up in round 3$",
    ):
        run(BALL, "user_agents:Faulty", seed=4, horizon=20, env_kwargs=SMALL)
    with pytest.raises(AgentError, match=r"^agent 'faulty' seed 7 failed in round 3: Runtime"):
        run_many(BALL, "user_agents:Faulty", [7, 8], horizon=20, env_kwargs=SMALL)
    argv = ["run", *CLI_BALL, "--agent", "user_agents:Faulty", "--horizon", "20", "--seed", "4"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("bco-gym run: error: agent 'faulty' seed 4 failed in round 3")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_an_infeasible_play_in_run_many_names_the_seed_not_the_row():
    with pytest.raises(InfeasibleActionError, match=r"round 3, seed 11 \(row 0\): action not in"):
        run_many(BALL, "user_agents:Faulty[fault=outside]", [11, 12], horizon=20, env_kwargs=SMALL)


def test_register_refuses_a_summary_that_is_not_a_string(capsys):
    from user_agents import Jitter

    with pytest.raises(TypeError, match=r"summary=5 \(int\) must be a string"):
        register("numbered", Jitter, summary=5)
    assert "numbered" not in registry._REGISTERED
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["list"]) == 0
