"""One resolver for every form of agent: built-in and registered names, import paths,
entry points (a real dist-info fixture on sys.path), classes and factories."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from agent_plugins import forget_plugin, install_plugin
from user_agents import Faulty, Jitter, NotAnAgent, Unnamed, jitter_factory

from bco_gym.agents import (
    AGENTS,
    AgentSpec,
    BlockBanditCG,
    available_agents,
    declared,
    make_agent,
    register,
    registry,
    resolve_agent,
    unregister,
)
from bco_gym.problem import Problem
from bco_gym.sets import L2Ball as Ball


@pytest.fixture
def problem():
    return Problem(Ball(3), horizon=20, lipschitz=1.0, bound=1.0)


@pytest.fixture
def registered():
    names = []

    def add(name, factory, **kwargs):
        names.append(name)
        return register(name, factory, **kwargs)

    yield add
    for name in names:
        registry._REGISTERED.pop(name, None)


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """An installed distribution 'plugpkg 0.3.1' declaring two agents, one broken."""
    install_plugin(tmp_path, monkeypatch)
    yield
    forget_plugin()
    monkeypatch.setattr(declared, "_PACKAGES", None)


def test_builtin_names_resolve_to_their_classes_and_declared_constants():
    spec = resolve_agent("bbcg")
    assert isinstance(spec, AgentSpec)
    assert spec.factory is BlockBanditCG and spec.source == "builtin" and spec.batched
    assert spec.import_path == "bco_gym.agents.bbcg.agent:BlockBanditCG"
    assert (spec.scale_param, spec.regret_exponent) == ("c", 0.75)
    assert resolve_agent(spec) is spec
    assert resolve_agent(BlockBanditCG).name == "bbcg"
    for name, cls in AGENTS.items():
        one = resolve_agent(name)
        assert (one.feedback, one.scale_param) == (cls.feedback, cls.SCALE_PARAM)
        assert one.theory_defaults == cls.THEORY_DEFAULTS
    assert not resolve_agent("sb3-ppo").batched
    assert resolve_agent("sb3-ppo").theory_defaults is False


def test_a_registered_class_or_factory_builds_through_make_agent(problem, registered):
    spec = registered("my-jitter", Jitter, summary="centre plus noise")
    assert spec.source == "registered" and spec.summary == "centre plus noise"
    assert "my-jitter" in available_agents()
    agent = make_agent("my-jitter", problem, spread=0.25)
    assert isinstance(agent, Jitter) and agent.params == {"spread": 0.25}
    assert spec.options == ("spread",)  # read from __init__'s keywords
    with pytest.raises(ValueError, match=r"unknown keyword\(s\) c; allowed: spread"):
        make_agent("my-jitter", problem, c=1.0)
    registered("jitter-fn", jitter_factory)
    built = make_agent("jitter-fn", problem, spread=0.5)
    assert isinstance(built, Jitter)
    assert resolve_agent("jitter-fn").summary == "A factory (not a class) building a Jitter."


def test_register_refuses_clashes_builtins_and_non_agents(registered):
    registered("dup", Jitter)
    with pytest.raises(ValueError, match=r"already registered.*replace=True"):
        register("dup", Faulty)
    assert register("dup", Faulty, replace=True).factory is Faulty
    with pytest.raises(ValueError, match="'bbcg' is the built-in agent 'bbcg'"):
        register("bbcg", Jitter, replace=True)
    with pytest.raises(ValueError, match=r"'BBCG' is the built-in agent 'bbcg'.*ignoring case"):
        register("BBCG", Jitter)
    for bad in ("a:b", "mine,bbcg", " mine", "mine "):
        with pytest.raises(ValueError, match=r"without ':'.*','.*surrounding spaces"):
            register(bad, Jitter)
    with pytest.raises(TypeError, match="NotAnAgent is a class but not a subclass"):
        register("no", NotAnAgent)
    with pytest.raises(TypeError, match=r"3 .int. is not an agent"):
        register("no", 3)
    unregister("dup")
    with pytest.raises(KeyError, match="'dup'"):
        unregister("dup")


def test_import_paths_are_imported_and_checked(problem):
    spec = resolve_agent("user_agents:Jitter")
    assert spec.factory is Jitter and spec.source == "import-path"
    assert spec.name == "jitter" and spec.import_path == "user_agents:Jitter"
    assert (spec.scale_param, spec.regret_exponent, spec.batched) == ("spread", 1.0, False)
    assert isinstance(make_agent("user_agents:jitter_factory", problem), Jitter)
    with pytest.raises(ValueError, match="cannot import module 'no_such_module'"):
        resolve_agent("no_such_module:Agent")
    with pytest.raises(ValueError, match="has no attribute 'Missing'"):
        resolve_agent("user_agents:Missing")
    with pytest.raises(TypeError, match=r"not a subclass of bco_gym.agents.Agent"):
        resolve_agent("user_agents:NotAnAgent")
    with pytest.raises(ValueError, match=r"must read 'package.module:ClassName'"):
        resolve_agent("user_agents:")


def test_unknown_names_and_objects_get_errors_listing_what_is_allowed(problem):
    with pytest.raises(ValueError, match=r"unknown agent 'nope'; valid names: bbcg.*import path"):
        resolve_agent("nope")
    with pytest.raises(TypeError, match=r"list.*is not an agent"):
        resolve_agent([1])
    with pytest.raises(TypeError, match="agent instance"):
        resolve_agent(Jitter(problem))
    with pytest.raises(ValueError, match=r"'jitter' \(user_agents:Jitter\).*has no batched form"):
        make_agent("user_agents:Jitter", problem, batch_size=2)
    with pytest.raises(TypeError, match=r"returned int, not a bco_gym.agents.Agent"):
        resolve_agent(lambda problem: 3).build(problem)


def test_a_callable_that_is_no_agent_factory_is_refused_before_it_is_called(problem):
    with pytest.raises(TypeError, match=r"\w+\.getcwd is not an agent: it is a function compiled"):
        make_agent("os:getcwd", problem)  # callable, but a C function, not a factory
    with pytest.raises(TypeError, match=r"factory .*<lambda>\(\) cannot be called as "):
        resolve_agent(lambda: None).build(problem)  # callable, but takes no problem
    with pytest.raises(
        TypeError,
        match=r"cannot be called as factory\(problem, spread=\.\.\.\) \(got an unexpected "
        r"keyword argument 'spread'\); an agent factory takes the Problem first",
    ):
        resolve_agent(lambda problem: Jitter(problem)).build(problem, spread=0.2)
    assert resolve_agent(jitter_factory).build(problem, spread=0.2).params == {"spread": 0.2}


def test_classes_and_factories_are_labelled_by_their_declared_name():
    assert resolve_agent(Jitter).name == "jitter"
    assert resolve_agent(Unnamed).name == "Unnamed"
    assert resolve_agent(jitter_factory).name == "jitter_factory"
    assert resolve_agent(Unnamed).import_path == "user_agents:Unnamed"


def test_entry_points_load_lazily_with_their_distribution_version(plugin, problem):
    names = available_agents()
    assert names["plugjitter"] == "entry-point" and names["bbcg"] == "builtin"
    assert "plugpkg" not in sys.modules  # listed, not imported
    spec = resolve_agent("plugjitter")
    assert spec.source == "entry-point" and spec.version == "0.3.1"
    assert spec.import_path == "plugpkg:PlugJitter"
    agent = make_agent("plugjitter", problem)
    agent.reset(seed=0)
    assert Ball(3).contains(agent.act())
    # an import path into the plugin's package finds its version too
    assert resolve_agent("plugpkg:PlugJitter").version == "0.3.1"


def test_a_broken_plugin_is_reported_and_breaks_nothing_else(plugin, problem):
    with pytest.raises(ValueError, match=r"plugin 'brokenplug'.*failed to load: ModuleNotFound"):
        resolve_agent("brokenplug")
    errors = registry.plugin_errors()
    assert list(errors) == ["brokenplug"] and "plugpkg_gone" in errors["brokenplug"]
    assert isinstance(make_agent("fkm", problem), AGENTS["fkm"])
    assert resolve_agent("plugjitter").version == "0.3.1"


def test_a_built_user_agent_plays_feasible_points(problem):
    agent = make_agent(Jitter, problem)
    agent.reset(seed=3)
    points = []
    for _ in range(5):
        points.append(agent.act())
        agent.update(1.0)
    assert all(problem.set.contains(p) for p in points)
    assert len({tuple(np.round(p, 12)) for p in points}) == 5


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True, [1, 2], np.random.default_rng(0)])
def test_a_user_agents_reset_names_a_bad_seed(problem, seed):
    agent = make_agent(Jitter, problem)
    with pytest.raises(
        ValueError, match=r"^Jitter: reset\(seed=.*\); allowed: None or an int >= 0"
    ):
        agent.reset(seed=seed)
    agent.reset(seed=np.int64(3))
    first = agent.act()
    agent.reset(seed=3)
    assert np.array_equal(agent.act(), first)  # a NumPy integer seeds as the int does


class _NoSuper(Jitter):
    def __init__(self, problem, spread=0.5):  # forgets super().__init__(problem)
        self.params = {"spread": spread}


class _NaNBound(Unnamed):
    def __init__(self, problem):
        super().__init__(problem)
        self.params = {}

    def regret_bound(self):
        return float("nan")


def test_an_agent_that_skips_agent_init_or_has_a_nan_bound_is_told_so(problem):
    with pytest.raises(TypeError, match=r"_NoSuper.__init__ did not call super\(\).__init__"):
        make_agent(_NoSuper, problem)
    with pytest.raises(
        ValueError, match=r"the regret bound at its parameters \(none a float\) is nan"
    ):
        make_agent(_NaNBound, problem)


def test_theory_is_credited_only_where_a_class_declares_it():
    class MyBBCG(BlockBanditCG):  # a built-in's subclass that may have changed its defaults
        pass

    class Declared(BlockBanditCG):
        THEORY_DEFAULTS = True

    class FromDeclared(Declared):
        pass

    class Guess(Declared):
        THEORY_DEFAULTS = False

    assert resolve_agent("bbcg").theory_defaults  # the library's own classes say it
    assert resolve_agent(BlockBanditCG).constants_free
    assert not resolve_agent(MyBBCG).theory_defaults
    assert not resolve_agent(MyBBCG).constants_free  # results say "default" and show c
    assert resolve_agent(Declared).theory_defaults
    assert resolve_agent(FromDeclared).theory_defaults
    assert not resolve_agent(Guess).theory_defaults


def test_run_names_an_instance_that_skipped_agent_init():
    import gymnasium as gym

    from bco_gym.experiment import run

    env = gym.make("BCO-Ball-v0", horizon=20)
    instance = _NoSuper(env.unwrapped.problem)
    with pytest.raises(TypeError, match=r"_NoSuper.__init__ did not call super\(\).__init__"):
        run(env, instance, horizon=20, seed=0)
