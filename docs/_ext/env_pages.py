"""One page per registered ``BCO-*`` id, in the sections of Gymnasium's env pages."""

from __future__ import annotations

import importlib
import inspect
import itertools
from collections.abc import Callable
from typing import Any

from page_text import (
    bullet_arguments,
    docstring,
    heading,
    indent,
    markdown_sections,
    public_path,
    qualified,
    section,
    slug,
    table,
)


def env_ids() -> list[str]:
    """Every registered id starting with ``BCO-``, in registration order."""
    import gymnasium as gym

    import bco_gym  # noqa: F401  (registers the ids)

    return [env_id for env_id in gym.registry if env_id.startswith("BCO-")]


def make_function(env_id: str) -> Callable[..., Any]:
    import gymnasium as gym

    entry = gym.registry[env_id].entry_point
    if callable(entry):
        return entry
    module, _, name = entry.partition(":")
    return getattr(importlib.import_module(module), name)


def argument_rows(env_id: str) -> list[tuple[str, str, str]]:
    """(name, default, meaning) for every ``gym.make`` keyword of ``env_id``."""
    from bco_gym.envs import BanditConvexEnv

    function = make_function(env_id)
    env_doc = markdown_sections(docstring(BanditConvexEnv)).get("Arguments", "")
    meanings = {
        **bullet_arguments(env_doc),
        **bullet_arguments(docstring(inspect.getmodule(function))),
    }
    rows = []
    named = inspect.signature(function).parameters
    for name, parameter in named.items():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            env_parameters = inspect.signature(BanditConvexEnv.__init__).parameters
            for option, env_parameter in env_parameters.items():
                if option in {"self", "convex_set", "losses", *named}:
                    continue
                rows.append((option, repr(env_parameter.default), meanings.get(option, "")))
            continue
        default = "(required)" if parameter.default is parameter.empty else repr(parameter.default)
        meaning = meanings.get(name, "the size of the set (see the make-function below)")
        rows.append((name, default, meaning))
    return rows


PICTURE_ROUNDS = 64


def picture_sizes(env_id: str) -> list[dict[str, int]]:
    """``gym.make`` size keywords to try for a picture: the defaults, then small sizes."""
    parameters = [
        p.name
        for p in inspect.signature(make_function(env_id)).parameters.values()
        if type(p.default) is int and p.name != "horizon"
    ]
    small = itertools.product((3, 2, 1), repeat=len(parameters))
    return [{}, *(dict(zip(parameters, values, strict=True)) for values in small)]


def make_small(env_id: str, sizes: dict[str, Any]) -> tuple[Any, dict[str, Any]] | None:
    """(``gym.make(env_id, **options)``, options): ``sizes``, plus linear losses if the
    default family does not fit a set this small; None if the make-function rejects the
    size itself (a ValueError, e.g. n below the set's minimum)."""
    import gymnasium as gym

    attempts = [sizes]
    if sizes and "loss" in inspect.signature(make_function(env_id)).parameters:
        attempts.append({**sizes, "loss": "linear"})
    for options in attempts:
        try:
            return gym.make(env_id, **options), options
        except ValueError:
            continue
    return None


def drawable_size(env_id: str) -> dict[str, Any] | None:
    """The size keywords of the picture: the defaults if that set renders, else the
    smallest sizes whose set renders (a plane figure preferred to a segment), else None.

    Sizes the make-function rejects (a ValueError, e.g. n below the set's minimum) are
    skipped; an env whose metadata lists ``rgb_array`` is then drawn, errors raised.
    """
    drawable: dict[int, dict[str, Any]] = {}
    for sizes in picture_sizes(env_id):
        made = make_small(env_id, sizes)
        if made is None:
            continue
        env, sizes = made
        renders = "rgb_array" in env.unwrapped.metadata.get("render_modes", [])
        dimension = env.unwrapped.set.aff_dim
        env.close()
        if renders and not sizes:
            return sizes
        if renders:
            drawable.setdefault(dimension, sizes)
    return drawable[max(drawable)] if drawable else None


def render_picture(env_id: str) -> tuple[bytes, dict[str, Any]] | None:
    """The env's ``rgb_array`` frame after 64 sampled plays as PNG, with the size keywords
    it was drawn at; None when no size of the set renders."""
    import gymnasium as gym
    import numpy as np

    sizes = drawable_size(env_id)
    if sizes is None:
        return None
    options = dict(sizes)
    if "horizon" in inspect.signature(make_function(env_id)).parameters:
        options["horizon"] = PICTURE_ROUNDS
    env = gym.make(env_id, render_mode="rgb_array", **options)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(PICTURE_ROUNDS):
        env.step(env.unwrapped.set.sample(rng))
    frame = env.render()
    env.close()
    return png_bytes(np.asarray(frame)), sizes


def png_bytes(frame: Any) -> bytes:
    import io

    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import image

    buffer = io.BytesIO()
    image.imsave(buffer, frame, format="png", metadata={"Software": None})
    return buffer.getvalue()


def env_summary(env_id: str, env: Any) -> str:
    """The table at the top of an env page."""
    import gymnasium as gym

    base, spec = env.unwrapped, gym.registry[env_id]
    loss = getattr(base.losses, "name", type(base.losses).__name__)
    set_class = public_path(type(base.set), "bco_gym.sets")
    rows = [
        ("Make", f'``gym.make("{env_id}")``'),
        ("Feasible set", f":class:`{set_class}`, default ``{base.set!r}``"),
        ("Action space", f"``{env.action_space!r}``"),
        ("Observation space", f"``{env.observation_space!r}``"),
        ("Default loss family", _family_link(loss)),
        ("Default horizon", f"{base.problem.horizon:,}"),
        ("Entry point", f"``{spec.entry_point}``"),
    ]
    if spec.vector_entry_point is not None:
        call = f'gym.make_vec("{env_id}", num_envs=S, vectorization_mode="vector_entry_point")'
        rows.append(("Batched", f"``{call}``"))
    return table(("", ""), rows)


def picture_figure(env_id: str, picture: tuple[str, dict[str, Any]] | None) -> str:
    """The figure of the set, above the summary table, with the size that was drawn."""
    if picture is None:
        return ""
    name, sizes = picture
    shown = ", ".join(f"{key}={value!r}" for key, value in sizes.items())
    drawn = f'``gym.make("{env_id}", {shown})``' if sizes else "The default set"
    return (
        f".. figure:: {name}\n   :alt: {env_id} rendered\n   :width: 260px\n   :align: center\n\n"
        f'   {drawn}: ``env.render()`` (``render_mode="rgb_array"``) after {PICTURE_ROUNDS}'
        " uniformly sampled plays.\n"
    )


def rewards_note(env: Any) -> str:
    from bco_gym.losses import families_for

    problem = env.unwrapped.problem
    links = ", ".join(f":ref:`{n} <loss-{slug(n)}>`" for n in families_for(problem.set))
    return (
        f"Loss families defined on this set (``loss=``): {links}. Constants of the default "
        f"env: gradient bound G = {problem.lipschitz:.4g}, value bound M = {problem.bound:.4g}."
    )


def env_page(env_id: str, picture: tuple[str, dict[str, Any]] | None) -> str:
    """The page of one registered id, in the sections of Gymnasium's env pages."""
    import gymnasium as gym

    from bco_gym.envs import BanditConvexEnv

    function = make_function(env_id)
    env = gym.make(env_id)
    base = env.unwrapped
    env_class = type(base) if isinstance(base, BanditConvexEnv) else BanditConvexEnv
    sections = markdown_sections(docstring(env_class))
    set_class = public_path(type(base.set), "bco_gym.sets")
    arguments = [(f"``{n}``", f"``{d}``", m) for n, d, m in argument_rows(env_id)]
    version = sections.get("Version History", f"* v{gym.registry[env_id].version}")
    page = "\n".join(
        [
            f".. _env-{slug(env_id)}:\n",
            heading(env_id),
            picture_figure(env_id, picture),
            env_summary(env_id, env),
            section("Description", docstring(function), sections.get("Description", "")),
            section(
                "The feasible set",
                f".. autoclass:: {set_class}\n   :no-index:",
                geometry_table(base.set),
            ),
            section("Action Space", sections.get("Action Space", "")),
            section("Observation Space", sections.get("Observation Space", "")),
            section("Rewards", sections.get("Rewards", ""), rewards_note(env)),
            section("Starting State", sections.get("Starting State", "")),
            section("Episode End", sections.get("Episode End", "")),
            section(
                "Arguments",
                table(("keyword", "default", "meaning"), arguments),
                f"Make-function: :func:`{qualified(function)}`.",
            ),
            section("Example", example_doctest(env_id, env)),
            section("Version History", version),
        ]
    )
    env.close()
    return page


def geometry_table(convex_set: Any) -> str:
    rows = [
        ("shape", f"``{convex_set.shape}``"),
        ("ambient dimension", str(convex_set.dim)),
        ("affine dimension d", str(convex_set.aff_dim)),
        ("inner radius r", f"{convex_set.inner_radius:.4g}"),
        ("outer radius R", f"{convex_set.outer_radius:.4g}"),
        ("Euclidean projection", "yes" if convex_set.has_projection else "no (LMO only)"),
    ]
    return "\nGeometry of the default instance:\n\n" + table(("", ""), rows)


def example_doctest(env_id: str, env: Any) -> str:
    """A doctest making the env and playing the centre once (run by ``make docs``)."""
    lines = [
        ">>> import gymnasium as gym",
        ">>> import bco_gym",
        f'>>> env = gym.make("{env_id}")',
        ">>> env.action_space",
        repr(env.action_space),
        ">>> obs, info = env.reset(seed=0)",
        ">>> obs, reward, terminated, truncated, info = env.step(env.unwrapped.set.center)",
        '>>> reward == -info["loss"], info["t"], terminated',
        "(True, 1, False)",
    ]
    return ".. doctest::\n\n" + indent("\n".join(lines)) + "\n"


def _family_link(name: str) -> str:
    """A link to the family's page; a sequence outside the registry (data) is named only."""
    from bco_gym.losses import FAMILIES

    return f":ref:`{name} <loss-{slug(name)}>`" if name in FAMILIES else f"``{name}``"
