"""The registered environment ids and the make-functions behind them.

Every id accepts the common ``gym.make`` keyword arguments

* ``horizon``: T, a positive integer (defaults keep a default episode to seconds);
* ``loss``: the loss family (``bco_gym.losses.families_for(K)`` lists the valid ones);
* ``loss_kwargs``: a dict of the family's parameters;
* ``feedback``: ``"bandit"``, ``"full"`` or ``"two-point"`` (pairs of points, the mean counted);
* ``on_infeasible``: ``"raise"`` or ``"project"``;
* ``render_mode``: None or ``"rgb_array"`` (every set; see ``BanditConvexEnv``),

plus the size of the set (``n``; ``rows``/``cols``; ``grid``). An unknown or invalid
value raises a ``ValueError`` naming the value and what is allowed. The env truncates
itself after T rounds, so no ``TimeLimit`` is added (``max_episode_steps=None``).
Entry points are import strings, so ``gym.make("bco_gym:BCO-Simplex-v0")`` works in a
fresh interpreter.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import register

from bco_gym.envs.env import BanditConvexEnv
from bco_gym.losses import families_for
from bco_gym.sets import (
    BirkhoffPolytope,
    FlowPolytope,
    Hypercube,
    L1Ball,
    L2Ball,
    NuclearNormBall,
    Simplex,
)
from bco_gym.sets.base import ConvexSet

VECTOR_HORIZON = 10_000
STRUCTURED_HORIZON = 2_000


def _size(env_id: str, name: str, value: Any, minimum: int) -> int:
    """``value`` as an integer >= ``minimum``; ValueError naming the id otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(
            f"{env_id}: {name}={value!r} is not allowed; expected an integer >= {minimum}"
        )
    return int(value)


#: The env's own keywords every id accepts besides the make-function's named ones.
ENV_OPTIONS = tuple(
    name
    for name in inspect.signature(BanditConvexEnv.__init__).parameters
    if name not in ("self", "convex_set", "losses", "horizon", "loss_kwargs")
)


def _keywords_checked(env_id: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Refuse, with a ValueError listing the accepted ones, keywords ``env_id`` lacks.

    The accepted keywords are the make-function's named parameters and
    :data:`ENV_OPTIONS`; without this check an unknown keyword would reach
    ``BanditConvexEnv`` and end in a bare TypeError.
    """

    def decorate(make: Callable[..., Any]) -> Callable[..., Any]:
        named = [
            p.name
            for p in inspect.signature(make).parameters.values()
            if p.kind is not inspect.Parameter.VAR_KEYWORD
        ]
        accepted = (*named, *(name for name in ENV_OPTIONS if name not in named))

        @functools.wraps(make)
        def checked(*args: Any, **kwargs: Any) -> Any:
            unknown = [name for name in kwargs if name not in accepted]
            if unknown:
                raise ValueError(
                    f"{env_id}: unknown keyword(s) {', '.join(map(repr, unknown))}; "
                    f"accepted: {', '.join(accepted)}"
                )
            return make(*args, **kwargs)

        return checked

    return decorate


def _env(
    convex_set: ConvexSet,
    horizon: int,
    loss: str,
    loss_kwargs: Mapping[str, Any] | None,
    **options: Any,
) -> BanditConvexEnv:
    if not isinstance(loss, str):
        raise ValueError(
            f"loss={loss!r} is not allowed; expected a family name, one of "
            f"{', '.join(families_for(convex_set))}"
        )
    return BanditConvexEnv(convex_set, loss, horizon, loss_kwargs=loss_kwargs, **options)


def make_simplex(
    n: int = 10,
    horizon: int = VECTOR_HORIZON,
    loss: str = "linear",
    loss_kwargs: Mapping[str, Any] | None = None,
    **options: Any,
) -> BanditConvexEnv:
    """BCO-Simplex-v0: the probability simplex in R^n."""
    return _env(Simplex(_size("BCO-Simplex-v0", "n", n, 2)), horizon, loss, loss_kwargs, **options)


def make_ball(
    n: int = 10,
    horizon: int = VECTOR_HORIZON,
    loss: str = "linear",
    loss_kwargs: Mapping[str, Any] | None = None,
    **options: Any,
) -> BanditConvexEnv:
    """BCO-Ball-v0: the Euclidean unit ball in R^n."""
    return _env(L2Ball(_size("BCO-Ball-v0", "n", n, 1)), horizon, loss, loss_kwargs, **options)


def make_l1_ball(
    n: int = 10,
    horizon: int = VECTOR_HORIZON,
    loss: str = "linear",
    loss_kwargs: Mapping[str, Any] | None = None,
    **options: Any,
) -> BanditConvexEnv:
    """BCO-L1Ball-v0: the l1 unit ball (cross-polytope) in R^n."""
    return _env(L1Ball(_size("BCO-L1Ball-v0", "n", n, 1)), horizon, loss, loss_kwargs, **options)


def make_hypercube(
    n: int = 10,
    horizon: int = VECTOR_HORIZON,
    loss: str = "linear",
    loss_kwargs: Mapping[str, Any] | None = None,
    **options: Any,
) -> BanditConvexEnv:
    """BCO-Hypercube-v0: the box [-1, 1]^n."""
    size = _size("BCO-Hypercube-v0", "n", n, 1)
    return _env(Hypercube(-1.0, 1.0, n=size), horizon, loss, loss_kwargs, **options)


def make_nuclear_ball(
    rows: int = 10,
    cols: int = 10,
    horizon: int = STRUCTURED_HORIZON,
    loss: str = "completion",
    loss_kwargs: Mapping[str, Any] | None = None,
    **options: Any,
) -> BanditConvexEnv:
    """BCO-NuclearBall-v0: rows x cols matrices of nuclear norm <= 1."""
    rows = _size("BCO-NuclearBall-v0", "rows", rows, 1)
    cols = _size("BCO-NuclearBall-v0", "cols", cols, 1)
    convex_set = NuclearNormBall(rows, cols, radius=1.0)
    return _env(convex_set, horizon, loss, loss_kwargs, **options)


def make_shortest_path(
    grid: int = 5,
    horizon: int = STRUCTURED_HORIZON,
    loss: str = "edge-costs",
    loss_kwargs: Mapping[str, Any] | None = None,
    **options: Any,
) -> BanditConvexEnv:
    """BCO-ShortestPath-v0: unit s-t flows on the grid x grid DAG (edges right/down)."""
    size = _size("BCO-ShortestPath-v0", "grid", grid, 2)
    return _env(FlowPolytope.grid(size, size), horizon, loss, loss_kwargs, **options)


def make_birkhoff(
    n: int = 5,
    horizon: int = STRUCTURED_HORIZON,
    loss: str = "assignment",
    loss_kwargs: Mapping[str, Any] | None = None,
    **options: Any,
) -> BanditConvexEnv:
    """BCO-Birkhoff-v0: n x n doubly stochastic matrices."""
    size = _size("BCO-Birkhoff-v0", "n", n, 2)
    return _env(BirkhoffPolytope(size), horizon, loss, loss_kwargs, **options)


def make_portfolio(
    dataset: str = "nyse_o", horizon: int | None = None, **options: Any
) -> BanditConvexEnv:
    """BCO-Portfolio-v0: online portfolio selection, -log <r_t, x> on real price data.

    ``dataset``: ``nyse_o``, ``nyse_n``, ``tse``, ``sp500``, ``msci`` or ``djia``; the
    set is the simplex over its assets, the horizon defaults to its number of days (a
    smaller one uses the first days). No ``loss``/``loss_kwargs``: the data are the losses.
    """
    from bco_gym.losses.market import PortfolioDataLoss, dataset_shape

    convex_set = Simplex(dataset_shape(dataset)[1])
    losses = PortfolioDataLoss(convex_set, dataset=dataset, horizon=horizon)
    return BanditConvexEnv(convex_set, losses, horizon, **options)


# -- vector entry points (gym.make_vec(id, num_envs=S, vectorization_mode="vector_entry_point")) --
def _vector(env_id: str, make: Any, num_envs: int, kwargs: dict[str, Any]) -> Any:
    """S copies of ``make(**kwargs)`` batched, refused before anything is built when
    they cannot fit the machine (:func:`~bco_gym.envs.memory.check_build_memory`; the
    keyword ``allow_large=True`` builds them anyway)."""
    from bco_gym.envs.memory import check_build_memory
    from bco_gym.envs.vector import BanditConvexVectorEnv

    allow_large = kwargs.pop("allow_large", False)
    rows = num_envs if isinstance(num_envs, int | np.integer) else 1
    found = build_parts(env_id, kwargs, max(1, int(rows)))
    if found is not None:
        override = "pass allow_large=True to gym.make_vec to build them anyway"
        check_build_memory(found[1], found[0], max(1, int(rows)), allow_large, override)
    return BanditConvexVectorEnv.from_env(make(**kwargs), num_envs)


def make_simplex_vector(num_envs: int = 1, **kwargs: Any) -> Any:
    """BCO-Simplex-v0, S copies batched (:class:`~bco_gym.envs.BanditConvexVectorEnv`)."""
    return _vector("BCO-Simplex-v0", make_simplex, num_envs, kwargs)


def make_ball_vector(num_envs: int = 1, **kwargs: Any) -> Any:
    """BCO-Ball-v0, S copies batched."""
    return _vector("BCO-Ball-v0", make_ball, num_envs, kwargs)


def make_l1_ball_vector(num_envs: int = 1, **kwargs: Any) -> Any:
    """BCO-L1Ball-v0, S copies batched."""
    return _vector("BCO-L1Ball-v0", make_l1_ball, num_envs, kwargs)


def make_hypercube_vector(num_envs: int = 1, **kwargs: Any) -> Any:
    """BCO-Hypercube-v0, S copies batched."""
    return _vector("BCO-Hypercube-v0", make_hypercube, num_envs, kwargs)


def make_nuclear_ball_vector(num_envs: int = 1, **kwargs: Any) -> Any:
    """BCO-NuclearBall-v0, S copies batched."""
    return _vector("BCO-NuclearBall-v0", make_nuclear_ball, num_envs, kwargs)


def make_shortest_path_vector(num_envs: int = 1, **kwargs: Any) -> Any:
    """BCO-ShortestPath-v0, S copies batched."""
    return _vector("BCO-ShortestPath-v0", make_shortest_path, num_envs, kwargs)


def make_birkhoff_vector(num_envs: int = 1, **kwargs: Any) -> Any:
    """BCO-Birkhoff-v0, S copies batched."""
    return _vector("BCO-Birkhoff-v0", make_birkhoff, num_envs, kwargs)


def make_portfolio_vector(num_envs: int = 1, **kwargs: Any) -> Any:
    """BCO-Portfolio-v0, S copies batched."""
    return _vector("BCO-Portfolio-v0", make_portfolio, num_envs, kwargs)


_ENTRY = "bco_gym.envs.registration:"

register(
    id="BCO-Simplex-v0",
    entry_point=_ENTRY + "make_simplex",
    max_episode_steps=None,
    vector_entry_point=_ENTRY + "make_simplex_vector",
)
register(
    id="BCO-Ball-v0",
    entry_point=_ENTRY + "make_ball",
    max_episode_steps=None,
    vector_entry_point=_ENTRY + "make_ball_vector",
)
register(
    id="BCO-L1Ball-v0",
    entry_point=_ENTRY + "make_l1_ball",
    max_episode_steps=None,
    vector_entry_point=_ENTRY + "make_l1_ball_vector",
)
register(
    id="BCO-Hypercube-v0",
    entry_point=_ENTRY + "make_hypercube",
    max_episode_steps=None,
    vector_entry_point=_ENTRY + "make_hypercube_vector",
)
register(
    id="BCO-NuclearBall-v0",
    entry_point=_ENTRY + "make_nuclear_ball",
    max_episode_steps=None,
    vector_entry_point=_ENTRY + "make_nuclear_ball_vector",
)
register(
    id="BCO-ShortestPath-v0",
    entry_point=_ENTRY + "make_shortest_path",
    max_episode_steps=None,
    vector_entry_point=_ENTRY + "make_shortest_path_vector",
)
register(
    id="BCO-Birkhoff-v0",
    entry_point=_ENTRY + "make_birkhoff",
    max_episode_steps=None,
    vector_entry_point=_ENTRY + "make_birkhoff_vector",
)
register(
    id="BCO-Portfolio-v0",
    entry_point=_ENTRY + "make_portfolio",
    max_episode_steps=None,
    vector_entry_point=_ENTRY + "make_portfolio_vector",
)

ENV_IDS = (
    "BCO-Simplex-v0",
    "BCO-Ball-v0",
    "BCO-L1Ball-v0",
    "BCO-Hypercube-v0",
    "BCO-NuclearBall-v0",
    "BCO-ShortestPath-v0",
    "BCO-Birkhoff-v0",
    "BCO-Portfolio-v0",
)


#: The coordinates of a point of each id's set, from its make-function's keywords:
#: what :func:`point_dimension` evaluates before anything is built.
_POINT_DIMENSIONS: dict[str, tuple[Callable[..., Any], Callable[[Mapping[str, Any]], int]]] = {
    "BCO-Simplex-v0": (make_simplex, lambda k: k["n"]),
    "BCO-Ball-v0": (make_ball, lambda k: k["n"]),
    "BCO-L1Ball-v0": (make_l1_ball, lambda k: k["n"]),
    "BCO-Hypercube-v0": (make_hypercube, lambda k: k["n"]),
    "BCO-NuclearBall-v0": (make_nuclear_ball, lambda k: k["rows"] * k["cols"]),
    "BCO-ShortestPath-v0": (make_shortest_path, lambda k: 2 * k["grid"] * (k["grid"] - 1)),
    "BCO-Birkhoff-v0": (make_birkhoff, lambda k: k["n"] * k["n"]),
}


def point_dimension(env_id: str, env_kwargs: Mapping[str, Any] | None = None) -> int | None:
    """The number of coordinates of a point of ``gym.make(env_id, **env_kwargs)``'s set,
    computed from the keywords alone, before anything is built (what lets a run too large
    for the machine be refused before it allocates: :mod:`bco_gym.envs.memory`).

    None for an id whose size is not set by keywords (``BCO-Portfolio-v0``: a shipped
    data set) or not of this package, and for keywords ``gym.make`` would refuse (it
    then says why itself).
    """
    keywords = _planned_keywords(env_id, env_kwargs)
    if keywords is None:
        return None
    sizes = {k: v for k, v in keywords.items() if k in ("n", "rows", "cols", "grid")}
    if not all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in sizes.values()):
        return None
    if any(v < 1 for v in sizes.values()):
        return None
    return int(_POINT_DIMENSIONS[env_id][1](keywords))


def build_parts(
    env_id: str, env_kwargs: Mapping[str, Any] | None, rows: int
) -> tuple[int, dict[str, int]] | None:
    """(K's dimension, the parts in bytes) of ``rows`` envs ``gym.make(env_id,
    **env_kwargs)`` built and stepped once, from the keywords alone
    (:func:`~bco_gym.envs.memory.env_parts`); None for an id whose size the keywords do
    not set (a data set) or keywords ``gym.make`` would refuse."""
    from bco_gym.envs.memory import env_parts

    dim = point_dimension(env_id, env_kwargs)
    if dim is None:
        return None
    return dim, env_parts(dim, loss_floats_per_round(env_id, env_kwargs), rows)


def loss_floats_per_round(env_id: str, env_kwargs: Mapping[str, Any] | None = None) -> int:
    """The floats of per-round parameters of ``gym.make(env_id, **env_kwargs)``'s loss
    sequence, from the keywords alone: K's dimension for a family that keeps the default
    (a point of K per round), 0 where the keywords do not tell (a family with its own
    count, an unknown family, a data set): a lower bound of what a chunk holds."""
    from bco_gym.losses import FAMILIES
    from bco_gym.losses.base import LossSequence

    keywords = _planned_keywords(env_id, env_kwargs)
    dim = point_dimension(env_id, env_kwargs)
    if keywords is None or dim is None:
        return 0
    family = FAMILIES.get(keywords.get("loss")) if isinstance(keywords.get("loss"), str) else None
    if family is None or family._floats_per_round is not LossSequence._floats_per_round:
        return 0
    return dim


def _planned_keywords(env_id: str, env_kwargs: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The make-function's keywords of ``env_id`` (its defaults, then ``env_kwargs``), or
    None for an id whose size the keywords do not set."""
    found = _POINT_DIMENSIONS.get(env_id)
    if found is None:
        return None
    named = {
        name: parameter.default
        for name, parameter in inspect.signature(found[0]).parameters.items()
        if parameter.default is not inspect.Parameter.empty
    }
    return {**named, **{k: v for k, v in dict(env_kwargs or {}).items() if k in named}}


def _check_keywords_of_every_id() -> None:
    """Wrap the make-function of every id registered above in :func:`_keywords_checked`.

    Done once here, from the registry, so an id added to the list above gets the check
    without further edits (``gym.make`` imports the wrapped function by its name).
    """
    module = sys.modules[__name__]
    for spec in gym.registry.values():
        if isinstance(spec.entry_point, str) and spec.entry_point.startswith(_ENTRY):
            name = spec.entry_point.removeprefix(_ENTRY)
            make = getattr(module, name)
            if not hasattr(make, "__wrapped__"):
                setattr(module, name, _keywords_checked(spec.id)(make))


_check_keywords_of_every_id()
