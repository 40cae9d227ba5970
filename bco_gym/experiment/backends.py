"""Sweep backends (``serial``, ``process``, ``ray``), kept importable under the contract's
name ``bco_gym.experiment.backends``; the code lives in :mod:`bco_gym.sweeps.backends`."""

from bco_gym.sweeps.backends import (
    BACKENDS,
    MAX_REQUESTED_BATCH_SIZE,
    batches,
    check_batch_size,
    import_ray,
    run_batch,
    run_on,
    watch_parent,
    worker_count,
)

#: The former name of :data:`MAX_REQUESTED_BATCH_SIZE`, kept for code that imports it here.
MAX_BATCH_SIZE = MAX_REQUESTED_BATCH_SIZE

__all__ = [
    "BACKENDS",
    "MAX_BATCH_SIZE",
    "MAX_REQUESTED_BATCH_SIZE",
    "batches",
    "check_batch_size",
    "import_ray",
    "run_batch",
    "run_on",
    "watch_parent",
    "worker_count",
]
