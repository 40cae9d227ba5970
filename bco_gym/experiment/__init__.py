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
    SweepMismatchError,
    SweepStore,
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
from bco_gym.experiment.summary import AgentSummary, ExponentFit, fit_exponents, summarize
from bco_gym.experiment.sweep import BACKENDS, Cell, cells, run_cells, sweep
from bco_gym.experiment.tuning import Tuning, load_tuned, save_tuned, tune


def load_sweep(directory: str | Path) -> list[RunResult]:
    """The finished results of the sweep in ``directory``, in the manifest's cell order."""
    store = SweepStore(directory)
    spec = store.read_manifest()["spec"]
    return store.load_all(Cell.from_dict(cell).key for cell in spec["cells"])


__all__ = [
    "BACKENDS",
    "THEORY_EXPONENTS",
    "AgentSummary",
    "Cell",
    "ExponentFit",
    "RunResult",
    "SweepMismatchError",
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
