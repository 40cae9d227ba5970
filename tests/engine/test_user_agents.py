"""Agents from outside the library through run and run_many: every form of agent, every
row ``same_outcome`` as run's; labels from the one AgentSpec; loss digests; a user's
BanditConvexEnv vectorised by run_many."""

from __future__ import annotations

import numpy as np
import pytest
from user_agents import (
    Faulty,
    GradientJitter,
    HalfBBCG,
    Jitter,
    Unnamed,
    gradient_jitter_factory,
    jitter_factory,
)

from bco_gym.agents import BlockBanditCG, register, resolve_agent, unregister
from bco_gym.engine import run, run_many
from bco_gym.envs import BanditConvexEnv
from bco_gym.errors import InfeasibleActionError
from bco_gym.losses import from_array, from_function
from bco_gym.sets import L2Ball

SEEDS = [3, 0, 3]
ENV = "BCO-Ball-v0"
SMALL = {"n": 4}


def _same_as_run(results, agent, env=ENV, env_kwargs=SMALL, **kwargs):
    for seed, many in zip(SEEDS, results, strict=True):
        one = run(env, agent, horizon=60, seed=seed, env_kwargs=env_kwargs, **kwargs)
        assert many.same_outcome(one), (agent, seed)
        assert many.loop == "batched-lean" and one.loop == "lean"
    return results


@pytest.fixture
def registered_jitter():
    register("my-jitter", Jitter)
    yield "my-jitter"
    unregister("my-jitter")


@pytest.mark.parametrize(
    "agent, label",
    [
        (Jitter, "jitter"),
        ("user_agents:Jitter", "jitter"),  # an import path: the class's own name, not the path
        (jitter_factory, "jitter"),  # an undeclared factory: named by the agent it builds
        (Unnamed, "Unnamed"),
    ],
)
def test_run_many_plays_any_agent_form_row_by_row_as_run(agent, label):
    results = run_many(ENV, agent, SEEDS, horizon=60, env_kwargs=SMALL)
    _same_as_run(results, agent)
    first = results[0]
    assert first.agent == label and first.agent_spec["name"] == label
    assert first.agent_spec["import_path"].startswith("user_agents:")
    assert first.agent_spec["version"] is None  # a script's module: no distribution
    # regret is not zero and the rows differ by seed (the agent uses its own stream)
    assert results[0].final_regret != results[1].final_regret
    assert results[0].same_outcome(results[2])


def test_labels_come_from_the_spec_on_both_paths(registered_jitter):
    declared = run_many(ENV, registered_jitter, [0], horizon=60, env_kwargs=SMALL)[0]
    assert declared.agent == "my-jitter" and declared.agent_spec["source"] == "registered"
    assert (declared.constants, declared.scale_param) == ("theory", "spread")
    tuned = run_many(ENV, "my-jitter", [0], horizon=60, env_kwargs=SMALL, constants="tuned")
    assert tuned[0].constants == "tuned"
    custom = run_many(
        ENV, "my-jitter", [0], horizon=60, env_kwargs=SMALL, agent_kwargs={"spread": 0.2}
    )
    assert custom[0].constants == "custom" and custom[0].params == {"spread": 0.2}
    plain = run_many(ENV, Unnamed, [0], horizon=60, env_kwargs=SMALL)[0]
    assert (plain.constants, plain.scale_param) == ("default", None)


def test_run_many_refuses_a_built_single_agent_with_the_way_out():
    import gymnasium as gym

    env = gym.make(ENV, horizon=60, **SMALL)
    agent = Jitter(env.unwrapped.problem)
    with pytest.raises(
        ValueError, match=r"batch_size=None.*pass the agent's class, name or import path"
    ):
        run_many(ENV, agent, [0, 1], horizon=60, env_kwargs=SMALL)


def _array_env(thetas):
    return BanditConvexEnv(L2Ball(3), from_array(L2Ball(3), thetas))


def test_run_many_vectorises_a_users_env_with_rows_as_run():
    thetas = np.random.default_rng(5).standard_normal((50, 3))
    results = run_many(_array_env(thetas), "fkm", SEEDS)
    for seed, many in zip(SEEDS, results, strict=True):
        one = run(_array_env(thetas), "fkm", seed=seed)
        assert many.same_outcome(one)
        assert many.env_id == one.env_id == "BanditConvexEnv"
    user = run_many(_array_env(thetas), Jitter, [1])[0]
    assert user.same_outcome(run(_array_env(thetas), Jitter, seed=1))


def test_loss_digests_tell_data_apart_and_equal_data_equal():
    rng = np.random.default_rng(0)
    thetas = rng.standard_normal((40, 3))
    first = run(_array_env(thetas), "random", seed=0)
    again = run(_array_env(thetas.copy()), "random", seed=7)
    other = thetas.copy()
    other[17, 1] += 1e-12
    changed = run(_array_env(other), "random", seed=0)
    assert len(first.loss["digest"]) == 64
    assert first.loss["digest"] == again.loss["digest"]  # data, not seed
    assert first.loss["digest"] != changed.loss["digest"]
    built = [
        run(ENV, "random", horizon=20, seed=s, env_kwargs=SMALL).loss["digest"] for s in (0, 0, 1)
    ]
    assert built[0] == built[1] != built[2]  # family, kwargs and seed
    wider = run(ENV, "random", horizon=20, seed=0, env_kwargs={"n": 5}).loss["digest"]
    assert wider != built[0]


def _value(t, x):
    return float(np.sum(x)) * 0.1


def _gradient(t, x):
    return np.full(x.shape, 0.1)


def _other_value(t, x):
    return float(np.sum(x)) * 0.1


def test_function_losses_are_digested_by_qualified_name_and_constants():
    def env_of(loss, lipschitz=1.0):
        ball = L2Ball(3)
        sequence = from_function(ball, loss, _gradient, horizon=20, lipschitz=lipschitz, bound=1.0)
        return BanditConvexEnv(ball, sequence)

    first = run(env_of(_value), "random", seed=0).loss["digest"]
    assert run(env_of(_value), "random", seed=4).loss["digest"] == first
    assert run(env_of(_other_value), "random", seed=0).loss["digest"] != first
    assert run(env_of(_value, lipschitz=2.0), "random", seed=0).loss["digest"] != first


def test_results_record_the_specs_feedback_so_reports_label_user_agents_right():
    from bco_gym.stats.paired import is_full_information, series_label

    for agent in (Jitter, "ogd"):
        results = run_many(ENV, agent, [0], horizon=30, env_kwargs={**SMALL, "feedback": "full"})
        expected = "full" if agent == "ogd" else "bandit"
        assert results[0].agent_spec["feedback"] == expected
        assert is_full_information(results[0]) == (agent == "ogd")
    assert series_label(results[0]).endswith("(full info)")
    jitter = run(ENV, Jitter, horizon=30, seed=0, env_kwargs={**SMALL, "feedback": "full"})
    assert series_label(jitter) == "jitter" and jitter.agent_spec["regret_exponent"] == 1.0


def test_a_users_subclass_of_a_builtin_is_labelled_by_its_class_name_not_as_the_builtin():
    import gymnasium as gym

    from bco_gym.stats.paired import paired_table

    label = "HalfBBCG"
    assert HalfBBCG.name == "bbcg" and resolve_agent(HalfBBCG).name == label
    assert resolve_agent(HalfBBCG).identity() == "user_agents:HalfBBCG"
    assert resolve_agent(BlockBanditCG).name == resolve_agent("bbcg").name == "bbcg"
    built = HalfBBCG(gym.make(ENV, horizon=60, **SMALL).unwrapped.problem)
    for agent in (HalfBBCG, lambda problem, **kwargs: HalfBBCG(problem, **kwargs), built):
        result = run(ENV, agent, horizon=60, seed=0, env_kwargs=SMALL)
        assert result.agent == result.agent_spec["name"] == label, agent
        assert result.params["c"] == 1.0
    ours = run_many(ENV, HalfBBCG, [0, 1], horizon=60, env_kwargs=SMALL)
    builtin = run_many(ENV, "bbcg", [0, 1], horizon=60, env_kwargs=SMALL)
    assert [r.agent for r in ours + builtin] == [label, label, "bbcg", "bbcg"]
    assert ours[0].final_regret != builtin[0].final_regret  # c = 1 against Theorem 1's c
    # it declares no THEORY_DEFAULTS of its own, so its c = 1 is not credited to Theorem 1
    assert {r.constants for r in ours} == {"default"}
    assert {r.constants for r in builtin} == {"theory"}
    rows = {row.label: row for row in paired_table(ours + builtin, reference="bbcg")}
    series = f"{label} (default, c=1)"
    assert set(rows) == {series, "bbcg"} and rows["bbcg"].seeds == 2
    assert rows[series].pairs == 2 and rows[series].difference_mean == pytest.approx(
        np.mean([a.final_regret - b.final_regret for a, b in zip(ours, builtin, strict=True)]),
        abs=1e-9,
    )


def test_a_single_run_names_the_wrong_shape_its_agent_played_not_a_batchs():
    kwargs = {"fault": "shape", "at": 2}
    with pytest.raises(
        InfeasibleActionError, match=r"^round 2: action of shape \(5,\), expected \(4,\)"
    ):
        run(ENV, Faulty, horizon=30, seed=0, env_kwargs=SMALL, agent_kwargs=kwargs)
    with pytest.raises(
        InfeasibleActionError, match=r"^round 2: action of shape \(2, 5\), expected \(S, 4\)"
    ):
        run_many(ENV, Faulty, [0, 1], horizon=30, env_kwargs=SMALL, agent_kwargs=kwargs)


def test_a_factory_records_the_feedback_and_exponent_of_the_agent_it_builds():
    from bco_gym.stats.paired import series_label

    full = {**SMALL, "feedback": "full"}
    by_class = run(ENV, GradientJitter, horizon=30, seed=0, env_kwargs=full)
    for factory in (gradient_jitter_factory, "user_agents:gradient_jitter_factory"):
        for result in (
            run(ENV, factory, horizon=30, seed=0, env_kwargs=full),
            run_many(ENV, factory, [0], horizon=30, env_kwargs=full)[0],
        ):
            assert np.array_equal(result.regret, by_class.regret)  # the same plays
            assert result.agent_spec["feedback"] == "full"
            assert result.agent_spec["regret_exponent"] == 0.5
            assert series_label(result).endswith("(full info)"), series_label(result)
    bandit = run(ENV, jitter_factory, horizon=30, seed=0, env_kwargs=SMALL)
    assert bandit.agent_spec["feedback"] == "bandit"
    assert bandit.agent_spec["regret_exponent"] == 1.0
    assert series_label(bandit) == "jitter"


def test_the_exponents_table_draws_the_exponent_a_factorys_agent_declared():
    from bco_gym.reports.summary import fit_exponents

    assert resolve_agent(jitter_factory).regret_exponent is None  # known only once built
    results = [
        result
        for horizon in (20, 40)
        for result in run_many(ENV, jitter_factory, [0, 1], horizon=horizon, env_kwargs=SMALL)
    ]
    (fit,) = fit_exponents(results)
    assert (fit.agent, fit.theory) == ("jitter", 1.0)


def test_a_function_parameter_is_recorded_by_its_import_path_not_a_memory_address():
    import json

    from bco_gym.engine.result import jsonable

    recorded = jsonable({"step": np.sqrt, "schedule": Jitter, "rate": np.float64(0.5)})
    assert recorded == {
        "step": "numpy:sqrt",
        "schedule": f"{Jitter.__module__}:Jitter",
        "rate": 0.5,
    }
    assert json.loads(json.dumps(recorded)) == recorded  # the same in every process


def test_the_exponents_figure_draws_a_users_full_information_agent_as_one():
    from bco_gym.plotting.exponents import exponents_figure
    from bco_gym.plotting.style import FULL_INFO_LINESTYLE
    from bco_gym.reports.summary import fit_exponents

    kwargs = {**SMALL, "feedback": "full"}
    results = [
        result
        for agent in (GradientJitter, Jitter)
        for horizon in (40, 80)
        for result in run_many(ENV, agent, [0, 1], horizon=horizon, env_kwargs=kwargs)
    ]
    fits = {fit.agent: fit for fit in fit_exponents(results)}
    assert fits["gradient-jitter"].full_information and not fits["jitter"].full_information
    figure = exponents_figure(list(fits.values()))
    styles = {
        line.get_label().split(":")[0]: line.get_linestyle()
        for line in figure.axes[0].get_lines()
        if not line.get_label().startswith("_")
    }
    assert styles == {"gradient-jitter (full info)": FULL_INFO_LINESTYLE, "jitter": "-"}
