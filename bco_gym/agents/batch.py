"""Agents written once over a leading batch axis: S independent runs stepped in lockstep.

A :class:`BatchAgent` keeps its state in arrays whose first axis has S rows, one per
run, and each row its own ``np.random.Generator``. Every computation acts on all rows
at once and is row-independent (elementwise arithmetic, reductions along a row's own
entries, oracles through ``lmo_many``/``project_many``), so row i is bit for bit the
agent run alone with row i's seed. The single agent is the batch of one: it runs the
same code with S = 1 and unwraps row 0, so its public API is the plain
:class:`~bco_gym.agents.base.Agent`'s (``act`` returns a point, ``update`` takes a
float, ``stats`` holds ints).

Exception: a set whose oracle keeps state between calls answers a batch as a whole
differently from one call per row in the last bits -- the nuclear-norm ball's LMO is
warm-started from its previous answer (Lanczos) -- so there the LMO-based agents'
rows agree with the single agent to rounding (tested to 1e-12), not bit for bit.

Batched API (``batch_size = S``, an int):

* ``reset(seed)``: a list of S seeds, an int s meaning [s, s+1, ..., s+S-1] (as
  Gymnasium's vector envs), or None (fresh entropy for every row);
* ``act(observation)`` -> (S, *shape); ``update(losses, info)`` with losses (S,) and,
  for full information, ``info["gradient"]`` of shape (S, *shape);
* block path: ``block_actions()`` -> (S, k, *shape), ``update_block(losses (S, k))``,
  ``block_anchor()`` -> (anchors (S, *shape), delta) or None;
* ``stats``: ``rounds`` an int, every counter an int64 array (S,); ``row_stats(i)`` is
  row i's stats as the single agent's dict.

Memory of the block path. A block is handed out in slices of at most
:func:`slice_rounds` plays per row (``BLOCK_BUDGET_FLOATS`` floats), so that memory stays
bounded at large dimension whatever the block size; the slice boundaries depend only on
the set's dimension and the block, never on S or on who calls (act or block_actions),
so every path gives the same bits. The plays do not depend on the budget; BBCG's block
estimate is summed slice by slice, so a different budget regroups that sum and moves
later iterates in the last bits only (tested to 1e-12). At n <= 2^20 / K_b (n = 10 to
10^3 at any practical T) a block is one slice and nothing is regrouped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from bco_gym.agents.base import Agent, is_seed, scalar_loss
from bco_gym.problem import Problem

if TYPE_CHECKING:
    from bco_gym.agents.kernels.compiled_rounds import CompiledRounds

#: Floats per row that one slice of a block may hold (8 MiB per array and row): a
#: block path hands out at most max(1, BLOCK_BUDGET_FLOATS // dim) plays at a time.
BLOCK_BUDGET_FLOATS = 2**20


def slice_rounds(dimension: int, budget: int | None = None) -> int:
    """The most plays a slice of a block holds for points of ``dimension`` entries."""
    floats = BLOCK_BUDGET_FLOATS if budget is None else budget
    return max(1, floats // max(1, dimension))


class RowOracle:
    """A batched oracle (``lmo_many``/``project_many``) that answers a batch of one with
    the single oracle (``lmo``/``project``): the batched call's fixed cost is several
    times the single call's, and the sets' contract makes row i of ``many`` equal to
    ``one`` of row i (the batched-agent tests compare the two paths bit for bit).
    A class, not a closure, so that agents stay picklable."""

    def __init__(
        self, many: Callable[[np.ndarray], np.ndarray], one: Callable[[np.ndarray], np.ndarray]
    ):
        self.many, self.one = many, one

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        if len(rows) == 1:
            return np.asarray(self.one(rows[0]), dtype=float)[np.newaxis]
        return self.many(rows)


def check_batch_size(owner: str, batch_size: Any) -> int | None:
    """``batch_size`` (None, or an int >= 1); a ValueError naming the value otherwise."""
    if batch_size is None:
        return None
    if isinstance(batch_size, bool | np.bool_) or not isinstance(batch_size, int | np.integer):
        raise ValueError(f"{owner}: batch_size={batch_size!r} must be None or an integer >= 1")
    if batch_size < 1:
        raise ValueError(f"{owner}: batch_size={batch_size!r} must be None or an integer >= 1")
    return int(batch_size)


def row_seeds(owner: str, seed: Any, rows: int, batched: bool) -> list[int | None]:
    """One seed per row: an int s -> [s, ..., s+S-1]; a list as is; None -> fresh entropy."""
    if seed is None:
        return [None] * rows
    if is_seed(seed):
        return [int(seed) + i for i in range(rows)]
    if batched and isinstance(seed, Sequence | np.ndarray) and not isinstance(seed, str):
        seeds = list(seed)
        if len(seeds) == rows and all(s is None or is_seed(s) for s in seeds):
            return [None if s is None else int(s) for s in seeds]
    allowed = f"None, an int >= 0 or a list of {rows} of them" if batched else "None or an int >= 0"
    raise ValueError(f"{owner}: reset(seed={seed!r}); allowed: {allowed}")


class BatchAgent(Agent):
    """An agent over S rows (``batch_size`` S) or one run (``batch_size`` None, S = 1).

    Subclasses implement the row hooks, each acting on all S rows at once:
    ``_reset_rows()``, ``_act_rows()`` -> (S, *shape) new array,
    ``_update_rows(losses, gradients)`` (losses (S,), a float when single; gradients
    (S, *shape) or None), and for the block path
    ``_block_rows()`` -> (S, k, *shape), ``_update_block_rows(losses (S, k))``,
    ``_block_anchor_rows()`` -> ((S, *shape), delta) or None; ``_row_extra_stats(i)``
    adds non-counter stats. Counters live in ``self._counters``: an int when every row
    counts the same, else an int64 array (S,); ``stats`` shows them as arrays (S,).
    Each row's generator is ``self.rngs[i]``.

    ``KERNEL`` declares the class's compiled rounds
    (:class:`~bco_gym.agents.kernels.compiled_rounds.CompiledRounds`, in the algorithm's folder),
    which the
    compiled lean loop plays for this exact class; None: the NumPy loop plays it.
    """

    KERNEL: ClassVar[CompiledRounds | None] = None

    def __init__(self, problem: Problem, batch_size: int | None = None):
        super().__init__(problem)
        self.batch_size = check_batch_size(type(self).__name__, batch_size)
        self.rows = 1 if self.batch_size is None else self.batch_size
        self.rngs = [np.random.default_rng() for _ in range(self.rows)]
        self._column_shape = (self.rows,) + (1,) * len(self.set.shape)
        self._counters: dict[str, int | np.ndarray] = {}

    # -- stats --------------------------------------------------------------------------
    @property
    def stats(self) -> dict[str, Any]:
        """Single agent: row 0's dict of ints. Batched: counters as int64 arrays (S,)."""
        if self.batch_size is None:
            return self.row_stats(0)
        if not self._was_reset:
            return {}
        stats: dict[str, Any] = {"rounds": self._round}
        stats.update({key: self._counter_rows(value) for key, value in self._counters.items()})
        stats.update(self._batch_extra_stats())
        return stats

    def row_stats(self, row: int) -> dict[str, Any]:
        """Row ``row``'s stats, exactly the single agent's dict (ints, lists)."""
        if isinstance(row, bool) or not isinstance(row, int | np.integer):
            raise IndexError(f"{type(self).__name__}: row={row!r} must be an int")
        if not 0 <= row < self.rows:
            raise IndexError(
                f"{type(self).__name__}: row={row!r} out of range; allowed: 0..{self.rows - 1}"
            )
        if not self._was_reset:
            return {}
        stats: dict[str, Any] = {"rounds": self._round}
        stats.update(
            {
                key: int(value if isinstance(value, int) else value[row])
                for key, value in self._counters.items()
            }
        )
        stats.update(self._row_extra_stats(int(row)))
        return stats

    def _counter_rows(self, value: int | np.ndarray) -> np.ndarray:
        """A counter as an int64 array (S,): an int counts the same for every row."""
        return np.full(self.rows, value, dtype=np.int64) if isinstance(value, int) else value.copy()

    def _row_extra_stats(self, row: int) -> dict[str, Any]:
        """Non-counter stats of one row (lists, floats); default none."""
        return {}

    def _batch_extra_stats(self) -> dict[str, Any]:
        """Non-counter stats of the batch (arrays with a leading axis of S); default none."""
        return {}

    # -- public template methods --------------------------------------------------------
    def reset(self, seed: Any = None) -> None:
        """Start a new episode; row i's randomness comes from its seed (module docstring)."""
        batched = self.batch_size is not None
        seeds = row_seeds(type(self).__name__, seed, self.rows, batched)
        self.rngs = [np.random.default_rng(s) for s in seeds]
        self.rng = self.rngs[0]
        self._start_episode()
        # A counter is an int while every row counts the same (a Python int costs less
        # per round than an array), or an int64 array (S,) once rows differ (BBCG).
        self._counters: dict[str, int | np.ndarray] = {"lmo_calls": 0, "projections": 0}
        self._reset_rows()

    def act(self, observation: Any = None) -> np.ndarray:
        """The points to play: (S, *shape) batched, ``set.shape`` single (new arrays)."""
        self._check_can_act("act")
        self._awaiting_update = True
        plays = self._act_rows()
        return plays if self.batch_size is not None else plays[0]

    def update(self, loss: Any, info: dict[str, Any] | None = None) -> None:
        """Learn from the losses (S,) of the last plays (a float for a single agent)."""
        self._check_can_update(info)
        losses = self._loss_rows(loss)
        gradients = self._gradient_rows(info) if self.feedback == "full" else None
        self._update_rows(losses, gradients)
        self._awaiting_update = False
        self._round += 1

    def block_actions(self) -> np.ndarray:
        """The next k >= 1 plays of every row: (S, k, *shape), (k, *shape) single."""
        self._check_blocks_supported()
        self._check_can_act("block_actions")
        plays = self._block_rows()
        if plays.shape[1] > self.horizon - self._round:
            raise RuntimeError(f"{type(self).__name__}: block runs past the horizon (bug)")
        self._pending_block = plays.shape[1]
        self._awaiting_update = True
        return plays if self.batch_size is not None else plays[0]

    def block_anchor(self) -> tuple[np.ndarray, float] | None:
        """(anchors (S, *shape), delta) of the pending block, single: (anchor, delta)."""
        if not self._pending_block:
            return None
        found = self._block_anchor_rows()
        if found is None or self.batch_size is not None:
            return found
        return found[0][0], found[1]

    def update_block(self, losses: Any) -> None:
        """Learn from the losses (S, k) ((k,) single) of the last ``block_actions``."""
        self._check_block_pending()
        k = self._pending_block
        values = np.asarray(losses, dtype=float)
        per_round = tuple(getattr(self, "_round_losses", ()))  # (2,): a two-point pair's
        expected = (k, *per_round) if self.batch_size is None else (self.rows, k, *per_round)
        if values.shape != expected:
            raise ValueError(
                f"{type(self).__name__}: update_block() got losses of shape {values.shape}; "
                f"the last block_actions() returned {k} plays, so expected shape {expected}"
            )
        if not np.all(np.isfinite(values)):
            raise ValueError(f"{type(self).__name__}: losses must be finite, got {values!r}")
        self._update_block_rows(values.reshape(self.rows, k, *per_round))
        self._pending_block = 0
        self._awaiting_update = False
        self._round += k

    # -- validation ---------------------------------------------------------------------
    def _loss_rows(self, loss: Any) -> float | np.ndarray:
        """The losses (S,) as floats; a single agent's loss stays a Python float, which
        broadcasts against its one row exactly as an array (1,) would (the same IEEE
        products) and saves the per-round cost of wrapping it."""
        owner = type(self).__name__
        if self.batch_size is None:
            return scalar_loss(loss, owner)
        losses = np.asarray(loss)
        if losses.shape != (self.rows,) or losses.dtype.kind not in "fiu":
            raise ValueError(
                f"{owner}: update() got loss as losses of shape {losses.shape}, expected "
                f"({self.rows},) (dtype {losses.dtype}): a batched agent of {self.rows} rows "
                "takes loss as one real number per row, an array or sequence of shape (S,)"
            )
        losses = losses.astype(float, copy=False)
        if not math.isfinite(losses.sum()):
            row = int(np.flatnonzero(~np.isfinite(losses))[0])
            raise ValueError(f"{owner}: losses[{row}]={float(losses[row])!r} must be finite")
        return losses

    def _gradient_rows(self, info: dict[str, Any]) -> np.ndarray:
        """info["gradient"] as finite rows (S, *shape); ValueError otherwise."""
        gradient = np.asarray(info["gradient"], dtype=float)  # the key was checked
        expected = self.set.shape if self.batch_size is None else (self.rows, *self.set.shape)
        # A sum is finite iff every entry is (short of overflow), cheaper than isfinite().all().
        if gradient.shape != expected:
            raise ValueError(
                f"{type(self).__name__}: info['gradient'] must be a finite array of shape "
                f"{expected}, got shape {gradient.shape}"
            )
        if not math.isfinite(gradient.sum()):
            flat = gradient.reshape(self.rows, -1)
            row = int(np.flatnonzero(~np.isfinite(flat).all(axis=1))[0])
            where = f"row {row}" if self.batch_size is not None else "the gradient"
            raise ValueError(
                f"{type(self).__name__}: info['gradient'] must be finite; {where} holds "
                f"{float(flat[row][~np.isfinite(flat[row])][0])!r}"
            )
        return gradient.reshape(self.rows, *self.set.shape)

    # -- helpers for subclasses ------------------------------------------------------------
    def _rows_of(self, point: np.ndarray) -> np.ndarray:
        """S copies of ``point``, shape (S, *shape), float64."""
        return np.repeat(np.asarray(point, dtype=float)[np.newaxis], self.rows, axis=0)

    def _add(self, row: int, key: str, count: int = 1) -> None:
        """Add ``count`` to one row's counter ``key`` (an int while every row counts the
        same, an int64 array (S,) once rows differ)."""
        current = self._counters[key]
        if self.rows == 1 and isinstance(current, int):
            self._counters[key] = current + count
            return
        if isinstance(current, int):
            current = np.full(self.rows, current, dtype=np.int64)
        current[row] += count
        self._counters[key] = current

    def _per_row(self, values: float | np.ndarray) -> float | np.ndarray:
        """Values (S,) reshaped to broadcast against points (S, *shape); a float as is."""
        return values if isinstance(values, float) else values.reshape(self._column_shape)

    # -- Agent's single-run hooks: the public methods above call the row hooks ----------
    def _reset(self) -> None:
        self._reset_rows()

    def _act(self) -> np.ndarray:
        return self._act_rows()[0]

    def _update(self, loss: float, info: dict[str, Any] | None) -> None:
        gradients = self._gradient_rows(info) if self.feedback == "full" and info else None
        self._update_rows(scalar_loss(loss, type(self).__name__), gradients)

    # -- row hooks --------------------------------------------------------------------------
    def _reset_rows(self) -> None:
        raise NotImplementedError

    def _act_rows(self) -> np.ndarray:
        raise NotImplementedError

    def _update_rows(self, losses: float | np.ndarray, gradients: np.ndarray | None) -> None:
        raise NotImplementedError

    def _block_rows(self) -> np.ndarray:
        raise NotImplementedError

    def _update_block_rows(self, losses: np.ndarray) -> None:
        raise NotImplementedError

    def _block_anchor_rows(self) -> tuple[np.ndarray, float] | None:
        return None
