"""Fingerprints of a few whole runs, pinned from the NumPy path (``BCO_GYM_KERNELS=off``).

``python tests/engine/pinned_runs.py`` prints the JSON that ``data/pinned_runs.json`` holds;
it was written from the code before the speed work of issue 18 (second round: the
interval-regret tracker, the adversary's chunk draws, the one-pass comparator of the block
path), so ``test_pinned_runs.py`` checks those changes moved no bit of any result.
A fingerprint is the SHA-256 of every float of the play a result reports (losses,
comparator, regret), with the final regret beside it in hex for a reader, and apart the
SHA-256 of its interval regrets (adaptive, dynamic, per length, switching) with their
values. The JSON keeps, instead of those values, ``intervals_before``: the values from
before the ball's interval regrets took their closed form (test_pinned_runs.py says why).

Each fingerprint also keeps the run's curves (cumulative loss, comparator, regret at the
checkpoints, in hex), and the file keeps the ``machine`` it was pinned on
(:func:`bco_gym.portable.machine_signature`): on a machine of another signature the runs
are checked to 1e-12 relatively instead of bit for bit (docs/performance.md, "Results
that travel"). ``python tests/engine/pinned_runs.py --write`` pins again in place, keeping
``intervals_before``.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import sys
from typing import Any

import numpy as np

#: The pinned fingerprints.
PINNED_FILE = pathlib.Path(__file__).parent / "data" / "pinned_runs.json"
#: (env id, agent, feedback, loss, horizon, seeds): every loop the NumPy path has (the
#: per-round lean loop, BBCG's block loop, two-point, full information) over three chunks
#: of the losses (4096 rounds each) so chunk boundaries and open tree blocks are crossed.
CASES: tuple[tuple[str, str, str, str, int, tuple[int, ...]], ...] = (
    ("BCO-Ball-v0", "fkm", "bandit", "linear", 9000, (0, 1)),
    ("BCO-Ball-v0", "bbcg", "bandit", "linear", 9000, (0, 1)),
    ("BCO-Ball-v0", "ofw", "full", "linear", 9000, (2,)),
    ("BCO-Simplex-v0", "bfw", "bandit", "linear-switching", 9000, (3,)),
    ("BCO-L1Ball-v0", "ogd", "full", "linear-drift", 9000, (4,)),
    ("BCO-Hypercube-v0", "fkm2", "two-point", "linear", 9000, (5,)),
    ("BCO-Ball-v0", "bbcg", "bandit", "linear-switching", 9000, (6,)),
)
#: Cases played by the compiled kernels (``BCO_GYM_KERNELS=on``), pinned from the kernels
#: themselves; a case pinned on both paths has the same fingerprints on both (the ball's
#: norm is the pairwise sum of the squares in NumPy and in the kernels alike).
KERNEL_CASES: tuple[tuple[str, str, str, str, int, tuple[int, ...]], ...] = (
    ("BCO-Ball-v0", "fkm", "bandit", "linear", 9000, (0, 1)),
    ("BCO-Ball-v0", "ofw", "full", "linear-switching", 9000, (2,)),
    ("BCO-Simplex-v0", "bfw", "bandit", "linear", 9000, (3,)),
)


def fingerprint(result: Any) -> dict[str, Any]:
    """SHA-256 of the result's reported floats of the play (losses, comparator, regret),
    its final regret in hex, and apart the interval regrets: their SHA-256 and their
    values in hex (:func:`interval_values`)."""
    digest = hashlib.sha256()
    for array in (
        result.cumulative_loss,
        result.comparator_loss,
        result.regret,
        result.round_losses,
    ):
        digest.update(np.ascontiguousarray(array, dtype=np.float64).tobytes())
    values = interval_values(result)
    intervals = hashlib.sha256(json.dumps(values, sort_keys=True).encode())
    return {
        "sha256": digest.hexdigest(),
        "final_regret": float(result.final_regret).hex(),
        "intervals_sha256": intervals.hexdigest(),
        "intervals": values,
        "curves": {name: [float(v).hex() for v in getattr(result, name)] for name in CURVES},
    }


#: The curves a fingerprint keeps beside its hashes, for the check to 1e-12.
CURVES = ("cumulative_loss", "comparator_loss", "regret")


def interval_values(result: Any) -> dict[str, Any]:
    """The result's adaptive, dynamic and interval regrets, every float in hex."""
    interval = {k: v for k, v in result.interval_regret.items()}
    return json.loads(
        json.dumps(
            {
                "adaptive_regret": float(result.adaptive_regret).hex(),
                "dynamic_regret": float(result.dynamic_regret).hex(),
                "interval_regret": interval,
            },
            sort_keys=True,
            default=lambda v: float(v).hex(),
        )
    )


def case_key(case: tuple[Any, ...]) -> str:
    env_id, agent, feedback, loss, horizon, seeds = case
    return f"{env_id} {agent} {feedback} {loss} T={horizon} seeds={list(seeds)}"


def fingerprints(case: tuple[Any, ...]) -> list[dict[str, Any]]:
    """The fingerprints of ``run_many`` over the case's seeds (one per seed)."""
    from bco_gym.experiment import run_many

    env_id, agent, feedback, loss, horizon, seeds = case
    results = run_many(
        env_id, agent, list(seeds), horizon=horizon, env_kwargs={"feedback": feedback, "loss": loss}
    )
    return [fingerprint(result) for result in results]


def pinned() -> dict[str, Any]:
    """Every case's fingerprints, keyed by mode and case, and the machine's signature."""
    from bco_gym.portable import machine_signature

    found: dict[str, Any] = {"machine": machine_signature()}
    for mode, cases in (("off", CASES), ("on", KERNEL_CASES)):
        os.environ["BCO_GYM_KERNELS"] = mode
        found.update({f"{mode}: {case_key(case)}": fingerprints(case) for case in cases})
    return found


def write(path: pathlib.Path = PINNED_FILE) -> None:
    """Pin again into ``path``: every fingerprint, each run's ``intervals_before`` kept."""
    before = json.loads(path.read_text())
    found = pinned()
    for key, runs in found.items():
        if key == "machine":
            continue
        for run, old in zip(runs, before[key], strict=True):
            run["intervals_before"] = old["intervals_before"]
            del run["intervals"]
    path.write_text(json.dumps(found, indent=1) + "\n")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
    else:
        print(json.dumps(pinned(), indent=1))
