"""What a run is asked besides its env, its agent and its seeds: one options object.

:func:`~bco_gym.engine.runner.run` and :func:`~bco_gym.engine.many.run_many` take the
same keyword arguments (``horizon``, ``checkpoints``, ``env_kwargs``, ``agent_kwargs``,
``constants``, ``progress``, ``fast``, ``allow_large``, ``isolate``); each gathers them
into one :class:`RunOptions` at its door, and every path below (the batched loops, the
Gymnasium loop seed by seed, a sweep cell, a failing cell) passes that one object on
instead of the keywords one by one. :func:`cell_options` reads them off a sweep cell.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunOptions:
    """The keyword arguments :func:`~bco_gym.engine.runner.run` and
    :func:`~bco_gym.engine.many.run_many` share (see ``run`` for what each means)."""

    horizon: int | None = None
    checkpoints: Sequence[int] | None = None
    env_kwargs: Mapping[str, Any] | None = None
    agent_kwargs: Mapping[str, Any] | None = None
    constants: str | None = None
    progress: bool | Callable[[int], Any] | None = False
    fast: bool | None = None
    allow_large: bool = False
    isolate: bool = False

    def keywords(self) -> dict[str, Any]:
        """The options as ``run``'s and ``run_many``'s keyword arguments."""
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}

    def but(self, **changes: Any) -> RunOptions:
        """These options with ``changes``."""
        return dataclasses.replace(self, **changes)


def cell_options(cell: Any, progress: bool | Callable[[int], Any] | None = False) -> RunOptions:
    """The options a sweep cell (:class:`~bco_gym.sweeps.cell.Cell`, or anything with its
    fields) is played with."""
    return RunOptions(
        horizon=cell.horizon,
        checkpoints=cell.checkpoints,
        env_kwargs=cell.env_kwargs,
        agent_kwargs=cell.agent_kwargs,
        constants=cell.constants,
        progress=progress,
        fast=cell.fast,
        isolate=bool(getattr(cell, "isolate", False)),
    )


__all__ = ["RunOptions", "cell_options"]
