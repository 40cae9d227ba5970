"""An installed distribution declaring agents in the entry-point group bco_gym.agents: a
real ``plugpkg-0.3.1.dist-info`` (METADATA, top_level.txt, entry_points.txt) on sys.path."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

PACKAGE = '''
"""A plugin package."""
from user_agents import Jitter

class PlugJitter(Jitter):
    """Jitter shipped by a plugin."""
    name = "plugjitter"
'''


def install_plugin(root: Path, monkeypatch) -> None:
    """Write the package and its metadata under ``root`` and put ``root`` on sys.path.

    Declares ``plugjitter = plugpkg:PlugJitter`` and a broken ``brokenplug`` (its
    module does not exist). The registry's caches are reset here and by the caller's
    ``monkeypatch`` undo (see :func:`forget_plugin`).
    """
    from bco_gym.agents import declared, registry

    package = root / "plugpkg"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(PACKAGE))
    info = root / "plugpkg-0.3.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plugpkg\nVersion: 0.3.1\n")
    (info / "top_level.txt").write_text("plugpkg\n")
    (info / "entry_points.txt").write_text(
        "[bco_gym.agents]\nplugjitter = plugpkg:PlugJitter\nbrokenplug = plugpkg_gone:Nothing\n"
    )
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setattr(declared, "_PACKAGES", None)
    registry.refresh_plugins()


def forget_plugin() -> None:
    from bco_gym.agents import registry

    registry.refresh_plugins()
    sys.modules.pop("plugpkg", None)
