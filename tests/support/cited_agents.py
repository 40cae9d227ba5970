"""User agents declaring their papers (``REFERENCE``), for ``bco-gym cite``'s tests."""

from __future__ import annotations

from bco_gym.agents.random import RandomAgent


class CitedAgent(RandomAgent):
    """Random play declaring a BibTeX entry of its own (braces inside a field)."""

    name = "cited"
    THEORY_DEFAULTS = False
    REFERENCE = (
        "@article{doe2024braces,\n  title = {A {Braced} Title: 50% of $x_1$},\n"
        "  author = {Doe, Jane},\n  year = {2024},\n}"
    )


class BrokenCitation(RandomAgent):
    """Random play declaring an entry whose braces do not close, and an unknown key."""

    name = "broken-citation"
    THEORY_DEFAULTS = False
    REFERENCE = ("@article{bad, title = {never closed}", "nobody2099unknown")
