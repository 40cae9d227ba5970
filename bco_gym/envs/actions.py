"""What an env accepts as an action, and what it accepts from a loss sequence.

Both checks are written over a leading batch axis; the single env passes a batch of
one, the vector env a batch of S rows, so the two give the same verdicts and messages.

* :func:`feasible_points` turns actions into float64 points of K. An action must be a
  real numeric array (integer or floating dtype: bool, complex, strings, bytes and
  objects are refused, never converted), of K's shape, finite, and in K within
  ``atol``; with ``on_infeasible="project"`` a finite action of the right shape outside
  K is replaced by its Euclidean projection instead.
* :func:`feasible_pairs` does the same for two-point feedback: an action is a pair
  (2, *K.shape) (or (S, 2, *K.shape)), and an error names which point, 0 or 1, failed.
* :func:`check_losses` turns the losses of a round into a float64 array and refuses an
  empty or wrongly shaped one, or one with NaN/inf entries (a broken loss sequence
  would otherwise corrupt every regret computed from it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bco_gym.errors import InfeasibleActionError, InvalidLossError
from bco_gym.sets.base import ConvexSet
from bco_gym.sets.box import Hypercube

ON_INFEASIBLE = ("raise", "project")
#: dtype kinds an action may have: signed and unsigned integers, floating point.
REAL_KINDS = "iuf"
_SHOWN_ENTRIES = 6


def feasible_points(
    convex_set: ConvexSet,
    actions: Any,
    *,
    atol: float,
    round_index: int,
    on_infeasible: str = "raise",
    batched: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Actions as float64 points of K, and which of them were projected.

    Args:
        convex_set: the feasible set K.
        actions: an array of ``K.shape`` (or ``(S, *K.shape)`` when ``batched``) of an
            integer or floating dtype (a list of numbers is converted first).
        atol: the feasibility tolerance passed to ``K.violation``.
        round_index: the round the actions are played in (named in errors).
        on_infeasible: ``"raise"`` or ``"project"`` (finite actions outside K are
            replaced by their projection onto K, which K must provide).
        batched: whether ``actions`` carries a leading batch axis.

    Returns:
        ``(points, projected)``: float64 points of the actions' shape (the input array
        itself when it is float64 and nothing was projected) and a bool mask of the
        projected rows, of shape (S,), or () when not batched.

    Raises:
        InfeasibleActionError: naming the round (and the row, when batched), the
            offending value and what is allowed.
    """
    if on_infeasible not in ON_INFEASIBLE:
        raise ValueError(
            f"on_infeasible={on_infeasible!r} is not allowed; allowed: 'raise', 'project'"
        )
    shape = convex_set.shape
    points = _real_array(actions, round_index, shape, batched)
    if points.shape[int(batched) :] != shape or points.ndim != len(shape) + int(batched):
        expected = _shape_text(("S", *shape) if batched else shape)
        per_row = ", one per row" if batched else ""
        raise InfeasibleActionError(
            f"round {round_index}: action of shape {points.shape}, expected {expected} "
            f"(a point of {convex_set!r}{per_row})"
        )
    if batched and len(points) == 0:
        raise InfeasibleActionError(f"round {round_index}: an empty batch of actions (0 rows)")
    rows = points if batched else points[np.newaxis]
    found = _first_violation(convex_set, rows, atol)
    if found is None:  # the common case: every row in K
        return points, np.zeros(len(rows) if batched else (), dtype=bool)
    projected = _projected_rows(convex_set, rows, found, atol, round_index, on_infeasible, batched)
    rows = np.array(rows, dtype=np.float64, copy=True)
    rows[projected] = convex_set.project_many(rows[projected])
    return (rows, projected) if batched else (rows[0], projected.reshape(()))


def feasible_pairs(
    convex_set: ConvexSet,
    actions: Any,
    *,
    atol: float,
    round_index: int,
    on_infeasible: str = "raise",
    batched: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Two-point actions as float64 pairs of points of K, and which points were projected.

    An action is a pair of points of K, shape (2, *K.shape) ((S, 2, *K.shape) when
    ``batched``); each point is checked by :func:`feasible_points`, and an error names
    the point (0 or 1) besides the round (and row). Returns ``(pairs, projected)``:
    float64 pairs of the actions' shape and a bool mask of shape (2,) ((S, 2) batched).
    """
    shape = convex_set.shape
    pairs = _real_array(actions, round_index, (2, *shape), batched)
    expected = (2, *shape)
    if pairs.shape[int(batched) :] != expected or pairs.ndim != len(expected) + int(batched):
        wanted = _shape_text(("S", *expected) if batched else expected)
        raise InfeasibleActionError(
            f"round {round_index}: two-point action of shape {pairs.shape}, expected {wanted} "
            f"(two points of {convex_set!r}: feedback='two-point')"
        )
    points, projected = [], []
    for index in range(2):
        try:
            point, mask = feasible_points(
                convex_set,
                pairs[:, index] if batched else pairs[index],
                atol=atol,
                round_index=round_index,
                on_infeasible=on_infeasible,
                batched=batched,
            )
        except InfeasibleActionError as error:
            raise InfeasibleActionError(f"point {index} of the two-point action: {error}") from None
        points.append(point)
        projected.append(mask)
    if not (projected[0].any() or projected[1].any()):
        return pairs, np.zeros((len(pairs), 2) if batched else 2, dtype=bool)
    return np.stack(points, axis=int(batched)), np.stack(projected, axis=-1)


def check_losses(values: Any, *, losses_name: str, round_index: int) -> np.ndarray:
    """The losses of one round as a float64 array of shape (S,), checked finite.

    Args:
        values: the losses of the round's S >= 1 plays (a 1-D array of real numbers).
        losses_name: the loss sequence, as named in errors.
        round_index: the round the losses belong to.

    Raises:
        InvalidLossError: when ``values`` is not a 1-D array of S >= 1 real numbers, or
            has a NaN or infinite entry (naming the row when S > 1).
    """
    where = f"{losses_name}, round {round_index}"
    array = np.asarray(values)
    if array.dtype.kind not in REAL_KINDS:
        raise InvalidLossError(
            f"{where}: the loss is {_shown(values)} of dtype {array.dtype}; expected real numbers"
        )
    if array.ndim != 1 or array.size == 0:
        raise InvalidLossError(
            f"{where}: the losses have shape {array.shape}, expected (S,) with S >= 1 "
            "(one number per play; an empty array is no loss)"
        )
    array = array.astype(np.float64, copy=False)
    finite = np.isfinite(array)
    if not finite.all():
        row = int(np.argmin(finite))
        at = f", row {row}" if len(array) > 1 else ""
        raise InvalidLossError(
            f"{where}{at}: the loss is {float(array[row])!r}; a loss must be a finite number "
            "(check the loss sequence's _evaluate/loss at this point)"
        )
    return array


# -- helpers -------------------------------------------------------------------------------
def _real_array(
    actions: Any, round_index: int, shape: tuple[int, ...], batched: bool
) -> np.ndarray:
    """``actions`` as a float64 array, refusing every dtype that is not a real number."""
    if type(actions) is np.ndarray and actions.dtype == np.float64:
        return actions  # the common case, as cheap as possible
    try:
        array = np.asarray(actions)
    except (TypeError, ValueError) as exc:  # ragged nested lists
        raise InfeasibleActionError(
            f"round {round_index}: action {_shown(actions)} is not a numeric array; expected "
            f"real numbers of shape {_shape_text(('S', *shape) if batched else shape)}"
        ) from exc
    if array.dtype.kind not in REAL_KINDS:
        raise InfeasibleActionError(
            f"round {round_index}: action {_shown(actions)} is not a numeric array of real "
            f"numbers: dtype {array.dtype} ({_kind_text(array.dtype)}); expected an integer or "
            "floating dtype, never converted from bool, complex, strings or objects"
        )
    return array.astype(np.float64, copy=False)


def _projected_rows(
    convex_set: ConvexSet,
    rows: np.ndarray,
    found: tuple[int, str],
    atol: float,
    round_index: int,
    on_infeasible: str,
    batched: bool,
) -> np.ndarray:
    """Mask of the rows to project, from the first violation ``found`` on; raises for
    the first row that may not be projected (non-finite, or ``on_infeasible="raise"``)."""
    projected = np.zeros(len(rows), dtype=bool)
    start = 0
    while found is not None:
        index = start + found[0]
        finite = bool(np.all(np.isfinite(rows[index])))
        if on_infeasible != "project" or not finite:
            where = f"round {round_index}, row {index}" if batched else f"round {round_index}"
            raise InfeasibleActionError(
                _infeasible_message(convex_set, rows[index], found[1], atol, where, finite)
            )
        projected[index] = True
        start = index + 1
        found = _first_violation(convex_set, rows[start:], atol) if start < len(rows) else None
    return projected


def _first_violation(
    convex_set: ConvexSet, rows: np.ndarray, atol: float
) -> tuple[int, str] | None:
    """``violation_many``, whose verdicts equal ``violation``'s row by row; one row goes
    straight to ``violation`` (the vectorised screens only pay off on several)."""
    if len(rows) == 1:
        reason = convex_set.violation(rows[0], atol)
        return None if reason is None else (0, reason)
    return convex_set.violation_many(rows, atol)


def _infeasible_message(
    convex_set: ConvexSet, point: np.ndarray, reason: str, atol: float, where: str, finite: bool
) -> str:
    """Why the point is refused, how far it lies from K, and what to do about it."""
    message = f"{where}: action not in {convex_set!r}: {reason}; the action: {_shown(point)}"
    if not finite:
        return message + "; an action must be finite"
    if convex_set.has_projection:
        distance = float(np.linalg.norm(point - convex_set.project(point)))
        message += f" (Euclidean distance to the set {distance:.3g}, allowed atol={atol:g})"
    hints = [
        f"make the env with a larger atol= (now {atol:g}; float32 actions need about 1e-6)",
    ]
    if convex_set.has_projection:
        hints.append("on_infeasible='project' to play the projection onto the set")
    if not isinstance(convex_set, Hypercube):
        hints.append(
            "for an RL policy acting in a box, bco_gym.wrappers.BoxActionAdapter(env) instead "
            "of RescaleAction/ClipAction (those map onto the bounding box, not onto the set)"
        )
    return message + ". To accept it: " + "; or ".join(hints)


def _shown(value: Any) -> str:
    """A short repr of a value (arrays summarised to a few entries)."""
    if isinstance(value, np.ndarray):
        return np.array2string(value, threshold=_SHOWN_ENTRIES, edgeitems=2)
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _shape_text(shape: tuple[Any, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _kind_text(dtype: np.dtype) -> str:
    kinds = {"b": "bool", "c": "complex", "U": "strings", "S": "bytes", "O": "objects"}
    return kinds.get(dtype.kind, f"kind {dtype.kind!r}")
