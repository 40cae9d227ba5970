"""One page per agent of ``AGENTS`` and per loss family of ``FAMILIES``."""

from __future__ import annotations

import fractions
import inspect
import re
import textwrap
import warnings
from typing import Any

from env_pages import env_ids
from page_text import docstring, first_paragraph, heading, public_path, section, slug, table

#: The problem on which agent pages resolve parameters and count oracle calls.
REFERENCE_ENV = "BCO-Ball-v0"
REFERENCE_HORIZON = 10_000


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
        f"{number(facts['regret'])}, by {command}."
    )
    return "\n".join(lines)


def fmt(value: float | None) -> str:
    return "None (the agent states no bound)" if value is None else number(value)


def number(value: float) -> str:
    """4 significant digits, with thousands separators instead of an exponent up to 1e9."""
    if 1e3 <= abs(value) < 1e9:
        return f"{float(f'{value:.4g}'):,.0f}"
    return f"{value:.4g}"


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
