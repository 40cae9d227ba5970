"""The documentation generator: a page for every env id, agent, loss family and example.

Builds the generated page sources into a temporary directory (without pictures, agent
runs or example runs, which ``make docs`` adds) and checks them; the whole Sphinx build
is ``make docs``, run by ``.ci/run``.
"""

from __future__ import annotations

import fnmatch
import re
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import bco_gym
from bco_gym.agents import AGENTS
from bco_gym.losses import FAMILIES

DOCS = Path(__file__).resolve().parent.parent / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

import agent_math  # noqa: E402
import api_pages  # noqa: E402
import bco_docstrings  # noqa: E402
import bco_pages  # noqa: E402
import catalog_pages  # noqa: E402
import env_pages  # noqa: E402
import example_pages  # noqa: E402
import page_text  # noqa: E402

PROBE_ID = "BCO-DocsProbe-v0"


@pytest.fixture(scope="module")
def probe_id():
    """An id registered after import (as another module's would be), on Simplex(3)."""
    gym.register(
        id=PROBE_ID,
        entry_point="bco_gym.envs.registration:make_simplex",
        kwargs={"n": 3},
        max_episode_steps=None,
    )
    yield PROBE_ID
    del gym.registry[PROBE_ID]


STALE = "envs/BCO-Removed-v0.rst"


@pytest.fixture(scope="module")
def generated(tmp_path_factory, probe_id):
    """The pages written into a directory that held a page of an id no longer registered."""
    outdir = tmp_path_factory.mktemp("generated")
    (outdir / STALE).parent.mkdir(parents=True)
    (outdir / STALE).write_text("a page from an earlier generation")
    return outdir, bco_pages.write_pages(outdir, pictures=False, measure=False, figures=False)


def bco_ids() -> list[str]:
    return [env_id for env_id in gym.registry if env_id.startswith("BCO-")]


def test_every_registered_id_has_a_page(generated, probe_id):
    outdir, done = generated
    assert set(done.envs) == set(bco_ids())
    assert probe_id in done.envs and set(bco_gym.ENV_IDS) <= set(done.envs)
    for env_id, page in done.envs.items():
        text = (outdir / page).read_text()
        assert text.splitlines()[2] == env_id, page
        assert f'gym.make("{env_id}")' in text
        for section in ("Action Space", "Observation Space", "Rewards", "Episode End"):
            assert f"\n{section}\n" in text, (env_id, section)
        assert "Version History" in text and ".. doctest::" in text


def test_env_page_arguments_follow_the_make_function(generated, probe_id):
    outdir, done = generated
    text = (outdir / done.envs["BCO-NuclearBall-v0"]).read_text()
    for keyword in ("rows", "cols", "horizon", "loss", "feedback", "on_infeasible", "atol"):
        assert f"``{keyword}``" in text
    assert "``'completion'``" in text  # the make-function's default loss, read from code


def test_every_agent_and_loss_family_has_a_page(generated):
    outdir, done = generated
    assert set(done.agents) == set(AGENTS)
    assert set(done.losses) == set(FAMILIES)
    for name, page in done.agents.items():
        text = (outdir / page).read_text()
        assert f".. autoclass:: {page_text.public_path(AGENTS[name], 'bco_gym.agents')}" in text
        assert "Update rule" in text
    for name, page in done.losses.items():
        assert f'``"{name}"``' in (outdir / page).read_text()


def test_every_example_and_public_module_has_a_page(generated):
    outdir, done = generated
    assert set(done.gallery) == {path.name for path in example_pages.example_scripts()}
    assert set(done.api) == set(api_pages.public_modules())
    assert {"bco_gym.sets", "bco_gym.losses", "bco_gym.agents", "bco_gym.plotting"} <= set(done.api)
    for script, page in done.gallery.items():
        assert f"literalinclude:: /../examples/{script}" in (outdir / page).read_text()


def test_stale_pages_are_removed(generated):
    outdir, done = generated
    assert not (outdir / STALE).exists()
    assert {p.relative_to(outdir).as_posix() for p in outdir.rglob("*") if p.is_file()} == (
        done.files
    )


def toctree_globs(page: Path) -> list[str]:
    """The entries of the toctrees of a MyST page."""
    entries = []
    for block in re.findall(r"```\{toctree\}\n(.*?)```", page.read_text(), re.S):
        entries += [line.strip() for line in block.splitlines() if line.strip()[:1] not in ":"]
    return [entry for entry in entries if entry]


def test_every_generated_page_is_reachable_from_the_landing_page(generated):
    _, done = generated
    reachable, frontier = set(), ["index"]
    globs = []
    while frontier:
        name = frontier.pop()
        reachable.add(name)
        path = DOCS / f"{name}.md"
        if not path.exists():
            continue
        for entry in toctree_globs(path):
            if "*" in entry:
                globs.append(entry)
            elif entry not in reachable:
                frontier.append(entry)
    pages = [*done.envs.values(), *done.agents.values(), *done.losses.values()]
    pages += [*done.gallery.values(), *done.api.values(), done.report]
    for page in pages:
        document = "generated/" + page.rsplit(".", 1)[0]
        assert document in reachable or any(fnmatch.fnmatch(document, g) for g in globs), page
    for static in ("mathematics", "choosing", "environments", "agents", "losses", "gallery"):
        assert static in reachable


def test_typeset_update_rules_name_registered_agents():
    assert set(agent_math.UPDATE_RULES) <= set(AGENTS)


def test_pictures_are_drawn_at_the_default_size_or_the_smallest_that_renders(probe_id):
    picture, sizes = env_pages.render_picture(probe_id)  # Simplex(3) renders as it is
    assert picture.startswith(b"\x89PNG") and sizes == {}
    for env_id in ("BCO-Simplex-v0", "BCO-NuclearBall-v0"):
        sizes = env_pages.drawable_size(env_id)
        env = gym.make(env_id, **sizes)
        assert "rgb_array" in env.unwrapped.metadata["render_modes"]
        if sizes:  # the default does not render: a plane figure of a small size does
            assert env.unwrapped.set.aff_dim == 2


def test_plain_text_maths_becomes_valid_rst():
    clean = bco_docstrings.clean
    assert clean("|f_t(x)| <= M and (S, *shape)") == r"\|f_t(x)\| <= M and (S, \*shape)"
    assert clean("keep ``a|b`` and *emphasis* as written") == (
        "keep ``a|b`` and *emphasis* as written"
    )
    # A formula indented under its sentence becomes a literal block, kept verbatim.
    assert clean("so there\n    F(x) = |r(x)|\nthen") == (
        "so there\n\n::\n\n    F(x) = |r(x)|\n\nthen"
    )
    assert clean("Oracles.\n* LMO: a\n  sort") == "Oracles.\n\n* LMO: a\n  sort"


def test_simple_table_rows_keep_their_columns():
    row = "L1Ball(n)  argmax |g_i|, O(n)      sort, O(n log n)"
    escaped = bco_docstrings.escape_table_row(row)
    assert escaped == "L1Ball(n)  argmax \\|g_i\\|, O(n)    sort, O(n log n)"
    assert escaped.index("sort") == row.index("sort")


def test_table_cells_do_not_open_lists():
    assert catalog_pages.no_list("D. Garber and B. Kretzu") == r"D\. Garber and B. Kretzu"
    assert catalog_pages.rate(0.75) == ":math:`O(T^{3/4})`"
    assert catalog_pages.number(32561.7) == "32,560" and catalog_pages.number(0.0104) == "0.0104"


def test_mathjax_is_served_from_the_built_site_not_a_cdn():
    """The pages load MathJax from _static/ (sphinx-mathjax-offline), so the mathematics
    is typeset when the site is read offline; the package ships the script it names."""
    import importlib

    conf = (DOCS / "conf.py").read_text()
    assert '"sphinx-mathjax-offline"' in conf
    assert not re.search(r"^\s*mathjax_path\s*=", conf, re.MULTILINE)  # no CDN override
    offline = importlib.import_module("sphinx-mathjax-offline")
    static = Path(offline.__file__).parent / "static" / "mathjax"
    assert (static / "tex-chtml.js").is_file()
    assert (static / "output" / "chtml" / "fonts" / "woff-v2").is_dir()
