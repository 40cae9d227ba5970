"""The agent interface: a policy that plays points of K and learns from scalar losses.

:class:`Agent` follows the template-method shape of stable-baselines3's ``predict``:
the public ``reset``/``act``/``update`` validate once and keep the books (round
counter, ``stats``), then delegate to the private hooks ``_reset``/``_act``/``_update``
that each algorithm implements.

Block fast path. An agent whose plays within a block do not depend on that block's
feedback (BBCG and BBCG2, the random agent) sets ``supports_blocks = True`` and implements
``_block_actions``/``_update_block``; then ``block_actions()`` returns the next k >= 1
plays at once (up to the end of the agent's current block) and ``update_block(losses)``
absorbs their k losses ((k, 2) for a two-point agent: each pair's two). The two give
actions and state bit-identical to k rounds of ``act``/``update``, and the two paths may
be mixed freely within an episode. Such an agent may also name an anchor of its pending
block (``block_anchor()``: a point a and a radius delta with every play within delta of
a, a claimed in the shrunk set K_delta), which lets a caller certify the block's
feasibility cheaply.

This class is the single-run template (agents users write, the sb3 agents). The
built-in agents derive from :class:`~bco_gym.agents.batch.BatchAgent`, which runs the
same public API over a batch of S runs and serves a single run as the batch of one.
"""

from __future__ import annotations

import abc
import math
import numbers
from typing import Any, ClassVar

import numpy as np

from bco_gym.problem import Problem
from bco_gym.sets.base import projection_hint

#: The largest magnitude a run may reach (its square stays finite in float64): a float
#: parameter times the problem's scale (T d max(M, G R, 1) max(R, 1)), and that scale over a
#: smoothing radius, must stay below it (:meth:`Agent.check_parameters`).
RUN_MAGNITUDE_LIMIT = 1e150
SCALAR_LOSS_FORMS = "a real number: a Python float or int, a NumPy scalar or a 0-d array"


def scalar_loss(loss: Any, owner: str) -> float:
    """``loss`` as a finite float: what every single agent's ``update`` accepts.

    Raises ValueError naming ``loss``, its shape and the allowed forms for an array or
    sequence of any other shape (a batched agent, ``batch_size=S``, takes shape (S,)),
    for what is not a real number, and for a non-finite value.
    """
    if type(loss) is not float:  # the per-round fast path is a Python float
        shape = np.shape(loss) if isinstance(loss, np.ndarray | list | tuple) else ()
        if shape != ():
            raise ValueError(
                f"{owner}: update() got loss of shape {shape}; a single agent's loss is "
                f"{SCALAR_LOSS_FORMS} (a batched agent, batch_size=S, takes shape (S,))"
            )
        if isinstance(loss, bool | np.bool_ | str | bytes) or not _is_real(loss):
            raise ValueError(
                f"{owner}: update() got loss={loss!r} of type {type(loss).__name__}; "
                f"allowed: {SCALAR_LOSS_FORMS}"
            )
        loss = float(loss)
    if not math.isfinite(loss):
        raise ValueError(f"{owner}: loss={loss!r} must be finite")
    return loss


def is_seed(value: Any) -> bool:
    """Whether ``value`` is a seed an agent's ``reset`` takes: an int >= 0 (not a bool)."""
    return (
        not isinstance(value, bool | np.bool_)
        and isinstance(value, numbers.Integral)
        and value >= 0
    )


def _is_real(value: Any) -> bool:
    """Whether float(value) is a real number's value (not a complex's or a string's)."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fiu"
    return isinstance(value, int | float | np.integer | np.floating)


class Agent(abc.ABC):
    """An online learner for a :class:`~bco_gym.problem.Problem`.

    Class attributes:
        name: the ``make_agent`` name.
        feedback: "bandit" (needs only f_t(x_t)), "full" (needs ``info["gradient"]``) or
            "two-point" (plays pairs of points, needs ``info["losses"]``; only on a
            problem with feedback="two-point", where it is the only kind allowed).
        requires_projection: whether the algorithm calls ``set.project``.
        supports_blocks: whether ``block_actions``/``update_block`` are available.
        SCALE_PARAM: the keyword of the one free scale constant of the agent's theorem.
        OPTIONS: the keywords the constructor accepts.
        regret_exponent: a in the agent's O(T^a) regret guarantee (plots, exponent fits).
        REFERENCE: the agent's paper (``bco-gym cite``; :mod:`bco_gym.reports.citations`).

    Attributes:
        problem: the problem the agent was built for.
        params: the resolved hyperparameters (a dict of floats/ints), after overrides.
        stats: counters, at least ``rounds``, ``lmo_calls`` and ``projections``.
        batch_size: None (one run); a batched agent has S (see ``BatchAgent``).
    """

    name: ClassVar[str] = "agent"
    feedback: ClassVar[str] = "bandit"
    requires_projection: ClassVar[bool] = False
    supports_blocks: ClassVar[bool] = False
    #: The keyword of the agent's one free scale constant (None when it has none).
    SCALE_PARAM: ClassVar[str | None] = None
    #: Every keyword the constructor accepts (``make_agent`` checks overrides against it).
    OPTIONS: ClassVar[tuple[str, ...]] = ()
    #: The exponent a of the agent's regret guarantee O(T^a) (None when it has none).
    regret_exponent: ClassVar[float | None] = None
    #: Whether the defaults come from a theorem (labelled "theory" in results) or are
    #: a library's or a baseline's own choices (labelled "default").
    THEORY_DEFAULTS: ClassVar[bool] = True
    #: The agent's paper: a BibTeX key of :data:`bco_gym.reports.citations.BIBLIOGRAPHY`, a
    #: BibTeX entry of its own (``"@article{key, ...}"``), a tuple of those, or None (no
    #: paper); ``bco-gym cite`` prints it for a bench directory the agent is in.
    REFERENCE: ClassVar[str | tuple[str, ...] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass that defines ``__init__`` and declares no ``OPTIONS`` gets its
        constructor's keyword parameters (:func:`~bco_gym.agents.theory.keyword_options`)."""
        super().__init_subclass__(**kwargs)
        if "OPTIONS" not in vars(cls) and "__init__" in vars(cls):
            from bco_gym.agents.theory import keyword_options

            options = keyword_options(cls.__init__)
            if options is not None:
                cls.OPTIONS = options

    def __init__(self, problem: Problem):
        if not isinstance(problem, Problem):
            raise TypeError(f"{type(self).__name__} needs a Problem, got {type(problem).__name__}")
        if self.feedback == "full" and problem.feedback != "full":
            raise ValueError(
                f"{type(self).__name__} ('{self.name}') is a full-information agent and needs "
                f"feedback='full'; this problem has feedback={problem.feedback!r}. Make the env "
                "with feedback='full' or pick a bandit agent ('bbcg', 'fkm', 'bfw', 'random')."
            )
        if (self.feedback == "two-point") != (problem.feedback == "two-point"):
            raise ValueError(
                f"{type(self).__name__} ('{self.name}') has feedback={self.feedback!r}; this "
                f"problem has feedback={problem.feedback!r}. Two-point agents ('fkm2', 'bbcg2') "
                "play pairs of points and need feedback='two-point', which no other agent can "
                "play; make the env with the matching feedback."
            )
        if self.requires_projection and not problem.set.has_projection:
            hint = projection_hint(problem.set)
            raise ValueError(
                f"{type(self).__name__} ('{self.name}') needs a Euclidean projection, which "
                f"{problem.set!r} does not provide; "
                + (f"{hint}, or " if hint else "")
                + "use a projection-free agent ('bbcg', 'bfw', 'ofw')."
            )
        self.problem = problem
        self.set = problem.set
        self.horizon = problem.horizon
        self.params: dict[str, Any] = {}
        self._stats: dict[str, Any] = {}
        self.rng = np.random.default_rng()
        self._round = 0
        self._awaiting_update = False
        self._pending_block = 0
        self._was_reset = False

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in self.params.items()
        )
        return f"{type(self).__name__}({shown})"

    # None for an agent acting on one run; S for one acting on a batch of S runs.
    batch_size: int | None = None

    @property
    def stats(self) -> dict[str, Any]:
        """Counters, at least ``rounds``, ``lmo_calls`` and ``projections`` (ints)."""
        return self._stats

    @stats.setter
    def stats(self, value: dict[str, Any]) -> None:
        self._stats = value

    def row_stats(self, row: int) -> dict[str, Any]:
        """The stats of run ``row`` as a single agent's dict (row 0 for a single agent)."""
        if row != 0:
            raise IndexError(f"{type(self).__name__} acts on one run: row={row!r}, allowed: 0")
        return dict(self.stats)

    # -- public template methods --------------------------------------------------------
    def reset(self, seed: int | None = None) -> None:
        """Start a new episode; all the agent's randomness comes from ``seed`` (None or an
        int >= 0; ValueError naming anything else)."""
        if seed is not None and not is_seed(seed):
            raise ValueError(
                f"{type(self).__name__}: reset(seed={seed!r}); allowed: None or an int >= 0"
            )
        self.rng = np.random.default_rng(seed)
        self._start_episode()
        self.stats = {"rounds": 0, "lmo_calls": 0, "projections": 0}
        self._reset()

    def _start_episode(self) -> None:
        """Reset the protocol's books (round counter, pending action or block)."""
        self._round = 0
        self._awaiting_update = False
        self._pending_block = 0
        self._was_reset = True

    def act(self, observation: Any = None) -> np.ndarray:
        """The point of K to play this round (a new array of shape ``set.shape``)."""
        self._check_can_act("act")
        self._awaiting_update = True
        return self._act()

    def block_actions(self) -> np.ndarray:
        """The next k >= 1 plays at once, shape (k, *set.shape), k up to the block's end.

        Only for agents with ``supports_blocks``; follow with ``update_block`` and the k
        losses. Bit-identical to k rounds of ``act``/``update``.
        """
        self._check_blocks_supported()
        self._check_can_act("block_actions")
        actions = self._block_actions()
        if len(actions) > self.horizon - self._round:
            raise RuntimeError(f"{type(self).__name__}: block runs past the horizon (bug)")
        self._pending_block = len(actions)
        self._awaiting_update = True
        return actions

    def block_anchor(self) -> tuple[np.ndarray, float] | None:
        """(a, delta) for the plays of the pending ``block_actions()``, or None.

        A claim a caller may verify instead of testing every play for membership:
        every play y satisfies ||y - a|| <= delta, and a lies in the shrunk set
        K_delta = c + (1 - delta/r)(K - c), so each y is in K. None when the agent
        names no anchor, or when no block is pending. ``a`` is the agent's own array:
        read it, do not modify it.
        """
        return self._block_anchor() if self._pending_block else None

    def update_block(self, losses: np.ndarray) -> None:
        """Learn from the losses of the plays returned by the last ``block_actions``."""
        k = self._pending_block
        self._check_block_pending()
        values = np.asarray(losses, dtype=float)
        if values.shape != (k,):
            raise ValueError(
                f"{type(self).__name__}: update_block() got losses of shape {values.shape}; "
                f"the last block_actions() returned {k} plays, so expected shape ({k},)"
            )
        if not np.all(np.isfinite(values)):
            raise ValueError(f"{type(self).__name__}: losses must be finite, got {values!r}")
        self._update_block(values)
        self._pending_block = 0
        self._awaiting_update = False
        self._round += k
        self.stats["rounds"] = self._round

    def update(self, loss: float, info: dict[str, Any] | None = None) -> None:
        """Learn from the loss f_t(x_t) of the last action (and ``info["gradient"]`` if full)."""
        self._check_can_update(info)
        loss = scalar_loss(loss, type(self).__name__)
        self._update(loss, info)
        self._awaiting_update = False
        self._round += 1
        self.stats["rounds"] = self._round

    def regret_bound(self) -> float | None:
        """The expected-regret bound of the agent's theorem for this problem (None if none)."""
        return None

    @classmethod
    def affordable_horizon(cls, problem: Problem) -> int | None:
        """The most rounds this agent can afford on ``problem``, or None (any horizon).

        An agent whose rounds are costly on some problems (a projection that takes
        milliseconds on a large polytope, as FKM's at scale) may say so: ``bco-gym bench``
        then plays it that many rounds where a scenario asks for more, beside the
        reference agents played at the same horizon on the same seeds, and its report
        says where it played fewer rounds. ``problem`` is the scenario's, at its horizon.
        """
        return None

    def close(self) -> None:
        """Release resources (worker threads); the agent stays usable after ``reset``."""
        return None

    def check_parameters(self) -> None:
        """ValueError unless every float parameter and the regret bound are finite, and the
        run's values stay finite (:meth:`_check_run_magnitude`).

        A scale constant far from its default (``c=1e300``, ``c=1e-320``) can give
        parameters or a theorem's bound beyond float64; :func:`make_agent` calls this so
        that such a constant is refused when the agent is built, naming what overflowed.
        """
        owner = type(self).__name__
        if not hasattr(self, "_was_reset"):
            raise TypeError(
                f"{owner}.__init__ did not call super().__init__(problem), which checks the "
                "feedback and keeps problem, set, horizon, params and the protocol's books; "
                "call it first in __init__"
            )
        for key, value in self.params.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{owner}: parameter {key}={value!r} is not finite in float64")
        try:
            bound = self.regret_bound()
        except (OverflowError, ZeroDivisionError) as error:
            raise ValueError(
                f"{owner}: the regret bound at {self._shown_params()} overflows float64 ({error})"
            ) from None
        if bound is not None and not math.isfinite(bound):
            raise ValueError(
                f"{owner}: the regret bound at {self._shown_params()} is {bound!r}, not a "
                "finite number"
            )
        self._check_run_magnitude(owner)

    def _check_run_magnitude(self, owner: str) -> None:
        """ValueError when a float parameter (or the one-point estimate's d M / delta) would
        make the run's values overflow float64 though the parameter itself is finite:
        |parameter| x scale, and scale / smoothing_radius, must stay below
        :data:`RUN_MAGNITUDE_LIMIT` (scale = T d max(M, G R, 1) max(R, 1)), so that a step,
        an estimate and their squares stay finite."""
        problem = self.problem
        radius = max(float(self.set.outer_radius), 1.0)
        spread = max(problem.bound, problem.lipschitz * radius, 1.0)
        scale = float(self.horizon) * float(self.set.dim) * spread * radius
        for key, value in self.params.items():
            if not isinstance(value, float) or value == 0.0 or key == "c":
                continue
            size = abs(value) * scale
            if key == "smoothing_radius":
                size = max(size, scale / abs(value))
            if size > RUN_MAGNITUDE_LIMIT:
                raise ValueError(
                    f"{owner}: parameter {key}={value!r} (at {self._shown_params()}) would make "
                    f"the run's values overflow float64 ({size:.3g} against the problem's scale "
                    f"T d max(M, G R, 1) max(R, 1) = {scale:.3g}; at most "
                    f"{RUN_MAGNITUDE_LIMIT:g} is allowed)"
                )

    def _shown_params(self) -> str:
        shown = ", ".join(
            f"{key}={value!r}" for key, value in self.params.items() if isinstance(value, float)
        )
        return shown or "its parameters (none a float)"

    # -- validation -------------------------------------------------------------------
    def _check_can_update(self, info: dict[str, Any] | None) -> None:
        if self._pending_block:
            raise RuntimeError(
                f"{type(self).__name__}: a block of {self._pending_block} plays is pending; "
                "pass its losses to update_block(), not update()"
            )
        if not self._awaiting_update:
            raise RuntimeError(f"{type(self).__name__}: update() called before act()")
        if self.feedback == "full" and (info is None or "gradient" not in info):
            raise ValueError(
                f"{type(self).__name__} is a full-information agent: update(loss, info) needs "
                "info['gradient'] (make the env with feedback='full')"
            )
        if self.feedback == "two-point" and (info is None or "losses" not in info):
            raise ValueError(
                f"{type(self).__name__} is a two-point agent: update(loss, info) needs "
                "info['losses'], f_t at both points (make the env with feedback='two-point')"
            )

    def _check_block_pending(self) -> None:
        if self._pending_block == 0:
            raise RuntimeError(
                f"{type(self).__name__}: update_block() called before block_actions()"
            )

    def _check_blocks_supported(self) -> None:
        if not self.supports_blocks:
            raise NotImplementedError(
                f"{type(self).__name__} ('{self.name}') has no block fast path (its plays "
                "depend on every loss); use act()/update(), or an agent with "
                "supports_blocks=True ('bbcg', 'bbcg2', 'random')"
            )

    def _check_can_act(self, verb: str) -> None:
        if not self._was_reset:
            raise RuntimeError(f"{type(self).__name__}: call reset() before {verb}()")
        if self._pending_block:
            raise RuntimeError(
                f"{type(self).__name__}: {verb}() called while a block of "
                f"{self._pending_block} plays awaits update_block(losses)"
            )
        if self._awaiting_update:
            raise RuntimeError(
                f"{type(self).__name__}: {verb}() called in round {self._round} while the "
                "previous action awaits update(loss); call update first"
            )
        if self._round >= self.horizon:
            raise RuntimeError(
                f"{type(self).__name__}: all {self.horizon} rounds of the horizon were played; "
                "build the agent with a larger horizon or reset() it"
            )

    # -- hooks ----------------------------------------------------------------------------
    @abc.abstractmethod
    def _reset(self) -> None:
        """Reset the algorithm's state (``self.rng`` is freshly seeded)."""

    @abc.abstractmethod
    def _act(self) -> np.ndarray:
        """The point to play in round ``self._round``."""

    @abc.abstractmethod
    def _update(self, loss: float, info: dict[str, Any] | None) -> None:
        """Absorb the loss of round ``self._round``."""

    def _block_actions(self) -> np.ndarray:
        """The plays of rounds ``self._round``, ... up to the end of the current block."""
        raise NotImplementedError

    def _update_block(self, losses: np.ndarray) -> None:
        """Absorb the losses of the plays returned by ``_block_actions``."""
        raise NotImplementedError

    def _block_anchor(self) -> tuple[np.ndarray, float] | None:
        """The anchor of the pending block (see ``block_anchor``); default: none."""
        return None
