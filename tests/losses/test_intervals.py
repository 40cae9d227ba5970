"""Adaptive, dynamic and switching regret (bco_gym.losses.intervals) against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

from bco_gym.losses.intervals import IntervalRegret, dyadic_pieces
from bco_gym.sets import L2Ball, Simplex


def brute_interval_regret(convex_set, thetas, constants, played, start, stop):
    """R([start, stop)) with the interval's best point from scipy's LP (simplex) or closed form."""
    total = thetas[start:stop].sum(0)
    if isinstance(convex_set, Simplex):
        n = len(total)
        lp = linprog(total, A_eq=np.ones((1, n)), b_eq=[1.0], bounds=[(0, None)] * n)
        best = lp.fun
    else:  # Euclidean ball of radius r about the centre c: min <g, x> = <g, c> - r ||g||
        best = total @ convex_set.center - convex_set.radius * np.linalg.norm(total)
    return played[start:stop].sum() - best - constants[start:stop].sum()


def cover(horizon):
    """Every interval of the dyadic cover of [0, horizon): (start, stop)."""
    k = 0
    while (1 << k) <= horizon:
        for start in range(0, horizon - (1 << k) + 1, 1 << k):
            yield start, start + (1 << k)
        k += 1


def random_game(convex_set, horizon, seed):
    rng = np.random.default_rng(seed)
    thetas = rng.normal(size=(horizon, convex_set.dim))
    constants = rng.normal(size=horizon)
    plays = convex_set.sample_many(rng, horizon).reshape(horizon, -1)
    played = (thetas * plays).sum(1) + constants
    return thetas, constants, played


@pytest.mark.parametrize("convex_set", [Simplex(4), L2Ball(3, radius=2.0)], ids=repr)
@pytest.mark.parametrize("horizon", [1, 7, 16, 37])
def test_adaptive_and_dynamic_regret_equal_brute_force(convex_set, horizon):
    thetas, constants, played = random_game(convex_set, horizon, horizon)
    starts = [0, 5, 11] if horizon > 11 else [0]
    tracker = IntervalRegret(convex_set, horizon, segments=starts)
    tracker.update(thetas, constants, played)
    metrics = tracker.result()

    regrets = {
        interval: brute_interval_regret(convex_set, thetas, constants, played, *interval)
        for interval in cover(horizon)
    }
    static = brute_interval_regret(convex_set, thetas, constants, played, 0, horizon)
    assert metrics.whole_run_regret == pytest.approx(static, rel=1e-12, abs=1e-12)
    # the largest regret over the dyadic intervals and the whole run
    regrets[(0, horizon)] = static
    assert metrics.adaptive_regret == pytest.approx(max(regrets.values()), rel=1e-12, abs=1e-12)
    start, length = metrics.worst_interval
    assert regrets[(start, start + length)] == pytest.approx(metrics.adaptive_regret, abs=1e-12)
    for length, value in zip(metrics.lengths, metrics.max_interval_regret, strict=True):
        by_length = [r for (a, b), r in regrets.items() if b - a == length]
        assert value == pytest.approx(max(by_length), rel=1e-12, abs=1e-12)
    dynamic = sum(regrets[(t, t + 1)] for t in range(horizon))
    assert metrics.dynamic_regret == pytest.approx(dynamic, rel=1e-12, abs=1e-12)
    bounds = [*starts, horizon]
    switching = sum(
        brute_interval_regret(convex_set, thetas, constants, played, a, b)
        for a, b in itertools.pairwise(bounds)
    )
    assert metrics.switching_regret == pytest.approx(switching, rel=1e-12, abs=1e-12)
    # the dynamic comparator is the best per round: dynamic >= switching >= static regret
    assert metrics.dynamic_regret >= metrics.switching_regret - 1e-9
    assert metrics.switching_regret >= static - 1e-9


def test_the_result_does_not_depend_on_how_rounds_are_split():
    convex_set, horizon = Simplex(5), 100
    thetas, constants, played = random_game(convex_set, horizon, 3)
    results = []
    for cuts in ([], [1, 2, 3, 50], list(range(1, horizon)), [64], [7, 13, 99]):
        tracker = IntervalRegret(convex_set, horizon, segments=[0, 30, 61])
        for a, b in itertools.pairwise([0, *cuts, horizon]):
            tracker.update(thetas[a:b], constants[a:b], played[a:b])
        results.append(tracker.result().as_dict())
    assert all(r == results[0] for r in results)


def test_a_reused_buffer_does_not_change_the_result():
    convex_set, horizon = L2Ball(3), 45
    thetas, constants, played = random_game(convex_set, horizon, 9)
    whole = IntervalRegret(convex_set, horizon, segments=[0, 20])
    whole.update(thetas, constants, played)
    reused = IntervalRegret(convex_set, horizon, segments=[0, 20])
    buffers = (np.empty((7, 3)), np.empty(7), np.empty(7))
    for start in range(0, horizon, 7):  # odd spans leave open blocks at every level
        stop = min(horizon, start + 7)
        for buffer, source in zip(buffers, (thetas, constants, played), strict=True):
            buffer[: stop - start] = source[start:stop]
        reused.update(*(buffer[: stop - start] for buffer in buffers))
        for buffer in buffers:
            buffer.fill(np.nan)  # the caller overwrites its buffers
    assert reused.result().as_dict() == whole.result().as_dict()


def test_dyadic_pieces_tile_the_interval():
    for start in range(0, 40):
        for stop in range(start + 1, 41):
            pieces = dyadic_pieces(start, stop)
            covered = [t for k, j in pieces for t in range(j << k, (j + 1) << k)]
            assert covered == list(range(start, stop))


def test_bad_segments_and_overfeeding_raise():
    with pytest.raises(ValueError, match="segments"):
        IntervalRegret(Simplex(3), 10, segments=[1, 4])
    tracker = IntervalRegret(Simplex(3), 2)
    with pytest.raises(ValueError, match="past the horizon"):
        tracker.update(np.zeros((3, 3)), np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match="feed them all"):
        IntervalRegret(Simplex(3), 2).result()


@pytest.mark.parametrize("convex_set", [L2Ball(3), Simplex(3)], ids=repr)
@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_non_finite_thetas_are_refused_by_the_numpy_update(convex_set, bad):
    """The ball's closed form refuses them as the set's LMO does (the other sets' path)."""
    thetas = np.ones((4, 3))
    thetas[2, 1] = bad
    with pytest.raises(ValueError, match="non-finite"):
        IntervalRegret(convex_set, 4).update(thetas, np.zeros(4), np.zeros(4))


@pytest.mark.parametrize("convex_set", [Simplex(6), L2Ball(4, radius=0.5)], ids=repr)
def test_the_adaptive_regret_is_never_below_the_static_regret(convex_set):
    """The whole run is among the intervals: adaptive >= static for every T, and where the
    whole run beats every dyadic interval the adaptive regret is its regret, at (0, T)."""
    attained_by_whole = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        horizon = int(rng.integers(1, 300))
        thetas, constants, played = random_game(convex_set, horizon, seed)
        # a play that loses against the whole run's best point: the static regret is large
        played = played + rng.uniform(0.0, 1.0) * np.abs(thetas).sum(1)
        tracker = IntervalRegret(convex_set, horizon)
        tracker.update(thetas, constants, played)
        metrics = tracker.result()
        static = brute_interval_regret(convex_set, thetas, constants, played, 0, horizon)
        assert metrics.adaptive_regret >= static - 1e-12 * max(1.0, abs(static))
        assert metrics.adaptive_regret >= max(metrics.max_interval_regret)
        if metrics.adaptive_regret > max(metrics.max_interval_regret):
            attained_by_whole += 1
            assert metrics.worst_interval == (0, horizon)
            assert metrics.adaptive_regret == metrics.whole_run_regret
    assert attained_by_whole > 0  # the case the dyadic cover alone missed does occur
