"""The engine: one run, many runs in lockstep, and the loops that play their rounds.

* :func:`~bco_gym.engine.runner.run` -- one agent on one env for one horizon and seed,
  returning a typed :class:`~bco_gym.engine.result.RunResult`;
* :func:`~bco_gym.engine.many.run_many` -- one run per seed, all in lockstep (batched
  agents and losses), each result ``same_outcome`` as ``run``'s;
* :mod:`~bco_gym.engine.loops` -- the block, lean and Gymnasium loops;
  :mod:`~bco_gym.engine.tally` -- exact loss tallies and checkpoints;
  :mod:`~bco_gym.engine.preparation` -- ids, seeds, envs and agents of a run.

The engine imports sets, losses, envs, agents and wrappers, never the sweeps, the
reports, plotting or the CLI (``docs/architecture.md``).
"""

from bco_gym.engine.many import batch_size_for, run_many, run_seed_batch
from bco_gym.engine.preparation import agent_seed_for
from bco_gym.engine.result import THEORY_EXPONENTS, RunResult
from bco_gym.engine.runner import run
from bco_gym.engine.tally import default_checkpoints

__all__ = [
    "THEORY_EXPONENTS",
    "RunResult",
    "agent_seed_for",
    "batch_size_for",
    "default_checkpoints",
    "run",
    "run_many",
    "run_seed_batch",
]
