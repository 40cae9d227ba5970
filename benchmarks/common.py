"""Shared pieces of the benchmarks: the interleaved harness, result rows, JSON and markdown.

Times are CPU seconds of this process (``time.process_time``) unless a row says
otherwise: the benchmark machine is a shared 2-core one, where another process's load
changes wall-clock times by tens of percent but CPU time much less. BLAS is pinned to one
thread (``run_all.py`` sets the environment before numpy loads): a threaded BLAS on a
busy 2-core machine mostly waits for the other thread.

Every ratio comes from :func:`interleaved`: the calls of both sides take turns (A, B, A,
B, ...) for a number of repeats, each repeat gives one ratio of the two sides' times
measured next to each other, and the figure is printed as the median of those ratios
with their least and greatest, ``median [min, max]`` (:class:`Spread`), beside the
machine's load average over the measurement (:class:`Load`). A figure whose interval is
wide was measured while something else ran; the load beside it says how much.
"""

from __future__ import annotations

import json
import math
import os
import platform
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "out"
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def pin_blas_threads() -> None:
    """One BLAS thread (must run before numpy is imported to take effect)."""
    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, "1")


@dataclass(frozen=True)
class Spread:
    """The median of repeated figures with their least and greatest: ``median [min, max]``."""

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, values: Iterable[float]) -> Spread:
        ordered = sorted(values)
        if not ordered:
            raise ValueError("Spread.of needs at least one value, got none")
        middle = len(ordered) // 2
        median = (
            ordered[middle] if len(ordered) % 2 else 0.5 * (ordered[middle - 1] + ordered[middle])
        )
        return cls(median, ordered[0], ordered[-1])

    def scaled(self, factor: float) -> Spread:
        """The same spread times a positive ``factor`` (e.g. seconds to microseconds)."""
        return Spread(self.median * factor, self.low * factor, self.high * factor)

    def __str__(self) -> str:
        return f"{_figure(self.median)} [{_figure(self.low)}, {_figure(self.high)}]"


@dataclass(frozen=True)
class Load:
    """The 1-minute load average when a measurement started and when it ended."""

    start: float
    end: float

    def __str__(self) -> str:
        return f"load {self.start:.1f}-{self.end:.1f}"


def load_average() -> float:
    """The machine's 1-minute load average (nan where the OS does not report one)."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan


@dataclass
class Timings:
    """What :func:`interleaved` measured: every repeat's CPU seconds of each call."""

    seconds: dict[str, list[float]]
    results: dict[str, Any]
    load: Load

    def spread(self, name: str, *, minus: float = 0.0) -> Spread:
        """The spread of one call's seconds (less ``minus``, e.g. a comparator's time)."""
        return Spread.of(value - minus for value in self.seconds[name])

    def ratio(
        self,
        numerator: str,
        denominator: str,
        *,
        minus: tuple[float, float] = (0.0, 0.0),
        scale: float = 1.0,
    ) -> Spread:
        """Repeat by repeat, ``scale * (numerator - minus[0]) / (denominator - minus[1])``.

        Each repeat's two times were measured next to each other, so each ratio is of
        two figures taken under the same load; the spread is over the repeats.
        """
        pairs = zip(self.seconds[numerator], self.seconds[denominator], strict=True)
        return Spread.of(scale * (a - minus[0]) / (b - minus[1]) for a, b in pairs)


def interleaved(calls: dict[str, Callable[[], Any]], repeats: int) -> Timings:
    """CPU seconds of each call over ``repeats`` rounds, the calls taking turns.

    Taking turns (A, B, A, B, ...) exposes every call to the same spells of load from
    the rest of the machine; every repeat's time is kept, so a ratio can be reported
    as the median over repeats with its range (:meth:`Timings.ratio`). The load
    average is read before the first call and after the last.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be a positive integer, got {repeats!r}")
    seconds: dict[str, list[float]] = {name: [] for name in calls}
    results: dict[str, Any] = {}
    start = load_average()
    for _ in range(repeats):
        for name, call in calls.items():
            cpu, _, results[name] = cpu_seconds(call)
            seconds[name].append(cpu)
    return Timings(seconds, results, Load(start, load_average()))


@dataclass
class Row:
    """One measured figure beside its target.

    Attributes:
        benchmark: the benchmark number and name, e.g. "0 peer".
        name: what was measured.
        value: the figure (a ratio, seconds, rounds/s, ...).
        unit: how to read ``value`` ("x", "us/round", "MB", ...).
        target: the target in words ("<= 1.5"), or "" for a figure without one.
        met: whether the target is met (None without a target).
        detail: the raw measurements behind the figure.
        spread: the median [min, max] over interleaved repeats (``value`` is its median),
            or None for a figure measured once (a memory peak, a regret).
        load: the load average over the measurement, or None.
    """

    benchmark: str
    name: str
    value: float
    unit: str
    target: str = ""
    met: bool | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    spread: Spread | None = None
    load: Load | None = None

    @classmethod
    def measured(
        cls,
        benchmark: str,
        name: str,
        spread: Spread,
        unit: str,
        load: Load,
        target: str = "",
        met: bool | None = None,
        detail: dict[str, Any] | None = None,
    ) -> Row:
        """A row whose figure is the median of ``spread``, measured under ``load``."""
        return cls(benchmark, name, spread.median, unit, target, met, detail or {}, spread, load)

    def figure(self) -> str:
        """``median [min, max] unit`` (or the single value and its unit)."""
        shown = str(self.spread) if self.spread is not None else _figure(self.value)
        return f"{shown} {self.unit}"

    def cells(self) -> list[str]:
        verdict = {True: "met", False: "MISSED", None: ""}[self.met]
        return [
            self.benchmark,
            self.name,
            self.figure(),
            "" if self.load is None else str(self.load),
            self.target,
            verdict,
        ]


def _figure(value: float) -> str:
    if not math.isfinite(value):
        return str(value)
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    return f"{value:#.3g}"


def cpu_seconds(call: Callable[[], Any]) -> tuple[float, float, Any]:
    """(CPU seconds, wall seconds, result) of one call."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # theory parameters capped at small T
        cpu, wall = time.process_time(), time.perf_counter()
        result = call()
        return time.process_time() - cpu, time.perf_counter() - wall, result


def best_cpu_seconds(call: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """The least CPU time over ``repeats`` calls, and the last call's result."""
    best, result = math.inf, None
    for _ in range(repeats):
        seconds, _, result = cpu_seconds(call)
        best = min(best, seconds)
    return best, result


def interleaved_best(
    calls: dict[str, Callable[[], Any]], repeats: int
) -> tuple[dict[str, float], dict[str, Any]]:
    """The least CPU time of each call over ``repeats`` rounds, the calls taking turns.

    Taking turns (A, B, A, B, ...) exposes every call to the same spells of load from
    the rest of the machine, and the minimum keeps each call's least disturbed run.
    Returns (name -> seconds, name -> the last result).
    """
    best = dict.fromkeys(calls, math.inf)
    results: dict[str, Any] = {}
    for _ in range(repeats):
        for name, call in calls.items():
            seconds, _, results[name] = cpu_seconds(call)
            best[name] = min(best[name], seconds)
    return best, results


def table(rows: Sequence[Row]) -> str:
    """The rows as a markdown table."""
    header = ["benchmark", "measured", "median [min, max]", "load", "target", "verdict"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    import numpy as np
    import scipy

    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "load_average": None if load is None else [round(x, 2) for x in load],
        "blas_threads": {name: os.environ.get(name) for name in THREAD_VARIABLES},
        "clock": "time.process_time (CPU seconds of the benchmark process)",
    }


def write_json(name: str, rows: Iterable[Row], extra: dict[str, Any] | None = None) -> Path:
    """benchmarks/out/<name>.json with the rows, the machine and ``extra``."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.json"
    payload = {"rows": [asdict(row) for row in rows], "machine": machine(), **(extra or {})}
    path.write_text(json.dumps(payload, indent=2, default=_plain) + "\n")
    return path


def _plain(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def verdict(value: float, *, at_most: float | None = None, at_least: float | None = None) -> bool:
    """Whether ``value`` meets the bound."""
    if at_most is not None and not value <= at_most:
        return False
    return not (at_least is not None and not value >= at_least)
