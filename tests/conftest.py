"""Puts ``tests/support`` (helpers and fixtures shared across the suites) on ``sys.path``,
and runs the tests marked ``slow`` first.

Scheduling: pytest-xdist hands tests to its workers in collection order, so a long test
collected last (tests/test_portable.py's children, the Ray cluster) ran alone on one core
at the end while the other core idled. Run first, the long tests overlap the thousands of
short ones (longest first, as in LPT scheduling). The order within each group is kept, so
a module's tests stay together (its module-scoped fixtures are built once per worker).
"""

import sys
from pathlib import Path

SUPPORT = Path(__file__).parent / "support"
if str(SUPPORT) not in sys.path:
    sys.path.insert(0, str(SUPPORT))


def pytest_collection_modifyitems(session, config, items):
    """The ``slow`` tests first, in their collection order; then the others, in theirs."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
