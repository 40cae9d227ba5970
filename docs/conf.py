"""Sphinx configuration of the bco_gym documentation (``make docs``)."""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(DOCS.parent))

import bco_gym  # noqa: E402

project = "bco_gym"
author = "the bco_gym developers"
copyright = "2026, the bco_gym developers"
release = bco_gym.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax 3 served from the built site (_static/mathjax/), not from a CDN: the pages
    # read offline show typeset mathematics. The package sets mathjax_path and copies the
    # scripts and fonts when the build finishes.
    "sphinx-mathjax-offline",
    "sphinx.ext.doctest",
    "sphinx.ext.viewcode",
    "bco_pages",
    "bco_docstrings",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
templates_path: list[str] = []

# -- cross-references: every internal one must resolve --------------------------------------
nitpicky = True
# No intersphinx: the build machine reaches package registries only, so inventories of
# Python, NumPy and Gymnasium cannot be fetched. References to their types are listed
# here, narrowly, instead of being resolved (see bco_docstrings.EXTERNAL for the list).
from bco_docstrings import nitpick_ignores  # noqa: E402

nitpick_ignore, nitpick_ignore_regex = nitpick_ignores()

# -- autodoc ----------------------------------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
# Our API reference shows our docstrings; Gymnasium's (on reset/step/render) are theirs.
autodoc_inherit_docstrings = False
autodoc_default_options = {"show-inheritance": True}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_custom_sections = [("Stats", "params_style"), ("Class attributes", "params_style")]
napoleon_use_rtype = False
add_module_names = False
python_display_short_literal_types = True

# -- MyST ---------------------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# -- doctest ------------------------------------------------------------------------------------
doctest_global_setup = "import gymnasium as gym\nimport numpy as np\nimport bco_gym\n"

# -- HTML ---------------------------------------------------------------------------------------
html_theme = "furo"
html_title = f"bco_gym {release}"
html_static_path: list[str] = []
html_theme_options = {"navigation_with_keys": True}
