"""Experiments: the public entry points of the engine, the sweeps and the reports.

A façade on the top floor (beside the CLI): it re-exports what users call, so
``from bco_gym.experiment import run, run_many, sweep`` keeps working whatever the
packages below are shaped like.

* :func:`run` — one agent on one env for one horizon and seed -> :class:`RunResult`;
* :func:`run_many` — one run per seed, all in lockstep (batched agents and losses),
  each result ``same_outcome`` as :func:`run`'s;
* :func:`sweep` — the grid envs x agents x horizons x seeds into a directory of
  JSON + NPZ results (atomic, resumable), on the ``serial``, ``process`` or ``ray``
  backend; :func:`load_sweep` reads one back;
* :func:`tune` — grid search of each agent's free constant on tuning seeds (failed cells
  recorded; :class:`TuningFailedError` when an agent has no working value);
* :func:`summarize` / :func:`fit_exponents` / :func:`paired_table` — the tables of the
  ``bco-gym`` CLI and the reports.

Where the code lives: :mod:`bco_gym.engine`, :mod:`bco_gym.sweeps`,
:mod:`bco_gym.reports` (``docs/architecture.md``).
"""

from bco_gym.engine import (
    THEORY_EXPONENTS,
    RunResult,
    agent_seed_for,
    batch_size_for,
    default_checkpoints,
    run,
    run_many,
    run_seed_batch,
)
from bco_gym.reports import AgentSummary, ExponentFit, fit_exponents, paired_table, summarize
from bco_gym.sweeps import (
    BACKENDS,
    Cell,
    CorruptResultError,
    SweepLockedError,
    SweepMismatchError,
    SweepStore,
    Tuning,
    TuningFailedError,
    cells,
    load_result,
    load_sweep,
    load_tuned,
    run_cells,
    save_result,
    save_tuned,
    sweep,
    tune,
)

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
    "TuningFailedError",
    "agent_seed_for",
    "batch_size_for",
    "cells",
    "default_checkpoints",
    "fit_exponents",
    "load_result",
    "load_sweep",
    "load_tuned",
    "paired_table",
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
