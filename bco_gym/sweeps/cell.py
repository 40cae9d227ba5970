"""One cell of a sweep: everything that determines one run's result, and its key."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from bco_gym.engine.options import RunOptions, cell_options
from bco_gym.engine.result import RunResult
from bco_gym.engine.runner import run
from bco_gym.io import name_digest

IDENTITY_FIELDS = ("label", "identity")
#: The most seeds the CLI and suite files accept for one command or scenario.
MAX_SEEDS = 10_000
#: The largest seed (numpy's generators take any non-negative int; the CLI, int64's).
MAX_SEED = 2**63 - 1


@dataclass(frozen=True)
class Cell:
    """One run of a sweep: everything that determines its result.

    ``agent`` is the spelling a worker resolves (a name, an import path, a variant
    ``NAME[key=value,...]``); ``identity`` is the agent's identity with ``agent_kwargs``
    (:meth:`~bco_gym.agents.registry.AgentSpec.identity`) and ``label`` what its
    results are called. ``constants`` labels where the agent's constants come from
    ("theory", "tuned", "custom"); ``checkpoints`` None means the runner's default;
    ``fast`` is passed to :func:`~bco_gym.engine.runner.run`.

    The key of a cell with an identity depends on the identity, never on the spelling
    or the label: every spelling of an agent finds the same cells. Cells written before
    identities existed (no ``identity``) keep the key they had.
    """

    env_id: str
    agent: str
    horizon: int
    seed: int
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    agent_kwargs: dict[str, Any] = field(default_factory=dict)
    constants: str = "theory"
    checkpoints: tuple[int, ...] | None = None
    fast: bool | None = None
    label: str | None = None
    identity: str | None = None
    isolate: bool = False

    def to_dict(self) -> dict[str, Any]:
        document = asdict(self)
        document["checkpoints"] = None if self.checkpoints is None else list(self.checkpoints)
        for name in IDENTITY_FIELDS:  # absent, as in the cells written before them
            if document[name] is None:
                del document[name]
        if not self.isolate:  # absent, so that a cell played in-process keeps its key
            del document["isolate"]
        return document

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> Cell:
        values = dict(document)
        if values.get("checkpoints") is not None:
            values["checkpoints"] = tuple(values["checkpoints"])
        return cls(**values)

    @property
    def key(self) -> str:
        """A file-name-safe id: readable fields plus a digest of the whole cell (with an
        identity: of every field but the spelling, the label and the keyword arguments,
        which the identity holds)."""
        document = self.to_dict()
        document.pop("label", None)
        name = self.agent
        if self.identity is not None:
            for field_name in ("agent", "agent_kwargs"):
                del document[field_name]
            name = self.identity.split("[", 1)[0].rsplit(":", 1)[-1]
        digest = name_digest(document, 10)
        readable = f"{self.env_id}_{name}_T{self.horizon}_s{self.seed}"
        return f"{re.sub(r'[^A-Za-z0-9._-]+', '-', readable)}_{digest}"

    def spec(self) -> Any:
        """The agent's AgentSpec, carrying the cell's label."""
        from bco_gym.agents import resolve_agent

        spec = resolve_agent(self.agent)
        return spec if self.label is None else spec.with_label(self.label)

    def run(self, progress: bool | None = False) -> RunResult:
        """Compute the cell: :func:`~bco_gym.engine.runner.run` with its options."""
        return run(self.env_id, self.spec(), seed=self.seed, **self.options(progress).keywords())

    def options(self, progress: bool | None = False) -> RunOptions:
        """The options the cell is played with (:func:`~bco_gym.engine.options.cell_options`)."""
        return cell_options(self, progress)


__all__ = ["IDENTITY_FIELDS", "MAX_SEED", "MAX_SEEDS", "Cell"]
