"""Sweeps: grids of runs computed in batches into resumable, verified directories.

* :func:`~bco_gym.sweeps.sweep.sweep` / :func:`~bco_gym.sweeps.sweep.run_cells` -- the
  grid envs x agents x horizons x seeds, on the ``serial``, ``process`` or ``ray``
  backend (:mod:`~bco_gym.sweeps.backends`);
* :mod:`~bco_gym.sweeps.store` -- a sweep's directory: manifest, lock, cells;
  :mod:`~bco_gym.sweeps.results` -- one result as JSON + NPZ, written atomically and
  verified when read; :func:`load_sweep` reads a directory back;
* :mod:`~bco_gym.sweeps.failures` -- a cell whose agent raises, returns NaN or the
  wrong shape, or plays outside K fails alone (:class:`CellFailure`,
  :func:`load_failures`), the other cells finish;
* :func:`~bco_gym.sweeps.tuning.tune` -- grid search of each agent's free constant.

The sweeps import the engine and the floors below it, never the reports, plotting or
the CLI (``docs/architecture.md``).
"""

from __future__ import annotations

from pathlib import Path

from bco_gym.engine.result import RunResult
from bco_gym.sweeps.failures import CellFailure, CellFailureWarning, load_failures
from bco_gym.sweeps.results import (
    CorruptResultError,
    SweepMismatchError,
    load_result,
    save_result,
)
from bco_gym.sweeps.store import SweepLockedError, SweepStore
from bco_gym.sweeps.sweep import BACKENDS, Cell, cells, run_cells, sweep
from bco_gym.sweeps.tuning import Tuning, TuningFailedError, load_tuned, save_tuned, tune


def load_sweep(directory: str | Path) -> list[RunResult]:
    """The finished results of the sweep in ``directory``, in the manifest's cell order.

    Cells not computed yet are left out; a cell whose files fail verification raises
    :class:`CorruptResultError` naming it (never dropped silently); a manifest that is
    not one raises :class:`SweepMismatchError`.
    """
    store = SweepStore(directory)
    pairs = []
    for document in store.read_manifest()["spec"]["cells"]:
        try:
            cell = Cell.from_dict(document)
        except (TypeError, ValueError) as error:
            raise SweepMismatchError(
                f"{str(store.manifest_path)!r} lists a malformed cell ({error}); "
                "not a bco_gym sweep"
            ) from None
        pairs.append((cell.key, cell.to_dict()))
    return store.load_all(pairs)


__all__ = [
    "BACKENDS",
    "Cell",
    "CellFailure",
    "CellFailureWarning",
    "CorruptResultError",
    "SweepLockedError",
    "SweepMismatchError",
    "SweepStore",
    "Tuning",
    "TuningFailedError",
    "cells",
    "load_failures",
    "load_result",
    "load_sweep",
    "load_tuned",
    "run_cells",
    "save_result",
    "save_tuned",
    "sweep",
    "tune",
]
