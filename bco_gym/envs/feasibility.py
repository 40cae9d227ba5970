"""What ``env.step`` checks of an action, for S rows at once (a round or a block).

:class:`Feasibility` gives the runner's batched loops and the vector env the single
env's verdict on each play, through the single env's own check
(:func:`~bco_gym.envs.actions.feasible_points`, with its messages): a play of the wrong
shape, non-finite, or outside K (within ``atol``) raises
:class:`~bco_gym.InfeasibleActionError` naming the round (and the row, when rows are
named), or, with ``project=True``, a finite play outside K is replaced by
its Euclidean projection (``set.project_many``, row-equal to ``set.project``).

A block of plays (rows x k rounds) is accepted in one of two ways:

* exact: ``set.violation_many`` -- the verdict of ``set.violation`` on every play, with
  a vectorised screen (O(k * dim) for the built-in polytopes and balls);
* an anchor certificate, when the agent names one (``block_anchor()`` = (anchors,
  delta), e.g. BBCG's x_{m-1} and its smoothing radius) and the set is a full-dimensional
  built-in set (:data:`CERTIFIED_SETS`, whose inner radius r is verified by the sets'
  tests): every row's anchor lies in the shrunk set K_delta (one exact test, tolerance
  atol/2) and each play within delta + atol*r/(4R) of its anchor. As x + delta*u is in K
  for x in K_delta and ||u|| <= 1 (DESIGN.md, shrunk set), the block is in K up to the
  tolerance. For any other set the certificate would trust the set's claimed r (a set
  overstating it would play outside K unnoticed), so every play is checked exactly.

The certificate only ever accepts; a block it does not certify gets the exact check
(which alone rejects), so a play is refused exactly when the env would refuse it, up to
the rounding of the tolerances.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bco_gym.envs.actions import feasible_points
from bco_gym.errors import InfeasibleActionError
from bco_gym.sets import (
    BirkhoffPolytope,
    FlowPolytope,
    Hypercube,
    L1Ball,
    L2Ball,
    NuclearNormBall,
    Simplex,
)

#: Sets whose inner radius is verified by tests/sets (exact types): the anchor
#: certificate may use it.
CERTIFIED_SETS = (
    Simplex,
    L2Ball,
    L1Ball,
    Hypercube,
    NuclearNormBall,
    FlowPolytope,
    BirkhoffPolytope,
)
# Floats per slice of a block in the anchor certificate (a cache-sized temporary).
CERTIFICATE_FLOATS = 1 << 16
# Up to this many rows the anchors are checked with ``violation`` per row (cheaper than
# the vectorised screen's fixed cost); above, with ``violation_many``.
ROW_LOOP_LIMIT = 4


class Feasibility:
    """The env's feasibility rules for batches of plays.

    Args:
        convex_set: K.
        atol: the env's tolerance.
        project: project finite infeasible plays instead of refusing them.
        name_rows: name the row in messages (vector envs, ``run_many``); a batch of one
            for ``run`` names only the round, like ``env.step``.
    """

    def __init__(
        self, convex_set: Any, atol: float, *, project: bool = False, name_rows: bool = True
    ):
        self.set = convex_set
        self.atol = float(atol)
        self.project = bool(project)
        self.on_infeasible = "project" if self.project else "raise"
        self.name_rows = bool(name_rows)
        #: Whether an agent's anchor may certify a block (module docstring).
        self.uses_anchors = (
            type(convex_set) in CERTIFIED_SETS and convex_set.aff_dim == convex_set.dim
        )
        self._shrunk: dict[float, Any] = {}
        self._near_anchors: Any = None  # the compiled distances (use_kernel), or None

    def use_kernel(self, near_anchors: Any) -> None:
        """Take the certificate's distances with ``near_anchors``
        (:func:`bco_gym.agents.kernels.checks.near_anchors`; the compiled loops install
        it): one pass instead of einsum over slices, the same verdicts (module docstring
        of that module)."""
        self._near_anchors = near_anchors

    # -- one round -----------------------------------------------------------------------
    def round(self, actions: Any, t: int) -> tuple[np.ndarray, np.ndarray]:
        """(points float64 (S, *shape), projected mask (S,)) for the actions of round t.

        :func:`~bco_gym.envs.actions.feasible_points`, the single env's own check, on the
        batch (on row 0 alone when rows are not named, so a batch of one reads as
        ``env.step``).
        """
        if self.name_rows:
            return feasible_points(
                self.set,
                actions,
                atol=self.atol,
                round_index=t,
                on_infeasible=self.on_infeasible,
                batched=True,
            )
        if type(actions) is np.ndarray and actions.ndim >= 1 and len(actions) == 1:
            points = actions  # a single agent's play: env.step's check and its message
        else:
            points = self._as_points(actions, t, extra_axes=1)
        point, projected = feasible_points(
            self.set, points[0], atol=self.atol, round_index=t, on_infeasible=self.on_infeasible
        )
        return point[np.newaxis], projected.reshape(1)

    # -- a block -------------------------------------------------------------------------
    def block(
        self, plays: Any, start: int, anchor: tuple[np.ndarray, float] | None = None
    ) -> np.ndarray:
        """The block (S, k, *shape) as float64 once its plays (rounds start, ...) pass."""
        plays = self._as_points(plays, start, extra_axes=2)
        if anchor is not None and self.uses_anchors and self._certified(plays, *anchor):
            return plays
        rounds = plays.shape[1]
        found = self.set.violation_many(plays.reshape(-1, *self.set.shape), self.atol)
        if found is not None:
            row, offset = divmod(found[0], rounds)
            self._refuse(plays[row, offset], start + offset, row, found[1])
        return plays

    def certifies(self, plays: np.ndarray, anchor: tuple[np.ndarray, float] | None) -> bool:
        """Whether the agent's anchor certifies every play of the block (S, k, *shape)
        float64 (the check :meth:`block` skips then)."""
        return anchor is not None and self.uses_anchors and self._certified(plays, *anchor)

    def _refuse(self, play: np.ndarray, t: int, row: int, reason: str) -> None:
        """Raise ``env.step``'s error for this play (naming the row when rows are named)."""
        try:
            feasible_points(self.set, play, atol=self.atol, round_index=t)
        except InfeasibleActionError as error:
            if not self.name_rows:
                raise
            message = str(error).replace(f"round {t}:", f"round {t}, row {row}:", 1)
            raise InfeasibleActionError(message) from None
        raise InfeasibleActionError(f"{self._where(t, row)}: action not in {self.set!r}: {reason}")

    def _certified(self, plays: np.ndarray, anchors: np.ndarray, radius: float) -> bool:
        """Whether the anchor certificate (module docstring) holds for this block."""
        convex_set = self.set
        anchors = np.asarray(anchors, dtype=np.float64).reshape(len(plays), *convex_set.shape)
        if not 0.0 <= radius <= convex_set.inner_radius:
            return False
        if radius not in self._shrunk:
            self._shrunk[radius] = convex_set.shrink(radius)
        shrunk = self._shrunk[radius]
        if len(anchors) > ROW_LOOP_LIMIT:
            if shrunk.violation_many(anchors, self.atol / 2) is not None:
                return False
        elif any(shrunk.violation(anchor, self.atol / 2) is not None for anchor in anchors):
            return False
        slack = self.atol * convex_set.inner_radius / (4.0 * convex_set.outer_radius)
        limit = (radius + slack) ** 2
        rows, rounds = plays.shape[:2]
        size = plays[0, 0].size if rounds else 1
        compiled = self._near_anchors
        if compiled is not None and plays.flags.c_contiguous and anchors.flags.c_contiguous:
            return bool(
                compiled(plays.reshape(rows, rounds, size), anchors.reshape(rows, size), limit)
            )
        # temporaries stay in cache: groups of whole rows, or slices of one row's rounds
        group = max(1, CERTIFICATE_FLOATS // max(1, rounds * size))
        step = rounds if group > 1 else max(1, CERTIFICATE_FLOATS // size)
        for row in range(0, rows, group):
            for first in range(0, rounds, step):
                window = plays[row : row + group, first : first + step]
                offsets = (window - anchors[row : row + group, np.newaxis]).reshape(-1, size)
                if not np.all(np.einsum("ij,ij->i", offsets, offsets) <= limit):
                    return False
        return True

    # -- helpers ---------------------------------------------------------------------------
    def _as_points(self, actions: Any, t: int, extra_axes: int) -> np.ndarray:
        shape = self.set.shape
        if type(actions) is np.ndarray and actions.dtype == np.float64:
            if actions.ndim == extra_axes + len(shape) and actions.shape[extra_axes:] == shape:
                return actions  # the common case, without np.asarray's dispatch
        try:
            points = np.asarray(actions, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InfeasibleActionError(
                f"round {t}: actions are not a numeric array of shape (S, {shape}) "
                f"(a point of {self.set!r} per row)"
            ) from exc
        if points.ndim != extra_axes + len(shape) or points.shape[extra_axes:] != shape:
            leading = "(S, " if extra_axes == 1 else "(S, k, "
            raise InfeasibleActionError(
                f"round {t}: actions have shape {points.shape}, expected "
                f"{leading}{', '.join(map(str, shape))}) (a point of {self.set!r} per row)"
            )
        return points

    def _where(self, t: int, row: int) -> str:
        return f"round {t}, row {row}" if self.name_rows else f"round {t}"
