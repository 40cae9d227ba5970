"""S bandit convex optimization environments stepped together, batched in NumPy."""

from __future__ import annotations

import copy
from typing import Any, ClassVar

import numpy as np
from gymnasium.error import ResetNeeded
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from bco_gym.envs.actions import feasible_pairs
from bco_gym.envs.env import BanditConvexEnv
from bco_gym.envs.feasibility import Feasibility
from bco_gym.envs.pairs import pair_mean
from bco_gym.errors import InfeasibleActionError
from bco_gym.losses.batch import LossBatch


class BanditConvexVectorEnv(VectorEnv):
    """S independent copies of one :class:`~bco_gym.envs.BanditConvexEnv`, in lockstep.

    ## Description

    Row i is a bandit convex optimization env with its own oblivious loss sequence
    (same family and parameters, its own seed): the env of DESIGN.md, batched. Each
    ``step`` checks the S actions and evaluates the S losses in a few NumPy calls
    (:class:`~bco_gym.losses.batch.LossBatch`), not S Python steps. Sub-env i behaves bit
    for bit like sub-env i of ``gym.make_vec(id, num_envs=S, vectorization_mode="sync")``
    under the same ``reset(seed=...)`` and actions, autoreset included.

    ## Action Space

    ``single_action_space`` is the single env's :class:`~bco_gym.envs.ConvexSetSpace`;
    ``action_space`` its batch (S points of K stacked on axis 0). Actions (S, *shape)
    are converted to float64. A row of the wrong shape, non-finite or outside K raises
    :class:`~bco_gym.InfeasibleActionError` naming the round and the row (before any row
    is stepped); with ``on_infeasible="project"`` the finite infeasible rows are
    replaced by their Euclidean projections (``set.project_many``) and
    ``info["projected"]`` marks them.

    ## Observation Space

    ``single_observation_space`` is ``Box(0, 1, (1,), float32)``; observations are
    (S, 1) float32 arrays holding t/T.

    ## Rewards

    ``rewards`` (S,) float64, ``-info["loss"]``. ``info`` is Gymnasium's vector info:
    ``"loss"`` (S,) float64, ``"t"`` (S,) int, with full feedback ``"gradient"``
    (S, *shape), each with its ``"_key"`` mask. With two-point feedback
    (``feedback="two-point"``) actions are pairs, (S, 2, *shape), checked with
    :func:`~bco_gym.envs.actions.feasible_pairs` (errors name the row and the point),
    ``info["losses"]`` (S, 2) holds f_t at both points and ``"loss"`` is their mean.

    ## Episode End and Autoreset

    Every row truncates after T rounds (never terminates). The autoreset mode is
    ``AutoresetMode.NEXT_STEP`` (``metadata["autoreset_mode"]``): the ``step`` after the
    last round resets every row (unseeded: each row's generator continues), ignores the
    actions and returns the reset observations with zero rewards.

    ## Arguments

    Made from a single env (:meth:`from_env`) or by ``gym.make_vec(id, num_envs=S,
    vectorization_mode="vector_entry_point", **kwargs)`` with the ``gym.make`` kwargs.
    ``reset(seed=s)`` seeds row i with s + i; a list of S seeds (ints >= 0 or None, never
    bools) is taken as is. Seeds and ``options`` are checked before any row changes: a
    refused reset leaves every row as it was. ``step`` refuses actions without one row per
    env with :class:`~bco_gym.InfeasibleActionError` naming their shape and the one expected.
    ``problem`` is the single env's :class:`~bco_gym.problem.Problem`.

    >>> import gymnasium as gym, bco_gym
    >>> envs = gym.make_vec("BCO-Ball-v0", num_envs=4, vectorization_mode="vector_entry_point")
    >>> observations, info = envs.reset(seed=0)
    >>> observations.shape, envs.action_space.shape
    ((4, 1), (4, 10))

    ## Version History

    * v0: initial version.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": [],
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    def __init__(self, template: BanditConvexEnv, num_envs: int):
        if not isinstance(template, BanditConvexEnv):
            raise TypeError(
                f"BanditConvexVectorEnv needs a BanditConvexEnv, got {type(template).__name__}"
            )
        if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) or num_envs < 1:
            raise ValueError(f"num_envs={num_envs!r} is not allowed; expected an integer >= 1")
        if template.render_mode is not None:
            raise ValueError(
                f"render_mode={template.render_mode!r} is not supported by the vector env; "
                "use render_mode=None (or a sync vector env of rendering envs)"
            )
        self.num_envs = int(num_envs)
        self.set = template.set
        self.horizon = template.horizon
        self.feedback = template.feedback
        self.on_infeasible = template.on_infeasible
        self.atol = template.atol
        self.problem = template.problem
        self.render_mode = None
        self.single_action_space = template.action_space
        self.single_observation_space = template.observation_space
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.losses = LossBatch([template.losses] + [_copy(template) for _ in range(num_envs - 1)])
        self.feasibility = Feasibility(
            self.set, self.atol, project=self.on_infeasible == "project", name_rows=True
        )
        self._full_feedback = self.feedback == "full"
        self._row_rngs: list[np.random.Generator | None] = [None] * self.num_envs
        self._round: int | None = None
        self._autoreset = False

    @classmethod
    def from_env(cls, template: BanditConvexEnv, num_envs: int) -> BanditConvexVectorEnv:
        """S copies of ``template`` (its loss sequence copied per row; the set shared)."""
        return cls(template, num_envs)

    @property
    def round(self) -> int:
        """Rounds played in the current episode by every row (0 before the first reset)."""
        return 0 if self._round is None else self._round

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every row; ``seed`` an int (row i gets seed + i), a list of S, or None.

        Atomic: the seeds and ``options`` are checked before any row changes, so a
        refused call (ValueError naming the value) leaves every row as it was. Seeds are
        ints >= 0 (bools refused) or None; ``options`` must be None or empty, as for the
        single env.
        """
        if options:  # SB3's vector envs pass {}; anything in it would be ignored
            raise ValueError(
                f"options={options!r} is not allowed; BanditConvexVectorEnv.reset takes no "
                "options (expected None or {})"
            )
        seeds = self._row_seeds(seed)
        fresh = [
            seeding.np_random(row_seed)[0]
            if row_seed is not None or self._row_rngs[row] is None
            else None
            for row, row_seed in enumerate(seeds)
        ]
        for row, generator in enumerate(fresh):
            if generator is not None:
                self._row_rngs[row] = generator
            self.losses.sequences[row].reset(self._row_rngs[row])
        self.losses = LossBatch(self.losses.sequences)  # drop the stacked chunk of the old seeds
        self._round = 0
        self._autoreset = False
        return self._reset_output()

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        t = self._round
        if t is None:
            raise ResetNeeded("Cannot call env.step() before calling env.reset()")
        self._check_rows(actions, t)
        if self._autoreset:
            for row in range(self.num_envs):
                self.losses.sequences[row].reset(self._row_rngs[row])
            self.losses = LossBatch(self.losses.sequences)
            self._round = 0
            self._autoreset = False
            observations, info = self._reset_output()
            zeros = np.zeros(self.num_envs, dtype=bool)
            return observations, np.zeros(self.num_envs), zeros, zeros.copy(), info
        if self.feedback == "two-point":
            points, projected, pair_losses = self._pair_round(actions, t)
            values = pair_mean(pair_losses[:, 0], pair_losses[:, 1])
        else:
            points, projected = self.feasibility.round(actions, t)
            values = self.losses.losses(t, points)
        self._round = t + 1
        every = np.ones(self.num_envs, dtype=bool)
        info: dict[str, Any] = {
            "loss": values,
            "_loss": every,
            "t": np.full(self.num_envs, t + 1, dtype=int),
            "_t": every.copy(),
        }
        if self.feedback == "two-point":
            info["losses"], info["_losses"] = pair_losses, every.copy()
        if self._full_feedback:
            info["gradient"], info["_gradient"] = self.losses.gradients(t, points), every.copy()
        if projected.any():
            info["projected"], info["_projected"] = projected.copy(), projected
        observations = np.full((self.num_envs, 1), (t + 1) / self.horizon, dtype=np.float32)
        truncated = np.full(self.num_envs, t + 1 == self.horizon)
        self._autoreset = bool(truncated[0])
        return observations, -values, np.zeros(self.num_envs, dtype=bool), truncated, info

    def _pair_round(self, actions: Any, t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Two-point actions (S, 2, *shape): the checked pairs, the rows with a projected
        point (S,), and f_t at both points of every row (S, 2)."""
        return pair_round(self.set, self.losses, actions, t, self.atol, self.on_infeasible)

    def _reset_output(self) -> tuple[np.ndarray, dict[str, Any]]:
        observations = np.zeros((self.num_envs, 1), dtype=np.float32)
        info = {"t": np.zeros(self.num_envs, dtype=int), "_t": np.ones(self.num_envs, dtype=bool)}
        return observations, info

    def _check_rows(self, actions: Any, t: int) -> None:
        """InfeasibleActionError when ``actions`` has not one row per env (S rows)."""
        try:
            shape = np.shape(actions)
        except ValueError:  # ragged nested lists: the feasibility check names them
            return
        if len(shape) >= 1 and shape[0] != self.num_envs:
            row = (2, *self.set.shape) if self.feedback == "two-point" else self.set.shape
            raise InfeasibleActionError(
                f"round {t}: action of shape {shape} has {shape[0]} rows, expected one per "
                f"env: {self.num_envs} rows, shape {(self.num_envs, *row)}"
            )

    def _row_seeds(self, seed: Any) -> list[int | None]:
        """The S row seeds of ``reset(seed=...)``, each checked (ValueError naming it)."""
        if seed is None:
            return [None] * self.num_envs
        if _is_seed(seed):
            return [int(seed) + row for row in range(self.num_envs)]
        if isinstance(seed, list | tuple) and len(seed) == self.num_envs:
            for row, row_seed in enumerate(seed):
                if row_seed is not None and not _is_seed(row_seed):
                    raise ValueError(
                        f"seed={seed!r} is not allowed: seed[{row}]={row_seed!r} must be None "
                        "or an int >= 0 (not a bool); no row was reset"
                    )
            return [None if s is None else int(s) for s in seed]
        raise ValueError(
            f"seed={seed!r} is not allowed; expected None, an int >= 0 (row i gets seed + i) "
            f"or a list of {self.num_envs} seeds (ints >= 0 or None); no row was reset"
        )

    def __repr__(self) -> str:
        return f"BanditConvexVectorEnv({self.set!r}, num_envs={self.num_envs})"


def _is_seed(value: Any) -> bool:
    """Whether ``value`` is a seed Gymnasium takes: an int >= 0, not a bool."""
    return (
        isinstance(value, int | np.integer)
        and not isinstance(value, bool | np.bool_)
        and int(value) >= 0
    )


def _copy(template: BanditConvexEnv) -> Any:
    """A fresh copy of the template's loss sequence, sharing its set."""
    return copy.deepcopy(template.losses, memo={id(template.set): template.set})


def pair_round(
    convex_set: Any,
    losses: LossBatch,
    actions: Any,
    t: int,
    atol: float,
    on_infeasible: str,
    name_rows: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One two-point round of S rows: (pairs (S, 2, *shape), projected rows (S,), losses
    (S, 2)), each point evaluated as the single env evaluates it. With ``name_rows``
    False a batch of one is checked (and named in errors) as the single env's action."""
    if name_rows or np.shape(actions)[:1] != (1,):
        pairs, projected = feasible_pairs(
            convex_set, actions, atol=atol, round_index=t, on_infeasible=on_infeasible, batched=True
        )
    else:
        pair, mask = feasible_pairs(
            convex_set, actions[0], atol=atol, round_index=t, on_infeasible=on_infeasible
        )
        pairs, projected = pair[np.newaxis], mask[np.newaxis]
    values = np.stack([losses.losses(t, pairs[:, 0]), losses.losses(t, pairs[:, 1])], axis=1)
    return pairs, projected.any(axis=1), values
