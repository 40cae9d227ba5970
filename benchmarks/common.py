"""Shared pieces of the benchmarks: CPU timing, result rows, JSON and markdown output.

Times are CPU seconds of this process (``time.process_time``) unless a row says
otherwise: the benchmark machine is a shared 2-core one, where another process's load
changes wall-clock times by tens of percent but CPU time much less. Every ratio is of two
measurements taken in the same process run, one beside the other. BLAS is pinned to one
thread (``run_all.py`` sets the environment before numpy loads): a threaded BLAS on a
busy 2-core machine mostly waits for the other thread.
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
    """

    benchmark: str
    name: str
    value: float
    unit: str
    target: str = ""
    met: bool | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def cells(self) -> list[str]:
        verdict = {True: "met", False: "MISSED", None: ""}[self.met]
        return [
            self.benchmark,
            self.name,
            f"{_figure(self.value)} {self.unit}",
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
    header = ["benchmark", "measured", "value", "target", "verdict"]
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
