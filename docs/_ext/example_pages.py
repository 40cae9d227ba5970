"""The gallery (one page per script of ``examples/``) and the main job's report."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from page_text import heading, slug

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = ROOT / "examples"
REPORT = ROOT / "results" / "report.md"

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


def report_page(outdir: Path, generated: Any) -> str:
    """``results/report.md`` with its images (written through ``generated.write``), or
    how to produce it."""
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
