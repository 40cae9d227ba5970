"""Puts ``tests/support`` (helpers and fixtures shared across the suites) on ``sys.path``."""

import sys
from pathlib import Path

SUPPORT = Path(__file__).parent / "support"
if str(SUPPORT) not in sys.path:
    sys.path.insert(0, str(SUPPORT))
