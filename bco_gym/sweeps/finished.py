"""The finished cells of a sweep directory, read back: found by key whatever spelling or
label wrote them, verified (a corrupt cell is computed again, :class:`CorruptCellWarning`),
and reused only while their agent's code is the code that computed them
(:class:`StaleCellWarning`)."""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from bco_gym.agents.moved import current_identity
from bco_gym.agents.registry import current_agent_name, identity_of_result
from bco_gym.engine.result import RunResult
from bco_gym.sweeps.cell import Cell
from bco_gym.sweeps.results import CorruptResultError
from bco_gym.sweeps.store import SweepStore

FAILURE_MODES = ("raise", "record")


class CorruptCellWarning(UserWarning):
    """A finished cell's files failed verification; the cell is computed again."""


class StaleCellWarning(UserWarning):
    """Finished cells were computed by other code than their agent's current code."""


def cell_key(document: Mapping[str, Any]) -> str:
    """The key of a manifest's cell dict (for merging manifests by identity)."""
    try:
        return Cell.from_dict(document).key
    except (TypeError, ValueError):
        return json.dumps(document, sort_keys=True)


def as_stored(
    store: SweepStore, grid: Sequence[Cell]
) -> tuple[list[Cell], dict[str, dict[str, Any]]]:
    """(the grid, key -> the cell dict its result is stored under). A cell the directory
    lists already is found by its key, whatever spelling and label wrote it; in a
    directory written before identities, by its older key (then that cell is run, under
    the label asked for now). The dict of a new cell is its own."""
    try:
        stored = store.read_manifest()["spec"]["cells"] if store.manifest_path.exists() else []
    except ValueError:
        stored = []
    by_key: dict[str, tuple[Cell, dict[str, Any]]] = {}
    for document in stored:
        try:
            cell = Cell.from_dict(document)
        except (TypeError, ValueError):
            continue
        by_key[cell.key] = (cell, document)
        if cell.identity is None:  # an older cell: also found by its agent's identity now
            upgraded = _with_identity(cell)
            if upgraded is not None:
                by_key.setdefault(upgraded.key, (cell, document))
        elif current_identity(cell.identity) != cell.identity:  # a built-in agent moved since
            moved = replace(cell, identity=current_identity(cell.identity))
            by_key.setdefault(moved.key, (cell, document))
    found, documents = [], {}
    for cell in grid:
        old = by_key.get(cell.key)
        if old is not None and old[0].identity is None and cell.identity is not None:
            old = (replace(old[0], label=cell.label), old[1])
        if old is None:
            found.append(cell)
            documents[cell.key] = cell.to_dict()
        else:
            found.append(replace(old[0], label=cell.label) if cell.identity else old[0])
            documents[found[-1].key] = old[1]
    return found, documents


def _with_identity(cell: Cell) -> Cell | None:
    """An older cell with the identity of its agent (None when it no longer resolves;
    a name given since to another agent, the old "so-bgd", is read as its current one)."""
    from bco_gym.agents import find_agent

    spec = find_agent(current_agent_name(cell.agent))
    return None if spec is None else replace(cell, identity=spec.identity(cell.agent_kwargs))


def load_finished(
    store: SweepStore,
    grid: Sequence[Cell],
    documents: Mapping[str, dict[str, Any]],
    reuse_stale: bool = False,
) -> dict[str, RunResult]:
    results: dict[str, RunResult] = {}
    stale: dict[str, list[tuple[Cell, str, str]]] = {}
    unproven: dict[str, tuple[str, list[Cell]]] = {}
    digests: dict[str, tuple[str | None, str | None]] = {}
    for cell in grid:
        try:
            found = store.load(cell.key, documents[cell.key])
        except CorruptResultError as error:
            warnings.warn(f"recomputing cell {cell.key}: {error}", CorruptCellWarning, stacklevel=3)
            continue
        if found is None:
            continue
        if _another_agent(found, cell):  # e.g. saved under a name since given to another
            warnings.warn(
                f"recomputing cell {cell.key}: its stored result is of the agent now named "
                f"{found.agent!r} ({identity_of_result(found)}), not of {cell.agent!r}",
                CorruptCellWarning,
                stacklevel=3,
            )
            continue
        if cell.agent not in digests:
            digests[cell.agent] = _current_digest(cell.agent)
        before, (now, why) = found.agent_spec.get("digest"), digests[cell.agent]
        if now is None or before is None:  # nothing proves the code is the same
            why = why or f"its stored result records no code digest (agent {cell.agent!r})"
            unproven.setdefault(cell.label or cell.agent, (why, []))[1].append(cell)
            if not reuse_stale:
                continue
            note = f"StaleCellWarning: kept (reuse_stale) although unproven: {why}"
            found = replace(found, warnings=[*found.warnings, note])
        elif before != now:
            stale.setdefault(cell.label or cell.agent, []).append((cell, before, now))
            if not reuse_stale:
                continue
            note = (
                f"StaleCellWarning: kept (reuse_stale) although computed by code digest "
                f"{before}, not the agent's current {now}"
            )
            found = replace(found, warnings=[*found.warnings, note])
        results[cell.key] = labelled(found, cell.label)
    what = "kept as asked (reuse_stale)" if reuse_stale else "recomputed"
    for agent, cells_found in stale.items():
        before, now = cells_found[0][1], cells_found[0][2]
        shown = _cells_shown([c for c, _, _ in cells_found])
        warnings.warn(
            f"agent {agent!r}: {len(cells_found)} stored cell(s) of {str(store.directory)!r} "
            f"were computed by other code (digest {before}, now {now}): {shown}; {what}",
            StaleCellWarning,
            stacklevel=3,
        )
    for agent, (why, cells_found) in unproven.items():
        warnings.warn(
            f"agent {agent!r}: {len(cells_found)} stored cell(s) of {str(store.directory)!r} "
            f"cannot be shown to come from its current code: no code digest can be taken "
            f"({why}): {_cells_shown(cells_found)}; {what}",
            StaleCellWarning,
            stacklevel=3,
        )
    return results


def _cells_shown(cells_found: Sequence[Cell]) -> str:
    shown = ", ".join(f"seed {c.seed} T={c.horizon}" for c in cells_found[:8])
    return shown + (f" and {len(cells_found) - 8} more" if len(cells_found) > 8 else "")


def _another_agent(found: RunResult, cell: Cell) -> bool:
    """Whether a stored result is of another agent than the cell's: by identity where
    both record one, else (cells and results written before identities) by name."""
    recorded = current_identity((found.agent_spec or {}).get("identity"))
    path = current_identity((found.agent_spec or {}).get("import_path"))
    if cell.identity is not None and recorded is not None:
        identity = current_identity(cell.identity)
        return recorded != identity or path != identity.split("[", 1)[0]
    return cell.identity is None and recorded is None and found.agent != cell.agent


def _current_digest(agent: str) -> tuple[str | None, str | None]:
    """(the agent's code digest, why none can be taken)."""
    from bco_gym.agents import find_agent

    spec = find_agent(agent)
    if spec is None:
        return None, f"{agent!r} no longer resolves here"
    return spec.digest, spec.no_digest_reason


def labelled(result: RunResult, label: str | None) -> RunResult:
    """``result`` under ``label`` (a cell computed under another spelling)."""
    if label is None or result.agent == label:
        return result
    spec = {**result.agent_spec, "name": label} if result.agent_spec else result.agent_spec
    return replace(result, agent=label, agent_spec=spec)


__all__ = [
    "FAILURE_MODES",
    "CorruptCellWarning",
    "StaleCellWarning",
    "as_stored",
    "cell_key",
    "labelled",
    "load_finished",
]
