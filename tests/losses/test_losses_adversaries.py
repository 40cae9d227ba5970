"""linear-drift and linear-adversarial: their generative models, worst-case constants,
exact comparators against independent solves, and the trap they set for followers."""

from __future__ import annotations

import numpy as np
import pytest
from losses_helpers import SETS, sequence, sum_over_rounds
from scipy.optimize import linprog

from bco_gym.losses import LinearAdversarialLoss, make_losses
from bco_gym.sets import L2Ball, Simplex


def _thetas(losses, stop: int) -> np.ndarray:
    center = np.asarray(losses.set.center, dtype=float)
    return np.stack([losses.gradient(t, center).ravel() for t in range(stop)])


def test_drift_mean_turns_at_the_given_rate_in_a_plane_of_v():
    losses = sequence("linear-drift", "simplex", seed=1, noise=0.0, mean_norm=0.7, rate=0.05)
    thetas = _thetas(losses, 200)
    np.testing.assert_allclose(np.linalg.norm(thetas, axis=1), 0.7, rtol=1e-12)
    np.testing.assert_allclose(thetas.sum(axis=1), 0.0, atol=1e-12)  # in V
    cosines = np.sum(thetas[:-1] * thetas[1:], axis=1) / 0.7**2
    np.testing.assert_allclose(cosines, np.cos(0.05), rtol=1e-10)
    assert np.linalg.matrix_rank(thetas, tol=1e-9) == 2  # one 2-plane
    turn = round(2 * np.pi / 0.05)  # a full turn later the mean is back (to the rounding)
    np.testing.assert_allclose(thetas[turn], thetas[0], atol=0.7 * 0.05)


def test_drift_with_rate_zero_is_stationary():
    losses = sequence("linear-drift", "ball", seed=2, noise=0.0, rate=0.0)
    thetas = _thetas(losses, 50)
    np.testing.assert_array_equal(thetas, np.broadcast_to(thetas[0], thetas.shape))


def test_adversarial_signs_and_running_sum():
    losses = sequence("linear-adversarial", "simplex", seed=3, block=4)
    signs = losses.signs(0, 20)
    np.testing.assert_array_equal(signs[:4], 0.5)
    np.testing.assert_array_equal(signs[4:8], -1.0)
    np.testing.assert_array_equal(signs[8:12], 1.0)
    running = np.cumsum(losses.signs(0, 4000))
    assert running.min() == -2.0 and running.max() == 2.0  # within [-block/2, block/2]
    # the sign pattern does not depend on where the reading starts (absolute time)
    np.testing.assert_array_equal(losses.signs(13, 7), signs[13:20])


def test_adversarial_thetas_are_bias_plus_alternating_swing():
    losses = sequence("linear-adversarial", "ball", seed=4, bias=0.2, swing=0.6, block=3)
    thetas = _thetas(losses, 12)
    mu, v = losses._globals["first"], losses._globals["second"]
    assert mu @ v == pytest.approx(0.0, abs=1e-12)
    expected = 0.2 * mu + 0.6 * losses.signs(0, 12)[:, np.newaxis] * v
    np.testing.assert_allclose(thetas, expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    ("family", "kwargs"),
    [
        ("linear-drift", {"noise": 0.0, "mean_norm": 0.8, "rate": 0.3}),
        ("linear-adversarial", {"bias": 0.3, "swing": 0.4, "block": 2}),
    ],
)
def test_constants_are_attained_in_the_worst_case(family: str, kwargs: dict):
    """noise=0, a ball centred at c: ||grad|| = G on full rounds, |f| = M at -R theta/||theta||."""
    ball = L2Ball(4, radius=1.5)
    losses = make_losses(family, ball, **kwargs)
    losses.reset(np.random.default_rng(5))
    rounds = range(2, 40)  # past the adversary's half-amplitude first block
    norms = [np.linalg.norm(losses.gradient(t, np.zeros(4))) for t in rounds]
    np.testing.assert_allclose(norms, losses.lipschitz, rtol=1e-12)
    worst = []
    for t in rounds:
        theta = losses.gradient(t, np.zeros(4))
        worst.append(abs(losses.loss(t, -1.5 * theta / np.linalg.norm(theta))))
    np.testing.assert_allclose(worst, losses.bound, rtol=1e-12)
    assert losses.bound == pytest.approx(losses.lipschitz * 1.5)


@pytest.mark.parametrize("family", ["linear-drift", "linear-adversarial"])
@pytest.mark.parametrize("set_name", ["simplex", "box", "l1", "birkhoff"])
def test_comparator_matches_linprog_on_the_summed_losses(family: str, set_name: str):
    """An independent LP: min over K of sum_t f_t(x), written from the per-round gradients."""
    from test_losses_comparators import _description

    losses = sequence(family, set_name, seed=6, **({"block": 5} if "adv" in family else {}))
    expand, a_eq, b_eq, a_ub, b_ub, bounds = _description(set_name)
    for result in losses.comparator([7, 90, losses.chunk_size + 3]):
        total = _thetas(losses, result.horizon).sum(axis=0)
        solution = linprog(total @ expand, a_ub, b_ub, a_eq, b_eq, bounds=bounds, method="highs")
        assert solution.status == 0
        point = (expand @ solution.x).reshape(SETS[set_name].shape)
        best = sum_over_rounds(losses, point, result.horizon)
        scale = result.horizon * losses.bound
        assert result.gap == 0.0
        assert result.value == pytest.approx(best, abs=1e-9 * scale)
        assert result.value == pytest.approx(
            sum_over_rounds(losses, result.point, result.horizon), abs=1e-12 * scale
        )


def _followers_regret(losses, horizon: int, window: int | None) -> float:
    """Regret of x_t = lmo(sum of the thetas of the previous block) (window = the block
    length: a learner updating once per block) or of all past rounds (window None: FTL)."""
    convex_set = losses.set
    thetas = _thetas(losses, horizon)
    played = 0.0
    for t in range(horizon):
        if window is None:
            past = thetas[:t].sum(axis=0)
        else:
            block_start = (t // window) * window
            past = thetas[max(0, block_start - window) : block_start].sum(axis=0)
        x = convex_set.lmo(past.reshape(convex_set.shape)) if past.any() else convex_set.center
        played += losses.loss(t, x)
    (best,) = losses.comparator([horizon])
    return played - best.value


def test_recent_past_followers_are_trapped_and_the_comparator_is_the_bias():
    simplex = Simplex(5)
    losses = LinearAdversarialLoss(simplex, bias=0.1, swing=0.9, block=10)
    losses.reset(np.random.default_rng(7))
    horizon = 2000
    (best,) = losses.comparator([horizon])
    np.testing.assert_array_equal(best.point, simplex.lmo(losses._globals["first"]))
    # Linear regret for the follower of the last block (about 0.5 per round here) ...
    assert _followers_regret(losses, horizon, window=10) > 0.25 * horizon
    # A follower of the whole past is trapped only early, then sits on the bias vertex.
    assert _followers_regret(losses, horizon, window=None) < 0.02 * horizon


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"block": 0}, "block=0 must be an integer >= 1"),
        ({"block": 2.5}, "block=2.5 must be an integer"),
        ({"bias": -1}, r"bias=-1 must be a finite number in \[0, inf\)"),
        ({"swing": float("inf")}, "swing=inf"),
        ({"bias": 0.0, "swing": 0.0}, "must be > 0"),
    ],
)
def test_adversarial_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_losses("linear-adversarial", Simplex(3), **kwargs)


def test_drift_bad_rate_and_sets_of_dimension_one():
    with pytest.raises(ValueError, match=r"rate=-0.1 must be a finite number in \[0, inf\)"):
        make_losses("linear-drift", Simplex(3), rate=-0.1)
    for family in ("linear-drift", "linear-adversarial"):
        with pytest.raises(ValueError, match="affine hull has dimension >= 2"):
            make_losses(family, Simplex(2))


@pytest.mark.parametrize("family", ["linear-drift", "linear-adversarial"])
def test_sequences_are_oblivious_to_the_plays(family: str):
    """Fixed at reset: a reader that evaluated other points first sees the same rounds."""
    simplex = Simplex(4)
    played, untouched = (make_losses(family, simplex, noise=0.2) for _ in range(2))
    for losses in (played, untouched):
        losses.reset(np.random.default_rng(9))
    rng = np.random.default_rng(10)
    for t in range(300):  # a learner's plays, some chasing the last gradient
        x = simplex.lmo(played.gradient(t - 1, simplex.center)) if t % 2 else simplex.sample(rng)
        played.loss(t, x)
    center = np.asarray(simplex.center)
    np.testing.assert_array_equal(
        [played.gradient(t, center) for t in range(300, 320)],
        [untouched.gradient(t, center) for t in range(300, 320)],
    )
