"""Generate the documentation pages that must follow the code.

One page per registered ``BCO-*`` id (from ``gym.registry``, the make-function
signature and the docstrings of the env and set classes), one per agent of
``bco_gym.agents.AGENTS``, one per loss family of ``bco_gym.losses.FAMILIES``, one per
script of ``examples/``, and the report of the main job. Nothing here is a hand-kept
table: an id, agent or family added to the code gets its page at the next build.

As a Sphinx extension (``extensions = ["bco_pages"]``) it writes the pages into
``docs/generated/`` when the builder starts. :func:`write_pages` is the same work
callable without Sphinx (``tests/test_docs.py`` uses it). The pages themselves are
written by ``env_pages``, ``catalog_pages`` (agents, loss families), ``example_pages``
(gallery, report) and ``api_pages``. Files are rewritten only when
their content changes, and the whole generation is skipped when a digest of its inputs
(package, examples, this extension, the report) is unchanged, so the html and doctest
builds of ``make docs`` generate once.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the page modules beside this one

from api_pages import api_page, public_modules
from catalog_pages import agent_page, loss_page
from env_pages import env_ids, env_page, render_picture
from example_pages import REPORT, example_scripts, gallery_page, report_page, run_example
from page_text import slug, write_if_changed

DOCS = Path(__file__).resolve().parent.parent
ROOT = DOCS.parent
GENERATED = DOCS / "generated"


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
