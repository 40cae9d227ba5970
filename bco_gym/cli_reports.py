"""What ``bco-gym`` prints and writes once it has computed: one-line results, tables and
figures (atomically, never through a symlink), warnings and failed cells shown once,
and user text escaped wherever it is printed (:func:`sanitize`)."""

from __future__ import annotations

import argparse
import os
import re
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bco_gym.io import write_text


def sanitize(text: str) -> str:
    """``text`` without control characters (no terminal escape sequences)."""
    from bco_gym.reports.summary import sanitize_text

    return sanitize_text(text)


def matplotlib_missing() -> str | None:
    """None when figures can be drawn, else the one-line note saying why not."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return 'matplotlib is not installed (pip install "bco_gym[plot]"): tables only, no figure'
    return None


def regret_line(result: Any) -> str:
    """``bco-gym run``'s regret line: the regret, its comparator (exact, certified with
    its gap, or uncertified, then with the warning on a line of its own), T^(3/4), bound."""
    from bco_gym.losses.verification import UNCERTIFIED
    from bco_gym.reports.summary import UNCERTIFIED_NOTE, comparator_text

    bound = "-" if result.regret_bound is None else f"{result.regret_bound:.4g}"
    status = comparator_text([result])
    line = (
        f"regret {result.final_regret:.6g} (comparator {status})  "
        f"regret/T^(3/4) {result.final_regret / result.horizon**0.75:.4g}  bound {bound}"
    )
    return line + (f"\nwarning: {UNCERTIFIED_NOTE}" if status == UNCERTIFIED else "")


def report_failures(out: Path) -> int:
    """The failed cells recorded in ``out`` on stderr; the exit status (1 if any)."""
    from bco_gym.sweeps import load_failures

    failures = load_failures(out)
    for failure in failures:
        print(f"error: {sanitize(failure.describe())}", file=sys.stderr)
    if failures:
        print(
            f"error: {len(failures)} cell(s) failed (recorded in {out / 'failures'}); the "
            "other cells finished and are reported",
            file=sys.stderr,
        )
    return 1 if failures else 0


def report_tuning_failures(failures: Sequence[Any], sweep_dir: Path) -> int:
    """Each failed tuning cell on stderr, and where it is recorded; the exit status (1 if any)."""
    for failure in failures:
        kwargs = sorted(failure.cell.get("agent_kwargs", {}).items())
        given = ", ".join(f"{name}={value!r}" for name, value in kwargs)
        print(f"error: {sanitize(failure.describe())} (with {sanitize(given)})", file=sys.stderr)
    if failures:
        print(
            f"error: {len(failures)} tuning cell(s) failed (recorded in "
            f"{sweep_dir / 'failures'}); a value with a failed cell was not chosen",
            file=sys.stderr,
        )
    return 1 if failures else 0


def print_tuning(args: argparse.Namespace, tuning: Any, grid: Sequence[float]) -> None:
    from bco_gym.agents.registry import find_agent
    from bco_gym.reports.summary import format_column, render_text

    chosen = list(tuning.constants.items())
    theory = format_column([c.theory_value for _, c in chosen], 4)
    for i, (agent, _) in enumerate(chosen):  # an agent's own default, not a theorem's
        spec = find_agent(agent)
        if spec is not None and not spec.theory_defaults:
            theory[i] += " (default, no theorem)"
    values = format_column([c.value for _, c in chosen], 4)
    regrets = format_column([c.mean_regret for _, c in chosen], 4)
    header = ["agent", "param", "theory value", "tuned value", "mean regret (tuned)", "grid scores"]
    body = [
        [
            tuning.label(agent),
            c.param,
            theory[i],
            values[i],
            regrets[i],
            " ".join(format_column(c.scores, 3)),
        ]
        for i, (agent, c) in enumerate(chosen)
    ]
    print(
        f"{args.env}, T={args.horizon}, tuning seeds {list(tuning.tune_seeds)}, "
        f"grid {' '.join(f'{v:g}' for v in grid)}"
    )
    print(render_text(header, body))
    for agent, reason in tuning.skipped.items():
        print(f"{tuning.label(agent)}: skipped, {reason}")
    for agent, constant in chosen:
        if constant.excluded:
            left_out = ", ".join(f"{v:g}" for v in constant.excluded)
            print(
                f"{tuning.label(agent)}: {constant.param} = {left_out} left out (a cell "
                "failed; score -)"
            )


def report_warnings(results: Sequence[Any]) -> None:
    """The runs' warnings on stderr, one line per kind: messages that differ only in their
    numbers (the same cap at another T or seed) are one kind, shown once with its runs."""
    kinds: dict[str, tuple[str, list[str]]] = {}
    for result in results:
        for message in result.warnings:
            kind = re.sub(r"\d[\d.,e+-]*", "#", message)
            first, runs = kinds.setdefault(kind, (message, []))
            runs.append(f"{result.agent}/T={result.horizon}")
    for first, runs in kinds.values():
        where = ", ".join(dict.fromkeys(runs))
        text = sanitize(" ".join(first.split()))
        print(f"warning ({len(runs)} runs: {where}; shown for the first): {text}", file=sys.stderr)


# -- reports --------------------------------------------------------------------------------------
def write_figure(draw: Any, path: Path) -> str:
    """Draw with ``draw(temporary path)``, then move the figure into place atomically
    (never through a symlink); the one-line note instead when matplotlib is missing."""
    missing = matplotlib_missing()
    if missing:
        return f"no figure ({missing})"
    temporary = path.with_name(f".{path.stem}.{secrets.token_hex(6)}.tmp{path.suffix}")
    try:
        draw(temporary)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return str(path)


def report_compare(results: Sequence[Any], out: Path | None) -> None:
    """Print the compare table; write table.md, table.csv and regret.png into ``out``
    (nothing when ``out`` is None)."""
    from bco_gym.reports.summary import (
        compare_columns,
        render_csv,
        render_markdown,
        render_text,
        summarize,
    )

    rows = summarize(results)
    header, body = compare_columns(rows)
    first = results[0]
    print(
        sanitize(
            f"{first.env_id}  T={first.horizon}  seeds={sorted({r.seed for r in results})}  "
            f"loss={first.loss.get('name')}"
        )
    )
    print(render_text(header, body))
    _warn_uncertified(rows)
    if out is None:
        return
    out = Path(out)
    write_text(out / "table.md", render_markdown(header, body) + "\n")
    write_text(out / "table.csv", render_csv(rows))

    def draw(path: Path) -> None:
        from bco_gym.plotting import plot_regret

        plot_regret(results, path)

    figure = write_figure(draw, out / "regret.png")
    print(f"wrote {out / 'table.md'}, {out / 'table.csv'}, {figure}")


def _warn_uncertified(rows: Sequence[Any]) -> None:
    """Under a table, the warning when a row's comparator is uncertified."""
    from bco_gym.losses.verification import UNCERTIFIED
    from bco_gym.reports.summary import UNCERTIFIED_NOTE

    uncertified = [row.agent for row in rows if row.comparator == UNCERTIFIED]
    if uncertified:
        print(sanitize(f"warning ({', '.join(dict.fromkeys(uncertified))}): {UNCERTIFIED_NOTE}"))


def report_exponents(results: Sequence[Any], out: Path | None) -> None:
    """Print the exponents table; write exponents.md, exponents.csv and exponents.png
    into ``out`` (nothing when ``out`` is None)."""
    from bco_gym.reports.summary import (
        exponent_columns,
        fit_exponents,
        render_csv,
        render_markdown,
        render_text,
    )

    fits = fit_exponents(results)
    header, body = exponent_columns(fits)
    print(
        sanitize(
            f"{results[0].env_id}  loss={results[0].loss.get('name')}  "
            "slope: least squares of log mean regret on log T; CI: bootstrap over seeds"
        )
    )
    print(render_text(header, body))
    _warn_uncertified(fits)
    if out is None:
        return
    out = Path(out)
    write_text(out / "exponents.md", render_markdown(header, body) + "\n")
    write_text(out / "exponents.csv", render_csv(fits))

    def draw(path: Path) -> None:
        from bco_gym.plotting import plot_exponents

        plot_exponents(fits, path)

    figure = write_figure(draw, out / "exponents.png")
    print(f"wrote {out / 'exponents.md'}, {out / 'exponents.csv'}, {figure}")


def error_line(error: BaseException) -> str:
    """An exception as the one line ``bco-gym`` prints (escaped; a file error names the file)."""
    text = " ".join(str(error).split())
    if isinstance(error, OSError) and error.filename is not None:
        text = f"{error.strerror or type(error).__name__}: {error.filename!r}"
    if isinstance(error, MemoryError):
        text = f"out of memory ({text or 'MemoryError'})"
    return sanitize(text or type(error).__name__)


class WarningPrinter:
    """``warnings.showwarning`` for the CLI: each distinct warning once, on one line."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def __call__(self, message: Any, category: type[Warning], *_: Any, **__: Any) -> None:
        text = sanitize(" ".join(str(message).split()))
        if text not in self.seen:
            self.seen.add(text)
            print(f"warning: {category.__name__}: {text}", file=sys.stderr)
