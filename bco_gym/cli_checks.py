"""What ``bco-gym`` checks before it computes or writes anything.

Every check raises :class:`UsageError` (exit code 2, a one-line message naming the
value and what is allowed). The limits refuse sizes that could only exhaust memory or
time before anything is allocated: ``MAX_HORIZON`` rounds, ``MAX_SEEDS`` seeds,
``MAX_POINTS`` grid or horizon points, ``MAX_CELLS`` runs per sweep.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bco_gym.engine.tally import MAX_HORIZON  # noqa: F401  (the CLI's limits, in one place)
from bco_gym.io import claim_directory, read_marker
from bco_gym.sweeps.sweep import MAX_SEED, MAX_SEEDS  # noqa: F401

MAX_POINTS = 1_000
MAX_CELLS = 100_000


class UsageError(ValueError):
    """A command-line value that is not allowed (reported with exit code 2)."""


# -- paths ----------------------------------------------------------------------------------
def check_output_directory(
    path: Path, flag: str = "--out", outputs: Sequence[str] = (), sweep: bool = True
) -> Path:
    """``path`` if it is, or can be created as, a writable directory; else UsageError.

    ``outputs`` are file names the command will (re)place inside it: none may be a
    directory. With ``sweep``, an existing directory must be empty or hold a sweep
    (a ``manifest.json``). Nothing is created.
    """
    if os.path.lexists(path):
        if not path.is_dir():
            raise UsageError(f"{flag} {str(path)!r} exists and is not a directory")
        if not os.access(path, os.W_OK | os.X_OK):
            raise UsageError(f"{flag} {str(path)!r} is not writable")
        if sweep and not (path / "manifest.json").exists():
            strangers = sorted(
                entry.name
                for entry in path.iterdir()
                if entry.name != ".lock" and not entry.name.endswith(".tmp")
            )
            if strangers:
                raise UsageError(
                    f"{flag} {str(path)!r} is not empty and holds no sweep (found "
                    f"{', '.join(strangers[:5])}); pick a new or empty directory"
                )
        for name in outputs:
            target = path / name
            if target.is_dir() and not target.is_symlink():
                raise UsageError(f"{flag} {str(path)!r}: {name} is a directory; cannot write it")
        return path
    _check_creatable(path, flag)
    return path


#: The file that marks a directory as written by one ``bco-gym`` command (JSON
#: ``{"command": name}``); :func:`check_command_directory` reads it.
OWNER_FILE = ".bco-gym-owner.json"


def check_command_directory(
    path: Path,
    command: str,
    *,
    flag: str = "--out",
    outputs: Sequence[str] = (),
    shared: Sequence[str] = (),
    recognise: Callable[[Path], bool] | None = None,
) -> Path:
    """``path`` if ``command`` may write there, else UsageError; nothing is created.

    Allowed: a directory that does not exist yet (and can be created), an empty one, or
    one that is ``command``'s own: its :data:`OWNER_FILE` names ``command`` (written by
    :func:`claim_command_directory`), or, for directories written before the marker
    existed, ``recognise(path)`` is true. Any other non-empty directory is refused, as
    ``compare`` refuses a non-empty directory without a sweep, so a command never
    overwrites files it did not write. Entries named in ``shared`` (what other
    ``bco-gym`` commands put in a common parent, e.g. ``compare/`` under ``results/``)
    do not make a directory another's; ``outputs`` are file names the command will
    (re)place inside it: none may be a directory.
    """
    check_output_directory(path, flag, outputs=outputs, sweep=False)
    if not path.is_dir():
        return path
    owner = _owner_of(path, flag)
    if owner is not None and owner != command:
        raise UsageError(
            f"{flag} {str(path)!r} was written by `bco-gym {owner}`, not `bco-gym {command}`; "
            "pick a new or empty directory"
        )
    if owner is None and not (recognise is not None and recognise(path)):
        ignored = {OWNER_FILE, ".lock", *shared}
        strangers = sorted(
            entry.name
            for entry in path.iterdir()
            if entry.name not in ignored and not entry.name.endswith(".tmp")
        )
        if strangers:
            raise UsageError(
                f"{flag} {str(path)!r} is not empty and was not written by `bco-gym {command}` "
                f"(found {', '.join(strangers[:5])}); pick a new or empty directory"
            )
    return path


def claim_command_directory(path: Path, command: str) -> Path:
    """Create ``path`` if needed and mark it as ``command``'s (:data:`OWNER_FILE`).

    Call it after :func:`check_command_directory`, before writing anything else there.
    """
    return claim_directory(path, OWNER_FILE, {"command": command})


def _owner_of(path: Path, flag: str) -> str | None:
    """The command named by ``path``'s :data:`OWNER_FILE`, None without one."""
    try:
        document = read_marker(path, OWNER_FILE)
        if document is None:
            return None
        owner = document["command"]
        if not isinstance(owner, str):
            raise ValueError(f"command is {owner!r}")
    except (OSError, ValueError, KeyError) as error:
        raise UsageError(
            f"{flag} {str(path)!r}: its {OWNER_FILE} is unreadable ({_one_line(error)}); "
            "delete it or pick a new directory"
        ) from None
    return owner


def check_output_file(path: Path, flag: str = "--out", suffix: str = ".json") -> Path:
    """``path`` if a file with that suffix can be written there; else UsageError."""
    if path.suffix != suffix:
        raise UsageError(f"{flag} {str(path)!r} must end in {suffix}")
    if path.is_dir():
        raise UsageError(f"{flag} {str(path)!r} is a directory; give a file name")
    if os.path.lexists(path.parent):
        check_output_directory(path.parent, flag, sweep=False)
    else:
        _check_creatable(path.parent, flag)
    return path


def _check_creatable(path: Path, flag: str) -> None:
    ancestor = path.absolute().parent
    while not os.path.lexists(ancestor):
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise UsageError(f"{flag} {str(path)!r}: {str(ancestor)!r} is not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise UsageError(
            f"{flag} {str(path)!r}: cannot create it, {str(ancestor)!r} is not writable"
        )


def check_input_directory(path: Path) -> Path:
    if not path.is_dir():
        raise UsageError(f"{str(path)!r} is not a directory written by compare or exponents")
    return path


# -- sizes ----------------------------------------------------------------------------------
def check_cell_count(count: int) -> int:
    if count > MAX_CELLS:
        raise UsageError(
            f"the sweep has {count} runs (agents x horizons x seeds), more than the limit "
            f"of {MAX_CELLS}; split it"
        )
    return count


# -- env and agents -------------------------------------------------------------------------
def check_env_id(env_id: str) -> str:
    """``env_id`` if it is one of bco_gym's ids (``module:`` prefixes allowed)."""
    import bco_gym  # noqa: F401  (registers the ids)
    from bco_gym.envs import ENV_IDS

    if env_id.split(":", 1)[-1] not in ENV_IDS:
        raise UsageError(f"unknown env id {env_id!r}; valid ids: {', '.join(ENV_IDS)}")
    return env_id


def check_agent_names(names: Sequence[str]) -> list[str]:
    """``names`` if each resolves (a built-in, registered or entry-point name, or an
    import path ``package.module:ClassName``); else UsageError naming the ones that do
    not and listing what is allowed."""
    from bco_gym.agents import resolve_agent
    from bco_gym.agents.registry import AgentLoadError, allowed_forms

    unknown = []
    for name in names:
        try:
            resolve_agent(name)
        except (ValueError, TypeError) as error:
            said = isinstance(error, AgentLoadError) or any(c in name for c in ":[]")
            if said or "plugin" in str(error):
                raise UsageError(_one_line(error)) from None
            unknown.append(name)
    if unknown:
        raise UsageError(
            f"unknown agent name(s) {', '.join(map(repr, unknown))}; {allowed_forms()}"
        )
    return list(names)


def check_instance(
    env_id: str,
    env_kwargs: dict[str, Any],
    horizon: int | None,
    agents: Sequence[str],
    agent_kwargs: dict[str, dict[str, Any]],
    allow_large: bool | None = None,
) -> None:
    """Build the env and every agent once (nothing is played) to refuse bad kwargs early;
    first refuse, from the keywords alone, an env too large to build (``allow_large``:
    ``bco-gym run --allow-large``; the other commands have no override)."""
    import gymnasium as gym

    from bco_gym.agents import make_agent
    from bco_gym.engine.memory import ALLOW_LARGE, NO_OVERRIDE, check_planned_memory

    extra = {} if horizon is None else {"horizon": horizon}
    override = ALLOW_LARGE if allow_large is not None else NO_OVERRIDE
    try:
        check_planned_memory(env_id, {**env_kwargs, **extra}, 1, bool(allow_large), override)
    except ValueError as error:
        raise UsageError(_one_line(error)) from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            env = gym.make(env_id, **extra, **env_kwargs)
    except (TypeError, ValueError, gym.error.Error, MemoryError) as error:
        raise UsageError(
            f"{env_id} refuses --env-kwargs {json.dumps(env_kwargs)}: {_one_line(error)}"
        ) from None
    try:
        for agent in agents:
            _check_agent(make_agent, agent, env, agent_kwargs.get(agent, {}))
    finally:
        env.close()


def _check_agent(make_agent: Any, agent: str, env: Any, overrides: dict[str, Any]) -> None:
    from bco_gym.agents import resolve_agent
    from bco_gym.errors import AgentError

    problem = env.unwrapped.problem
    factory = resolve_agent(agent).factory
    if getattr(factory, "requires_projection", False) and not problem.set.has_projection:
        raise UsageError(projection_message(agent, problem))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            make_agent(agent, env, **overrides)
    except (TypeError, ValueError, ImportError, MemoryError) as error:
        given = f" with {json.dumps(overrides)}" if overrides else ""
        raise UsageError(f"agent {agent!r}{given}: {_one_line(error)}") from None
    except AgentError as error:  # its own __init__ raised: named, on one line
        raise UsageError(_one_line(error)) from None


def projection_message(agent: str, problem: Any) -> str:
    """Why ``agent`` cannot run on this set, and what can (agents of the env's feedback)."""
    from bco_gym.agents import AGENTS

    alternatives = [
        name
        for name, cls in AGENTS.items()
        if not getattr(cls, "requires_projection", False)
        and getattr(cls, "feedback", "bandit") in ("bandit", problem.feedback)
        and not name.startswith("sb3-")
    ]
    how = (
        'install the QP solver: pip install "bco_gym[qp]"'
        if _needs_qp(problem)
        else "this set has no projection"
    )
    return (
        f"agent {agent!r} needs a Euclidean projection onto {problem.set!r}: {how}; "
        f"or pick a projection-free agent: {', '.join(alternatives)}"
    )


def _needs_qp(problem: Any) -> bool:
    """Whether the set's projection is the optional QP one (absent: Clarabel is missing)."""
    return getattr(getattr(problem.set, "base", problem.set), "projection_extra", None) == "qp"


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


# -- tuned constants ------------------------------------------------------------------------
def load_tuned_checked(path: Path) -> Any:
    """The tuning in ``path`` (a file written by ``bco-gym tune``), else UsageError.

    Beyond the file's format, every entry is checked: a known agent, the parameter its
    ``SCALE_PARAM`` (the one constant ``tune`` tunes), a finite positive number.
    """
    from bco_gym.sweeps.tuning import load_tuned

    try:
        tuning = load_tuned(path)
    except ValueError as error:
        raise UsageError(f"--tuned: {_one_line(error)}") from None
    for agent, constant in tuning.constants.items():
        _check_tuned_entry(path, agent, constant)
    return tuning


def _check_tuned_entry(path: Path, agent: str, constant: Any) -> None:
    import math

    from bco_gym.agents.registry import resolve_agent

    where = f"--tuned {str(path)!r}: agent {agent!r}"
    try:
        spec = resolve_agent(agent)
    except (ValueError, TypeError, ImportError) as error:
        raise UsageError(f"{where} is not an agent: {_one_line(error)}") from None
    if spec.scale_param is None:
        raise UsageError(f"{where} has no free constant (SCALE_PARAM is None); nothing to tune")
    if constant.param != spec.scale_param:
        raise UsageError(
            f"{where}: param {constant.param!r} is not its scale parameter "
            f"{spec.scale_param!r} (the one constant `bco-gym tune` tunes)"
        )
    if not (math.isfinite(constant.value) and constant.value > 0):
        raise UsageError(f"{where}: {constant.param}={constant.value!r} must be finite and > 0")


# -- sweeps of another command --------------------------------------------------------------
def check_sweep_kind(path: Path, command: str, flag: str = "--out") -> Path:
    """``path`` unless it holds a sweep of another kind than ``command`` writes, else
    UsageError: the tuning runs of ``tune`` (every cell's constants labelled "custom")
    and the sweeps of ``compare``/``exponents`` (constants from theory, defaults or a
    tuned file) never share a directory, so ``plot`` never tables one beside the other.
    A directory without a readable manifest is left to the other checks."""
    from bco_gym.sweeps.store import SweepStore

    if not (path / "manifest.json").is_file():
        return path
    try:
        cells = SweepStore(path).read_manifest()["spec"]["cells"]
    except ValueError:
        return path
    tuning = bool(cells) and all(cell.get("constants") == "custom" for cell in cells)
    if command == "tune" and cells and not tuning:
        labels = sorted({str(cell.get("constants")) for cell in cells})
        raise UsageError(
            f"{flag} {str(path)!r} holds a compare or exponents sweep (constants "
            f"{', '.join(labels)}), not tuning runs; give tune a directory of its own"
        )
    if command != "tune" and tuning:
        raise UsageError(
            f"{flag} {str(path)!r} holds the tuning runs of `bco-gym tune`, not a "
            f"{command} sweep; pick another directory"
        )
    return path


def check_grid(
    env_id: str,
    env_kwargs: dict[str, Any],
    horizon: int,
    agents: Sequence[str],
    grid: Sequence[float],
) -> None:
    """UsageError unless every agent with a scale constant builds, with finite parameters,
    at both ends of ``tune``'s grid (nothing is played)."""
    import gymnasium as gym

    from bco_gym.agents import make_agent
    from bco_gym.agents.registry import resolve_agent

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = gym.make(env_id, horizon=horizon, **env_kwargs)
    try:
        for agent in agents:
            param = resolve_agent(agent).scale_param
            for value in (grid[0], grid[-1]) if param else ():
                try:
                    _check_agent(make_agent, agent, env, {param: value})
                except UsageError as error:
                    raise UsageError(f"--grid {grid[0]:g}:{grid[-1]:g}: {error}") from None
    finally:
        env.close()
