"""Losses users bring: from_array and from_function, in the env, against hand computations."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize

from bco_gym.envs import BanditConvexEnv
from bco_gym.errors import InvalidLossError
from bco_gym.losses import from_array, from_function, make_losses
from bco_gym.sets import ConvexSet, Hypercube, Simplex
from bco_gym.wrappers import RegretRecorder

THETAS = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0], [2.0, 1.0, 1.0]])
OFFSETS = np.array([0.5, -1.0, 2.0])


class OracleOnlySimplex(ConvexSet):
    """A user-defined set known through its oracles only (the simplex, no projection)."""

    def __init__(self, n: int):
        self.inner = Simplex(n)
        self.shape = self.inner.shape

    aff_dim = property(lambda self: self.inner.aff_dim)
    center = property(lambda self: self.inner.center)
    inner_radius = property(lambda self: self.inner.inner_radius)
    outer_radius = property(lambda self: self.inner.outer_radius)

    def tangent(self, v):
        return self.inner.tangent(v)

    def lmo(self, direction):
        return self.inner.lmo(direction)

    def contains(self, x, atol=1e-9):
        return self.inner.contains(x, atol)


def _play(env, actions) -> dict:
    env.reset(seed=0)
    for action in actions:
        *_, info = env.step(np.asarray(action, dtype=float))
    return info


# -- from_array -------------------------------------------------------------------------------


def test_from_array_regret_equals_the_hand_computation():
    losses = from_array(Simplex(3), THETAS, OFFSETS)
    env = RegretRecorder(BanditConvexEnv(Simplex(3), losses))
    assert env.unwrapped.horizon == 3 == losses.horizon
    plays = [[1, 0, 0], [0, 0, 1], [1 / 3, 1 / 3, 1 / 3]]
    info = _play(env, plays)
    # by hand: 1 + 0.5, -1 - 1, 4/3 + 2 -> 1.5 - 2 + 10/3; the sum of thetas is (3, 2, 0.5),
    # so the best vertex is e_3 with 0.5, plus the offsets' 1.5
    played = 1.5 - 2.0 + 10 / 3
    assert info["cumulative_loss"] == pytest.approx(played, rel=1e-14)
    assert info["comparator_loss"] == pytest.approx(2.0, rel=1e-14)
    assert info["regret"] == pytest.approx(played - 2.0, rel=1e-14)
    assert info["comparator_gap"] == 0.0


def test_from_array_constants_are_the_exact_bounds():
    losses = from_array(Simplex(3), THETAS, OFFSETS)
    assert losses.lipschitz == pytest.approx(np.sqrt(10.0))  # ||(0, 3, -1)||
    # on the simplex f_t ranges over theta_t,i + b_t: the largest |.| is round 2, vertex 1
    assert losses.bound == 4.0


def test_from_array_comparator_matches_brute_force_and_reads_a_memmap(tmp_path):
    rng = np.random.default_rng(0)
    box = Hypercube(low=[-1.0, 0.0, 2.0], high=[1.0, 0.5, 3.0])
    horizon = 9000  # several chunks
    path = tmp_path / "thetas.npy"
    thetas = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(horizon, 3))
    thetas[:] = rng.standard_normal((horizon, 3)) + np.array([0.02, -0.01, 0.0])
    thetas.flush()
    mapped = np.load(path, mmap_mode="r")
    offsets = rng.uniform(-1, 1, horizon)
    losses = from_array(box, mapped, offsets)
    # read in place (never copied whole), through a view the library cannot write
    assert losses.read_in_place and np.shares_memory(losses.thetas, mapped)
    assert not losses.thetas.flags.writeable
    corners = [np.array(c) for c in itertools.product(*zip(box.low, box.high, strict=True))]
    exact = np.asarray(mapped, dtype=float)
    for result in losses.comparator([5, 4096, horizon]):
        sums = exact[: result.horizon].sum(axis=0)
        best = min(sums @ c for c in corners) + offsets[: result.horizon].sum()
        assert result.value == pytest.approx(best, rel=1e-10, abs=1e-10)
        assert result.gap == 0.0
    values = losses.losses(4090, np.broadcast_to(box.center, (12, 3)))
    np.testing.assert_allclose(values, exact[4090:4102] @ box.center + offsets[4090:4102])


@pytest.mark.parametrize(
    ("thetas", "offsets", "error", "message"),
    [
        (np.ones((4, 2)), None, ValueError, r"thetas has shape \(4, 2\), expected \(T, 3\)"),
        (np.ones((0, 3)), None, ValueError, "thetas is empty"),
        (np.ones(3), None, ValueError, r"thetas has shape \(3,\)"),
        (np.array([[1, 2, 3]], dtype=complex), None, TypeError, "dtype complex128"),
        (np.ones((2, 3), dtype=bool), None, TypeError, "dtype bool"),
        ([["0.1", "0.2", "0.3"]], None, TypeError, "must hold real numbers"),
        (THETAS, np.ones(2), ValueError, r"offsets has shape \(2,\), expected \(3,\)"),
        (THETAS, np.array([0, np.inf, 0]), InvalidLossError, r"offsets\[1\] \(round 1\)"),
    ],
)
def test_from_array_refuses_bad_input(thetas, offsets, error, message):
    with pytest.raises(error, match=message):
        from_array(Simplex(3), thetas, offsets)


def test_from_array_names_the_round_of_a_nan():
    thetas = THETAS.copy()
    thetas[2, 1] = np.nan
    with pytest.raises(InvalidLossError, match=r"thetas\[2\] \(round 2\) holds a non-finite entry"):
        from_array(Simplex(3), thetas)
    with pytest.raises(TypeError, match="ConvexSet"):
        from_array(np.zeros(3), THETAS)


def test_env_horizon_rules_with_finite_losses():
    losses = from_array(Simplex(3), THETAS)
    assert BanditConvexEnv(Simplex(3), losses, 2).horizon == 2
    with pytest.raises(ValueError, match="horizon=4 is past the end of the 'array' loss sequence"):
        BanditConvexEnv(Simplex(3), losses, 4)
    with pytest.raises(ValueError, match="horizon=None is not allowed here"):
        BanditConvexEnv(Simplex(3), make_losses("linear", Simplex(3)))
    losses.reset(np.random.default_rng(0))
    with pytest.raises(ValueError, match="round 3 is past the sequence's horizon 3"):
        losses.loss(3, Simplex(3).center)
    with pytest.raises(ValueError, match="round 3 is past"):
        losses.comparator([4])


# -- from_function ------------------------------------------------------------------------------

TARGETS = np.array([[0.9, 0.1, 0.0], [0.2, 0.2, 0.6], [1.0, 0.0, 0.0], [0.0, 0.5, 0.5]])


def _quadratic(t, x):
    return 0.5 * float(np.sum((x - TARGETS[t]) ** 2))


def _quadratic_gradient(t, x):
    return x - TARGETS[t]


def _batched_quadratic(rounds, points):
    return 0.5 * np.sum((points - TARGETS[rounds]) ** 2, axis=1)


def _batched_gradient(rounds, points):
    return points - TARGETS[rounds]


@pytest.mark.parametrize("batched", [False, True])
def test_from_function_regret_equals_the_hand_computation(batched: bool):
    """f_t = ||x - z_t||^2 / 2: the best fixed point is the mean target (in the simplex)."""
    functions = (
        (_batched_quadratic, _batched_gradient) if batched else (_quadratic, _quadratic_gradient)
    )
    losses = from_function(
        Simplex(3), *functions, horizon=4, lipschitz=2.0, bound=1.0, batched=batched
    )
    env = RegretRecorder(BanditConvexEnv(Simplex(3), losses, feedback="full"))
    plays = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1 / 3, 1 / 3, 1 / 3]]
    info = _play(env, plays)
    played = sum(_quadratic(t, np.array(x, dtype=float)) for t, x in enumerate(plays))
    mean = TARGETS.mean(axis=0)  # (0.525, 0.2, 0.275), in the simplex
    best = sum(_quadratic(t, mean) for t in range(4))
    assert info["cumulative_loss"] == pytest.approx(played, rel=1e-14)
    assert info["comparator_loss"] == pytest.approx(best, abs=1e-6 * 4)
    assert info["regret"] == pytest.approx(played - best, abs=1e-6 * 4)
    assert 0.0 <= info["comparator_gap"] <= 1e-6 * 4 * 1.0
    np.testing.assert_allclose(info["gradient"], np.array(plays[-1]) - TARGETS[3])


def _entropy_losses(horizon: int, n: int, seed: int):
    """Smooth convex losses on the simplex: f_t(x) = -log(<a_t, x>) + <c_t, x>, a_t in [0.5, 2]."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, (horizon, n))
    c = rng.uniform(-0.3, 0.3, (horizon, n))

    def loss(rounds, points):
        return -np.log(np.sum(a[rounds] * points, axis=1)) + np.sum(c[rounds] * points, axis=1)

    def gradient(rounds, points):
        return -a[rounds] / np.sum(a[rounds] * points, axis=1, keepdims=True) + c[rounds]

    lipschitz = float(np.max(np.linalg.norm(a, axis=1) / a.min(axis=1) + np.linalg.norm(c, axis=1)))
    bound = float(np.log(4.0) + 0.3)
    return loss, gradient, lipschitz, bound, a, c


@pytest.mark.parametrize("oracle_only", [False, True])
def test_from_function_certificate_holds_against_scipy(oracle_only: bool):
    horizon, n = 300, 4
    loss, gradient, lipschitz, bound, a, c = _entropy_losses(horizon, n, seed=3)
    convex_set = OracleOnlySimplex(n) if oracle_only else Simplex(n)
    losses = from_function(convex_set, loss, gradient, horizon, lipschitz, bound, batched=True)

    def total(x):
        return float(np.sum(-np.log(a @ x) + c @ x))

    def total_gradient(x):
        return -(a / (a @ x)[:, None]).sum(axis=0) + c.sum(axis=0)

    solution = minimize(
        total,
        np.full(n, 1 / n),
        jac=total_gradient,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * n,
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1, "jac": lambda x: np.ones(n)}],
        options={"ftol": 1e-13, "maxiter": 500},
    )
    assert solution.success and abs(solution.x.sum() - 1) < 1e-9 and solution.x.min() > -1e-9
    reference = total(np.clip(solution.x, 0, None) / np.clip(solution.x, 0, None).sum())
    for result in losses.comparator([50, horizon]):
        assert Simplex(n).contains(result.point, atol=1e-12)
        assert result.value == pytest.approx(
            total_like(a, c, result.point, result.horizon), rel=1e-12
        )
        assert 0.0 <= result.gap <= 1e-6 * result.horizon * bound
    (full,) = losses.comparator([horizon])
    assert full.value - full.gap <= reference + 1e-9 * horizon  # the certificate is a true bound
    assert full.value <= reference + full.gap + 1e-9 * horizon


def total_like(a, c, x, stop):
    return float(np.sum(-np.log(a[:stop] @ x) + c[:stop] @ x))


def test_from_function_checks_values_against_the_declared_constants():
    """Every use is checked, also without the construction-time checks (verify=False)."""

    def nan_at_two(t, x):
        return float("nan") if t == 2 else 0.0

    losses = from_function(Simplex(3), nan_at_two, _quadratic_gradient, 4, 2.0, 1.0, verify=False)
    env = BanditConvexEnv(Simplex(3), losses)
    env.reset(seed=0)
    env.step(Simplex(3).center)
    env.step(Simplex(3).center)
    with pytest.raises(InvalidLossError, match="round 2: loss returned nan"):
        env.step(Simplex(3).center)
    too_big = from_function(
        Simplex(3), _quadratic, _quadratic_gradient, 4, 2.0, bound=0.01, verify=False
    )
    too_big.reset(np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"round 0: \|loss\| = .* exceeds the declared bound=0.01"):
        too_big.loss(0, np.array([0.0, 0.0, 1.0]))
    steep = from_function(
        Simplex(3), _quadratic, _quadratic_gradient, 4, 0.1, bound=1.0, verify=False
    )
    steep.reset(np.random.default_rng(0))
    with pytest.raises(
        ValueError, match=r"round 1: \|\|gradient\|\| = .* exceeds the declared lipschitz=0.1"
    ):
        steep.gradient(1, np.array([1.0, 0.0, 0.0]))
    wrong_shape = from_function(
        Simplex(3), _quadratic, lambda t, x: np.ones(2), 4, 2.0, 1.0, verify=False
    )
    wrong_shape.reset(np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"gradient returned shape \(2,\), expected \(3,\)"):
        wrong_shape.gradient(0, Simplex(3).center)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"loss": "f"}, TypeError, "loss='f' is not callable"),
        ({"gradient": None}, TypeError, "gradient=None is not callable"),
        ({"horizon": 0}, ValueError, "horizon=0 must be an integer >= 1"),
        ({"horizon": 2.5}, ValueError, "horizon=2.5 must be an integer"),
        ({"lipschitz": 0.0}, ValueError, "lipschitz=0.0 must be a finite number > 0"),
        ({"lipschitz": -1}, ValueError, "lipschitz=-1 must be a finite number > 0"),
        ({"bound": float("nan")}, ValueError, "bound=nan must be a finite number > 0"),
        ({"bound": "1"}, ValueError, "bound='1' must be a finite number > 0"),
        ({"batched": "yes"}, TypeError, "batched='yes' must be True or False"),
    ],
)
def test_from_function_refuses_bad_input(kwargs, error, message):
    arguments = {
        "loss": _quadratic,
        "gradient": _quadratic_gradient,
        "horizon": 4,
        "lipschitz": 2.0,
        "bound": 1.0,
        **kwargs,
    }
    with pytest.raises(error, match=message):
        from_function(Simplex(3), **arguments)


def test_user_losses_do_not_depend_on_the_seed_or_the_reading_order():
    losses = from_function(Simplex(3), _quadratic, _quadratic_gradient, 4, 2.0, 1.0)
    points = np.stack([Simplex(3).center] * 4)
    losses.reset(np.random.default_rng(1))
    first = losses.losses(0, points)
    losses.reset(np.random.default_rng(2))
    backward = [losses.loss(t, points[t]) for t in reversed(range(4))][::-1]
    np.testing.assert_array_equal(first, backward)
