"""Cells that failed: an agent that raised, returned NaN or the wrong shape, or played
outside K fails its own cell, and the sweep goes on.

A batch of seeds is played together (:func:`~bco_gym.engine.many.run_many`); when it
raises, each of its cells is played alone (:func:`run_cell_or_failure`), so the cells
that work still give their results (the same as in a batch: every row is
``same_outcome`` as its run alone) and each failing one gives a :class:`CellFailure`
naming the agent, seed, round and error. The sweep writes it to
``failures/<cell key>.json`` in its directory (:func:`save_failure`), where
:func:`load_failures` reads it back; a cell that later succeeds loses its record.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bco_gym.engine.result import RunResult
from bco_gym.io import write_json
from bco_gym.sweeps.results import read_json

FAILURES_DIR = "failures"


@dataclasses.dataclass(frozen=True)
class CellFailure:
    """A sweep cell whose run raised.

    Attributes:
        key: the cell's key (its file name stem in the sweep directory).
        env_id, agent, horizon, seed: the cell's.
        round: how many rounds the agent had completed when the run failed (so the
            failing round is ``round`` in 0-based numbering); None when the failure
            came before the agent was built.
        error: the exception as "Type: message".
        cell: the cell as a dict (``Cell.to_dict()``).
    """

    key: str
    env_id: str
    agent: str
    horizon: int
    seed: int
    round: int | None
    error: str
    cell: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def label(self) -> str:
        """What the agent is called in reports (its cell's label, else its name)."""
        return str(self.cell.get("label") or self.agent)

    def describe(self) -> str:
        """One line: "agent 'x' seed 3 (BCO-Ball-v0, T=100) failed in round 7: ..."."""
        return f"{self.where()}: {self.error}"

    def where(self) -> str:
        """The cell and round, without the error: "agent 'x' seed 3 (BCO-Ball-v0, T=100)
        failed in round 7"."""
        when = "before its first round" if self.round is None else f"in round {self.round}"
        return (
            f"agent {self.label!r} seed {self.seed} ({self.env_id}, T={self.horizon}) failed {when}"
        )

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> CellFailure:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in document.items() if k in names})


class CellFailureWarning(UserWarning):
    """Some cells of a sweep failed (``failures="record"``); the others finished."""


def run_cell_or_failure(cell: Any) -> RunResult | CellFailure:
    """``cell.run()``, or the :class:`CellFailure` saying where and why it raised.

    The agent is built by a factory that keeps it, so its round counter tells the
    failing round (an isolated cell's agent is built in its own process, which reports
    the round with the error); the result of a run that succeeds is exactly
    ``cell.run()``'s.
    """
    from bco_gym.agents import resolve_agent
    from bco_gym.engine.options import cell_options
    from bco_gym.engine.runner import run

    built: list[Any] = []
    isolate = bool(getattr(cell, "isolate", False))
    try:
        spec = resolve_agent(cell.agent)
        if getattr(cell, "label", None) is not None:
            spec = spec.with_label(cell.label)

        def keeping(problem: Any, **overrides: Any) -> Any:
            agent = spec.factory(problem, **overrides)
            built.append(agent)
            return agent

        return run(
            cell.env_id,
            spec if isolate else dataclasses.replace(spec, factory=keeping),
            seed=cell.seed,
            **cell_options(cell).keywords(),
        )
    except Exception as error:  # the cell fails, the sweep goes on
        rounds = _rounds_of(built[-1]) if built else getattr(error, "failed_round", None)
        return CellFailure(
            key=cell.key,
            env_id=cell.env_id,
            agent=cell.agent,
            horizon=cell.horizon,
            seed=cell.seed,
            round=rounds,
            error=_error_text(error),
            cell=cell.to_dict(),
        )


def _error_text(error: BaseException) -> str:
    """ "Type: message" of the agent's own error (without the run's "agent 'x' seed s
    failed in round t" the cell's record says already)."""
    from bco_gym.errors import AgentError

    if isinstance(error, AgentError) and error.__cause__ is not None:
        error = error.__cause__
    text = str(error)
    prefix = getattr(error, "agent_failure_prefix", None)
    if prefix and text.startswith(prefix):
        text = text[len(prefix) :]
    return f"{type(error).__name__}: {text}"


def _rounds_of(agent: Any) -> int | None:
    rounds = getattr(agent, "_round", None)
    if rounds is None:
        rounds = getattr(agent, "stats", {}).get("rounds")
    return None if rounds is None else int(rounds)


def failure_path(directory: str | os.PathLike, key: str) -> Path:
    return Path(directory) / FAILURES_DIR / f"{key}.json"


def save_failure(directory: str | os.PathLike, failure: CellFailure) -> Path:
    """Write ``failure`` to ``directory/failures/<key>.json`` (atomically)."""
    path = failure_path(directory, failure.key)
    path.parent.mkdir(exist_ok=True)
    write_json(path, failure.to_dict())
    return path


def clear_failure(directory: str | os.PathLike, key: str) -> None:
    """Remove the failure record of cell ``key`` (after it succeeded), if any."""
    failure_path(directory, key).unlink(missing_ok=True)


def load_failures(directory: str | os.PathLike) -> list[CellFailure]:
    """The failed cells recorded in the sweep directory ``directory``, sorted by key."""
    folder = Path(directory) / FAILURES_DIR
    if not folder.is_dir():
        return []
    return [
        CellFailure.from_dict(read_json(path))
        for path in sorted(folder.glob("*.json"))
        if path.is_file()
    ]
