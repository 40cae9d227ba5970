"""What every figure shares: the canvas, one colour per agent, the series order, the title.

* Figures are bare ``matplotlib.figure.Figure`` objects with an Agg canvas: no pyplot,
  no global figure state, no GUI backend.
* An agent keeps its colour in every figure (:data:`AGENT_COLORS`; other agents get
  the remaining tab10 colours in order of appearance); a second series of the same
  agent (other constants) gets a lighter shade of it.
* The random agent is drawn in grey: its band first and lowest (``zorder``), so that it
  never covers the others' bands, and its mean line dotted and on top, so that an agent
  whose curve equals random's (BFW capped at the centre on the simplex) does not hide
  it; full-information agents are dashed (hollow markers in dot plots) and their label
  ends in "(full info)".
* Titles name the set and its dimension, the loss family with its parameters, the
  horizon, the number of seeds and the constants (theory, tuned or custom).
"""

from __future__ import annotations

import functools
import io
import os
import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bco_gym.engine.result import RunResult
from bco_gym.stats.paired import group_series, is_bandit

AGENT_COLORS: dict[str, str] = {
    "random": "0.55",
    "bbcg": "tab:blue",
    "fkm": "tab:orange",
    "bfw": "tab:green",
    "ofw": "tab:red",
    "ogd": "tab:purple",
}
SPARE_COLORS = ("tab:brown", "tab:pink", "tab:olive", "tab:cyan", "tab:gray")
FIRST_AGENT = "random"
FULL_INFO_LINESTYLE = "--"
RANDOM_LINESTYLE = ":"
RANDOM_LINE_ZORDER = 50.0
DPI = 120
MAX_SHADE = 0.6
SAME_CURVE_TOLERANCE = 1e-9
LEGEND_COLUMNS = 6


def _matplotlib() -> tuple[Any, Any, Any]:
    """(Figure, FigureCanvasAgg, to_rgb); ImportError naming the ``plot`` extra if absent."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.colors import to_rgb
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError(
            "plots need matplotlib: pip install bco_gym[plot] (or pip install matplotlib)"
        ) from error
    return Figure, FigureCanvasAgg, to_rgb


def new_figure(width: float = 7.0, height: float = 4.8) -> Any:
    """A pyplot-free Figure with an Agg canvas; ImportError naming the extra if absent."""
    figure_class, canvas_class, _ = _matplotlib()
    figure = figure_class(figsize=(width, height), layout="constrained")
    canvas_class(figure)
    return figure


def save(figure: Any, path: str | os.PathLike) -> Path:
    """Write ``figure`` as an image (format from the suffix), atomically and never through
    a symlink (:func:`bco_gym.io.write_bytes`); the parent is created.

    The image is cut to what the figure draws (``bbox_inches="tight"``), so a legend or
    tick label wider than the figure (a long agent label) is never clipped."""
    from bco_gym.io import write_bytes

    path = Path(path)
    _literal_text(figure)
    image = io.BytesIO()
    figure.savefig(
        image,
        format=path.suffix.lower().lstrip(".") or None,
        dpi=DPI,
        metadata=_no_software_metadata(path),
        bbox_inches="tight",
        pad_inches=0.05,
    )
    write_bytes(path, image.getvalue())
    return path


def _literal_text(figure: Any) -> None:
    """Every text of ``figure`` drawn as it is written: a label or a title holding ``$``
    (a user's) is not parsed as mathtext (``$\\frac$`` would fail the drawing). The
    figures write no mathtext of their own; the numbers a numeric formatter writes as
    mathtext (``10^2`` on a log axis) keep it, tick labels of names (agents) do not."""
    from matplotlib.text import Text
    from matplotlib.ticker import LogFormatter, NullFormatter, ScalarFormatter

    literal = _literal_formatter()
    numeric = (LogFormatter, NullFormatter, ScalarFormatter, literal)
    ticks = set()
    for axes in figure.axes:
        for axis in (axes.xaxis, axes.yaxis):
            if not isinstance(axis.get_major_formatter(), numeric):
                axis.set_major_formatter(literal(axis.get_major_formatter()))
            if not isinstance(axis.get_minor_formatter(), numeric):
                axis.set_minor_formatter(literal(axis.get_minor_formatter()))
            for tick in (*axis.get_major_ticks(), *axis.get_minor_ticks()):
                ticks.update((id(tick.label1), id(tick.label2)))
    for text in figure.findobj(Text):
        if id(text) not in ticks:
            text.set_parse_math(False)


def _literal(text: Any) -> str:
    """``text`` with every ``$`` escaped (mathtext shows ``\\$`` as a dollar sign)."""
    return re.sub(r"(?<!\\)\$", r"\$", str(text))


@functools.cache
def _literal_formatter() -> Any:
    """The class of a formatter showing another's tick labels with their ``$`` escaped
    (made once matplotlib is imported: it is optional)."""
    from matplotlib.ticker import Formatter

    class LiteralFormatter(Formatter):  # type: ignore[misc]
        """Another formatter's tick labels with their ``$`` escaped."""

        def __init__(self, inner: Any):
            self.inner = inner

        def __call__(self, x: float, pos: int | None = None) -> str:
            return _literal(self.inner(x, pos))

        def format_ticks(self, values: Any) -> list[str]:
            return [_literal(text) for text in self.inner.format_ticks(values)]

        def set_axis(self, axis: Any) -> None:
            self.inner.set_axis(axis)
            self.axis = axis

        def set_locs(self, locs: Any) -> None:
            self.inner.set_locs(locs)

        def get_offset(self) -> str:
            return _literal(self.inner.get_offset())

    return LiteralFormatter


def _no_software_metadata(path: Path) -> dict[str, Any] | None:
    """PNG metadata without the matplotlib version: the same results give the same bytes."""
    return {"Software": None} if path.suffix.lower() == ".png" else None


def agent_color(agent: str, seen: Sequence[str] = ()) -> str:
    """The agent's fixed colour, else the spare colour its first appearance in ``seen`` picks."""
    if agent in AGENT_COLORS:
        return AGENT_COLORS[agent]
    others = [name for name in dict.fromkeys(seen) if name not in AGENT_COLORS]
    index = others.index(agent) if agent in others else len(others)
    return SPARE_COLORS[index % len(SPARE_COLORS)]


def full_information_agent(agent: str) -> bool:
    """Whether the agent ``agent`` (any name or import path) needs gradients."""
    from bco_gym.agents import find_agent

    spec = find_agent(agent)
    return spec is not None and spec.feedback == "full"


def lighter(color: str, share: float) -> tuple[float, float, float]:
    """``color`` mixed with white, ``share`` in [0, 1) of white."""
    to_rgb = _matplotlib()[2]
    red, green, blue = (float(c) for c in np.asarray(to_rgb(color)) * (1 - share) + share)
    return red, green, blue


@dataclass(frozen=True)
class Series:
    """One line of a figure: the runs of one agent with one set of constants."""

    label: str
    agent: str
    results: list[RunResult]
    color: Any
    linestyle: str
    zorder: float
    full_information: bool


def _order(groups: dict[str, list[RunResult]]) -> list[str]:
    """Random first; agents in order of first appearance; theory constants, then by value."""
    first_seen = list(dict.fromkeys(group[0].agent for group in groups.values()))

    def key(label: str) -> tuple:
        result = groups[label][0]
        value = result.scale_value if isinstance(result.scale_value, int | float) else 0.0
        return (
            result.agent != FIRST_AGENT,
            first_seen.index(result.agent),
            result.constants != "theory",
            float(value),
            label,
        )

    return sorted(groups, key=key)


def _same_curves(first: list[RunResult], second: list[RunResult]) -> bool:
    """Whether two series hold the same regret curves on the same seeds, to SAME_CURVE_TOLERANCE.

    The tolerance is relative to the largest |regret| of the pair (two agents playing
    the same points may sum their losses in a different order).
    """
    ours = {r.seed: r.regret for r in first}
    theirs = {r.seed: r.regret for r in second}
    if ours.keys() != theirs.keys():
        return False
    for seed, curve in ours.items():
        other = theirs[seed]
        if curve.shape != other.shape:
            return False
        scale = max(float(np.abs(curve).max(initial=0)), float(np.abs(other).max(initial=0)))
        if np.abs(curve - other).max(initial=0) > SAME_CURVE_TOLERANCE * scale:
            return False
    return True


def _identical_to(groups: dict[str, list[RunResult]], labels: list[str], index: int) -> str:
    """ " (= label)" naming an earlier series with identical curves (drawn under this one)."""
    for earlier in labels[:index]:
        if _same_curves(groups[earlier], groups[labels[index]]):
            return f" (= {earlier})"
    return ""


def _solid_or_dotted(agent: str) -> str:
    """Random play is dotted: its line, drawn on top, never hides an equal curve below."""
    return RANDOM_LINESTYLE if agent == FIRST_AGENT else "-"


def series_of(results: Iterable[RunResult], seen: Sequence[str] = ()) -> list[Series]:
    """The results' series in :func:`_order`; an agent's k-th of n series is shaded lighter.

    A series whose regret curves equal an earlier one's (to a relative 1e-9: it would
    hide it) says so in its label: "fkm (= bbcg)". ``seen``: the agents whose order picks
    the spare colours (:func:`agent_color`; default the results' own), so that figures
    of several panels give an agent one colour in all of them.
    """
    groups = group_series(results)
    labels = _order(groups)
    agents = [groups[label][0].agent for label in labels]
    series = []
    for index, label in enumerate(labels):
        group = groups[label]
        agent = group[0].agent
        full = not is_bandit(group[0])  # full information or two-point
        shade = MAX_SHADE * agents[:index].count(agent) / max(1, agents.count(agent) - 1)
        series.append(
            Series(
                label=label + _identical_to(groups, labels, index),
                agent=agent,
                results=group,
                color=lighter(agent_color(agent, [*seen, *agents]), shade),
                linestyle=FULL_INFO_LINESTYLE if full else _solid_or_dotted(agent),
                zorder=1.0 if agent == FIRST_AGENT else 2.0 + index,
                full_information=full,
            )
        )
    return series


# -- titles ---------------------------------------------------------------------------------------
def _distinct(values: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(values))


def _affine_dimension(result: RunResult) -> Any:
    """d, the dimension of aff(K) (the paper's n): what the bounds and estimators use."""
    return result.problem.get("aff_dim", result.problem.get("dim", "?"))


def set_text(results: Sequence[RunResult]) -> str:
    """ "L2Ball(n=10, radius=1), d = 10" (distinct sets joined by " / ")."""
    return " / ".join(
        _distinct(f"{r.problem.get('set', r.env_id)}, d = {_affine_dimension(r)}" for r in results)
    )


def loss_text(results: Sequence[RunResult]) -> str:
    """ "linear losses (mean_norm=0.5, noise=0.5)": the family and its scalar parameters."""
    texts = []
    for result in results:
        loss = dict(result.loss)
        name = loss.pop("name", "?")
        loss.pop("digest", None)  # identifies one seed's sequence, not the family
        # sorted: a result read back from disk has its keys sorted, a fresh one does not
        items = sorted(loss.items())
        scalars = [f"{k}={_short(v)}" for k, v in items if isinstance(v, str | int | float)]
        texts.append(f"{name} losses" + (f" ({', '.join(scalars)})" if scalars else ""))
    return " / ".join(_distinct(texts))


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    text = str(value)
    return text if len(text) <= 24 else text[:21] + "..."


def run_text(results: Sequence[RunResult]) -> str:
    """ "T = 20,000, 5 seeds, constants: theory"."""
    horizons = sorted({r.horizon for r in results})
    horizon = f"{horizons[0]:,}" if len(horizons) == 1 else f"{horizons[0]:,}..{horizons[-1]:,}"
    seeds = len({r.seed for r in results})
    constants = ", ".join(_distinct(r.constants for r in results))
    return f"T = {horizon}, {seeds} seed{'s' if seeds != 1 else ''}, constants: {constants}"


#: The widest title line, in characters: a longer one is wrapped at word boundaries (a
#: one-panel figure of 6.4 inches holds about 100 characters at the titles' font size).
TITLE_WIDTH = 96


def title_of(what: str, results: Sequence[RunResult]) -> str:
    """What the figure shows; the set and losses; horizon, seeds, constants: each wrapped
    to :data:`TITLE_WIDTH` characters, so no title runs past the figure's edge."""
    lines = (what, f"{set_text(results)}, {loss_text(results)}", run_text(results))
    return "\n".join(textwrap.fill(line, TITLE_WIDTH) for line in lines)


def single_horizon(results: Sequence[RunResult], figure: str) -> int:
    """The one horizon of ``results``; ValueError naming the figure if there are several."""
    horizons = sorted({r.horizon for r in results})
    if len(horizons) != 1:
        raise ValueError(
            f"{figure}: the results must share one horizon, got {horizons}; select one "
            "(e.g. the largest) first"
        )
    return horizons[0]


def legend_outside(figure: Any, axes: Any, columns: int | None = None) -> None:
    """One legend for the figure, below the panels, so it covers no data."""
    handles, labels = axes.get_legend_handles_labels()
    if not handles:
        return
    figure.legend(
        handles,
        labels,
        loc="outside lower center",
        ncols=legend_columns(figure, labels, columns),
        fontsize="small",
        frameon=False,
    )


def legend_columns(figure: Any, labels: Sequence[str], columns: int | None = None) -> int:
    """Columns of a legend below the panels: as asked (default up to LEGEND_COLUMNS),
    fewer when the labels are long, so that a row of them fits the figure's width (a
    label is never cut; one longer than the figure widens the saved image, :func:`save`)."""
    wanted = columns or min(len(labels), LEGEND_COLUMNS)
    longest = max((len(label) for label in labels), default=1)
    # "small" text is about 8 points: a character about 0.6 of that wide, plus the handle
    width_points = figure.get_figwidth() * 72
    per_column = (longest + 5) * 8 * 0.6
    return int(max(1, min(wanted, width_points // per_column)))
