"""The bandit convex optimization environment."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded

from bco_gym.envs.actions import ON_INFEASIBLE, check_losses, feasible_pairs, feasible_points
from bco_gym.envs.pairs import PairSpace, pair_mean
from bco_gym.envs.rendering import BASIS_ROUNDS, PlaneView, plane_basis
from bco_gym.envs.spaces import ConvexSetSpace
from bco_gym.errors import InvalidLossError
from bco_gym.losses import LossSequence, make_losses
from bco_gym.problem import FEEDBACKS, Problem, own_copy
from bco_gym.sets.base import ConvexSet, projection_hint
from bco_gym.sets.checks import DEFAULT_ATOL

RENDER_MODES = ("rgb_array",)
RECENT_PLAYS = 64


class BanditConvexEnv(gym.Env[np.ndarray, np.ndarray]):
    """Bandit convex optimization: play a point of K, see only the loss there.

    ## Description

    Online convex optimization with bandit feedback against an oblivious adversary.
    Before the first round the adversary fixes convex losses f_0, ..., f_{T-1} on a
    compact convex set K (a :class:`~bco_gym.losses.LossSequence`, drawn from
    ``self.np_random`` at reset). In round t the learner plays x_t in K and observes the
    scalar f_t(x_t) only (``feedback="bandit"``), or also a gradient of f_t at x_t
    (``feedback="full"``). Performance is the regret
    R_T = sum_t f_t(x_t) - min_{x in K} sum_t f_t(x), which
    :class:`~bco_gym.wrappers.RegretRecorder` reports at the end of an episode.
    ``self.problem`` is the frozen :class:`~bco_gym.problem.Problem` an agent is built from;
    its set is a copy of ``self.set`` (and ``make_agent`` gives each agent a copy of its
    own), so an agent that writes to its set cannot change the set the env checks plays
    against and computes the comparator on.

    ## Action Space

    :class:`~bco_gym.envs.ConvexSetSpace`: float64 arrays of ``set.shape`` lying in K
    within ``atol``; its ``low``/``high`` are K's bounding box. Actions of an integer or
    floating dtype are converted to float64 (float32 rounding may exceed a small
    ``atol``); bool, complex, string and object arrays are refused, never converted
    (``action_space.contains`` agrees). An action of the wrong shape, with NaN/inf
    entries, or outside K raises :class:`~bco_gym.InfeasibleActionError` naming the
    round, the action, the violated constraint and its distance to K, and the remedies;
    with ``on_infeasible="project"`` a finite action of the right shape outside K is
    replaced by its Euclidean projection onto K instead. The checks are
    :func:`bco_gym.envs.actions.feasible_points`, shared with the vector env.

    ## Observation Space

    ``Box(0, 1, (1,), float32)`` holding t/T, the fraction of rounds played (the round
    index is public knowledge in BCO). Each call returns a fresh array.

    ## Rewards

    Two-point feedback (``feedback="two-point"``; Agarwal, Dekel & Xiao 2010): the action
    is a pair of points of K, shape (2, *set.shape) (:class:`~bco_gym.envs.pairs.PairSpace`),
    both checked (an error names point 0 or 1); ``info["losses"]`` holds f_t at both,
    and ``info["loss"]`` and the reward are their mean -- the convention of Agarwal et
    al., under which :class:`~bco_gym.wrappers.RegretRecorder` counts the regret
    sum_t (f_t(x_t^0) + f_t(x_t^1))/2 - min_x sum_t f_t(x). When a point was projected
    (``on_infeasible="project"``), ``info["projected"]`` is a bool mask of shape (2,).

    ``reward = -f_t(x_t)``, a Python float. ``info["loss"]`` is f_t(x_t) and
    ``info["t"]`` the number of rounds played; with ``feedback="full"``,
    ``info["gradient"]`` is a (sub)gradient of f_t at x_t; when the action was projected,
    ``info["projected"]`` is True. A loss sequence that returns anything but one finite
    number (NaN, inf, no value, several, a string) or a non-finite gradient raises
    :class:`~bco_gym.errors.InvalidLossError` naming it and the round; the round is not
    counted.

    ## Starting State

    Round 0. ``reset(seed=...)`` seeds ``self.np_random`` and draws the whole loss
    sequence from it; ``reset()`` without a seed draws a fresh sequence.

    ## Episode End

    The episode is truncated by the env itself after ``horizon`` rounds (``terminated``
    is always False). Stepping before ``reset`` or after truncation raises
    :class:`gymnasium.error.ResetNeeded`, with or without Gymnasium's wrappers.

    ## Arguments

    * ``convex_set``: the feasible set K (a :class:`~bco_gym.sets.ConvexSet`).
    * ``losses``: a :class:`~bco_gym.losses.LossSequence` on K, or a family name
      (``bco_gym.losses.families_for(K)`` lists those valid for K).
    * ``horizon``: T, the number of rounds (a positive integer). Optional when the loss
      sequence has a finite ``losses.horizon`` (data, ``from_array``, ``from_function``):
      it then defaults to it, and a larger value is refused.
    * ``feedback``: ``"bandit"`` (default), ``"full"`` or ``"two-point"``.
    * ``on_infeasible``: ``"raise"`` (default) or ``"project"`` (needs ``K.has_projection``).
    * ``render_mode``: None or ``"rgb_array"`` (every set; stable-baselines3's
      ``make_vec_env`` passes it): a (320, 256, 3) image of K, the comparator and the
      last 64 plays above their losses. Sets of affine dimension 1 or 2 are drawn
      themselves; larger ones as their shadow on the plane of the two directions along
      which the loss gradients vary most (over the first 256 rounds).
    * ``atol``: the feasibility tolerance (default 1e-9).
    * ``loss_kwargs``: keyword arguments of the family when ``losses`` is a name.

    >>> import gymnasium as gym
    >>> import bco_gym
    >>> env = gym.make("BCO-Simplex-v0", n=3, horizon=100)
    >>> env.action_space
    ConvexSetSpace(Simplex(n=3), atol=1e-09)
    >>> obs, info = env.reset(seed=0)
    >>> obs, info
    (array([0.], dtype=float32), {'t': 0})
    >>> obs, reward, terminated, truncated, info = env.step(env.unwrapped.set.center)
    >>> reward == -info["loss"], info["t"], obs, terminated, truncated
    (True, 1, array([0.01], dtype=float32), False, False)

    ## Version History

    * v0: initial release.
    """

    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "render_fps": 30}  # noqa: RUF012

    def __init__(
        self,
        convex_set: ConvexSet,
        losses: LossSequence | str,
        horizon: int | None = None,
        feedback: str = "bandit",
        on_infeasible: str = "raise",
        render_mode: str | None = None,
        atol: float = DEFAULT_ATOL,
        loss_kwargs: Mapping[str, Any] | None = None,
    ):
        if not isinstance(convex_set, ConvexSet):
            raise TypeError(f"convex_set must be a ConvexSet, got {type(convex_set).__name__}")
        _check_choice("feedback", feedback, FEEDBACKS)
        _check_choice("on_infeasible", on_infeasible, ON_INFEASIBLE)
        if horizon is not None and (
            isinstance(horizon, bool) or not isinstance(horizon, int | np.integer) or horizon < 1
        ):
            raise ValueError(f"horizon={horizon!r} is not allowed; expected an integer >= 1")
        if on_infeasible == "project" and not convex_set.has_projection:
            hint = projection_hint(convex_set)
            raise ValueError(
                f"on_infeasible='project' needs a Euclidean projection, which {convex_set!r} "
                f"does not provide; {hint + ', or ' if hint else ''}use on_infeasible='raise'"
            )
        self.set = convex_set
        self.losses = _loss_sequence(losses, convex_set, loss_kwargs)
        self.horizon = _resolve_horizon(horizon, self.losses)
        self.losses.bind_horizon(self.horizon)
        self.feedback = feedback
        self.on_infeasible = on_infeasible
        self.atol = _check_atol(atol)
        # What agents are built from holds a copy of K (own_copy): the env checks plays
        # and computes the comparator on its own set, which no agent can reach.
        self.problem = own_copy(
            Problem(
                convex_set,
                self.horizon,
                lipschitz=self.losses.lipschitz,
                bound=self.losses.bound,
                feedback=feedback,
            )
        )
        self.action_space: ConvexSetSpace | PairSpace = (
            PairSpace(convex_set, atol=self.atol)
            if feedback == "two-point"
            else ConvexSetSpace(convex_set, atol=self.atol)
        )
        self.observation_space = spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float32)
        self._setup_rendering(render_mode)
        self._shape = convex_set.shape
        self._full_feedback = feedback == "full"
        self._two_point = feedback == "two-point"
        self._losses_name = _losses_name(self.losses)
        self._round: int | None = None

    @property
    def round(self) -> int:
        """Rounds played in the current episode (0 before the first reset)."""
        return 0 if self._round is None else self._round

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if options:  # SB3's vector envs pass {}; anything in it would be ignored
            raise ValueError(
                f"options={options!r} is not allowed; BanditConvexEnv.reset takes no options "
                "(expected None or {})"
            )
        super().reset(seed=seed)
        self.losses.reset(self.np_random)
        self._round = 0
        if self._recent is not None:
            self._recent.clear()
            self._recent_losses.clear()
            self._comparator = None
            if self.set.aff_dim > 2:
                self._view = None  # the plane follows this episode's losses
        return np.zeros(1, dtype=np.float32), {"t": 0}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        t = self._round
        if t is None:
            raise ResetNeeded(
                "Cannot call env.step() before calling env.reset(): reset must come first"
            )
        if t >= self.horizon:
            raise ResetNeeded(
                f"the episode was truncated after horizon={self.horizon} rounds; env.reset() must "
                "be called to start a new one"
            )
        if self._two_point:
            return self._step_pair(t, action)
        point, projected = feasible_points(
            self.set, action, atol=self.atol, round_index=t, on_infeasible=self.on_infeasible
        )
        loss = self._loss(t, point)
        gradient = self._gradient(t, point) if self._full_feedback else None
        info: dict[str, Any] = {"loss": loss, "t": t + 1}
        if gradient is not None:
            info["gradient"] = gradient
        if projected:
            info["projected"] = True
        return self._finish_step(t, point, loss, info)

    def _step_pair(
        self, t: int, action: Any
    ) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """A two-point round: both points checked, f_t at both, the mean counted."""
        pair, projected = feasible_pairs(
            self.set, action, atol=self.atol, round_index=t, on_infeasible=self.on_infeasible
        )
        losses = np.array([self._loss(t, pair[0]), self._loss(t, pair[1])])
        loss = float(pair_mean(losses[0], losses[1]))
        info: dict[str, Any] = {"loss": loss, "losses": losses, "t": t + 1}
        if projected.any():
            info["projected"] = projected.copy()
        return self._finish_step(t, pair[0], loss, info)

    def _finish_step(
        self, t: int, point: np.ndarray, loss: float, info: dict[str, Any]
    ) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self._round = t + 1
        if self._recent is not None:
            self._recent.append(np.array(point, dtype=float))
            self._recent_losses.append(loss)
        observation = np.array([(t + 1) / self.horizon], dtype=np.float32)
        return observation, -loss, False, t + 1 == self.horizon, info

    def _loss(self, t: int, point: np.ndarray) -> float:
        """f_t(point), refused with InvalidLossError unless exactly one finite number.

        Evaluated as ``losses.loss`` does (the family's ``_evaluate`` on a batch of one),
        but without its ``float(values[0])``, which would take the first of several
        values, read a string as a number or fail on none.
        """
        index, offset = divmod(t, self.losses.chunk_size)  # t < horizon: an existing round
        params = self.losses.chunk(index)
        values = self.losses._evaluate(params, slice(offset, offset + 1), point[np.newaxis])
        if (
            isinstance(values, np.ndarray)
            and values.shape == (1,)
            and values.dtype == np.float64
            and math.isfinite(values[0])
        ):
            return float(values[0])  # the common case; check_losses diagnoses every other
        checked = check_losses(values, losses_name=self._losses_name, round_index=t)
        if checked.shape != (1,):
            raise InvalidLossError(
                f"{self._losses_name}, round {t}: {len(checked)} losses for one play; "
                "expected exactly one finite number"
            )
        return float(checked[0])

    def _gradient(self, t: int, point: np.ndarray) -> np.ndarray:
        """A gradient of f_t at point, refused unless finite and of K's shape."""
        gradient = np.asarray(self.losses.gradient(t, point))
        if (
            gradient.shape != self._shape
            or gradient.dtype.kind not in "iuf"
            or not np.all(np.isfinite(gradient))
        ):
            raise InvalidLossError(
                f"{self._losses_name}, round {t}: the gradient is {gradient!r}; expected finite "
                f"real numbers of shape {self._shape}"
            )
        return gradient

    # -- rendering ------------------------------------------------------------------------
    def _setup_rendering(self, render_mode: str | None) -> None:
        _check_choice("render_mode", render_mode, (None, *RENDER_MODES))
        self.render_mode = render_mode
        self._view: PlaneView | None = None  # built at the first render (see render)
        rendering = render_mode is not None
        self._recent: deque[np.ndarray] | None = deque(maxlen=RECENT_PLAYS) if rendering else None
        self._recent_losses: deque[float] = deque(maxlen=RECENT_PLAYS)
        self._comparator: np.ndarray | None = None

    def render(self) -> np.ndarray | None:
        """An RGB array: K (grey; its shadow on the plane of the losses' top two
        directions when aff_dim > 2), the last plays (blue), the comparator (red) and
        the plays' losses (green, in a strip below)."""
        if self._recent is None:
            return None
        if self._view is None:
            self._view = PlaneView(self.set, self._plane_basis())
        if self._comparator is None and self._round is not None:
            self._comparator = self.losses.comparator([self.horizon])[0].point
        return self._view.frame(self._comparator, self._recent, self._recent_losses)

    def _plane_basis(self) -> np.ndarray | None:
        """The plane of the view: V for aff_dim <= 2 (None: the default); above, the top
        two directions of the gradients at the centre over the first rounds."""
        if self.set.aff_dim <= 2 or self._round is None:
            return None
        center = self.set.center
        rounds = range(min(self.horizon, BASIS_ROUNDS))
        return plane_basis(self.set, np.stack([self.losses.gradient(t, center) for t in rounds]))


def _check_choice(name: str, value: Any, allowed: tuple[Any, ...]) -> None:
    """``value`` must be one of ``allowed`` (strings, or None), never a look-alike."""
    if not any(value is a or (isinstance(value, str) and value == a) for a in allowed):
        shown = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{name}={value!r} is not allowed; allowed: {shown}")


def _resolve_horizon(horizon: int | None, losses: LossSequence) -> int:
    """T: the given horizon, else the loss sequence's; never past the sequence's end."""
    if horizon is None:
        if getattr(losses, "horizon", None) is None:
            raise ValueError(
                f"horizon=None is not allowed here: the {losses.name!r} loss sequence has no "
                "horizon of its own; pass horizon as an integer >= 1 (the number of rounds T)"
            )
        return int(losses.horizon)
    if getattr(losses, "horizon", None) is not None and horizon > losses.horizon:
        raise ValueError(
            f"horizon={horizon!r} is past the end of the {losses.name!r} loss sequence; "
            f"the maximum is {losses.horizon}"
        )
    return int(horizon)


def _loss_sequence(
    losses: LossSequence | str, convex_set: ConvexSet, loss_kwargs: Mapping[str, Any] | None
) -> LossSequence:
    """The loss sequence on K: given, or built from a family name and its kwargs."""
    if isinstance(losses, LossSequence):
        if loss_kwargs is not None and not (isinstance(loss_kwargs, Mapping) and not loss_kwargs):
            raise ValueError(
                f"loss_kwargs={loss_kwargs!r} apply to a family name only; got a LossSequence, "
                "which must come with loss_kwargs=None"
            )
        if losses.set is not convex_set and (
            type(losses.set) is not type(convex_set) or repr(losses.set) != repr(convex_set)
        ):
            raise ValueError(
                f"the loss sequence is defined on {losses.set!r}, the env's set is {convex_set!r}; "
                "expected a loss sequence built on the env's set"
            )
        return losses
    if not isinstance(losses, str):
        raise TypeError(
            f"losses={losses!r} is not allowed; expected a LossSequence or a family name "
            f"(bco_gym.losses.families_for(K) lists them), got a {type(losses).__name__}"
        )
    if loss_kwargs is not None and not (
        isinstance(loss_kwargs, Mapping) and all(isinstance(key, str) for key in loss_kwargs)
    ):
        raise ValueError(
            f"loss_kwargs={loss_kwargs!r} is not allowed; expected None or a dict of the "
            f"family's keyword arguments (str keys)"
        )
    return make_losses(losses, convex_set, **dict(loss_kwargs or {}))


def _check_atol(atol: Any) -> float:
    """The feasibility tolerance: a finite real number >= 0 (not a string or a bool)."""
    if (
        isinstance(atol, bool)
        or not isinstance(atol, int | float | np.integer | np.floating)
        or not (math.isfinite(atol) and atol >= 0)
    ):
        raise ValueError(f"atol={atol!r} is not allowed; expected a finite real number >= 0")
    return float(atol)


def _losses_name(losses: LossSequence) -> str:
    """How errors name a loss sequence: its class and family name."""
    family = getattr(losses, "name", None)
    shown = f" ({family!r})" if isinstance(family, str) else ""
    return f"loss sequence {type(losses).__name__}{shown}"
