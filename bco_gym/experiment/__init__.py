"""Experiments: single runs, resumable sweeps on serial/process/Ray backends, tuning.

* :func:`run` — one agent on one env for one horizon and seed -> :class:`RunResult`;
* :func:`run_many` — one run per seed, all in lockstep (batched agents and losses),
  each result ``same_outcome`` as :func:`run`'s;
* :func:`sweep` — the grid envs x agents x horizons x seeds into a directory of
  JSON + NPZ results (atomic, resumable), on the ``serial``, ``process`` or ``ray``
  backend; :func:`load_sweep` reads one back;
* :func:`tune` — grid search of each agent's free constant on tuning seeds;
* :func:`summarize` / :func:`fit_exponents` — the tables of the ``bco-gym`` CLI.
"""

from pathlib import Path

from bco_gym.experiment.many import batch_size_for, run_many, run_seed_batch
from bco_gym.experiment.results import (
    CorruptResultError,
    SweepMismatchError,
    load_result,
    save_result,
)
from bco_gym.experiment.runner import (
    THEORY_EXPONENTS,
    RunResult,
    agent_seed_for,
    default_checkpoints,
    run,
)
from bco_gym.experiment.store import SweepLockedError, SweepStore
from bco_gym.experiment.summary import AgentSummary, ExponentFit, fit_exponents, summarize
from bco_gym.experiment.sweep import BACKENDS, Cell, cells, run_cells, sweep
from bco_gym.experiment.tuning import Tuning, load_tuned, save_tuned, tune


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
    "THEORY_EXPONENTS",
    "AgentSummary",
    "Cell",
    "CorruptResultError",
    "ExponentFit",
    "RunResult",
    "SweepLockedError",
    "SweepMismatchError",
    "SweepStore",
    "Tuning",
    "agent_seed_for",
    "batch_size_for",
    "cells",
    "default_checkpoints",
    "fit_exponents",
    "load_result",
    "load_sweep",
    "load_tuned",
    "run",
    "run_cells",
    "run_many",
    "run_seed_batch",
    "save_result",
    "save_tuned",
    "summarize",
    "sweep",
    "tune",
]
