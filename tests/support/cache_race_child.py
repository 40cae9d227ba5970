"""One process of tests/agents/test_kernel_cache.py's race on numba's cache.

``python cache_race_child.py FOLDER ROLE LIMIT MODULE...``: for each ``MODULE`` in turn
(a file of FOLDER defining ``doubled(x) = x[0] * 2``, compiled with numba's cache in
``FOLDER/cache``), imports it and calls ``doubled``.

* ``first`` (a float64 array) and ``second`` (an int64 array) save two signatures of one
  function at once, in the order that loses one's code under numba's unlocked cache: both
  read the empty index, ``first`` writes its index, ``second`` writes its index and its
  data file, ``first`` writes its data file over ``second``'s. Each step waits for the
  other's flag file in FOLDER (``MODULE.ROLE-STEP``), and leaves its own; ``first`` waits
  at most LIMIT seconds (under a lock it waits in vain), ``second`` up to two minutes.
* ``reader`` calls each module's ``doubled`` on both arrays, from the cache, and prints
  the results and the cache hits as JSON, by module.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from pathlib import Path

folder, role, limit, modules = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4:]
os.environ["NUMBA_CACHE_DIR"] = str(folder / "cache")
sys.path.insert(0, str(folder))

import numpy as np  # noqa: E402
from numba.core import caching  # noqa: E402

OTHER = {"first": "second", "second": "first"}
PATIENCE = 120.0


def flag(module: str, step: str) -> None:
    (folder / f"{module}.{role}-{step}").touch()


def wait(module: str, step: str, seconds: float = 0.0) -> None:
    path = folder / f"{module}.{OTHER[role]}-{step}"
    end = time.monotonic() + (seconds or (limit if role == "first" else PATIENCE))
    while not path.exists() and time.monotonic() < end:
        time.sleep(0.01)


def choreographed() -> None:
    """numba's index and data writes, with the flags and waits of the module docstring."""
    index_file = caching.IndexDataCacheFile
    save, load_index = index_file.save, index_file._load_index
    save_index, save_data = index_file._save_index, index_file._save_data
    saving: set[str] = set()

    def module_of(self) -> str:  # type: ignore[no-untyped-def]
        return self._index_name.split(".")[0]  # "race_locked.doubled-4.py311.nbi"

    def save_entry(self, key, data):  # type: ignore[no-untyped-def]
        saving.add(module_of(self))
        flag(module_of(self), "saving")
        return save(self, key, data)

    def read_index(self):  # type: ignore[no-untyped-def]
        overloads = load_index(self)
        if module_of(self) in saving:
            flag(module_of(self), "read-index")
            wait(module_of(self), "read-index")
        return overloads

    def write_index(self, overloads):  # type: ignore[no-untyped-def]
        if role == "second":
            wait(module_of(self), "wrote-index")
        save_index(self, overloads)
        flag(module_of(self), "wrote-index")

    def write_data(self, name, data):  # type: ignore[no-untyped-def]
        if role == "first":
            wait(module_of(self), "wrote-data")
        save_data(self, name, data)
        flag(module_of(self), "wrote-data")

    index_file.save, index_file._load_index = save_entry, read_index
    index_file._save_index, index_file._save_data = write_index, write_data


if role == "reader":
    found = {}
    for module in modules:
        doubled = importlib.import_module(module).doubled
        values = [float(doubled(np.array([3]))), float(doubled(np.array([3.0])))]
        found[module] = {"values": values, "hits": sum(doubled.stats.cache_hits.values())}
    print(json.dumps(found))
else:
    choreographed()
    for module in modules:
        doubled = importlib.import_module(module).doubled
        if role == "second":
            # first is inside its save: under a lock, second's save now waits for it to end
            wait(module, "saving", PATIENCE)
            doubled(np.array([3]))
        else:
            doubled(np.array([3.0]))
