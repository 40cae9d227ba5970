"""Sphere sampling on the tangent space and the one-point estimator (statistical tests)."""

from __future__ import annotations

import numpy as np
import pytest
from agent_helpers import FrobeniusBall, Permutahedron

from bco_gym.agents.estimators import (
    DirectionStream,
    block_estimate,
    one_point_estimate,
    sphere_directions,
    tangent_gaussian_rows,
)
from bco_gym.sets import L2Ball, Simplex

SETS = [Simplex(6), L2Ball(4), Permutahedron(5), FrobeniusBall(2, 3)]


@pytest.mark.parametrize("convex_set", SETS, ids=repr)
def test_directions_are_unit_vectors_of_the_tangent_space(convex_set, rng):
    directions = sphere_directions(convex_set, rng, 500)
    assert directions.shape == (500, *convex_set.shape)
    flat = directions.reshape(500, -1)
    np.testing.assert_allclose(np.linalg.norm(flat, axis=1), 1.0, rtol=1e-12)
    tangent = convex_set.tangent_many(directions).reshape(500, -1)
    np.testing.assert_allclose(tangent, flat, atol=1e-12)  # already in V


@pytest.mark.parametrize("convex_set", SETS, ids=repr)
def test_directions_are_isotropic_in_the_tangent_space(convex_set, rng):
    """Uniform on the sphere of V: mean 0 and second moment E[u u^T] = P_V / d.

    Tolerance: with N = 40,000 samples each entry of the empirical mean and second
    moment has standard deviation below 1/sqrt(N) = 0.005; we allow 0.03 (6 sigma).
    """
    count = 40_000
    flat = sphere_directions(convex_set, rng, count).reshape(count, -1)
    dim, d = convex_set.dim, convex_set.aff_dim
    projector = np.stack(
        [convex_set.tangent(e.reshape(convex_set.shape)).ravel() for e in np.eye(dim)]
    )
    np.testing.assert_allclose(flat.mean(axis=0), 0.0, atol=0.03)
    np.testing.assert_allclose(flat.T @ flat / count, projector / d, atol=0.03)


@pytest.mark.parametrize("convex_set", [Simplex(5), L2Ball(3), FrobeniusBall(2, 2)], ids=repr)
def test_one_point_estimate_is_unbiased_for_a_linear_loss(convex_set, rng):
    """E[(d/delta) f(x + delta u) u] = P_V theta for f(x) = <theta, x> + b.

    z-test on N = 200,000 samples per coordinate: |mean - target| <= 5 standard errors
    (the chance of a false alarm over all coordinates is below 1e-5).
    """
    count, delta, d = 200_000, 0.1, convex_set.aff_dim
    theta = rng.standard_normal(convex_set.shape) + 1.0  # a clear component normal to V
    x = convex_set.center + 0.3 * convex_set.inner_radius * _unit_tangent(convex_set, rng)
    directions = sphere_directions(convex_set, rng, count)
    flat = directions.reshape(count, -1)
    values = (x.ravel() + delta * flat) @ theta.ravel() + 0.7  # f(y) with an offset b
    samples = (d / delta) * values[:, np.newaxis] * flat
    mean, stderr = samples.mean(axis=0), samples.std(axis=0) / np.sqrt(count)
    target = convex_set.tangent(theta).ravel()
    assert np.all(np.abs(mean - target) <= 5 * stderr + 1e-12)
    # The test has power: on the simplex the ambient theta (off by its mean, about 1, in
    # every coordinate) is rejected.
    if convex_set.aff_dim < convex_set.dim:
        assert np.any(np.abs(mean - theta.ravel()) > 5 * stderr)


def test_block_estimate_is_the_sum_of_one_point_estimates(rng):
    convex_set = FrobeniusBall(2, 3)
    directions = sphere_directions(convex_set, rng, 7)
    losses = rng.standard_normal(7)
    expected = sum(
        one_point_estimate(f, u, 0.2, 6) for f, u in zip(losses, directions, strict=True)
    )
    np.testing.assert_allclose(block_estimate(losses, directions, 0.2, 6), expected, rtol=1e-12)


def test_direction_stream_serves_the_batches_in_order():
    convex_set = Simplex(4)
    stream = DirectionStream(
        convex_set, [np.random.default_rng(3), np.random.default_rng(4)], chunk_size=5
    )
    served = np.array([stream.next().copy() for _ in range(12)])
    assert served.shape == (12, 2, 4)
    for row, seed in enumerate((3, 4)):  # each row: its own generator's chunks, in order
        rng = np.random.default_rng(seed)
        chunks = [sphere_directions(convex_set, rng, 5) for _ in range(3)]
        np.testing.assert_array_equal(served[:, row], np.concatenate(chunks)[:12])


@pytest.mark.parametrize("convex_set", [Simplex(4), FrobeniusBall(2, 3)], ids=repr)
def test_a_row_first_stream_serves_the_same_directions(convex_set):
    """serve_rows (the compiled rounds' chunks, row first) changes no direction: take_rows
    hands the chunk that take's rounds lie in, and next/take serve what they served, in
    order, also when the switch comes in the middle of a chunk."""

    def stream() -> DirectionStream:
        rngs = [np.random.default_rng(3), np.random.default_rng(4), np.random.default_rng(5)]
        return DirectionStream(convex_set, rngs, chunk_size=7)

    reference = stream()
    expected = np.array([reference.next().copy() for _ in range(30)])  # (30, S, *shape)
    switched = stream()
    served = [switched.next().copy() for _ in range(3)]  # 3 rounds round first, then rows
    switched.serve_rows()
    served.append(switched.next())
    served.extend(switched.take(2))
    assert switched.drawn and switched.row_first
    while len(served) < 30:
        chunk, start, rounds = switched.take_rows(5)
        assert chunk.shape == (3, 7, *convex_set.shape) and not chunk.flags.writeable
        assert 1 <= rounds <= 5 and start + rounds <= 7
        served.extend(np.moveaxis(chunk[:, start : start + rounds], 1, 0))
    np.testing.assert_array_equal(np.array(served[:30]), expected)
    with pytest.raises(RuntimeError, match="serve_rows"):
        stream().take_rows(1)


def _unit_tangent(convex_set, rng):
    return sphere_directions(convex_set, rng, 1)[0]


class _ZerosFirst:
    """A generator whose first batch has zero vectors at ``rounds``, then N(0, 1) draws."""

    def __init__(self, seed: int, rounds: list[int]):
        self.rng, self.rounds, self.first = np.random.default_rng(seed), rounds, True

    def standard_normal(self, size=None, out=None):
        values = self.rng.standard_normal(size, out=out)
        if self.first:
            self.first = False
            values[self.rounds] = 0.0
        return values


@pytest.mark.parametrize("convex_set", [L2Ball(4), Simplex(4)], ids=["ball", "simplex"])
def test_a_zero_direction_is_redrawn_from_its_rows_generator(convex_set):
    rngs = [_ZerosFirst(0, []), _ZerosFirst(1, [2, 5]), _ZerosFirst(2, [])]
    vectors, norms = tangent_gaussian_rows(convex_set, rngs, 6)
    assert np.all(norms > 0)
    assert np.allclose(norms, np.linalg.norm(vectors, axis=-1), rtol=1e-14, atol=0)
    for row in (0, 2):  # the other rows are their generators' first draws, untouched
        expected, _ = tangent_gaussian_rows(convex_set, [_ZerosFirst(row, [])], 6)
        assert np.array_equal(vectors[row], expected[0])
    again = np.random.default_rng(1)
    first = again.standard_normal((6, *convex_set.shape))
    redrawn = again.standard_normal((2, *convex_set.shape))  # the zero rounds, in order
    if convex_set.aff_dim != convex_set.dim:
        first, redrawn = convex_set.tangent_many(first), convex_set.tangent_many(redrawn)
    assert np.array_equal(vectors[1, [0, 1, 3, 4]], first[[0, 1, 3, 4]])
    assert np.array_equal(vectors[1, [2, 5]], redrawn)
