"""Generate the documentation pages that must follow the code.

One page per registered ``BCO-*`` id (from ``gym.registry``, the make-function
signature and the docstrings of the env and set classes), one per agent of
``bco_gym.agents.AGENTS``, one per loss family of ``bco_gym.losses.FAMILIES``, one per
script of ``examples/``, and the report of the main job. Nothing here is a hand-kept
table: an id, agent or family added to the code gets its page at the next build.

As a Sphinx extension (``extensions = ["bco_pages"]``) it writes the pages into
``docs/generated/`` when the builder starts. :func:`write_pages` is the same work
callable without Sphinx (``tests/test_docs.py`` uses it). Files are rewritten only when
their content changes, and the whole generation is skipped when a digest of its inputs
(package, examples, this extension, the report) is unchanged, so the html and doctest
builds of ``make docs`` generate once.
"""

from __future__ import annotations

import fractions
import hashlib
import importlib
import inspect
import itertools
import re
import subprocess
import sys
import tempfile
import textwrap
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # agent_math, bco_docstrings

DOCS = Path(__file__).resolve().parent.parent
ROOT = DOCS.parent
GENERATED = DOCS / "generated"
EXAMPLES = ROOT / "examples"
REPORT = ROOT / "results" / "report.md"

#: The problem on which agent pages resolve parameters and count oracle calls.
REFERENCE_ENV = "BCO-Ball-v0"
REFERENCE_HORIZON = 10_000

#: Figure-producing examples: the arguments of the small run made at build time and the
#: figure it leaves (``{out}`` is a fresh temporary directory). A script that saves a
#: figure without an entry here is an error, so no figure goes silently missing.
GALLERY_RUNS: dict[str, tuple[list[str], str]] = {
    "compare_agents.py": (
        "--env BCO-Ball-v0 --horizon 10000 --seeds 2 --backend serial --out {out}/sweep".split(),
        "{out}/sweep/regret.png",
    ),
    "rl_baselines.py": (
        "--horizon 1000 --seeds 0 --agents sb3-ppo,sb3-a2c,fkm,random".split()
        + "--figure {out}/rl_baselines.png".split(),
        "{out}/rl_baselines.png",
    ),
}
FIGURE_MARKERS = ("savefig(", "plot_regret(", "plot_exponents(")


@dataclass
class Generated:
    """What :func:`write_pages` produced: page paths (relative to ``outdir``) by kind."""

    envs: dict[str, str] = field(default_factory=dict)
    agents: dict[str, str] = field(default_factory=dict)
    losses: dict[str, str] = field(default_factory=dict)
    gallery: dict[str, str] = field(default_factory=dict)
    report: str = ""
    api: dict[str, str] = field(default_factory=dict)
    pictures: list[str] = field(default_factory=list)
    files: set[str] = field(default_factory=set)

    def write(self, outdir: Path, relative: str, content: str | bytes) -> str:
        """Write ``outdir/relative`` (if changed) and remember it; return ``relative``."""
        write_if_changed(outdir / relative, content)
        self.files.add(relative)
        return relative


# -- helpers --------------------------------------------------------------------------------
def write_if_changed(path: Path, content: str | bytes) -> None:
    """Write ``content`` unless the file already holds it (keeps Sphinx's cache valid)."""
    data = content.encode() if isinstance(content, str) else content
    if path.exists() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def slug(name: str) -> str:
    """A file name for an id, agent or family name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name)


def heading(title: str, char: str = "=") -> str:
    return f"{title}\n{char * len(title)}\n"


def indent(text: str, prefix: str = "   ") -> str:
    return textwrap.indent(text, prefix, lambda line: bool(line.strip()))


def docstring(obj: Any) -> str:
    """The cleaned docstring, made valid RST by :func:`bco_docstrings.clean`."""
    from bco_docstrings import clean

    return clean(inspect.getdoc(obj) or "")


def first_paragraph(text: str) -> str:
    return text.strip().split("\n\n")[0].replace("\n", " ").strip()


def markdown_sections(text: str) -> dict[str, str]:
    """``## Heading`` sections of a Gymnasium-style docstring: heading -> body."""
    sections: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        match = re.match(r"^##\s+(.+?)\s*$", line)
        if match:
            current = match.group(1)
            sections[current] = ""
        elif current is not None:
            sections[current] += line + "\n"
    return {name: body.strip() for name, body in sections.items()}


def bullet_arguments(text: str) -> dict[str, str]:
    """``* ``name``: text`` bullets (continuation lines indented) as name -> text."""
    arguments: dict[str, str] = {}
    name = None
    for line in text.splitlines():
        match = re.match(r"^\s*\*\s+``(\w+)``:\s*(.*)$", line)
        if match:
            name = match.group(1)
            arguments[name] = match.group(2).strip()
        elif name is not None and line.startswith("  ") and line.strip():
            arguments[name] += " " + line.strip()
        else:
            name = None
    return {key: value.rstrip(",;.") for key, value in arguments.items()}


def qualified(obj: Any) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


def public_path(cls: type, package: str) -> str:
    """``package.Name`` when the package re-exports the class, else its defining path."""
    module = importlib.import_module(package)
    if getattr(module, cls.__name__, None) is cls:
        return f"{package}.{cls.__name__}"
    return qualified(cls)


# -- environments -----------------------------------------------------------------------------
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


def table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """An RST list-table."""
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        lines.append(f"   * - {row[0]}")
        lines.extend(f"     - {cell}" for cell in row[1:])
    return "\n".join(lines) + "\n"


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


def section(title: str, *body: str) -> str:
    """A second-level section of a generated page."""
    return heading(title, "-") + "\n" + "\n\n".join(part for part in body if part) + "\n"


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
        ("Default loss family", f":ref:`{loss} <loss-{slug(loss)}>`"),
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


# -- agents -----------------------------------------------------------------------------------
def agent_measurement(name: str, cls: type) -> tuple[dict[str, Any], str] | None:
    """Resolved params, bounds and measured oracle counts on the reference problem.

    None for agents without a regret theory (the stable-baselines3 ones): training a
    network at build time would cost minutes and their class documentation states
    their oracle use.
    """
    if cls.regret_exponent is None:
        return None
    from bco_gym.agents import make_agent
    from bco_gym.experiment import run

    env_kwargs = {"feedback": cls.feedback}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        result = run(REFERENCE_ENV, name, horizon=REFERENCE_HORIZON, seed=0, env_kwargs=env_kwargs)
        import gymnasium as gym

        agent = make_agent(name, gym.make(REFERENCE_ENV, horizon=REFERENCE_HORIZON, **env_kwargs))
    facts = {
        "params": agent.params,
        "regret_bound": agent.regret_bound(),
        "lmo_call_bound": getattr(agent, "lmo_call_bound", lambda: None)(),
        "lmo_per_round": result.lmo_calls / REFERENCE_HORIZON,
        "projections_per_round": result.projections / REFERENCE_HORIZON,
        "regret": result.final_regret,
    }
    command = (
        f'``bco_gym.experiment.run("{REFERENCE_ENV}", "{name}", horizon={REFERENCE_HORIZON},'
        f" seed=0, env_kwargs={env_kwargs!r})``"
    )
    return facts, command


def references(text: str) -> str:
    match = re.search(r"References?:\s*(.+?)(?:\n\s*\n|\Z)", text, re.S)
    return " ".join(match.group(1).split()) if match else ""


def agent_page(name: str, measure: bool = True) -> str:
    """The page of one ``make_agent`` name."""
    from agent_math import UPDATE_RULES

    from bco_gym.agents import AGENTS

    cls = AGENTS[name]
    doc = docstring(cls)
    path = public_path(cls, "bco_gym.agents")
    exponent = cls.regret_exponent
    rows = [
        ("make_agent name", f'``"{name}"``'),
        ("class", f":class:`{path}`"),
        ("feedback", f"``{cls.feedback}``"),
        ("needs a projection", "yes" if cls.requires_projection else "no (projection-free)"),
        ("regret guarantee", rate(exponent)),
        ("keywords", ", ".join(f"``{option}``" for option in cls.OPTIONS) or "none"),
        ("scale constant", f"``{cls.SCALE_PARAM}``" if cls.SCALE_PARAM else "none"),
        ("reference", no_list(references(doc)) or "none"),
    ]
    if name in UPDATE_RULES:
        rule = textwrap.dedent(UPDATE_RULES[name]).strip() + "\n\nNotation: " + NOTATION
    else:
        rule = "The update rule is stated in the class documentation below."
    measured = agent_measurement(name, cls) if measure else None
    return "\n".join(
        [
            f".. _agent-{slug(name)}:\n",
            heading(f"{name}: {cls.__name__}"),
            first_paragraph(doc) + "\n",
            table(("", ""), rows),
            section("Update rule", rule),
            section("Parameters, bound and oracle cost", measurement_text(cls, measured)),
            section("Class documentation", f".. autoclass:: {path}\n   :no-index:"),
        ]
    )


def rate(exponent: float | None) -> str:
    """``O(T^(3/4))`` for 0.75; "none" without a guarantee."""
    if exponent is None:
        return "none (no regret guarantee)"
    if exponent == 1:
        return "linear, :math:`O(T)`"
    power = fractions.Fraction(exponent).limit_denominator(12)
    return f":math:`O(T^{{{power}}})`"


def no_list(text: str) -> str:
    """Text for a table cell that must not open a list ("D. Garber ..." is not item D)."""
    return re.sub(r"^([A-Za-z0-9]{1,2})\. ", r"\1\\. ", text)


NOTATION = (
    ":math:`c` the centre of :math:`K`, :math:`r`/:math:`R` its inner/outer radius, "
    ":math:`V = \\operatorname{aff}(K) - c` and :math:`d = \\dim V` (``aff_dim``), "
    ":math:`\\delta` the smoothing radius, :math:`\\eta` the step size, :math:`\\Pi` the "
    "Euclidean projection (see :doc:`/mathematics`)."
)


def measurement_text(cls: type, measured: tuple[dict[str, Any], str] | None) -> str:
    """The resolved parameters, the bounds and the measured oracle calls, as a list."""
    if measured is None:
        why = " (no regret theory; the class documentation states its oracle use)"
        return (
            "Not measured when these pages were built"
            + (why if cls.regret_exponent is None else "")
            + "."
        )
    facts, command = measured
    params = ", ".join(
        f"``{key}`` = {value:.4g}" if isinstance(value, float) else f"``{key}`` = {value}"
        for key, value in facts["params"].items()
    )
    bound, lmo_bound = facts["regret_bound"], facts["lmo_call_bound"]
    lines = [
        f"On ``{REFERENCE_ENV}`` (n = 10, linear losses) with T = {REFERENCE_HORIZON:,}, "
        "computed when these pages were built:\n",
        f"* resolved parameters: {params};",
        f"* the theorem's regret bound, ``regret_bound()``: {fmt(bound)};",
    ]
    if lmo_bound is not None:
        lines.append(
            f"* the bound on the expected LMO calls, ``lmo_call_bound()``: {fmt(lmo_bound)};"
        )
    lines.append(
        f"* measured on seed 0: LMO calls per round {facts['lmo_per_round']:.4g}, "
        f"projections per round {facts['projections_per_round']:.4g}, regret "
        f"{facts['regret']:.4g}, by {command}."
    )
    return "\n".join(lines)


def fmt(value: float | None) -> str:
    return "None (the agent states no bound)" if value is None else f"{value:.4g}"


# -- loss families --------------------------------------------------------------------------
def loss_page(name: str) -> str:
    """The page of one loss family."""
    import gymnasium as gym

    from bco_gym.losses import FAMILIES, families_for

    cls = FAMILIES[name]
    path = public_path(cls, "bco_gym.losses")
    parameters = [
        (f"``{p.name}``", f"``{p.default!r}``" if p.default is not p.empty else "(required)")
        for p in list(inspect.signature(cls.__init__).parameters.values())[1:]
        if p.name != "convex_set" and p.kind is not p.VAR_KEYWORD
    ]
    ids = []
    for env_id in env_ids():
        env = gym.make(env_id)
        if name in families_for(env.unwrapped.set):
            ids.append(f":ref:`{env_id} <env-{slug(env_id)}>`")
        env.close()
    module = inspect.getmodule(cls)
    parts = [
        f".. _loss-{slug(name)}:\n",
        heading(f"{name}: {cls.__name__}"),
        first_paragraph(docstring(cls)) + "\n",
        table(
            ("", ""),
            [
                ("``loss=``", f'``"{name}"``'),
                ("class", f":class:`{path}`"),
                ("defined on", cls.support_note()),
                ("registered ids whose default set supports it", ", ".join(ids) or "none"),
            ],
        ),
        heading("Parameters (``loss_kwargs``)", "-")
        + "\n"
        + (table(("keyword", "default"), parameters) if parameters else "None.\n"),
        heading("The family", "-")
        + "\n"
        + f"From :mod:`{module.__name__}`:\n\n"
        + docstring(module)
        + "\n",
        heading("Class documentation", "-") + f"\n.. autoclass:: {path}\n   :no-index:\n",
    ]
    return "\n".join(parts)


# -- gallery ----------------------------------------------------------------------------------
def run_example(script: Path) -> tuple[bytes, str] | None:
    """Run a figure-producing example small; (the figure as PNG, the command) or None."""
    source = script.read_text()
    if not any(marker in source for marker in FIGURE_MARKERS):
        return None
    if script.name not in GALLERY_RUNS:
        raise RuntimeError(
            f"examples/{script.name} saves a figure but has no entry in GALLERY_RUNS "
            f"({__file__}): add the small run that draws it for the gallery"
        )
    arguments, figure = GALLERY_RUNS[script.name]
    with tempfile.TemporaryDirectory() as out:
        filled = [argument.format(out=out) for argument in arguments]
        completed = subprocess.run(
            [sys.executable, str(script), *filled], capture_output=True, text=True, cwd=out
        )
        if completed.returncode != 0:
            raise RuntimeError(f"examples/{script.name} failed:\n{completed.stderr}")
        picture = Path(figure.format(out=out)).read_bytes()
    shown = " ".join(a.replace("{out}", "OUT") for a in arguments)
    return picture, f"python examples/{script.name} {shown}"


def example_scripts() -> list[Path]:
    return sorted(EXAMPLES.glob("*.py"))


def gallery_page(script: Path, figure: tuple[str, str] | None) -> str:
    import ast

    doc = ast.get_docstring(ast.parse(script.read_text())) or ""
    title, _, rest = doc.partition("\n")
    from bco_docstrings import clean

    parts = [
        f".. _example-{slug(script.stem)}:\n",
        heading(script.name),
        f"**{title.strip()}**\n",
        clean(rest.strip()) + "\n",
    ]
    if figure is not None:
        name, command = figure
        parts.append(
            f".. figure:: {name}\n   :alt: figure drawn by {script.name}\n   :width: 640px\n\n"
            f"   Drawn when these pages were built, by ``{command}`` "
            "(a small run; OUT is a temporary directory).\n"
        )
    parts.append(
        f".. literalinclude:: /../examples/{script.name}\n   :language: python\n   :linenos:\n"
    )
    return "\n".join(parts)


# -- the report -------------------------------------------------------------------------------
def report_page(outdir: Path, generated: Generated) -> str:
    """``results/report.md`` with its images, or how to produce it."""
    if not REPORT.exists():
        return (
            "# The main job's report\n\n"
            "No report was present when these docs were built. `make demo` (the main job) "
            "writes `results/report.md` with its figures; run it, then `make docs` again "
            "and this page holds the report.\n\n"
            "```bash\nmake demo\nmake docs\n```\n"
        )
    text = REPORT.read_text()
    for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text):
        source = (REPORT.parent / target).resolve()
        if not source.exists():
            raise FileNotFoundError(f"results/report.md shows {target}, which does not exist")
        local = "report-" + slug(str(Path(target)))
        generated.write(outdir, local, source.read_bytes())
        text = text.replace(f"]({target})", f"]({local})")
    return "(main-job-report)=\n" + text


# -- API reference ---------------------------------------------------------------------------
def public_modules() -> list[str]:
    """Every module of bco_gym whose dotted name has no ``_``-prefixed part."""
    import pkgutil

    import bco_gym

    names = ["bco_gym"]
    for info in pkgutil.walk_packages(bco_gym.__path__, "bco_gym."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def api_page(module_name: str) -> str:
    """A module's page: a package shows its docstring and public names, a module its members.

    Objects are documented once, in their defining module; a package's re-exports link
    there (``bco_docstrings`` resolves the public spellings).
    """
    module = importlib.import_module(module_name)
    is_package = hasattr(module, "__path__")
    parts = [heading(module_name), f".. automodule:: {module_name}\n"]
    if ">>>" in inspect.getsource(module):  # docstring examples run in their module's namespace
        parts.insert(1, DOCTEST_NAMESPACE.format(module=module_name))
    if not is_package:
        members = [name for name in vars(module) if defined_in(module, name)]
        members += sorted(documented_data(module_name) & set(vars(module)))
        if members:
            parts[-1] += "   :members: " + ", ".join(members) + "\n"
        return "\n".join(parts)
    exported = [name for name in getattr(module, "__all__", []) if not name.startswith("_")]
    source = inspect.getsource(module)
    defined = [name for name in exported if defined_in(module, name)]
    data = [n for n in exported if re.search(rf"^{re.escape(n)}\s*[:=]", source, re.M)]
    documented = documented_data(module_name)
    others = [n for n in exported if n not in defined and n not in data]
    others += [n for n in data if n not in documented]
    data = [n for n in data if n in documented]
    if others:
        parts.append("Public names (documented where they are defined):\n")
        parts.append("\n".join(f"* {reference(module, name)}" for name in others) + "\n")
    if defined:
        parts[1] += "   :members: " + ", ".join(defined) + "\n"
    parts.extend(f".. autodata:: {module_name}.{name}\n   :no-value:\n" for name in data)
    return "\n".join(parts)


DOCTEST_NAMESPACE = """.. testsetup:: *

   import importlib
   globals().update(vars(importlib.import_module("{module}")))
"""


def documented_data(module_name: str) -> set[str]:
    """Module-level names with a ``#:`` doc comment or a docstring after them."""
    from sphinx.pycode import ModuleAnalyzer

    attributes = ModuleAnalyzer.for_module(module_name).find_attr_docs()
    return {name for (scope, name) in attributes if scope == ""}


def reference(module: Any, name: str) -> str:
    """A cross-reference to a re-exported class, function or module; a literal otherwise."""
    value = getattr(module, name, None)
    if inspect.ismodule(value):
        return f":mod:`{value.__name__}`"
    if inspect.isclass(value) or inspect.isfunction(value):
        return f":py:obj:`{module.__name__}.{name}`"
    return f"``{name}`` (from :mod:`{find_module_of(module, name)}`)"


def find_module_of(package: Any, name: str) -> str:
    """The submodule of ``package`` that assigns ``name`` at top level."""
    for module_name in public_modules():
        if module_name.startswith(package.__name__ + ".") and module_name != package.__name__:
            module = importlib.import_module(module_name)
            if re.search(rf"^{re.escape(name)}\s*[:=]", inspect.getsource(module), re.M):
                return module_name
    return package.__name__


def defined_in(module: Any, name: str) -> bool:
    """Whether ``name`` is a public class or function defined in ``module`` itself."""
    if name.startswith("_"):
        return False
    value = getattr(module, name, None)
    return getattr(value, "__module__", None) == module.__name__ and (
        inspect.isclass(value) or inspect.isfunction(value)
    )


# -- driver -----------------------------------------------------------------------------------
def source_digest() -> str:
    """A digest of everything the pages are generated from."""
    digest = hashlib.sha256()
    files = [
        *sorted((ROOT / "bco_gym").rglob("*.py")),
        *sorted((ROOT / "bco_gym").rglob("*.json")),
        *example_scripts(),
        *sorted(Path(__file__).parent.glob("*.py")),
    ]
    if REPORT.exists():
        files.append(REPORT)
    for path in files:
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def write_pages(
    outdir: Path = GENERATED, *, pictures: bool = True, measure: bool = True, figures: bool = True
) -> Generated:
    """Write every generated page under ``outdir``; return what was written.

    ``pictures`` renders env pictures, ``measure`` runs the agents on the reference
    problem, ``figures`` runs the figure-producing examples (the fast unit test turns
    the three off; ``make docs`` keeps them on). Files of an earlier generation that
    were not written again (a removed id, agent, family or example) are deleted.
    """
    from bco_gym.agents import AGENTS
    from bco_gym.losses import FAMILIES

    done = Generated()
    for env_id in env_ids():
        drawn = render_picture(env_id) if pictures else None
        picture = None
        if drawn is not None:
            picture = (f"{slug(env_id)}.png", drawn[1])
            done.pictures.append(done.write(outdir, f"envs/{picture[0]}", drawn[0]))
        page = env_page(env_id, picture)
        done.envs[env_id] = done.write(outdir, f"envs/{slug(env_id)}.rst", page)
    for name in AGENTS:
        page = agent_page(name, measure)
        done.agents[name] = done.write(outdir, f"agents/{slug(name)}.rst", page)
    for name in FAMILIES:
        done.losses[name] = done.write(outdir, f"losses/{slug(name)}.rst", loss_page(name))
    for script in example_scripts():
        ran = run_example(script) if figures else None
        figure = None
        if ran is not None:
            figure = (f"{script.stem}.png", ran[1])
            done.pictures.append(done.write(outdir, f"gallery/{figure[0]}", ran[0]))
        page = gallery_page(script, figure)
        done.gallery[script.name] = done.write(outdir, f"gallery/{script.stem}.rst", page)
    done.report = done.write(outdir, "report.md", report_page(outdir, done))
    for module_name in public_modules():
        done.api[module_name] = done.write(outdir, f"api/{module_name}.rst", api_page(module_name))
    for path in sorted(outdir.rglob("*")):
        relative = path.relative_to(outdir).as_posix()
        if path.is_file() and relative not in done.files and relative != STAMP:
            path.unlink()
    return done


STAMP = ".digest"


def generate(app: Any) -> None:
    """``builder-inited``: (re)generate the pages unless their inputs are unchanged."""
    stamp = GENERATED / STAMP
    digest = source_digest()
    if stamp.exists() and stamp.read_text() == digest:
        return
    write_pages(GENERATED)
    write_if_changed(stamp, digest)


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", generate)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
