"""What :func:`~bco_gym.losses.from_function` checks before it certifies a comparator.

The Frank-Wolfe gap of the comparator bounds its error only if every f_t is convex and
``gradient`` is its gradient. Neither can be proved from samples, but both can be
refuted: :func:`verify_function_loss` tests, on a sample of rounds (the first, the last
and up to ``ROUNDS_CHECKED - 2`` others) and of points of K (the centre, LMO vertices
in random directions and random points of K), all drawn by its own seeded generator so
the same callables always get the same verdict,

* the first-order condition of convexity on every ordered pair (x, y) of the points,
  f_t(y) >= f_t(x) + <g_t(x), y - x> - FIRST_ORDER_SLACK (M + G ||y - x||): a
  non-convex loss, or a gradient that is not the loss's (zero, scaled, of another
  round), fails it;
* the gradient against central finite differences along segments of K,
  |(f_t(x + h d) - f_t(x - h d)) / 2h - <g_t(x), d>| <= FINITE_DIFFERENCE_SLACK G ||d||
  (plus the rounding of the values), with h = ``FINITE_DIFFERENCE_STEP``; the points
  x +- h d stay in K (segments between sampled points);
* every value against M and every gradient norm against G, and their types (real
  numbers and arrays, never strings, bools or objects): the checks every evaluation
  makes.

A violation raises :class:`~bco_gym.errors.LossCheckError` (a ValueError) naming the
round, the points and the amounts. The checks are sampled, so they prove nothing: a loss
that is non-convex only away from the samples passes (a deep dent between the sampled
points gave a regret of 665.5 with a gap of 1.2e-30 where the true regret was 863.6).
After they pass, the result's ``loss["comparator"]`` says what was done,
``"checked on N samples"`` (:func:`checked_label`: N = sampled rounds x sampled points),
never ``"certified"``, which is kept for comparators whose gap is a true bound (the
built-in families). ``from_function(..., verify=False)`` skips the checks; the label is
then ``"uncertified"``.

:func:`comparator_status` reads a result's label back: ``"uncertified"`` for unchecked
losses, ``"sampled"`` for losses checked on samples, ``"exact"`` for a comparator with
gap 0 (linear families, arrays), else ``"certified"``. Every table and report that shows
a regret shows it (:mod:`bco_gym.reports`), so neither an uncertified nor a sampled
regret is read as a certified one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from bco_gym.errors import LossCheckError
from bco_gym.sets.base import ConvexSet

#: Rounds sampled (all of them when the horizon is at most this).
ROUNDS_CHECKED = 8
#: Random directions whose LMO vertices are checked, and random points of K.
VERTICES_CHECKED, RANDOM_POINTS_CHECKED = 3, 2
#: Segments of K per round on which the gradient meets finite differences.
SEGMENTS_CHECKED = 3
#: Tolerances (relative to M + G ||y - x||, and to G ||d||) and the difference step.
FIRST_ORDER_SLACK = 1e-7
FINITE_DIFFERENCE_SLACK = 1e-3
FINITE_DIFFERENCE_STEP = 1e-5
#: The seed of the checks' own generator (never the env's: the verdict is fixed).
VERIFICATION_SEED = 20_231_123


#: The answers of :func:`comparator_status`.
EXACT, CERTIFIED, SAMPLED, UNCERTIFIED = "exact", "certified", "sampled", "uncertified"
#: How a checked label begins (:func:`checked_label`).
CHECKED_PREFIX = "checked on "


def checked_label(samples: int) -> str:
    """The comparator label of losses that passed the sampled checks: "checked on N samples"."""
    return f"{CHECKED_PREFIX}{samples} samples"


def comparator_status(loss: Mapping[str, Any], gap: float) -> str:
    """How far a run's comparator can be trusted, from its loss description and its gap.

    Args:
        loss: the loss sequence's description (``RunResult.loss``, ``describe()``).
        gap: the comparator's certified optimality gap (``RunResult.final_gap``).

    Returns:
        ``"uncertified"`` when the description says so (``from_function(...,
        verify=False)``: the checks of this module were not run, so the gap bounds the
        comparator's error only if the user's functions are convex with the given
        gradients); ``"sampled"`` when it says "checked on N samples" (the checks ran on
        samples: the gap is a bound only if the losses are convex, which samples cannot
        prove); otherwise ``"exact"`` when the gap is 0 and ``"certified"`` when it is
        positive (a Frank-Wolfe gap: the true regret is at most ``gap`` above).
    """
    label = loss.get("comparator")
    if label == UNCERTIFIED:
        return UNCERTIFIED
    if isinstance(label, str) and label.startswith(CHECKED_PREFIX):
        return SAMPLED
    return EXACT if gap == 0.0 else CERTIFIED


class CheckedLosses(Protocol):
    """What the checks read of a :class:`~bco_gym.losses.functions.FunctionLoss`."""

    set: ConvexSet
    horizon: int
    lipschitz: float
    bound: float

    def _values(self, rounds: np.ndarray, points: np.ndarray) -> np.ndarray: ...

    def _gradients(self, rounds: np.ndarray, points: np.ndarray) -> np.ndarray: ...


def verify_function_loss(losses: CheckedLosses) -> int:
    """Refute convexity or gradient consistency of ``losses`` on samples (module docstring);
    returns the number of samples checked (sampled rounds x sampled points of K).

    Raises:
        LossCheckError: the first-order condition or the finite-difference check fails;
            the message names the round, the points and the amounts.
        ValueError, InvalidLossError: a value or gradient breaks the declared M or G,
            is not finite, not a real number, or of the wrong shape.
    """
    rng = np.random.default_rng(VERIFICATION_SEED)
    rounds = _sample_rounds(rng, losses.horizon)
    points = _sample_points(rng, losses)
    for t in rounds:
        _check_first_order(losses, t, points)
        _check_finite_differences(losses, t, points, rng)
    return len(rounds) * len(points)


def _sample_rounds(rng: np.random.Generator, horizon: int) -> list[int]:
    if horizon <= ROUNDS_CHECKED:
        return list(range(horizon))
    # An int population is never materialised (a horizon of 10^12 samples as fast as 10),
    # and gives the rounds choice(np.arange(1, horizon - 1)) would.
    middle = 1 + rng.choice(horizon - 2, ROUNDS_CHECKED - 2, replace=False)
    return [0, *sorted(int(t) for t in middle), horizon - 1]


def _sample_points(rng: np.random.Generator, losses: CheckedLosses) -> np.ndarray:
    """(P, *shape): the centre, LMO vertices in random directions, random points of K."""
    convex_set = losses.set
    vertices = [
        convex_set.lmo(rng.standard_normal(convex_set.shape)) for _ in range(VERTICES_CHECKED)
    ]
    randoms = [convex_set.sample(rng) for _ in range(RANDOM_POINTS_CHECKED)]
    return np.stack([convex_set.center, *vertices, *randoms]).astype(float)


def _check_first_order(losses: CheckedLosses, t: int, points: np.ndarray) -> None:
    rounds = np.full(len(points), t)
    values = losses._values(rounds, points)
    gradients = losses._gradients(rounds, points).reshape(len(points), -1)
    flat = points.reshape(len(points), -1)
    for i, x in enumerate(flat):
        steps = flat - x  # y - x for every y
        predicted = values[i] + steps @ gradients[i]
        slack = FIRST_ORDER_SLACK * (
            losses.bound + losses.lipschitz * np.linalg.norm(steps, axis=1)
        )
        short = predicted - values - slack
        j = int(np.argmax(short))
        if short[j] > 0.0:
            raise LossCheckError(
                f"from_function: round {t}: the first-order condition "
                f"f(y) >= f(x) + <gradient(x), y - x> fails at x = {_show(points[i])}, "
                f"y = {_show(points[j])}: f(y) = {float(values[j])!r} < "
                f"f(x) + <gradient(x), y - x> = {float(predicted[j])!r} "
                f"(by {float(predicted[j] - values[j])!r}); the loss is not convex on K or "
                f"gradient is not its gradient. {_OPT_OUT}"
            )


def _check_finite_differences(
    losses: CheckedLosses, t: int, points: np.ndarray, rng: np.random.Generator
) -> None:
    count = len(points)
    starts = rng.integers(0, count, SEGMENTS_CHECKED)
    ends = (starts + rng.integers(1, count, SEGMENTS_CHECKED)) % count  # never the start
    where = rng.uniform(0.25, 0.75, SEGMENTS_CHECKED)
    directions = points[ends] - points[starts]
    middles = points[starts] + where.reshape(-1, *[1] * (points.ndim - 1)) * directions
    step = FINITE_DIFFERENCE_STEP
    rounds = np.full(SEGMENTS_CHECKED, t)
    ahead = losses._values(rounds, middles + step * directions)
    behind = losses._values(rounds, middles - step * directions)
    gradients = losses._gradients(rounds, middles).reshape(SEGMENTS_CHECKED, -1)
    flat = directions.reshape(SEGMENTS_CHECKED, -1)
    for k in range(SEGMENTS_CHECKED):
        length = float(np.linalg.norm(flat[k]))
        if length == 0.0:
            continue  # a set of one point: nothing to differentiate along
        difference = (float(ahead[k]) - float(behind[k])) / (2.0 * step)
        slope = float(gradients[k] @ flat[k])
        rounding = 1e-14 * (abs(float(ahead[k])) + abs(float(behind[k])) + losses.bound) / step
        if abs(difference - slope) > FINITE_DIFFERENCE_SLACK * losses.lipschitz * length + rounding:
            raise LossCheckError(
                f"from_function: round {t}: gradient disagrees with finite differences of the "
                f"loss at x = {_show(middles[k])} along d = {_show(directions[k])}: "
                f"<gradient(x), d> = {slope!r}, (f(x + h d) - f(x - h d)) / 2h = {difference!r} "
                f"with h = {step!r}; gradient must be the loss's gradient. {_OPT_OUT}"
            )


_OPT_OUT = (
    "Fix the callables, or pass verify=False to skip the checks (the comparator is then "
    "labelled uncertified)"
)


def _show(point: np.ndarray) -> str:
    return np.array2string(np.asarray(point), precision=4, threshold=8, separator=", ")


__all__ = [
    "CERTIFIED",
    "CHECKED_PREFIX",
    "EXACT",
    "SAMPLED",
    "UNCERTIFIED",
    "LossCheckError",
    "checked_label",
    "comparator_status",
    "verify_function_loss",
]
