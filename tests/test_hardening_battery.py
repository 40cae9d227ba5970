"""The hardening battery (issue 23): each case a clean typed error naming the value, or
the right behaviour, on the surfaces of the third round: user losses, the vector env,
batched agents, two-point feedback, portfolio data, wrappers, result directories under
faults, and the CLI's newer commands.

Every case is fast (no case plays more than a few hundred rounds).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import sys
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from bench_fixtures import plain_report

import bco_gym  # noqa: F401  (registers the ids)
from bco_gym.agents import make_agent
from bco_gym.cli import main
from bco_gym.cli_checks import (
    OWNER_FILE,
    UsageError,
    check_command_directory,
    claim_command_directory,
)
from bco_gym.envs import BanditConvexEnv
from bco_gym.errors import InfeasibleActionError, InvalidLossError, LossCheckError
from bco_gym.losses import from_array, from_function
from bco_gym.sets import Hypercube, L1Ball, L2Ball, Simplex
from bco_gym.wrappers import BoxActionAdapter, RegretRecorder

# Extreme constants cap the smoothing radius at r, which warns; the cases check the refusal.
pytestmark = pytest.mark.filterwarnings("ignore:.*reaches the inner radius:UserWarning")


def _cli(argv, capsys):
    """(exit code, stdout, stderr) of ``bco-gym argv``."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as stop:
        code = stop.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _tree(path: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes() if p.is_file() else b"<dir>"
        for p in sorted(path.rglob("*"))
    }


# -- directories a command owns (demo, bench) ---------------------------------------------------
def _layout(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if text == "<dir>":
            target.mkdir(exist_ok=True)
        else:
            target.write_text(text)
    return root


OWNED_REFUSED = [
    ({"report.md": "my own notes"}, "found report.md"),
    ({"scores.csv": "a,b"}, "found scores.csv"),
    ({"notes/x.txt": "x"}, "found notes"),
    ({OWNER_FILE: '{"command": "bench"}'}, "written by `bco-gym bench`"),
    ({OWNER_FILE: "{broken"}, "unreadable"),
    ({OWNER_FILE: '{"command": 3}'}, "unreadable"),
    ({OWNER_FILE: "[]"}, "unreadable"),
    ({"runs/a/x.json": "{}"}, "found runs"),  # runs/ without sweeps is not a demo's
    ({"manifest.json": "{}"}, "found manifest.json"),  # a sweep is compare's, not demo's
]


@pytest.mark.parametrize(("files", "expected"), OWNED_REFUSED)
def test_demo_refuses_a_directory_it_did_not_write(tmp_path, capsys, files, expected):
    out = _layout(tmp_path / "out", files)
    before = _tree(out)
    code, _, err = _cli(["demo", "--quick", "--out", out], capsys)
    assert code == 2
    assert expected in err and str(out) in err
    assert _tree(out) == before  # nothing written, nothing overwritten


OWNED_ALLOWED = [
    {},
    {OWNER_FILE: '{"command": "demo"}', "report.md": "an earlier demo"},
    {"runs/iid-ball/manifest.json": "{}", "report.md": "a demo from before the marker"},
    {"compare/x/manifest.json": "{}", "tuned_constants.json": "{}", ".lock": ""},
]


@pytest.mark.parametrize("files", OWNED_ALLOWED)
def test_demo_accepts_a_new_empty_or_own_directory(tmp_path, files):
    from bco_gym.cli_bench import DEMO_SHARED, _demo_written

    out = _layout(tmp_path / "out", files) if files else tmp_path / "out"
    kwargs = {"shared": DEMO_SHARED, "recognise": _demo_written}
    assert check_command_directory(out, "demo", outputs=("report.md",), **kwargs) == out
    claim_command_directory(out, "demo")
    assert json.loads((out / OWNER_FILE).read_text()) == {"command": "demo"}
    assert check_command_directory(out, "demo", **kwargs) == out
    with pytest.raises(UsageError, match="written by `bco-gym demo`"):
        check_command_directory(out, "bench")


def test_an_owned_directory_refuses_an_output_that_is_a_directory(tmp_path):
    out = _layout(tmp_path / "out", {OWNER_FILE: '{"command": "bench"}', "report.md": "<dir>"})
    with pytest.raises(UsageError, match=r"report\.md is a directory"):
        check_command_directory(out, "bench", outputs=("report.md",))


def test_an_owned_directory_must_be_writable(tmp_path, monkeypatch):
    out = claim_command_directory(tmp_path / "out", "bench")
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # as for a non-root user
    with pytest.raises(UsageError, match="is not writable"):
        check_command_directory(out, "bench")


# -- user losses: from_function certifies only what it has checked -----------------------------
TARGETS = np.random.default_rng(7).uniform(-0.5, 0.5, (8, 3))


def _square(t, x):
    return float(np.sum((x - TARGETS[t]) ** 2))


def _square_gradient(t, x):
    return 2.0 * (x - TARGETS[t])


def _nonconvex_at_five(t, x):
    return -_square(t, x) if t == 5 else _square(t, x)


def _nonconvex_at_five_gradient(t, x):
    return -_square_gradient(t, x) if t == 5 else _square_gradient(t, x)


def _object_array(t, x):
    return np.array([object()] * 3, dtype=object)


FUNCTION_REFUSED = [
    # (loss, gradient, error, message): K = the unit ball in R^3, T = 8, G = 10, M = 10
    (lambda t, x: -float(x @ x), lambda t, x: -2 * x, LossCheckError, "round 0: the first-order"),
    (_square, lambda t, x: 0 * x, LossCheckError, "first-order condition"),
    (_square, lambda t, x: -_square_gradient(t, x), LossCheckError, "first-order condition"),
    (_square, lambda t, x: 1.01 * _square_gradient(t, x), LossCheckError, "finite differences"),
    (_square, lambda t, x: _square_gradient((t + 1) % 8, x), LossCheckError, "round 0"),
    (lambda t, x: float(x.sum()), lambda t, x: 1.001 * np.ones(3), LossCheckError, "first-order"),
    (_nonconvex_at_five, _nonconvex_at_five_gradient, LossCheckError, "round 5: the first"),
    (lambda t, x: float(np.sqrt(abs(x[0]) + 1)), lambda t, x: np.zeros(3), LossCheckError, "x ="),
    (lambda t, x: "0.5", _square_gradient, InvalidLossError, "'0.5' (str), not a real number"),
    (lambda t, x: True, _square_gradient, InvalidLossError, "True (bool), not a real number"),
    (lambda t, x: np.True_, _square_gradient, InvalidLossError, "(bool), not a real number"),
    (lambda t, x: None, _square_gradient, InvalidLossError, "None (NoneType)"),
    (lambda t, x: 1 + 0j, _square_gradient, InvalidLossError, "(complex), not a real number"),
    (lambda t, x: [0.5], _square_gradient, InvalidLossError, "[0.5] (list)"),
    (lambda t, x: np.array([0.5]), _square_gradient, InvalidLossError, "(ndarray), not a real"),
    (_square, lambda t, x: np.array(["1", "2", "3"]), InvalidLossError, "dtype <U1"),
    (_square, lambda t, x: np.array([True, False, True]), InvalidLossError, "dtype bool"),
    (_square, _object_array, InvalidLossError, "dtype object"),
    (_square, lambda t, x: "gradient", InvalidLossError, "'gradient' (dtype <U8)"),
    (_square, lambda t, x: np.ones(2), ValueError, "gradient returned shape (2,), expected (3,)"),
    (_square, lambda t, x: np.full(3, np.nan), InvalidLossError, "has non-finite entries"),
    (lambda t, x: float("nan"), _square_gradient, InvalidLossError, "loss returned nan at x ="),
    (lambda t, x: float("inf"), _square_gradient, InvalidLossError, "loss returned inf"),
    (lambda t, x: 50 + float(x[0]), lambda t, x: np.eye(3)[0], ValueError, "declared bound=10"),
    (lambda t, x: 5 * float(x[0]), lambda t, x: 20 * np.eye(3)[0], ValueError, "lipschitz=10.0"),
]


@pytest.mark.parametrize(("loss", "gradient", "error", "message"), FUNCTION_REFUSED)
def test_from_function_refuses_what_its_checks_refute(loss, gradient, error, message):
    with pytest.raises(error, match=re.escape(message)):
        from_function(L2Ball(3), loss, gradient, 8, lipschitz=10.0, bound=10.0)


def _batched_square(rounds, points):
    return np.sum((points - TARGETS[rounds]) ** 2, axis=1)


def _batched_square_gradient(rounds, points):
    return 2.0 * (points - TARGETS[rounds])


BATCHED_REFUSED = [
    (lambda r, p: -np.sum(p * p, axis=1), lambda r, p: -2 * p, LossCheckError, "first-order"),
    (lambda r, p: np.array(["1"] * len(r)), _batched_square_gradient, InvalidLossError, "<U1"),
    (lambda r, p: np.ones(len(r), dtype=bool), _batched_square_gradient, InvalidLossError, "bool"),
    (lambda r, p: np.zeros(len(r) + 1), _batched_square_gradient, ValueError, "batched loss"),
    (_batched_square, lambda r, p: p[:, :2], ValueError, "batched gradient returned shape"),
    (_batched_square, lambda r, p: np.zeros_like(p), LossCheckError, "first-order"),
]


@pytest.mark.parametrize(("loss", "gradient", "error", "message"), BATCHED_REFUSED)
def test_batched_user_losses_are_checked_the_same_way(loss, gradient, error, message):
    with pytest.raises(error, match=re.escape(message)):
        from_function(L2Ball(3), loss, gradient, 8, 10.0, 10.0, batched=True)


def _abs_loss(t, x):
    return float(np.abs(x - TARGETS[t]).sum())


def _abs_gradient(t, x):
    return np.sign(x - TARGETS[t])


FUNCTION_ACCEPTED = [
    (L2Ball(3), _square, _square_gradient),
    (L2Ball(3), _abs_loss, _abs_gradient),  # convex, not differentiable on a null set
    (L2Ball(3), lambda t, x: np.float32(x.sum()), lambda t, x: np.ones(3, dtype=np.float32)),
    (L2Ball(3), lambda t, x: np.array(x.sum()), lambda t, x: np.ones(3, dtype=np.int64)),
    (L2Ball(3), lambda t, x: 1, lambda t, x: [0, 0, 0]),  # a constant int and a list
    (Simplex(3), _square, _square_gradient),
    (Hypercube(-np.ones(3), np.ones(3)), _abs_loss, _abs_gradient),
]


@pytest.mark.parametrize(("convex_set", "loss", "gradient"), FUNCTION_ACCEPTED)
def test_from_function_certifies_convex_losses_it_has_checked(convex_set, loss, gradient):
    losses = from_function(convex_set, loss, gradient, 8, lipschitz=10.0, bound=10.0)
    assert losses.verified and losses.describe()["comparator"] == "checked on 48 samples"
    (best,) = losses.comparator([8])
    # The certificate is a true bound: no point of K (vertices and random points) beats
    # the comparator by more than its gap.
    rng = np.random.default_rng(0)
    probes = [convex_set.lmo(rng.standard_normal(3)) for _ in range(50)]
    probes += [convex_set.sample(rng) for _ in range(50)]
    for probe in probes:
        total = sum(float(loss(t, probe)) for t in range(8))
        assert total >= best.value - best.gap - 1e-9


def test_the_opt_out_leaves_the_comparator_uncertified_in_the_result():
    from bco_gym.experiment import run

    losses = from_function(
        L2Ball(3), lambda t, x: -float(x @ x), lambda t, x: -2 * x, 8, 10.0, 10.0, verify=False
    )
    assert not losses.verified and losses.describe()["comparator"] == "uncertified"
    result = run(BanditConvexEnv(L2Ball(3), losses), "random", seed=0)
    assert result.loss["comparator"] == "uncertified"
    checked = from_function(L2Ball(3), _square, _square_gradient, 8, 10.0, 10.0)
    assert run(BanditConvexEnv(L2Ball(3), checked), "random", seed=0).loss["comparator"] == (
        "checked on 48 samples"
    )


@pytest.mark.parametrize("verify", ["yes", 1, None])
def test_verify_must_be_a_bool(verify):
    with pytest.raises(TypeError, match=f"verify={verify!r} must be True or False"):
        from_function(L2Ball(3), _square, _square_gradient, 8, 10.0, 10.0, verify=verify)


def test_the_checks_are_sampled_and_deterministic():
    calls = []

    def loss(t, x):
        calls.append((t, x.tobytes()))
        return float(x.sum()) / 10

    gradient = lambda t, x: np.full(3, 0.1)  # noqa: E731
    from_function(L2Ball(3), loss, gradient, 10**6, 10.0, 10.0)
    first = list(calls)
    calls.clear()
    from_function(L2Ball(3), loss, gradient, 10**6, 10.0, 10.0)
    assert calls == first  # the same rounds and points: the verdict is fixed
    rounds = {t for t, _ in first}
    assert 0 in rounds and 10**6 - 1 in rounds and len(rounds) == 8
    assert len(first) <= 8 * 12  # cheap: a dozen values per sampled round


# -- user losses: from_array copies, or reads a memmap in place and checks it -------------------
ARRAY_REFUSED = [
    (np.zeros((4, 3)), None, ValueError, "every theta_t is zero (all 4 rounds)"),
    (np.ones((4, 3)), -np.ones(4), ValueError, "every f_t is 0 on K (M = 0)"),
    (np.full((4, 3), 1e200), None, ValueError, "round 0: ||theta_t|| overflows float64"),
    (np.array([[0, 0, 1], [1e300, 1e300, 0]]), None, ValueError, "round 1: ||theta_t|| overflow"),
    (np.array([[1.0, np.nan, 0]]), None, InvalidLossError, "thetas[0] (round 0) holds a non-fin"),
    (np.array([[1.0, 0, 0], [0, 0, -np.inf]]), None, InvalidLossError, "thetas[1] (round 1)"),
    (np.ones((2, 3)), np.array([0.0, np.nan]), InvalidLossError, "offsets[1] (round 1)"),
    (np.ones((0, 3)), None, ValueError, "thetas is empty (T = 0)"),
    (np.ones((4, 2)), None, ValueError, "thetas has shape (4, 2), expected (T, 3)"),
    (np.ones(3), None, ValueError, "thetas has shape (3,), expected (T, 3)"),
    (np.ones((2, 3, 1)), None, ValueError, "thetas has shape (2, 3, 1)"),
    (np.ones((2, 3)), np.ones(3), ValueError, "offsets has shape (3,), expected (2,)"),
    (np.ones((2, 3)), np.ones((2, 1)), ValueError, "offsets has shape (2, 1), expected (2,)"),
    (np.ones((2, 3), dtype=bool), None, TypeError, "got dtype bool"),
    (np.ones((2, 3), dtype=complex), None, TypeError, "got dtype complex128"),
    (np.array([[object()] * 3]), None, TypeError, "got dtype object"),
    ([["a", "b", "c"]], None, TypeError, "got dtype <U1"),
    (np.zeros((2, 3), dtype="datetime64[s]"), None, TypeError, "got dtype datetime64[s]"),
    (None, None, TypeError, "got dtype object (NoneType)"),
    ([[1, 2, 3], [1, 2]], None, ValueError, "thetas is not a rectangular array of numbers"),
    (np.ones((2, 3)), np.array([True, False]), TypeError, "offsets must hold real numbers"),
    (np.ones((2, 3)), "0", TypeError, "offsets must hold real numbers"),
]


@pytest.mark.parametrize(("thetas", "offsets", "error", "message"), ARRAY_REFUSED)
def test_from_array_refuses_degenerate_data_with_a_message_about_the_data(
    thetas, offsets, error, message
):
    with pytest.raises(error, match=re.escape(message)):
        from_array(Simplex(3), thetas, offsets)


def test_from_array_keeps_a_private_copy_of_an_in_memory_array():
    thetas, offsets = np.eye(3)[[0, 1, 2, 0]], np.array([0.0, 0.5, -0.5, 0.0])
    losses = from_array(Simplex(3), thetas, offsets)
    bound, before = losses.bound, losses.comparator([4])[0].value
    thetas[:] = 1e6  # the caller mutates its arrays afterwards
    offsets[:] = -1e6
    losses.reset(np.random.default_rng(0))
    values = losses.losses(0, np.full((4, 3), 1 / 3))
    np.testing.assert_allclose(values, [1 / 3, 1 / 3 + 0.5, 1 / 3 - 0.5, 1 / 3], rtol=1e-15)
    assert losses.bound == bound and losses.comparator([4])[0].value == before
    assert not losses.read_in_place and not losses.thetas.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        losses.thetas[0, 0] = 5.0


def test_from_array_refuses_a_memmap_changed_after_it_was_read(tmp_path):
    path = tmp_path / "thetas.npy"
    thetas = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(40, 3))
    thetas[:] = np.random.default_rng(0).standard_normal((40, 3))
    thetas.flush()
    losses = from_array(Simplex(3), thetas)
    assert losses.read_in_place and not losses.thetas.flags.writeable
    losses.reset(np.random.default_rng(0))
    np.testing.assert_array_equal(losses.losses(0, np.tile(np.eye(3)[0], (40, 1))), thetas[:, 0])
    thetas[7, 1] = 1e9  # written through the caller's writable memmap
    losses.reset(np.random.default_rng(1))  # drops the cached chunk
    with pytest.raises(InvalidLossError, match=r"memmap's rounds 0\.\.39 changed after"):
        losses.losses(0, np.tile(Simplex(3).center, (40, 1)))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.uint16, np.int64])
def test_from_array_takes_every_real_dtype(dtype):
    thetas = np.array([[1, 2, 0], [0, 1, 3]], dtype=dtype)
    losses = from_array(Simplex(3), thetas)
    assert losses.lipschitz == pytest.approx(np.sqrt(10.0)) and losses.bound == 3.0
    (best,) = losses.comparator([2])
    assert best.value == 1.0 and best.gap == 0.0  # brute force: vertex 0 gives 1 + 0


# -- vector env: atomic strict resets, steps that count rows ------------------------------------
def _vector(num_envs=3, **kwargs):
    return gym.make_vec(
        "BCO-Ball-v0", num_envs=num_envs, vectorization_mode="vector_entry_point", n=4, **kwargs
    )


def _row_states(envs) -> list:
    """What a reset changes: each row's generator state and its loss sequence's seed."""
    return [
        (rng.bit_generator.state, sequence.seed)
        for rng, sequence in zip(envs._row_rngs, envs.losses.sequences, strict=True)
    ]


RESET_REFUSED = [
    ([1, -2, 3], "seed[1]=-2 must be None or an int >= 0"),
    ([1, True, 3], "seed[1]=True must be None or an int >= 0 (not a bool)"),
    ([1, 2, np.True_], "seed[2]=np.True_ must be None"),
    ([0, 1.5, 2], "seed[1]=1.5 must be None"),
    (["0", 1, 2], "seed[0]='0' must be None"),
    ([0, 1, [2]], "seed[2]=[2] must be None"),
    ([0, 1], "a list of 3 seeds"),
    ([0, 1, 2, 3], "a list of 3 seeds"),
    (-1, "seed=-1 is not allowed"),
    (True, "seed=True is not allowed"),
    (np.True_, "seed=np.True_ is not allowed"),
    (1.0, "seed=1.0 is not allowed"),
    ("0", "seed='0' is not allowed"),
    ({0: 1}, "seed={0: 1} is not allowed"),
    (np.array([0, 1, 2]), "is not allowed"),
]


@pytest.mark.parametrize(("seed", "message"), RESET_REFUSED)
def test_a_refused_vector_reset_changes_no_row(seed, message):
    envs = _vector()
    envs.reset(seed=[10, 11, 12])
    envs.step(np.zeros((3, 4)))
    before, round_before = _row_states(envs), envs.round
    with pytest.raises(ValueError, match=re.escape(message)):
        envs.reset(seed=seed)
    assert _row_states(envs) == before and envs.round == round_before


@pytest.mark.parametrize("options", [{"x": 1}, {"seed": 3}, {"reset_mask": np.ones(3, bool)}])
def test_a_vector_reset_refuses_options_as_the_single_env_does(options):
    envs = _vector()
    envs.reset(seed=0)
    before = _row_states(envs)
    with pytest.raises(ValueError, match=r"options=.* is not allowed; BanditConvexVectorEnv"):
        envs.reset(seed=5, options=options)
    assert _row_states(envs) == before
    single = gym.make("BCO-Ball-v0", n=4)
    with pytest.raises(ValueError, match=r"options=.* is not allowed; BanditConvexEnv"):
        single.reset(seed=0, options=options)


@pytest.mark.parametrize("seed", [[np.int64(3), None, 5], (0, 1, 2), [7, 7, 7], 2**40])
def test_accepted_vector_seeds_give_each_row_the_single_env(seed):
    envs = _vector()
    envs.reset(seed=seed, options={})
    rows = [seed + i for i in range(3)] if isinstance(seed, int) else list(seed)
    actions = np.random.default_rng(1).uniform(-0.4, 0.4, (3, 4))
    _, rewards, *_ = envs.step(actions)
    for i, row_seed in enumerate(rows):
        if row_seed is None:
            continue
        single = gym.make("BCO-Ball-v0", n=4)
        single.reset(seed=int(row_seed))
        _, reward, *_ = single.step(actions[i])
        assert reward == rewards[i]  # bit for bit


STEP_REFUSED = [
    ({}, np.zeros((2, 4)), "shape (2, 4) has 2 rows, expected one per env: 3 rows, shape (3, 4)"),
    ({}, np.zeros((4, 4)), "has 4 rows, expected one per env: 3 rows, shape (3, 4)"),
    ({}, np.zeros(4), "action of shape (4,) has 4 rows"),
    ({}, np.zeros((2, 2, 4)), "has 2 rows"),
    ({}, [[0.0] * 4] * 2, "has 2 rows"),
    ({}, np.zeros((0, 4)), "has 0 rows"),
    ({"feedback": "two-point"}, np.zeros((2, 2, 4)), "2 rows, expected one per env: 3 rows, "),
    ({"feedback": "two-point"}, np.zeros((4, 2, 4)), "shape (3, 2, 4)"),
    ({"feedback": "full"}, np.zeros((2, 4)), "has 2 rows"),
    ({}, np.zeros((3, 5)), "action of shape (3, 5), expected (S, 4)"),
    ({}, np.full((3, 4), np.nan), "non-finite"),
    ({}, np.full((3, 4), 2.0), "round 0, row 0: action not in L2Ball(n=4, radius=1)"),
    ({}, "x", "action 'x' is not a numeric array of real numbers"),
    ({}, None, "action None is not a numeric array"),
    ({}, np.zeros((3, 4), dtype=bool), "dtype bool"),
    ({"feedback": "two-point"}, np.zeros((3, 4)), "expected (S, 2, 4)"),
]


@pytest.mark.parametrize(("kwargs", "actions", "message"), STEP_REFUSED)
def test_a_refused_vector_step_names_the_action_and_plays_nothing(kwargs, actions, message):
    envs = _vector(**kwargs)
    envs.reset(seed=0)
    with pytest.raises(InfeasibleActionError, match=re.escape(message)):
        envs.step(actions)
    assert envs.round == 0


def test_a_vector_step_before_reset_is_refused():
    with pytest.raises(gym.error.ResetNeeded):
        _vector().step(np.zeros((3, 4)))


# -- batched agents ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["bbcg", "fkm", "bfw", "random"])
@pytest.mark.parametrize("seed", [[1, True, 2], [1, -2, 3], [1, 2], 1.5, True, "0", -1])
def test_batched_agents_refuse_bad_seeds(name, seed):
    agent = make_agent(name, _vector())
    with pytest.raises(ValueError, match=re.escape(f"reset(seed={seed!r})")):
        agent.reset(seed=seed)


@pytest.mark.parametrize(
    ("loss", "message"),
    [
        (np.zeros(2), "losses of shape (2,), expected (3,)"),
        (np.array([0.0, np.nan, 0.0]), "losses[1]=nan must be finite"),
        ("x", "update() got loss"),
        (np.array([True, False, True]), "update() got loss"),
    ],
)
def test_batched_agents_refuse_bad_losses(loss, message):
    envs = _vector()
    agent = make_agent("fkm", envs)
    agent.reset(seed=[0, 1, 2])
    observations, _ = envs.reset(seed=0)
    agent.act(observations)
    with pytest.raises(ValueError, match=re.escape(message)):
        agent.update(loss, {})


# -- constants: every scale constant, grid bound and tuned value gives finite parameters ----------
@pytest.mark.parametrize(
    ("name", "feedback", "value"),
    [
        ("fkm", "bandit", 1e-300),
        ("fkm", "bandit", 1e308),
        ("bbcg", "bandit", 1e-300),
        ("bbcg", "bandit", 1e-320),
        ("ogd", "full", 1e-320),
        ("ogd", "full", 1e308),
        ("fkm2", "two-point", 1e308),
        ("bbcg2", "two-point", 1e-320),
    ],
)
def test_an_extreme_scale_constant_is_refused_when_the_agent_is_built(name, feedback, value):
    env = gym.make("BCO-Ball-v0", n=3, horizon=100, feedback=feedback)
    with pytest.raises(ValueError, match=re.escape(f"agent {name!r} with c={value!r}: ")):
        make_agent(name, env, c=value)


@pytest.mark.parametrize(
    ("name", "value", "parameter"),
    [("fkm", 1e300, "step_size"), ("bbcg", 1e300, "step_size"), ("bfw", 1e-300, "smoothing")],
)
def test_a_finite_constant_whose_run_would_overflow_is_refused(name, value, parameter):
    """Finite parameters are not enough (issue 35): c = 1e300 gave fkm a step of 1e298 and
    its run "overflow encountered in dot"; a parameter times the problem's scale must stay
    below 1e150, so the run's values and their squares stay finite."""
    env = gym.make("BCO-Ball-v0", n=3, horizon=100)
    shown = re.escape(f"agent {name!r} with c={value!r}: ")
    with pytest.raises(ValueError, match=shown + f".*parameter {parameter}.*overflow float64"):
        make_agent(name, env, c=value)
    for moderate in (1e-4, 1e4):  # constants far from the default but sane still build
        agent = make_agent(name, env, c=moderate)
        assert agent.params["c"] == moderate


BALL3 = ["--env", "BCO-Ball-v0", "--env-kwargs", '{"n": 3}']

CLI_CONSTANTS_REFUSED = [
    (["run", *BALL3, "--agent", "fkm", "--agent-kwargs", '{"c": 1e-300}'], "agent 'fkm' with"),
    (["run", *BALL3, "--agent", "fkm", "--agent-kwargs", '{"c": 1e308}'], "c=1e+308"),
    (["run", *BALL3, "--agent", "bbcg", "--agent-kwargs", '{"c": 1e-320}'], "regret bound"),
    (["tune", *BALL3, "--agents", "fkm", "--grid", "1e-300:1e300"], "--grid 1e-300:1e+300"),
    (["tune", *BALL3, "--agents", "fkm,bbcg", "--grid", "1:1e308"], "c=1e+308"),
    (["tune", *BALL3, "--agents", "bbcg", "--grid", "1e-320:1"], "agent 'bbcg' with"),
]


@pytest.mark.parametrize(("argv", "expected"), CLI_CONSTANTS_REFUSED)
def test_extreme_constants_exit_2_with_one_line(tmp_path, capsys, monkeypatch, argv, expected):
    monkeypatch.chdir(tmp_path)
    code, _, err = _cli([*argv, "--horizon", "50"], capsys)
    assert code == 2 and expected in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # refused before anything is written


def _tuned_file(path: Path, **entry) -> Path:
    constant = {
        "param": "c",
        "value": 1.0,
        "mean_regret": 3.0,
        "theory_value": 1.7,
        "grid": [0.1, 1.0],
        "scores": [4.0, 3.0],
    }
    agent = entry.pop("agent", "fkm")
    constant.update(entry)
    document = {
        "format": "bco_gym-tuned-constants/1",
        "env_id": "BCO-Ball-v0",
        "env_kwargs": {"n": 3},
        "horizon": 50,
        "tune_seeds": [100],
        "constants": {agent: constant},
        "skipped": {},
    }
    path.write_text(json.dumps(document))
    return path


TUNED_REFUSED = [
    ({"param": "step_size"}, "param 'step_size' is not its scale parameter 'c'"),
    ({"param": "smoothing_radius"}, "is not its scale parameter"),
    ({"value": "0.5"}, "constant of 'fkm' is '0.5' (str), not a number"),
    ({"value": True}, "is True (bool), not a number"),
    ({"value": None}, "is None (NoneType), not a number"),
    ({"value": [1.0]}, "(list), not a number"),
    ({"value": 0}, "not a positive number"),
    ({"value": 1e308}, "c=1e+308"),
    ({"agent": "zzz"}, "agent 'zzz' is not an agent"),
    ({"agent": "random", "param": "c"}, "agent 'random' has no free constant"),
]


@pytest.mark.parametrize(("entry", "expected"), TUNED_REFUSED)
def test_tuned_entries_are_validated(tmp_path, capsys, monkeypatch, entry, expected):
    monkeypatch.chdir(tmp_path)
    tuned = _tuned_file(tmp_path / "tuned.json", **entry)
    argv = ["compare", *BALL3, "--agents", "fkm,random", "--horizon", "50", "--seeds", "2"]
    code, _, err = _cli([*argv, "--tuned", tuned, "--out", tmp_path / "out"], capsys)
    assert code == 2 and expected in err, err
    assert not (tmp_path / "out").exists()


# -- result directories: kinds of sweeps, read-only sweeps, faults ------------------------------
@pytest.fixture(scope="module")
def sweeps(tmp_path_factory):
    """A finished compare sweep and a finished tuning sweep (tiny), made once."""
    root = tmp_path_factory.mktemp("sweeps")
    compare = root / "compare"
    argv = ["compare", *BALL3, "--agents", "fkm,random", "--horizon", "30", "--seeds", "2"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "matplotlib", None)  # tables only: fast
        assert main([*argv, "--out", str(compare), "--quiet"]) == 0
        tuned = root / "tuned.json"
        tune = ["tune", *BALL3, "--agents", "fkm", "--horizon", "30", "--tune-seeds", "100"]
        assert (
            main([*tune, "--grid", "0.5:2", "--points", "2", "--out", str(tuned), "--quiet"]) == 0
        )
    return {"compare": compare, "tune": root / "tuned_runs", "tuned": tuned}


def test_tune_refuses_a_sweep_dir_holding_a_compare_sweep(sweeps, tmp_path, capsys):
    before = _tree(sweeps["compare"])
    tune = ["tune", *BALL3, "--agents", "fkm", "--horizon", "30", "--tune-seeds", "100"]
    argv = [*tune, "--grid", "0.5:2", "--points", "2", "--out", tmp_path / "t.json"]
    code, _, err = _cli([*argv, "--sweep-dir", sweeps["compare"]], capsys)
    assert code == 2 and "holds a compare or exponents sweep" in err
    assert _tree(sweeps["compare"]) == before and not (tmp_path / "t.json").exists()


def test_compare_refuses_an_out_holding_tuning_runs(sweeps, capsys):
    before = _tree(sweeps["tune"])
    argv = ["compare", *BALL3, "--agents", "fkm,random", "--horizon", "30", "--seeds", "2"]
    code, _, err = _cli([*argv, "--out", sweeps["tune"]], capsys)
    assert code == 2 and "holds the tuning runs of `bco-gym tune`" in err
    assert _tree(sweeps["tune"]) == before


def test_plot_prints_a_read_only_sweep_and_writes_nothing(sweeps, capsys, monkeypatch):
    before = _tree(sweeps["compare"])
    real_access = os.access
    read_only = str(sweeps["compare"])
    monkeypatch.setattr(
        os, "access", lambda p, mode: False if str(p) == read_only else real_access(p, mode)
    )
    code, out, err = _cli(["plot", sweeps["compare"]], capsys)
    assert code == 0 and "fkm" in out and "random" in out
    assert "is read-only: printed the table, wrote nothing" in err and "--out" in err
    assert _tree(sweeps["compare"]) == before


def test_plot_writes_to_out_when_given(sweeps, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    before = _tree(sweeps["compare"])
    code, out, _ = _cli(["plot", sweeps["compare"], "--out", tmp_path / "figures"], capsys)
    assert code == 0 and "fkm" in out
    assert {p.name for p in (tmp_path / "figures").iterdir()} >= {"table.md", "table.csv"}
    assert _tree(sweeps["compare"]) == before
    foreign = _layout(tmp_path / "foreign", {"notes.txt": "mine"})
    code, _, err = _cli(["plot", sweeps["compare"], "--out", foreign], capsys)
    assert code == 2 and "was not written by `bco-gym plot`" in err


# -- wrappers ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("BCO-Ball-v0", {"n": 3}),
        ("BCO-Simplex-v0", {"n": 3}),
        ("BCO-Hypercube-v0", {"n": 2}),
        ("BCO-L1Ball-v0", {"n": 3}),
    ],
)
def test_box_action_adapter_refuses_a_two_point_env_when_built(env_id, kwargs):
    env = gym.make(env_id, feedback="two-point", **kwargs)
    with pytest.raises(ValueError, match=r"feedback='two-point' \(its actions are pairs"):
        BoxActionAdapter(env)
    adapted = BoxActionAdapter(gym.make(env_id, **kwargs))  # one point per action: fine
    adapted.reset(seed=0)
    *_, info = adapted.step(adapted.action_space.sample())
    assert np.isfinite(info["loss"])


def test_box_action_adapter_refuses_a_second_adapter():
    with pytest.raises(ValueError, match="already has one"):
        BoxActionAdapter(RegretRecorder(BoxActionAdapter(gym.make("BCO-Ball-v0", n=3))))


@pytest.mark.parametrize("wrapper", [BoxActionAdapter, RegretRecorder])
def test_wrappers_refuse_an_env_that_is_not_a_bco_env(wrapper):
    with pytest.raises(TypeError, match="needs a bco_gym env"):
        wrapper(gym.make("CartPole-v1"))


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (np.zeros(2), "action of shape (2,), expected (3,)"),
        (np.full(3, np.nan), "action has non-finite entries"),
        ("x", "action 'x' has dtype <U1"),
        (np.zeros(3, dtype=bool), "has dtype bool"),
    ],
)
def test_box_action_adapter_refuses_bad_box_actions(action, message):
    env = BoxActionAdapter(gym.make("BCO-Simplex-v0", n=3, horizon=5))
    env.reset(seed=0)
    with pytest.raises(ValueError, match=re.escape(message)):
        env.step(action)


def test_box_action_adapter_clips_actions_outside_the_box_onto_k():
    env = BoxActionAdapter(gym.make("BCO-Simplex-v0", n=3, horizon=5))
    env.reset(seed=0)
    np.testing.assert_array_equal(env.action(np.full(3, 5.0)), env.action(np.ones(3)))
    assert Simplex(3).contains(env.action(np.array([5.0, -7.0, 0.3])))


# -- portfolio data -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dataset": "zzz"}, "dataset='zzz' is not allowed; allowed: nyse_o"),
        ({"dataset": 3}, "dataset=3 is not allowed"),
        ({"dataset": "nyse_o", "horizon": 10**9}, "past the end of dataset 'nyse_o'"),
        ({"dataset": "nyse_o", "loss": "linear"}, "unknown keyword(s) 'loss'"),
        ({"dataset": "nyse_o", "n": 5}, "unknown keyword(s) 'n'"),
    ],
)
def test_portfolio_refuses_bad_kwargs(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        gym.make("BCO-Portfolio-v0", **kwargs)


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (np.zeros(36), "sum of entries 0 (1 - 1), expected 1"),
        (np.ones(36), "sum of entries 36"),
        (-np.ones(36) / 36, "entry 0 is -0.0278, expected >= 0"),
        (np.full(36, np.nan), "non-finite entries"),
        (np.ones(35) / 35, "action of shape (35,)"),
    ],
)
def test_portfolio_refuses_actions_off_the_simplex(action, message):
    env = gym.make("BCO-Portfolio-v0", dataset="nyse_o", horizon=20)
    env.reset(seed=0)
    with pytest.raises(InfeasibleActionError, match=re.escape(message)):
        env.step(action)


def test_portfolio_loss_is_minus_the_log_return_of_the_day():
    env = gym.make("BCO-Portfolio-v0", dataset="nyse_o", horizon=3)
    env.reset(seed=0)
    uniform = np.full(36, 1 / 36)
    _, reward, *_ = env.step(uniform)
    first = env.unwrapped.losses.losses(0, uniform[np.newaxis])[0]
    assert -reward == first and np.isfinite(first)


# -- two-point feedback ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("action", "message"),
    [
        (np.zeros(3), "two-point action of shape (3,), expected (2, 3)"),
        (np.zeros((3, 3)), "two-point action of shape (3, 3)"),
        (np.zeros((2, 2)), "two-point action of shape (2, 2)"),
        (np.array([[0, 0, 0], [2, 0, 0]]), "point 1 of the two-point action: round 0"),
        (np.array([[np.nan, 0, 0], [0, 0, 0]]), "point 0 of the two-point action"),
        (np.zeros((2, 3), dtype=bool), "dtype bool"),
    ],
)
def test_two_point_env_refuses_bad_pairs(action, message):
    env = gym.make("BCO-Ball-v0", n=3, feedback="two-point")
    env.reset(seed=0)
    with pytest.raises(InfeasibleActionError, match=re.escape(message)):
        env.step(action)


@pytest.mark.parametrize(
    ("name", "feedback"), [("fkm2", "bandit"), ("bbcg2", "full"), ("fkm", "two-point")]
)
def test_two_point_agents_and_envs_must_match(name, feedback):
    env = gym.make("BCO-Ball-v0", n=3, feedback=feedback)
    with pytest.raises(ValueError, match=f"this problem has feedback='{feedback}'"):
        make_agent(name, env)


def test_two_point_loss_is_the_mean_of_both_points():
    env = gym.make("BCO-Ball-v0", n=3, feedback="two-point")
    env.reset(seed=0)
    pair = np.array([[0.5, 0, 0], [0, -0.5, 0]])
    _, reward, _, _, info = env.step(pair)
    assert info["losses"].shape == (2,) and -reward == info["loss"]
    assert info["loss"] == pytest.approx(info["losses"].mean(), rel=1e-15)


# -- result directories under faults ---------------------------------------------------------------
def _first_cell(directory: Path) -> Path:
    return sorted((directory / "cells").glob("*.json"))[0]


def _truncate(path: Path, size: int) -> None:
    path.write_bytes(path.read_bytes()[:size])


def _replace_by_directory(path: Path) -> None:
    path.unlink()
    path.mkdir()


FAULTS = {
    "truncated cell json": (lambda d: _truncate(_first_cell(d), 50), "is unreadable or not JSON"),
    "empty cell json": (lambda d: _truncate(_first_cell(d), 0), "is unreadable or not JSON"),
    "cell json a list": (lambda d: _first_cell(d).write_text("[1, 2]"), "is not a format-2 result"),
    "oversized cell json": (
        lambda d: _first_cell(d).write_text(" " * (17 * 2**20)),
        "more than the 16777216 allowed",
    ),
    "truncated npz": (
        lambda d: _truncate(_first_cell(d).with_suffix(".npz"), 40),
        "do not match their digest",
    ),
    "garbage npz": (
        lambda d: _first_cell(d).with_suffix(".npz").write_bytes(b"x" * 100),
        "do not match their digest",
    ),
    "missing npz": (lambda d: _first_cell(d).with_suffix(".npz").unlink(), "its arrays file"),
    "cell json a symlink": (lambda d: _symlink_first_cell(d), "Too many levels of symbolic"),
    "truncated manifest": (
        lambda d: _truncate(d / "manifest.json", 30),
        "manifest.json' is unreadable",
    ),
    "manifest a directory": (
        lambda d: _replace_by_directory(d / "manifest.json"),
        "is not a regular file",
    ),
    "cells a file": (
        lambda d: (shutil.rmtree(d / "cells"), (d / "cells").write_text("x")),
        "cells' is not a directory (a symlink or a file)",
    ),
    "table.md a directory": (
        lambda d: _replace_by_directory(d / "table.md"),
        "table.md is a directory; cannot write it",
    ),
}


def _symlink_first_cell(directory: Path) -> None:
    cell = _first_cell(directory)
    cell.unlink()
    cell.symlink_to("/etc/hostname")


@pytest.mark.parametrize("fault", list(FAULTS))
def test_plot_refuses_a_damaged_sweep_naming_the_file_and_writes_nothing(
    sweeps, tmp_path, capsys, monkeypatch, fault
):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    damage, expected = FAULTS[fault]
    directory = tmp_path / "sweep"
    shutil.copytree(sweeps["compare"], directory, symlinks=True)
    damage(directory)
    before = _tree(directory)
    code, _, err = _cli(["plot", directory], capsys)
    assert code == 2 and expected in err and str(directory) in err, err
    assert _tree(directory) == before


def test_compare_recomputes_a_truncated_cell_bit_for_bit(sweeps, tmp_path, capsys, monkeypatch):
    from bco_gym.experiment import load_sweep

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    directory = tmp_path / "sweep"
    shutil.copytree(sweeps["compare"], directory)
    original = load_sweep(directory)
    _truncate(_first_cell(directory), 50)
    argv = ["compare", *BALL3, "--agents", "fkm,random", "--horizon", "30", "--seeds", "2"]
    code, _, err = _cli([*argv, "--out", directory, "--quiet"], capsys)
    assert code == 0 and "CorruptCellWarning: recomputing cell" in err
    again = load_sweep(directory)
    assert len(again) == len(original)
    assert all(a.same_outcome(b) for a, b in zip(again, original, strict=True))


@pytest.mark.parametrize("batch_size", [None, 2])
def test_a_nan_gradient_is_named_as_non_finite_not_as_a_shape(batch_size):
    env = gym.make("BCO-Ball-v0", n=3, feedback="full")
    agent = make_agent("ofw", env, batch_size=batch_size)
    agent.reset(seed=0 if batch_size is None else [0, 1])
    agent.act(None)
    shape = (3,) if batch_size is None else (2, 3)
    gradient = np.zeros(shape)
    gradient[..., 1] = np.nan
    loss = 0.0 if batch_size is None else np.zeros(2)
    with pytest.raises(ValueError, match=r"info\['gradient'\] must be finite; .* holds nan"):
        agent.update(loss, {"gradient": gradient})


def test_run_refuses_an_agent_built_directly_with_an_overflowing_constant():
    from bco_gym.agents import FlaxmanAgent
    from bco_gym.experiment import run

    env = gym.make("BCO-Ball-v0", n=3, horizon=100)
    agent = FlaxmanAgent(env.unwrapped.problem, c=1e-300)
    with pytest.raises(ValueError, match="FlaxmanAgent: the regret bound at c=1e-300"):
        run(env, agent, seed=0)


# -- fourth pass (issue 35): inputs checked before use ------------------------------------------
SEPARATION_SETS = [L2Ball(3), L1Ball(3), Hypercube(n=3), Simplex(3)]


@pytest.mark.parametrize("convex_set", SEPARATION_SETS, ids=repr)
@pytest.mark.parametrize(
    ("atol", "shows"),
    [(math.nan, "atol=nan"), (-1e-3, "atol=-0.001"), (math.inf, "atol=inf"), ("0", "atol='0'")],
)
def test_separation_refuses_a_tolerance_that_is_not_finite_and_nonnegative(convex_set, atol, shows):
    far = np.full(convex_set.shape, 5.0)
    name = type(convex_set).__name__
    with pytest.raises(ValueError, match=re.escape(f"{name}.separation: {shows} must be")):
        convex_set.separation(far, atol)
    assert convex_set.separation(far, 0.0) is not None  # the set still answers
    assert convex_set.separation(far, 1) is not None  # an int tolerance is a number


# -- fourth pass: user losses that raise, the batched form, huge horizons -----------------------
def _raises_at_round_11(t, x):
    if t == 11:
        return {}["missing"]
    return _square(t % 8, x)


def _gradient_divides_by_zero(t, x):
    return _square_gradient(t, x) * (1 / t)  # a Python ZeroDivisionError at round 0


def _divide_by_zero(t, x):
    return 1 / 0


def test_a_user_loss_raising_in_a_run_names_the_round_and_the_point():
    from bco_gym.errors import LossFunctionError
    from bco_gym.experiment import run

    gradient = lambda t, x: _square_gradient(t % 8, x)  # noqa: E731
    losses = from_function(L2Ball(3), _raises_at_round_11, gradient, 30, 10.0, 10.0, verify=False)
    with pytest.raises(
        LossFunctionError,
        match=r"function loss: round 11: loss\(t, x\) raised "
        r"KeyError: 'missing' at x = \[",
    ) as caught:
        run(BanditConvexEnv(L2Ball(3), losses), "fkm", seed=0)
    assert isinstance(caught.value.__cause__, KeyError)


@pytest.mark.parametrize(
    ("loss", "gradient", "shows"),
    [
        (_square, _gradient_divides_by_zero, "round 0: gradient(t, x) raised ZeroDivisionError"),
        (_divide_by_zero, _square_gradient, "round 0: loss(t, x) raised ZeroDivisionError"),
    ],
)
def test_a_user_callable_raising_during_the_checks_names_the_round_and_the_point(
    loss, gradient, shows
):
    from bco_gym.errors import LossFunctionError

    with pytest.raises(LossFunctionError) as caught:
        from_function(L2Ball(3), loss, gradient, 8, 10.0, 10.0)
    message = str(caught.value)
    assert message.startswith("from_function (checking the losses): ") and shows in message
    assert "at x = [" in message and isinstance(caught.value.__cause__, ZeroDivisionError)


def _per_round_square(t, x):
    return float(x @ x)


def _per_round_gradient(t, x):
    return 2.0 * np.asarray(x, dtype=float)


@pytest.mark.parametrize(
    ("loss", "gradient"),
    [
        (lambda t, x: float(np.sum(x * x)), _per_round_gradient),  # float() of a (k,) array
        (_per_round_square, _per_round_gradient),  # x @ x of a (k, n) batch
        (lambda t, x: np.sum(x * x), _per_round_gradient),  # one number for k rounds
    ],
)
def test_batched_true_given_per_round_callables_says_which_form_was_expected(loss, gradient):
    from bco_gym.errors import LossFunctionError

    with pytest.raises((LossFunctionError, ValueError)) as caught:
        from_function(L2Ball(3), loss, gradient, 8, 10.0, 10.0, batched=True)
    message = str(caught.value)
    assert "with batched=True the callables take rounds (int64, shape (k,))" in message
    assert "one round t and one point x need batched=False" in message


def test_a_huge_horizon_samples_its_checked_rounds_without_materialising_them():
    seen = []

    def loss(t, x):
        seen.append(t)
        return float(x.sum()) / 10

    losses = from_function(L2Ball(3), loss, lambda t, x: np.full(3, 0.1), 10**12, 10.0, 10.0)
    rounds = sorted(set(seen))
    assert losses.verified and len(rounds) == 8
    assert rounds[0] == 0 and rounds[-1] == 10**12 - 1 and rounds[3] > 10**9


@pytest.mark.parametrize("command", ["compare", "bench"])
def test_a_kernel_switch_not_allowed_exits_2_before_any_cell_runs(
    tmp_path, capsys, monkeypatch, command
):
    monkeypatch.setenv("BCO_GYM_KERNELS", "yes")
    out = tmp_path / "out"
    if command == "compare":
        argv = ["compare", *BALL3, "--agents", "fkm,random", "--horizon", "20", "--seeds", "1"]
    else:
        argv = ["bench", "--agents", "user_agents:Jitter", "--suite", "quick-v2"]
    code, _, err = _cli([*argv, "--out", out, "--quiet"], capsys)
    assert code == 2, err
    assert err.strip().splitlines() == [
        f"bco-gym {command}: error: BCO_GYM_KERNELS='yes' is not allowed; allowed: auto, on, off"
    ]
    # bench may lay out the suite's shipped reference cells first; the agent's own never ran
    ran = [p for p in out.rglob("*") if "Jitter" in p.name or "failures" in p.parts]
    assert not ran  # no cell of the agent ran, none was recorded as failed


# -- fourth pass: an agent cannot change the problem it is scored on ------------------------------
@pytest.mark.parametrize("fast", [None, False])
def test_an_agent_that_widens_its_set_has_its_outside_play_refused(fast):
    from bco_gym.experiment import run

    with pytest.raises(InfeasibleActionError, match=r"norm 1\.5"):
        run("BCO-Ball-v0", "user_agents:Widener", horizon=20, env_kwargs={"n": 3}, fast=fast)


def test_an_agent_that_shrinks_its_set_is_scored_on_the_env_s(tmp_path, capsys):
    from bco_gym.experiment import run, run_many

    env = gym.make("BCO-Ball-v0", n=3, horizon=40)
    honest = run(env, "user_agents:Centre", seed=1)
    cheat = run(env, "user_agents:Shrinker", seed=1)
    assert env.unwrapped.set.radius == env.unwrapped.problem.set.radius == 1.0
    assert cheat.final_regret == honest.final_regret > 0.5
    assert cheat.problem["outer_radius"] == 1.0
    rows = run_many(env, "user_agents:Shrinker", [1, 2])
    assert rows[0].final_regret == honest.final_regret
    built = make_agent("user_agents:Shrinker", env)  # each agent its own copy
    assert built.set.radius == 1e-9 and make_agent("random", env).set.radius == 1.0
    argv = ["compare", *BALL3, "--agents", "user_agents:Shrinker,user_agents:Centre"]
    code, _, err = _cli([*argv, "--horizon", "40", "--seeds", "1", "--out", tmp_path], capsys)
    assert code == 0, err
    from bco_gym.experiment import load_sweep

    first, second = (r.final_regret for r in load_sweep(tmp_path))
    assert first == second > 0.5  # seed 0 here


# -- fourth pass: result files stay honest -----------------------------------------------------
@pytest.fixture
def tiny_bench(monkeypatch):
    from bco_gym.reports.suites import SUITES, Scenario

    scenario = Scenario(
        name="tiny",
        title="3-ball",
        env_id="BCO-Ball-v0",
        agents=("fkm", "random"),
        horizon=40,
        seeds=(0, 1),
        env_kwargs={"n": 3},
    )
    monkeypatch.setitem(SUITES, "tiny-bench", (scenario,))
    return ["bench", "--agents", "bfw", "--suite", "tiny-bench", "--quiet"]


def test_bench_never_writes_through_a_symlink(tmp_path, capsys, monkeypatch, tiny_bench):
    plain_report(monkeypatch)  # scores.csv and report.md are the files at stake, not figures
    out = tmp_path / "bench"
    assert _cli([*tiny_bench, "--out", out], capsys)[0] == 0
    outside = {name: tmp_path / f"outside-{name}" for name in ("scores.csv", "report.md")}
    for name, target in outside.items():
        target.write_text("mine\n")
        (out / name).unlink()
        (out / name).symlink_to(target)
    assert _cli([*tiny_bench, "--out", out], capsys)[0] == 0
    for name, target in outside.items():
        assert target.read_text() == "mine\n"  # untouched
        assert not (out / name).is_symlink() and (out / name).stat().st_size > 100
    assert not list(out.glob("*.tmp"))


def test_bench_says_when_it_recomputes_a_tampered_cell(tmp_path, capsys, monkeypatch, tiny_bench):
    plain_report(monkeypatch)  # the words and the numbers, not the figures or rliable's intervals
    out = tmp_path / "bench"
    assert _cli([*tiny_bench, "--out", out], capsys)[0] == 0
    scores = (out / "scores.csv").read_text()
    cell = _first_cell(out / "runs" / "tiny")
    cell.write_text(cell.read_text().replace('"final_regret": ', '"final_regret": 1e-9 + '))
    code, _, err = _cli([*tiny_bench, "--out", out], capsys)
    assert code == 0
    assert f"warning: recomputed a damaged cell: tiny: recomputing cell {cell.stem}" in err
    report = (out / "report.md").read_text()
    assert "## Recomputed cells" in report and f"tiny: recomputing cell {cell.stem}" in report

    def numbers(text):  # every column but when the cell was computed
        return [line.rsplit(",", 1)[0] for line in text.splitlines()]

    assert numbers((out / "scores.csv").read_text()) == numbers(scores)  # the same numbers


def test_bench_without_matplotlib_writes_its_report_without_figures(
    tmp_path, capsys, monkeypatch, tiny_bench
):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    # intervals by bco_gym's bootstrap: rliable's take most of a report's time and have
    # nothing to do with matplotlib (tests/reports/test_bench.py renders them)
    monkeypatch.setattr("bco_gym.stats.scores.rliable_available", lambda: False)
    out = tmp_path / "bench"
    code, _, err = _cli([*tiny_bench, "--out", out], capsys)
    assert code == 0, err
    report = (out / "report.md").read_text()
    assert 'No figures: matplotlib is not installed (pip install "bco_gym[plot]").' in report
    assert "## Verdicts" in report and "![" not in report
    assert not list(out.glob("*.png")) and (out / "scores.csv").is_file()


# -- fourth pass: paths agree on the ball too ------------------------------------------------------
@pytest.mark.parametrize(
    ("agent", "feedback"), [("fkm", "bandit"), ("bfw", "bandit"), ("ogd", "full")]
)
def test_run_many_compiled_rows_equal_single_numpy_runs_on_the_ball(monkeypatch, agent, feedback):
    """The issue's case, scaled down: "auto" plays run_many's batch compiled (T * S above
    the threshold) and each single run in NumPy (below it); every row is the single run
    bit for bit, the Euclidean norm taken in one order on both paths."""
    from bco_gym.engine import compiled, loops
    from bco_gym.experiment import run, run_many

    pytest.importorskip("numba")
    monkeypatch.setenv("BCO_GYM_KERNELS", "auto")
    monkeypatch.setattr(compiled, "MIN_RUN_ROUNDS", 1_000)
    plans = []

    def spy(stage, agent):
        plans.append(compiled.compiled_plan(stage, agent) is not None)
        return compiled.compiled_plan(stage, agent)

    monkeypatch.setattr(loops, "compiled_plan", spy)
    options = {"horizon": 400, "env_kwargs": {"n": 10, "feedback": feedback}}
    seeds = [0, 1, 2, 3]
    rows = run_many("BCO-Ball-v0", agent, seeds, **options)
    singles = [run("BCO-Ball-v0", agent, seed=seed, **options) for seed in seeds]
    assert plans == [True, False, False, False, False]  # the batch compiled, the runs NumPy
    for seed, row, single in zip(seeds, rows, singles, strict=True):
        assert row.same_outcome(single), seed


# -- fourth pass: sizes that cannot fit the machine ----------------------------------------------
def test_a_run_too_large_for_the_machine_is_refused_before_allocating(monkeypatch, capsys):
    from bco_gym.engine import memory
    from bco_gym.experiment import run, run_many

    monkeypatch.setattr(memory, "machine_bytes", lambda: 50_000_000)  # a 50 MB machine
    kwargs = {"horizon": 20, "env_kwargs": {"n": 100_000}}
    pattern = (
        r"this run would need about \d\d\.\d MB of memory \(.*K of dimension 100000, 1 row\(s\)\)"
    )
    with pytest.raises(
        ValueError, match=pattern + r", more than this machine's 50 MB .*; .*allow_large"
    ):
        run("BCO-Ball-v0", "fkm", **kwargs)
    with pytest.raises(ValueError, match=r"K of dimension 100000, 3 row\(s\)"):
        run_many("BCO-Ball-v0", "fkm", [0, 1, 2], **kwargs)
    assert run("BCO-Ball-v0", "fkm", allow_large=True, **kwargs).horizon == 20  # the override
    assert run("BCO-Ball-v0", "fkm", horizon=20, env_kwargs={"n": 100}).horizon == 20
    argv = ["run", "--env", "BCO-Ball-v0", "--env-kwargs", '{"n": 100000}', "--agent", "fkm"]
    code, _, err = _cli([*argv, "--horizon", "20"], capsys)
    assert code == 2 and err.startswith("bco-gym run: error: this run would need about ")
    assert "--allow-large" in err and len(err.strip().splitlines()) == 1
    code, out, _ = _cli([*argv, "--horizon", "20", "--allow-large"], capsys)
    assert code == 0 and "T=20" in out


def test_the_issue_s_hundred_million_ball_is_refused_on_a_24_gb_machine(monkeypatch):
    from bco_gym.engine import memory

    monkeypatch.setattr(memory, "machine_bytes", lambda: 24_000_000_000)
    env = gym.make("BCO-Ball-v0", n=1000, horizon=10)
    parts = memory.estimate_run_bytes(env.unwrapped, 1)
    per_dimension = sum(parts.values()) - parts["round losses"]
    assert per_dimension / 1000 * 100_000_000 > 24e9  # n = 10^8 needs more than 24 GB
    with pytest.raises(TypeError, match=r"allow_large='yes' must be True or False"):
        memory.check_run_memory(env.unwrapped, 1, "yes")


def test_a_run_too_large_is_refused_from_its_keywords_before_any_env_is_built(monkeypatch, capsys):
    import tracemalloc

    from bco_gym.engine import memory
    from bco_gym.envs.registration import point_dimension
    from bco_gym.experiment import run, run_many

    monkeypatch.setattr(memory, "machine_bytes", lambda: 50_000_000)  # a 50 MB machine
    before = r"more than this machine's 50 MB \(refused before building the env\); .*allow_large"
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"K of dimension 1000000, 1 row\(s\)\), " + before):
            run("BCO-Ball-v0", "fkm", horizon=20, env_kwargs={"n": 1_000_000})
        with pytest.raises(ValueError, match=r"K of dimension 1000000, 4 row\(s\)\), " + before):
            run_many("BCO-Birkhoff-v0", "bbcg", [0, 1, 2, 3], horizon=20, env_kwargs={"n": 1000})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000, peak  # one point of K alone would be 8 MB
    argv = ["run", "--env", "BCO-Ball-v0", "--env-kwargs", '{"n": 1000000}', "--agent", "fkm"]
    code, _, err = _cli([*argv, "--horizon", "20"], capsys)
    assert code == 2 and "refused before building the env" in err
    # the keywords' dimension is the built set's, defaults included
    for env_id, kwargs in [
        ("BCO-Ball-v0", {}),
        ("BCO-Simplex-v0", {"n": 7}),
        ("BCO-NuclearBall-v0", {"rows": 3, "cols": 5}),
        ("BCO-ShortestPath-v0", {"grid": 4}),
        ("BCO-Birkhoff-v0", {"n": 4}),
        ("BCO-Hypercube-v0", {"n": 3}),
        ("BCO-L1Ball-v0", {"n": 6}),
    ]:
        assert point_dimension(env_id, kwargs) == gym.make(env_id, **kwargs).unwrapped.set.dim
    assert point_dimension("BCO-Ball-v0", {"n": "big"}) is None  # gym.make says why
    assert point_dimension("BCO-Portfolio-v0", {}) is None


# -- fourth pass: a sampled check is not a certificate -----------------------------------------
DENT, DENT_WIDTH = np.array([0.5, 0.5, 0.0]), 0.05


def _dented(t, x):
    """||x||^2 with a narrow well at DENT that no sampled point falls in: not convex."""
    depth = max(0.0, 1.0 - float(np.linalg.norm(x - DENT)) / DENT_WIDTH)
    return float(x @ x) - depth**2


def _dented_gradient(t, x):
    offset = x - DENT
    distance = float(np.linalg.norm(offset))
    depth = max(0.0, 1.0 - distance / DENT_WIDTH)
    pull = 2.0 * depth / (DENT_WIDTH * distance) * offset if depth > 0.0 else 0.0 * x
    return 2.0 * x + pull


def test_losses_checked_on_samples_are_labelled_so_never_certified():
    from bco_gym.experiment import run
    from bco_gym.reports.summary import comparator_text

    losses = from_function(L2Ball(3), _dented, _dented_gradient, 30, 50.0, 5.0)
    assert _dented(0, DENT) == -0.5 < _dented(0, np.zeros(3))  # the well the checks missed
    assert losses.describe()["comparator"] == "checked on 48 samples"
    result = run(BanditConvexEnv(L2Ball(3), losses), "random", seed=0)
    text = comparator_text([result])
    assert text.startswith("checked on 48 samples (not certified), gap <= ")
    assert "certified, gap" not in text.replace("(not certified), gap", "")


# -- fourth pass: a closure's constants are part of its digest ------------------------------------
def _scaled_losses(sign):
    """One closure factory: f_t(x) = sign * <1, x> and its gradient."""

    def loss(t, x):
        return sign * float(x.sum())

    def gradient(t, x):
        return sign * np.ones_like(x)

    return loss, gradient


def test_losses_from_one_closure_factory_with_other_constants_are_not_paired():
    from bco_gym.experiment import paired_table, run

    digests = {}
    results = {}
    for sign in (1.0, -1.0, 1.0):
        loss, gradient = _scaled_losses(sign)
        losses = from_function(L2Ball(3), loss, gradient, 20, 5.0, 5.0)
        digests.setdefault(sign, set()).add(losses.digest())
        env = BanditConvexEnv(L2Ball(3), losses)
        results[sign] = [run(env, name, seed=0) for name in ("fkm", "random")]
    assert len(digests[1.0]) == 1  # the same constant: the same digest, in any closure
    assert digests[1.0] != digests[-1.0]  # f and -f: told apart
    mixed = [results[1.0][0], results[-1.0][1]]
    with pytest.raises(ValueError, match="digest"):
        paired_table(mixed, "random")
    assert paired_table(results[1.0], "random")  # the same losses pair


# -- fifth pass: an agent's update gets only what its feedback entitles it to ------------------
@pytest.fixture
def spies():
    """The attack agents that keep what they are handed in class state, emptied."""
    from attack_agents import GradientSpy, InfoHoarder

    for spy in (GradientSpy, InfoHoarder):
        spy.SEEN.clear()
    InfoHoarder.POINTS.clear()
    yield GradientSpy, InfoHoarder
    InfoHoarder.POINTS.clear()


def test_the_gym_loop_hands_the_last_update_no_regret_nor_comparator(spies):
    """The issue's case: under fast=False the last update() got the recorder's info,
    comparator_point included, and the next run of the seed played it (regret -6e-14)."""
    from bco_gym.experiment import run

    _, hoarder = spies
    kwargs = {"horizon": 60, "env_kwargs": {"n": 3}, "seed": 3, "fast": False}
    first = run("BCO-Ball-v0", "attack_agents:InfoHoarder", **kwargs)
    second = run("BCO-Ball-v0", "attack_agents:InfoHoarder", **kwargs)
    assert hoarder.SEEN == {"loss", "t"} and not hoarder.POINTS
    assert first.final_regret > 1.0 and second.same_outcome(first)


@pytest.mark.parametrize("path", ["lean", "gym", "run_many", "bench"])
def test_a_bandit_agent_in_a_full_feedback_scenario_never_sees_a_gradient(
    spies, path, tmp_path, capsys, monkeypatch
):
    from bco_gym.experiment import run, run_many
    from bco_gym.reports.suites import SUITES, Scenario

    spy, _ = spies
    full = {"horizon": 40, "env_kwargs": {"n": 3, "feedback": "full"}}
    if path == "lean":
        run("BCO-Ball-v0", "attack_agents:GradientSpy", seed=1, **full)
    elif path == "gym":
        run("BCO-Ball-v0", "attack_agents:GradientSpy", seed=1, fast=False, **full)
    elif path == "run_many":
        run_many("BCO-Ball-v0", "attack_agents:GradientSpy", [1, 2], **full)
    else:
        scenario = Scenario(
            name="full-info",
            title="3-ball, full information",
            env_id="BCO-Ball-v0",
            agents=("ogd", "random"),
            horizon=40,
            seeds=(0, 1),
            env_kwargs=full["env_kwargs"],
        )
        monkeypatch.setitem(SUITES, "full-bench", (scenario,))
        plain_report(monkeypatch)  # what the agent was handed, not the report's figures
        argv = ["bench", "--agents", "attack_agents:GradientSpy", "--suite", "full-bench"]
        code, _, err = _cli([*argv, "--out", tmp_path / "bench", "--quiet"], capsys)
        assert code == 0, err
    assert spy.SEEN == {"loss", "t"}  # no gradient, in any loop


# -- fifth pass: a score cannot be faked (fresh seeds, isolation, the regret floor) ------------
@pytest.fixture
def ball_bench(monkeypatch):
    """A stationary scenario (i.i.d. linear losses on the 10-ball) long enough for the
    regret floor to catch an agent that plays each round's minimiser, with six seeds (six
    fresh beside them: the smallest p-value of the agreement test, 2 / C(12, 6) = 0.002)."""
    from bco_gym.reports.suites import SUITES, Scenario

    scenario = Scenario(
        name="ball10",
        title="10-ball, i.i.d. linear",
        env_id="BCO-Ball-v0",
        agents=("fkm", "random"),
        horizon=1000,
        seeds=(0, 1, 2, 3, 4, 5),
        env_kwargs={"n": 10},
    )
    monkeypatch.setitem(SUITES, "ball-bench", (scenario,))
    return ["bench", "--suite", "ball-bench", "--quiet"]


def _scores(path: Path) -> dict[str, dict[int, float]]:
    import csv

    table: dict[str, dict[int, float]] = {}
    for row in csv.DictReader(path.open()):
        table.setdefault(row["agent"], {})[int(row["seed"])] = float(row["score"])
    return table


def _first_lines(report: str) -> str:
    return report.split("## Verdicts")[0]


def test_agents_that_read_the_losses_are_flagged_suspect_in_process(
    tmp_path, capsys, monkeypatch, ball_bench
):
    """The issue's attacks, played in the bench's process: each round's minimiser from the
    engine's frames or from the garbage collector, a regret far below zero; the report
    flags both in its first lines, and not the honest agents. (The flags come from the
    regret floor, not from the figures or rliable's intervals: the report is plain.)"""
    plain_report(monkeypatch)
    agents = "attack_agents:StackWalker,attack_agents:GcSearcher,user_agents:Jitter"
    out = tmp_path / "bench"
    code, _, err = _cli([*ball_bench, "--agents", agents, "--out", out], capsys)
    assert code == 0, err
    scores = _scores(out / "scores.csv")
    for cheat in ("stack-walker", "gc-searcher"):
        assert max(scores[cheat].values()) < -0.1  # below zero: better than any fixed point
    first = _first_lines((out / "report.md").read_text())
    assert "**Suspect: `stack-walker`**" in first and "**Suspect: `gc-searcher`**" in first
    assert "jitter" not in first and "fkm" not in first


@pytest.mark.slow
def test_isolation_and_fresh_seeds_undo_every_attack(tmp_path, capsys, monkeypatch, ball_bench):
    """--isolate --fresh-seeds 6: the frame walker and the garbage-collector searcher find
    nothing in their own process and score as the honest agent they fall back to; the seed
    inverter still recognises the public seeds (score 0: it plays the comparator) but not
    the fresh ones, where it scores as the honest agent, and the report says that its
    fresh and public scores disagree. (The agreement test and the flags do not read the
    figures or rliable's intervals: the report is plain.)"""
    plain_report(monkeypatch)
    inverter = "attack_agents:SeedInverter[env_id=BCO-Ball-v0]"  # it knows the scenario
    agents = [
        "attack_agents:StackWalker",
        "attack_agents:GcSearcher",
        inverter,
        "attack_agents:_Honest",
    ]
    out = tmp_path / "bench"
    argv = [*ball_bench, "--agents", ",".join(agents), "--label", f"{inverter}=seed-inverter"]
    argv += ["--isolate", "--fresh-seeds", "6"]
    code, stdout, err = _cli([*argv, "--out", out], capsys)
    assert code == 0, err
    scores, fresh = _scores(out / "scores.csv"), _scores(out / "fresh-scores.csv")
    inverted = "seed-inverter (custom)"  # its row's label: a variant (env_id given)
    honest = scores["honest-jitter"]
    assert scores["stack-walker"] == scores["gc-searcher"] == honest  # bit for bit
    assert min(honest.values()) > 0.5
    assert max(abs(score) for score in scores[inverted].values()) < 1e-9
    assert fresh[inverted] == fresh["honest-jitter"]  # found no public seed: honest
    document = json.loads((out / "fresh-seeds.json").read_text())
    seeds = [int(seed) for seed in document["seeds"]]
    assert len(set(seeds)) == 6 and all(2**127 <= seed < 2**128 for seed in seeds)
    assert set(fresh["fkm"]) == set(fresh["random"]) == set(seeds)  # references on them too
    assert document["agreement"][inverted]["disagree"] is True
    assert document["agreement"]["honest-jitter"]["disagree"] is False
    report = (out / "report.md").read_text()
    first = _first_lines(report)
    assert f"**Fresh seeds disagree with the public seeds for `{inverted}`**" in first
    assert "Suspect" not in first and "honest-jitter" not in first
    assert all(f"`{seed}`" in report for seed in seeds)
    assert "--isolate --fresh-seeds 6" in report and "fresh-seeds.json" in stdout
    assert "Played in their own process" in report


# -- fifth pass (issue 40): a subprocess held to a memory ceiling ---------------------------------
def _limited_python(code: str, address_space: int = 2_500_000_000, timeout: float = 120):
    """(exit code, stdout, stderr) of ``python -c code`` whose address space is capped at
    ``address_space`` bytes: a path that allocates before it refuses dies there with a
    MemoryError instead of filling the machine."""
    import resource
    import subprocess

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=cap,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    return done.returncode, done.stdout, done.stderr


# -- fifth pass: the archive is read with limits -----------------------------------------------
@pytest.fixture
def tiny_archive(tmp_path, monkeypatch, tiny_bench):
    """An archive of the tiny suite, built here, read by bench as a shipped one."""
    from bco_gym.reports import bench, references

    where = tmp_path / "references"
    references.build_archive("tiny-bench", tmp_path / "work", where=where)
    monkeypatch.setattr(bench, "ARCHIVED", ("tiny-bench",))
    monkeypatch.setattr(references, "root", lambda: where)
    return where / "tiny-bench"


def _restamp(archive: Path, name: str, payload: bytes) -> None:
    """Write ``payload`` as the archive's file ``name`` with its SHA-256 in INDEX.json."""
    import hashlib

    (archive / name).write_bytes(payload)
    index = json.loads((archive / "INDEX.json").read_text())
    index["files"][name] = hashlib.sha256(payload).hexdigest()
    (archive / "INDEX.json").write_text(json.dumps(index))


def test_an_archive_file_that_is_not_a_regular_file_is_refused_unread(tiny_archive, tmp_path):
    from bco_gym.reports import references

    copies = []
    for name in ("tiny.json.gz", "INDEX.json"):  # each linked to /dev/zero: it never ends
        copy = tmp_path / name / "tiny-bench"
        shutil.copytree(tiny_archive, copy)
        (copy / name).unlink()
        (copy / name).symlink_to("/dev/zero")
        copies.append(str(copy.parent))
    code = (
        "from pathlib import Path\n"
        "from bco_gym.reports import references\n"
        f"for where in {copies!r}:\n"
        "    try:\n"
        "        references.load_scenario('tiny-bench', 'tiny', Path(where))\n"
        "    except references.ArchiveCorruptError as error:\n"
        "        print('refused:', error)\n"
    )
    status, out, err = _limited_python(code, 1_500_000_000, timeout=60)
    assert status == 0, err
    assert "tiny.json.gz' is not a regular file" in out
    assert "INDEX.json' is not a regular file" in out
    scenario_file = tiny_archive / "tiny.json.gz"
    scenario_file.unlink()
    os.mkfifo(scenario_file)  # opened for reading, it would wait for a writer
    with pytest.raises(references.ArchiveCorruptError, match="not a regular file"):
        references.load_scenario("tiny-bench", "tiny")


def test_a_gzip_bomb_in_the_archive_stops_at_the_limit(tiny_archive):
    import gzip

    member = gzip.compress(b"\0" * 10_000_000, compresslevel=9)
    bomb = member * (6_000_000 // len(member))  # 6 MB, 6 GB decompressed (multi-member)
    assert len(bomb) > 5_900_000
    _restamp(tiny_archive, "tiny.json.gz", bomb)
    code = (
        "import resource\n"
        "from pathlib import Path\n"
        "from bco_gym.reports import references\n"
        f"where = Path({str(tiny_archive.parent)!r})\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "try:\n"
        "    references.load_scenario('tiny-bench', 'tiny', where)\n"
        "except references.ArchiveCorruptError as error:\n"
        "    print('refused:', error)\n"
        "grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before\n"
        "print('grown kB', grown)\n"
    )
    status, out, err = _limited_python(code, 1_500_000_000, timeout=60)
    assert status == 0 and "decompresses to more than 64,000,000 bytes" in out, err
    grown = int(out.split("grown kB")[1])
    assert grown < 200_000, out  # at most the limit and a copy, not the 6 GB


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda index: [index], "holds a list, not an object"),
        (lambda index: {**index, "files": list(index["files"])}, "'files' is not an object"),
        (lambda index: {**index, "scenarios": ["tiny"]}, "'scenarios' is not an object"),
        (lambda index: "index", "holds a str"),
    ],
)
def test_an_index_of_the_wrong_shape_is_corrupt(tiny_archive, damage, message):
    from bco_gym.reports import references

    path = tiny_archive / "INDEX.json"
    path.write_text(json.dumps(damage(json.loads(path.read_text()))))
    with pytest.raises(references.ArchiveCorruptError, match=re.escape(message)):
        references.load_scenario("tiny-bench", "tiny")


def _reshaped(document):
    sweeps = document["sweeps"]
    (relative,) = [name for name in sweeps if name.startswith("runs/")]
    sweep = sweeps[relative]
    first = sweep["cells"][0]

    def with_sweep(**changes):
        return {**document, "sweeps": {relative: {**sweep, **changes}}}

    return [
        [document],
        {**document, "sweeps": list(sweeps)},
        with_sweep(spec=[]),
        with_sweep(cells=[1]),
        with_sweep(cells=[{**first, "cell": []}]),
        with_sweep(cells=[{**first, "result": 3}]),
        with_sweep(cells=[{"cell": first["cell"]}]),
    ]


def test_an_archived_payload_with_a_valid_digest_and_the_wrong_shape_is_corrupt(tiny_archive):
    import gzip

    from bco_gym.reports import references

    document = json.loads(gzip.decompress((tiny_archive / "tiny.json.gz").read_bytes()))
    for shape in _reshaped(document):
        _restamp(tiny_archive, "tiny.json.gz", gzip.compress(json.dumps(shape).encode()))
        with pytest.raises(references.ArchiveCorruptError, match="does not hold a scenario"):
            references.load_scenario("tiny-bench", "tiny")


def test_a_damaged_archive_recomputed_is_said_under_quiet(
    tmp_path, capsys, monkeypatch, tiny_archive
):
    import gzip

    plain_report(monkeypatch)  # the warning, the report's words and scores.csv's rows
    out = tmp_path / "bench"
    argv = ["bench", "--agents", "bfw", "--suite", "tiny-bench", "--quiet", "--out", out]
    code, _, err = _cli(argv, capsys)
    assert code == 0 and "warning" not in err and "damaged" not in err
    assert "## Reference cells recomputed" not in (out / "report.md").read_text()
    shutil.rmtree(out)
    _restamp(tiny_archive, "tiny.json.gz", gzip.compress(b'{"sweeps": []}'))
    code, _, err = _cli(argv, capsys)
    assert code == 0, err
    said = "warning: tiny: the shipped reference archive is damaged: "
    assert said in err and "recomputed" in err and len(err.strip().splitlines()) == 1
    report = (out / "report.md").read_text()
    assert "## Reference cells recomputed" in report
    assert "- tiny: the shipped reference archive is damaged: " in report
    assert (out / "scores.csv").read_text().count("\ntiny-bench,tiny,") == 6  # 3 agents, 2 seeds


# -- fifth pass: memory is refused on every path before it is spent -----------------------------
MEMORY_PATHS = r"""
import json, resource, sys, warnings
warnings.simplefilter("ignore")
import gymnasium as gym
import bco_gym.envs.memory
bco_gym.envs.memory.machine_bytes = lambda: 24_000_000_000  # the issue's machine
from bco_gym.cli import main
from bco_gym.experiment import sweep
out = sys.argv[1]
print(json.dumps(["imported kB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss]))

def cli(*argv):
    try:
        return main([str(a) for a in argv])
    except SystemExit as stop:
        return stop.code

def attempt(name, call):
    try:
        said = f"returned {call()!r}"
    except ValueError as error:
        said = f"ValueError {error}"
    print(json.dumps([name, said]), flush=True)

ball = ["--env", "BCO-Ball-v0", "--horizon", "10", "--quiet"]
for n in (200_000_000, 100_000_000):
    attempt(f"run {n}", lambda n=n: cli("run", *ball, "--env-kwargs", json.dumps({"n": n})))
huge = ["--env-kwargs", '{"n": 200000000}', "--agents", "fkm"]
attempt("compare", lambda: cli("compare", *ball, *huge, "--seeds", "2", "--out", out + "/c"))
attempt("tune", lambda: cli("tune", *ball, *huge, "--out", out + "/t.json"))
attempt("sweep", lambda: sweep(
    "BCO-Ball-v0", "fkm", 10, 2, out=out + "/s", env_kwargs={"n": 10**9}, progress=False
))
with open(out + "/huge.toml", "w") as stream:
    stream.write('[[scenario]]\nname = "huge"\nenv_id = "BCO-Ball-v0"\n'
                 'agents = ["fkm", "random"]\nhorizon = 10\nseeds = [0, 1]\n'
                 'env_kwargs = {n = 1000000000}\n')
attempt("bench", lambda: cli(
    "bench", "--agents", "bfw", "--suite", out + "/huge.toml", "--quiet", "--out", out + "/b"
))
attempt("make_vec", lambda: gym.make_vec(
    "BCO-Ball-v0", num_envs=64, vectorization_mode="vector_entry_point", n=5 * 10**7
))
print(json.dumps(["peak kB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss]))
"""


def test_every_path_refuses_a_set_too_large_before_building_it(tmp_path):
    """run, compare, tune, sweep(), bench with a suite file and gym.make_vec, each at the
    issue's sizes (tens to hundreds of GB), in a process capped at 2.5 GB: each refuses
    from the keywords, before building anything (a path that built first dies there)."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", MEMORY_PATHS, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=lambda: __import__("resource").setrlimit(
            __import__("resource").RLIMIT_AS, (2_500_000_000, 2_500_000_000)
        ),
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    said = dict(json.loads(line) for line in done.stdout.splitlines())
    refused = "more than this machine's 24 GB (refused before building the env)"
    for name in ("run 200000000", "run 100000000", "compare", "tune", "bench"):
        assert said[name] == "returned 2", (name, said[name])
    errors = done.stderr.splitlines()
    assert len(errors) == 5 and all(refused in line for line in errors), errors
    assert all("--allow-large" in line for line in errors[:2])  # run's override exists
    assert "suite file" in errors[4] and "scenario 'huge'" in errors[4]
    assert said["sweep"].startswith("ValueError this run would need about 304 GB")
    assert said["make_vec"].startswith("ValueError this run would need about 486 GB")
    assert refused in said["sweep"] and refused in said["make_vec"]
    assert "allow_large=True to gym.make_vec" in said["make_vec"]
    grown = said["peak kB"] - said["imported kB"]
    assert grown < 300_000, said  # not one point of a set (the smallest: 400 MB)
    assert not (tmp_path / "b" / "runs").exists()


def test_make_vec_and_run_many_take_the_override(monkeypatch):
    from bco_gym.envs import memory
    from bco_gym.experiment import run_many

    monkeypatch.setattr(memory, "machine_bytes", lambda: 20_000_000)  # a 20 MB machine
    options = {"num_envs": 8, "vectorization_mode": "vector_entry_point", "n": 100_000}
    with pytest.raises(ValueError, match=r"K of dimension 100000, 8 row\(s\)\), more than"):
        gym.make_vec("BCO-Ball-v0", **options)
    envs = gym.make_vec("BCO-Ball-v0", allow_large=True, **options)
    assert envs.unwrapped.num_envs == 8
    envs.close()
    with pytest.raises(ValueError, match="refused before building the env"):
        run_many("BCO-Ball-v0", "fkm", [0, 1], horizon=5, env_kwargs={"n": 100_000})
    rows = run_many(
        "BCO-Ball-v0", "fkm", [0, 1], horizon=5, env_kwargs={"n": 100_000}, allow_large=True
    )
    assert [row.horizon for row in rows] == [5, 5]


def test_the_keyword_estimate_is_a_lower_bound_of_the_built_one():
    """Beyond the envs' own copies of K (which building them holds, and the built
    estimate does not count), the estimate from the keywords never exceeds the one on
    the built env: what it refuses, the built env's check would refuse too."""
    from bco_gym.engine import memory

    for env_id, kwargs in [
        ("BCO-Ball-v0", {"n": 1000}),
        ("BCO-Ball-v0", {"n": 100_000, "loss": "quadratic"}),
        ("BCO-Simplex-v0", {"n": 5000}),
        ("BCO-Birkhoff-v0", {"n": 30}),
        ("BCO-NuclearBall-v0", {"rows": 20, "cols": 30, "loss": "completion"}),
    ]:
        env = gym.make(env_id, horizon=50, **kwargs).unwrapped
        for rows in (1, 8):
            dim, parts = memory.build_parts(env_id, kwargs, rows)
            planned = {**parts, "copies of K": 16 * dim, **memory._parts(dim, rows, 50)}
            building = planned.pop("the envs' copies of K")
            built = memory.estimate_run_bytes(env, rows)
            assert sum(planned.values()) <= sum(built.values()), (env_id, kwargs, rows)
            assert building == 24 * rows * dim


# -- fifth pass: suite files are held to the CLI's limits --------------------------------------
SUITE = """
[[scenario]]
name = "tiny"
env_id = "BCO-Ball-v0"
agents = ["fkm", "random"]
horizon = 40
seeds = [0, 1]
env_kwargs = {n = 3}
"""


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("horizon = 40", "horizon = 1000000000000", "horizon=1,000,000,000,000; at most 100,000"),
        ("seeds = [0, 1]", f"seeds = {list(range(20_001))}", "20,001 seeds; at most 10,000"),
        (
            "env_kwargs = {n = 3}",
            "env_kwargs = {n = 3, horizon = 5}",
            "env_kwargs.horizon=5 disagrees with horizon=40; give T once, as horizon",
        ),
        (
            'env_id = "BCO-Ball-v0"',
            'env_id = "CartPole-v1"',
            "env_id='CartPole-v1'; allowed: BCO-Simplex-v0",
        ),
        ("env_kwargs = {n = 3}", "env_kwargs = {n = 3, m = 4}", "unknown keyword(s) 'm'"),
        ("env_kwargs = {n = 3}", 'env_kwargs = {n = "big"}', "n='big' is not allowed"),
        (
            "env_kwargs = {n = 3}",
            'env_kwargs = {n = 3, loss = "linear", loss_kwargs = {nope = 1}}',
            "nope",
        ),
        ("env_kwargs = {n = 3}", 'env_kwargs = {n = 3, loss = "nope"}', "'nope'"),
        ("seeds = [0, 1]", "seeds = [0, 1]\nzzz = 1", "unknown key(s) ['zzz']"),
    ],
)
def test_a_suite_file_is_held_to_the_cli_s_limits_naming_file_and_scenario(
    tmp_path, capsys, old, new, message
):
    from bco_gym.reports.suites import load_suite_file

    path = tmp_path / "mine.toml"
    assert old in SUITE
    path.write_text(SUITE.replace(old, new))
    with pytest.raises(ValueError, match=re.escape(message)) as refused:
        load_suite_file(path)
    said = str(refused.value)
    assert said.startswith(f"suite file {str(path)!r}: scenario") and "'tiny'" in said
    argv = ["bench", "--agents", "bfw", "--suite", path, "--quiet", "--out", tmp_path / "o"]
    code, _, err = _cli(argv, capsys)
    assert code == 2 and message in err and not (tmp_path / "o" / "runs").exists()


def test_a_suite_file_that_is_not_utf8_is_named(tmp_path):
    from bco_gym.reports.suites import load_suite_file

    path = tmp_path / "latin.toml"
    path.write_bytes(SUITE.replace('"tiny"', '"t\xe9"').encode("latin-1"))
    with pytest.raises(ValueError, match=r"suite file '.*latin\.toml' is not UTF-8 text"):
        load_suite_file(path)


def test_a_suite_file_s_horizon_given_twice_is_accepted_when_equal(tmp_path):
    from bco_gym.reports.suites import load_suite_file

    path = tmp_path / "twice.toml"
    path.write_text(SUITE.replace("{n = 3}", "{n = 3, horizon = 40}"))
    (scenario,) = load_suite_file(path)[1]
    assert scenario.horizon == 40


# -- fifth pass: agents are built before any cell runs ------------------------------------------
@pytest.mark.parametrize(
    "change, extra, message",
    [
        ("agent_kwargs = {fkm = {c = nan}}", [], "agent 'fkm' with c=nan: "),
        ("agent_kwargs = {fkm = {zzz = 1}}", [], "agent 'fkm' with zzz=1: "),
        ("", ["--agent-kwargs", '{"bfw": {"c": NaN}}'], "agent 'bfw' with c=nan: "),
        ("", ["--agents", "bfw[c=1e400]"], "agent 'bfw[c=1e400]' with c=inf: "),
    ],
)
def test_bench_refuses_agents_that_do_not_build_before_any_cell(
    tmp_path, capsys, change, extra, message
):
    path = tmp_path / "mine.toml"
    path.write_text(SUITE + change + "\n")
    argv = ["bench", "--agents", "bfw", "--suite", path, "--quiet", "--out", tmp_path / "o"]
    if extra[:1] == ["--agents"]:
        argv[1:3] = extra
    else:
        argv += extra
    code, _, err = _cli(argv, capsys)
    assert code == 2 and message in err, err
    assert "scenario 'tiny'" in err and len(err.strip().splitlines()) == 1
    assert not list((tmp_path / "o").rglob("*.json.npz")) and not (tmp_path / "o" / "runs").exists()


def test_an_integer_of_thousands_of_digits_names_the_agent_and_the_keyword(tmp_path, capsys):
    from bco_gym.agents.registry import resolve_agent

    variant = "fkm[c=" + "7" * 5000 + "]"
    with pytest.raises(ValueError) as refused:
        resolve_agent(variant)
    said = str(refused.value)
    assert said.startswith("agent 'fkm[c=7777") and "keyword c=" in said
    assert "an integer of 5,000 digits; at most 4,000 digits are read" in said
    assert "Exceeds the limit" not in said and len(said) < 400
    code, _, err = _cli(["bench", "--agents", variant, "--out", tmp_path / "o"], capsys)
    assert code == 2 and "keyword c=" in err and "Exceeds" not in err


# -- fifth pass: the page shows user text as text --------------------------------------------------
MARKED = "![t](https://example.com/t.png) and ![s](../secret.png) <img src=x> $\\frac$ [a]: /b"
MARKED_AGENT = """
from bco_gym.agents import Agent


class Marked(Agent):
    name = "marked"

    def _reset(self):
        pass

    def _act(self):
        raise RuntimeError("![e](http://evil.example/e.png) [go](javascript:alert(1)) `x")

    def _update(self, loss, info=None):
        pass
"""


def _page_checks(out: Path, secret: bytes) -> str:
    """index.html of ``out``: every image a PNG of the report's own, inlined; no link
    out of the page; the secret never read. Returns the page."""
    import base64
    import html

    page = (out / "index.html").read_text()
    sources = re.findall(r'<img src="([^"]*)"', page)
    written = sorted(out.glob("*.png"))
    assert sources and len(sources) == len(written)
    inlined = {base64.b64encode(path.read_bytes()).decode() for path in written}
    assert {source.removeprefix("data:image/png;base64,") for source in sources} <= inlined
    assert base64.b64encode(secret).decode() not in page
    assert all(link.startswith("#") for link in re.findall(r'href="([^"]*)"', page))
    assert html.escape("![s](../secret.png)", quote=False) in page  # shown as text
    return page


def test_user_text_reaches_the_page_as_text(tmp_path, capsys, monkeypatch):
    """A suite title, a purpose, a --label and an agent's error message holding markdown
    images (a URL, an absolute path, a path out of the directory), HTML and a link
    definition: the bench writes its page (no exit 2 after the cells), inlines only
    its own figures and shows every text as typed."""
    # intervals by bco_gym's bootstrap (rliable's take most of a report's time): the page's
    # figures and text are the same code either way
    monkeypatch.setattr("bco_gym.stats.scores.rliable_available", lambda: False)
    secret = b"\x89PNG not for the page"
    (tmp_path / "secret.png").write_bytes(secret)
    (tmp_path / "marked_agent.py").write_text(MARKED_AGENT)
    monkeypatch.syspath_prepend(str(tmp_path))
    suite = tmp_path / "marked.toml"
    suite.write_text(
        SUITE.replace('name = "tiny"', f'name = "tiny"\ntitle = {json.dumps(MARKED)}')
        + f"purpose = {json.dumps('![p](/etc/p.png)')}\n"
    )
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    argv = ["bench", "--agents", "bfw,marked_agent:Marked", "--suite", suite, "--quiet"]
    label = "bfw=![x](../secret.png) $\\frac$"
    code, _, err = _cli([*argv, "--label", label, "--out", "b"], capsys)
    assert code == 1 and "failed" in err and "error:" not in err, err  # its cells failed
    page = _page_checks(work / "b", secret)
    assert "![x](../secret.png)" in page and "javascript:alert(1)" in page  # as text
    report = (work / "b" / "report.md").read_text()
    assert "**!\\[x\\](../secret.png) \\$\\\\frac\\$**" in report  # the verdict's label, escaped
    code, _, err = _cli(["demo", "--suite", suite, "--quiet", "--out", "d"], capsys)
    assert code == 0, err
    _page_checks(work / "d", secret)


SPECIALS = "ab_ *`#~$\\[]()!<>&|:;-+=.1 \n"


def test_a_dollar_is_escaped_so_no_renderer_reads_a_formula():
    """GitHub renders $...$ in Markdown as maths: a label holding dollars stays text."""
    from bco_gym.reports.page import md_text

    assert md_text("cost $x$ and $$y$$") == "cost \\$x\\$ and \\$\\$y\\$\\$"


@pytest.mark.parametrize("where", ["paragraph", "list item", "table cell", "heading"])
def test_escaped_text_renders_as_exactly_its_text(where):
    """md_text's output, rendered by the page's parser in each place user text goes, is
    the text itself: no link, image, emphasis, code, HTML or heading made of it."""
    import html

    from hypothesis import given, settings
    from hypothesis import strategies as st
    from markdown_it import MarkdownIt

    from bco_gym.reports.page import md_text
    from bco_gym.reports.summary import render_markdown

    parser = MarkdownIt("commonmark", {"html": False}).enable("table")

    def rendered(text: str) -> str:
        shown = md_text(text)
        source = {
            "paragraph": f"Before {shown} after.",
            "list item": f"- {shown}",
            "table cell": render_markdown(["h"], [[text]]),
            "heading": f"## 1. x: {shown}",
        }[where]
        return parser.render(source)

    @settings(max_examples=200, deadline=None)
    @given(st.text(alphabet=SPECIALS, min_size=1, max_size=30).filter(str.strip))
    def check(text):
        out = rendered(text)
        for tag in (
            "<a ",
            "<img",
            "<em>",
            "<strong>",
            "<code>",
            "<h1",
            "<h3",
            "<ol",
            "<blockquote",
            "<hr",
        ):
            assert tag not in out, (text, out)
        assert out.count("<ul>") <= (1 if where == "list item" else 0), (text, out)
        plain = html.unescape(re.sub(r"<[^>]+>", "", out))
        assert " ".join(text.split()) in " ".join(plain.split()), (text, out)

    check()


# -- fifth pass: the successors on tiny sets ----------------------------------------------------
class _Deadline:
    """SIGALRM after ``seconds``: a loop that no longer ends fails the test instead."""

    def __init__(self, seconds: int):
        self.seconds = seconds

    def __enter__(self):
        import signal

        def stop(signum, frame):
            raise TimeoutError(f"still running after {self.seconds} s")

        self.previous = signal.signal(signal.SIGALRM, stop)
        signal.alarm(self.seconds)
        return self

    def __exit__(self, *exc):
        import signal

        signal.alarm(0)
        signal.signal(signal.SIGALRM, self.previous)
        return False


def _tiny_ball_env(radius: float, horizon: int = 10):
    return BanditConvexEnv(L2Ball(3, radius=radius), "linear", horizon)


@pytest.mark.parametrize("agent", ["so-bgd", "saha-tewari", "fejer-bgd"])
def test_the_successors_finish_at_once_on_a_tiny_ball(agent):
    from bco_gym.experiment import run

    with _Deadline(120), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run(_tiny_ball_env(1e-6), agent, seed=0)
    assert result.horizon == 10 and math.isfinite(result.final_regret)
    assert result.lmo_calls + result.projections < 10_000  # a few oracle calls a round


def test_loo_bbgd_refuses_a_tiny_ball_at_once_naming_the_bound():
    """At radius 1e-6 (T = 10) the step overshoots the set by 10^4 radii: Algorithm 3's
    Lemmas 6-7 allow 10^17 LOO calls; refused before its first call, with the bound."""
    from bco_gym.agents.gk22.oracles import ProjectionBudgetError
    from bco_gym.experiment import run

    with _Deadline(120), warnings.catch_warnings(), pytest.raises(Exception) as refused:
        warnings.simplefilter("ignore")
        run(_tiny_ball_env(1e-6), "loo-bbgd", seed=0)
    error = refused.value
    assert isinstance(error, ProjectionBudgetError) or isinstance(
        error.__cause__, ProjectionBudgetError
    ), repr(error)
    said = str(error)
    assert "may need up to 1.6" in said and "e+17 LOO calls by Lemmas 6-7" in said
    assert "more than the budget of 1,000,000,000,000" in said and "loo-bbgd" in said


def test_loo_bbgd_on_a_small_ball_stays_within_its_lemma_bounds():
    """Radius 1e-2: the run finishes, each Algorithm 3 run within Lemmas 6-7's count."""
    from bco_gym.experiment import run

    with _Deadline(120), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run(_tiny_ball_env(1e-2), "loo-bbgd", seed=0)
    assert result.horizon == 10 and 0 < result.lmo_calls < 100


@pytest.mark.parametrize("convex_set", [L2Ball(3), Simplex(5), L2Ball(4, radius=1e-3)], ids=repr)
def test_algorithm_3_s_calls_stay_within_the_bound_its_safety_stop_uses(convex_set):
    """The safety stop is Lemmas 6-7's count from the projected start y_1
    (lemma_loo_calls): every row of random inputs, near and far, stays within it."""
    from bco_gym.agents.batch import RowOracle
    from bco_gym.agents.gk22.oracles import close_infeasible_projection_rows, lemma_loo_calls

    rng = np.random.default_rng(5)
    delta = 0.5 * convex_set.inner_radius
    shrunk = convex_set.shrink(delta)
    c, R = convex_set.center, convex_set.outer_radius
    tolerance = delta**2 / 3
    rows = 16
    feasible = np.array([shrunk.lmo(g) for g in rng.normal(size=(rows, convex_set.dim))])
    scales = np.geomspace(0.05, 30.0, rows) * R  # inside and far outside R B(c)
    directions = np.array([convex_set.tangent(g) for g in rng.normal(size=(rows, convex_set.dim))])
    initial = c + scales[:, None] * directions / np.linalg.norm(directions, axis=1)[:, None]
    result = close_infeasible_projection_rows(
        RowOracle(shrunk.lmo_many, shrunk.lmo), feasible, initial, tolerance, c, R
    )
    for i in range(rows):
        y1 = c + (initial[i] - c) / max(1.0, np.linalg.norm(initial[i] - c) / R)
        h = float(np.sum((feasible[i] - initial[i]) ** 2))
        start = float(np.sum((feasible[i] - y1) ** 2))
        assert result.loo_calls[i] <= lemma_loo_calls(h, start, tolerance, R), i
    assert result.loo_calls.max() > 1


# -- fifth pass: stale cells are never reused without a proof -----------------------------------
HELPED_AGENT = """
from bco_gym.agents import Agent
from {helper} import STEP


class Helped(Agent):
    name = "helped"

    def _reset(self):
        self._x = self.set.center.copy()

    def _act(self):
        return self._x

    def _update(self, loss, info=None):
        direction = self.rng.normal(size=self._x.shape)
        self._x = self.set.center + STEP * direction / (1 + abs(direction).sum())
"""


def _fresh_import(*names):
    import importlib

    for name in list(sys.modules):
        if name in names or name.split(".", 1)[0] in names:
            del sys.modules[name]
    importlib.invalidate_caches()


def _sweep_twice(agent, out, edit):
    """Results of a sweep, then of the same sweep after ``edit()``, and the warnings of
    the second."""
    import warnings as warnings_module

    from bco_gym.experiment import sweep

    options = {"env_kwargs": {"n": 3}, "progress": False}
    first = sweep("BCO-Ball-v0", agent, 30, 2, out=out, **options)
    edit()
    with warnings_module.catch_warnings(record=True) as seen:
        warnings_module.simplefilter("always")
        again = sweep("BCO-Ball-v0", agent, 30, 2, out=out, **options)
    return first, again, [str(w.message) for w in seen]


@pytest.mark.parametrize("layout", ["package", "sibling module"])
def test_an_edit_to_a_helper_makes_the_agent_s_cells_stale(tmp_path, monkeypatch, layout):
    """The agent's logic lives in a helper: of its package (``pkg/helper.py``), or a
    top-level module its module imports (``sibling_helper.py``). Editing the helper
    changes the agent's digest: its stored cells are recomputed, with a warning."""
    monkeypatch.syspath_prepend(str(tmp_path))
    if layout == "package":
        (tmp_path / "helped_pkg").mkdir()
        (tmp_path / "helped_pkg" / "__init__.py").write_text("")
        helper = tmp_path / "helped_pkg" / "helper.py"
        (tmp_path / "helped_pkg" / "agent.py").write_text(
            HELPED_AGENT.format(helper="helped_pkg.helper")
        )
        agent, tops = "helped_pkg.agent:Helped", ("helped_pkg",)
    else:
        helper = tmp_path / "sibling_helper.py"
        (tmp_path / "sibling_agent.py").write_text(HELPED_AGENT.format(helper="sibling_helper"))
        agent, tops = "sibling_agent:Helped", ("sibling_agent", "sibling_helper")
    helper.write_text("STEP = 0.1\n")
    _fresh_import(*tops)

    def edit():
        helper.write_text("STEP = 0.25  # a larger step\n")
        _fresh_import(*tops)

    first, again, said = _sweep_twice(agent, tmp_path / "sweep", edit)
    assert any("were computed by other code" in text and "recomputed" in text for text in said)
    assert [r.final_regret for r in again] != [r.final_regret for r in first]  # the new code's
    assert first[0].agent_spec["digest"] != again[0].agent_spec["digest"]


def _random_subclass():
    from bco_gym.agents.random.agent import RandomAgent

    return type("T", (RandomAgent,), {"law": "vertex-mixture"})


def test_classes_made_with_type_share_no_cells_and_say_why(tmp_path):
    """Two classes made with type(), both named T: one identity (abc:T), no source of
    their own. The second's sweep in the first's directory recomputes every cell."""
    from bco_gym.agents import register, resolve_agent, unregister
    from bco_gym.experiment import sweep

    first, second = _random_subclass(), type("T", (_random_subclass(),), {"law": "uniform"})
    register("typed-a", first)
    register("typed-b", second)
    try:
        spec = resolve_agent("typed-a")
        assert spec.identity() == resolve_agent("typed-b").identity() == "abc:T"
        assert spec.digest is None and "made with type()" in spec.no_digest_reason
        options = {"env_kwargs": {"n": 3}, "progress": False}
        out = tmp_path / "sweep"
        sweep("BCO-Ball-v0", "typed-a", 30, 2, out=out, **options)
        with pytest.warns(UserWarning, match=r"cannot be shown to come from its current code"):
            again = sweep("BCO-Ball-v0", "typed-b", 30, 2, out=out, **options)
        alone = sweep("BCO-Ball-v0", "typed-b", 30, 2, out=tmp_path / "alone", **options)
        assert [r.final_regret for r in again] == [r.final_regret for r in alone]
    finally:
        unregister("typed-a")
        unregister("typed-b")


INLINE_AGENT = """
import warnings
from bco_gym.agents import register
from bco_gym.agents.random.agent import RandomAgent
from bco_gym.experiment import sweep

class Inline(RandomAgent):
    name = "inline"

register("inline", Inline)
for _ in range(2):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        sweep("BCO-Ball-v0", "inline", 20, 2, out=OUT, env_kwargs={"n": 3}, progress=False)
print("\\n".join(str(w.message) for w in seen))
"""


def test_an_agent_defined_in_python_c_is_recomputed_saying_why(tmp_path):
    import subprocess

    code = f"OUT = {str(tmp_path / 'sweep')!r}\n" + INLINE_AGENT
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "agent 'inline': 2 stored cell(s)" in done.stdout
    assert "defined in python -c, an interactive session or a notebook" in done.stdout


def test_an_agent_imported_from_a_zip_that_is_then_edited_is_recomputed(tmp_path, monkeypatch):
    import zipfile
    import zipimport

    archive = tmp_path / "agents.zip"

    def write(step):
        with zipfile.ZipFile(archive, "w") as bundle:
            bundle.writestr("zipped_helper.py", f"STEP = {step}\n")
            bundle.writestr("zipped_agent.py", HELPED_AGENT.format(helper="zipped_helper"))

    write(0.1)
    monkeypatch.syspath_prepend(str(archive))
    _fresh_import("zipped_agent", "zipped_helper")

    def edit():
        write(0.3)
        zipimport._zip_directory_cache.pop(str(archive), None)
        _fresh_import("zipped_agent", "zipped_helper")

    first, again, said = _sweep_twice("zipped_agent:Helped", tmp_path / "sweep", edit)
    assert first[0].agent_spec["digest"] is not None  # the archive's bytes, digested
    assert any("were computed by other code" in text for text in said)
    assert [r.final_regret for r in again] != [r.final_regret for r in first]


def test_built_in_identities_and_digests_are_the_archive_s():
    """The archive keys cells on identities (import path and keywords) and checks the
    digest: both stay as they were (the module, and the library's result code)."""
    import hashlib

    from bco_gym.agents import AGENTS, resolve_agent
    from bco_gym.agents.moved import current_identity
    from bco_gym.provenance import result_code_digest
    from bco_gym.reports import references

    for name, cls in AGENTS.items():
        spec = resolve_agent(name)
        assert spec.identity() == f"{cls.__module__}:{cls.__qualname__}"
        source = Path(sys.modules[cls.__module__].__file__).read_bytes()
        body = source + b"\0" + f"bco_gym-code:{result_code_digest()}".encode()
        assert spec.digest == hashlib.sha256(body).hexdigest()[:16], name
    checked = 0
    for scenario in references.SUITES["quick-v2"]:
        found = references.load_scenario("quick-v2", scenario.name, check_version=False) or {}
        for _, (_, cells) in found.items():
            for cell, result in cells[:4]:
                spec = resolve_agent(cell["agent"])
                recorded = current_identity(result.agent_spec["identity"])  # moved.py
                assert spec.identity(cell["agent_kwargs"]) == recorded
                checked += 1
    assert checked > 20
