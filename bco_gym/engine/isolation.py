"""An agent in its own process: it receives only its feedback and sends back only its plays.

``run(..., isolate=True)``, ``run_many(..., isolate=True)`` and ``bco-gym bench --isolate``
play the agent through :class:`IsolatedAgents`: a child process (a fresh interpreter
running :data:`CHILD_COMMAND`) builds the agent there from its import path, its keyword
arguments and the :class:`~bco_gym.problem.Problem` (the set is public), one agent per
seed of the batch, and plays them. Each round the child receives, for every seed at once
(one message per round however many seeds the batch holds), only what the agent's
feedback entitles it to (:mod:`.feedback`: the losses and ``t``; the gradients under full
feedback; both losses under two-point feedback) and sends back only the plays. The losses,
the env, its seed and the comparator never enter the child: an agent that searches the
garbage collector or walks the stack finds only its own process. The results equal the
in-process run's bit for bit (the child plays S single agents as
:class:`~.rows.RowAgents` does, with the same seeds, observations and feedback).

Oracle calls are counted by the set the agent was given (its ``lmo``, ``lmo_many``,
``project`` and ``project_many``, wrapped on the agent's own copy of the set; the
outermost call counts, ``lmo_many`` and ``project_many`` one per row), not read from the
agent's ``stats``. An agent that computes an oracle's answer without calling the set (or
calls its class's method directly) is not counted; no other count is possible in a
process the agent controls.

Failures fail the agent's cells, never the caller: an exception in the agent's code
comes back with its type (ValueError and TypeError keep theirs, anything else is an
:class:`~bco_gym.errors.AgentError`) naming the seed and the round; a child that dies
(a crash, ``os._exit``, a signal), sends what was not asked for (a play of the wrong size,
bytes that are not the protocol), or does not answer within :data:`ROUND_TIMEOUT` seconds
raises an :class:`~bco_gym.errors.AgentError` saying which. The child is killed when the
run ends, however it ends.

Protocol. The child reads the parent's messages on its stdin and answers on a private
copy of its stdout (what the agent prints goes to stderr). Each message is a 4-byte tag,
an 8-byte little-endian length and the payload. Parent to child: ``INIT`` (a pickle: the
parent's ``sys.path``, the agent's import path and keyword arguments, the Problem, S);
``SEED`` (JSON: the S agent seeds, :func:`~.preparation.agent_seed_for` of the env seeds,
never the env seeds, and the feedback the rounds will carry); ``PLAY`` (round t as an
int64, then round t - 1's feedback as raw float64 arrays: losses (S,); gradients
(S, *shape) under full feedback; both losses (S, 2) under two-point); ``DONE`` (the last
round's feedback); ``EXIT``. Child to parent, never unpickled (the child runs the user's
code): ``OKAY`` and ``STAT`` (JSON of bounded size, checked), ``PLAY`` (raw float64 plays
of exactly the expected size), ``FAIL`` (JSON: the row, the round, the exception's kind,
type and message).

Memory. While a child runs, the parent process is non-dumpable on Linux
(:mod:`~bco_gym.engine.protection`). The child's side is
:mod:`~bco_gym.engine.isolation_child`.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bco_gym.engine.feedback import ENTITLED
from bco_gym.engine.protection import protect, unprotect

#: Seconds the parent waits for the child to start and build the agent.
START_TIMEOUT = 300.0
#: Seconds the parent waits for any later answer of the child (a round's plays, a reset).
ROUND_TIMEOUT = 300.0
#: The largest JSON answer (OKAY, STAT, FAIL) the parent reads, in bytes.
MAX_JSON_BYTES = 4 * 2**20
#: The protocol's version: a child of another bco_gym (an upgrade during a run) refuses.
PROTOCOL = 1
HEADER = struct.Struct("<4sQ")
#: What the child runs (:func:`bco_gym.engine.isolation_child.child_main`).
CHILD_COMMAND = "from bco_gym.engine.isolation_child import child_main; child_main()"
ROUND = struct.Struct("<q")
FEEDBACKS = tuple(ENTITLED)


class IsolatedAgents:
    """S agents of one spec playing in a child process, seen as one batched agent.

    Args:
        spec: the agent's :class:`~bco_gym.agents.registry.AgentSpec` (importable by path).
        problem: the Problem the agents are built for.
        rows: S, the number of runs (one agent each).
        overrides: keyword arguments over the spec's own.
        label: the agent's label in messages.
        seeds: the env seeds of the rows (in messages only; the child never sees them).
    """

    supports_blocks = False

    def __init__(
        self,
        spec: Any,
        problem: Any,
        rows: int,
        *,
        overrides: Mapping[str, Any] | None = None,
        label: str | None = None,
        seeds: Sequence[int] | None = None,
    ):
        check_importable(spec)
        self.spec = spec
        self.problem = problem
        self.horizon = problem.horizon
        self.batch_size = int(rows)
        self.name = label or spec.name
        self.SCALE_PARAM = spec.scale_param
        self.seeds = list(seeds) if seeds is not None else [None] * self.batch_size
        self.failed_row: int | None = None
        self.failed_round: int | None = None
        #: CPU seconds the child spent from the reset to the end of the run (Linux, read
        #: from /proc by this process, not reported by the child; 0.0 elsewhere).
        self.child_cpu_seconds = 0.0
        self._cpu_at_reset = 0.0
        self._round = 0
        self._pending = b""
        self._final: list[dict[str, Any]] | None = None
        self._shape = tuple(problem.set.shape)
        self._action_shape = (2, *self._shape) if problem.feedback == "two-point" else self._shape
        self._child = _Child(self._describe)
        try:
            kwargs = {**dict(spec.kwargs), **dict(overrides or {})}
            document = {
                "protocol": PROTOCOL,
                "sys_path": list(sys.path),
                "import_path": spec.import_path,
                "kwargs": kwargs,
                "problem": problem,
                "rows": self.batch_size,
            }
            self._child.send(b"INIT", _pickled(document, problem))
            built = self._answer(b"OKAY", "building the agent", timeout=START_TIMEOUT)
        except BaseException:
            self.close()
            raise
        self.built = _checked_built(built, self._describe)
        self.feedback = self._entitlement()
        self._params = self.built["params"]
        self._bound = self.built["regret_bound"]

    # -- what the engine reads ------------------------------------------------------------
    def labelled(self, spec: Any) -> Any:
        """``spec`` as :meth:`~bco_gym.agents.registry.AgentSpec.labelled` would name it
        after the agent built in the child (a factory's agent's feedback, exponent, label)."""
        import dataclasses

        if isinstance(spec.factory, type) and not spec.label_from_agent:
            return spec
        changes: dict[str, Any] = {}
        if not isinstance(spec.factory, type):
            for key in ("feedback", "regret_exponent"):
                if getattr(spec.factory, key, None) is None:
                    changes[key] = self.built[key]
        if spec.label_from_agent:
            changes["name"] = self.built["name"]
        return dataclasses.replace(spec, **changes) if changes else spec

    @property
    def params(self) -> dict[str, Any]:
        return dict(self._params)

    def regret_bound(self) -> float | None:
        return self._bound

    @property
    def stats(self) -> dict[str, Any]:
        """Counters as arrays of shape (S,), ``rounds`` an int (as :class:`~.rows.RowAgents`)."""
        rows = [self.row_stats(row) for row in range(self.batch_size)]
        return {
            key: rows[0][key] if key == "rounds" else np.array([row.get(key) for row in rows])
            for key in rows[0]
        }

    def row_stats(self, row: int) -> dict[str, Any]:
        """Row ``row``'s stats: the agent's scalar counters, with ``lmo_calls`` and
        ``projections`` as counted by its set and ``rounds`` as played."""
        self.finish()
        assert self._final is not None
        return dict(self._final[row]["stats"])

    # -- the run ------------------------------------------------------------------------------
    def reset(self, seed: Sequence[int]) -> None:
        """Reset the S agents with the agent seeds ``seed`` (one per row)."""
        seeds = [int(value) for value in seed]
        if len(seeds) != self.batch_size:
            raise ValueError(f"IsolatedAgents.reset: {len(seeds)} seeds for {self.batch_size} rows")
        message = {"seeds": seeds, "feedback": self.feedback}  # what the rounds will carry
        self._child.send(b"SEED", json.dumps(message).encode())
        self._answer(b"OKAY", "resetting the agent")
        self._round, self._pending, self._final = 0, b"", None
        self._cpu_at_reset = self._child.cpu_seconds()

    def act(self, observations: Any = None) -> np.ndarray:
        """The S plays of the round (the child computes the observations t/T itself)."""
        self._child.send(b"PLAY", ROUND.pack(self._round) + self._pending)
        self._pending = b""
        size = self.batch_size * math.prod(self._action_shape) * 8
        payload = self._answer(b"PLAY", f"playing round {self._round}", size=size)
        plays = np.frombuffer(payload, dtype="<f8").reshape((self.batch_size, *self._action_shape))
        return plays.copy()

    def update(self, losses: Any, info: Mapping[str, Any]) -> None:
        """Keep the round's feedback (what the agents are entitled to), sent with the next
        message."""
        parts = [np.ascontiguousarray(losses, dtype="<f8").reshape(self.batch_size)]
        if self.feedback == "full":
            parts.append(np.ascontiguousarray(info["gradient"], dtype="<f8"))
        elif self.feedback == "two-point":
            parts.append(np.ascontiguousarray(info["losses"], dtype="<f8"))
        self._pending = b"".join(part.tobytes() for part in parts)
        self._round += 1

    def finish(self) -> None:
        """Hand the agents the last round's feedback and read their final stats (once)."""
        if self._final is not None:
            return
        self._child.send(b"DONE", self._pending)
        self._pending = b""
        found = self._answer(b"STAT", "finishing the run")
        self.child_cpu_seconds = max(0.0, self._child.cpu_seconds() - self._cpu_at_reset)
        self._final = _checked_rows(found, self.batch_size, self._describe)
        last = self._final[0]
        self._params, self._bound = last["params"], last["regret_bound"]

    def close(self) -> None:
        """End the child (politely, then by force); idempotent."""
        self._child.close()

    # -- helpers ------------------------------------------------------------------------------
    def _entitlement(self) -> str:
        """The feedback the child's agents are handed: the spec's declared one (the
        child's report for a factory that declares none), never more than the problem's."""
        declared = self.labelled(self.spec).feedback
        if declared not in FEEDBACKS:
            declared = "bandit"
        if declared == "full" and self.problem.feedback != "full":
            return "bandit"
        return declared

    def _answer(
        self, tag: bytes, doing: str, size: int | None = None, timeout: float | None = None
    ) -> Any:
        """The child's answer ``tag`` (bytes of exactly ``size``, or checked JSON) within
        ``timeout`` seconds (default :data:`ROUND_TIMEOUT`); an error naming the agent, the
        seed and the round for anything else."""
        got, payload = self._child.receive(doing, size, timeout or ROUND_TIMEOUT)
        if got == b"FAIL":
            raise self._failure(_json(payload, self._describe))
        if got != tag:
            raise self._error(f"answered {got!r} while {doing}, expected {tag!r}")
        if size is not None:
            return payload
        return _json(payload, self._describe)

    def _failure(self, document: Any) -> Exception:
        """The exception the child reported, as the in-process run would raise it, with
        the round the agent had reached as its ``failed_round``."""
        error = self._raised(document)
        error.failed_round = self.failed_round  # type: ignore[attr-defined]
        return error

    def _raised(self, document: Any) -> Exception:
        from bco_gym.errors import AgentError

        if not isinstance(document, dict):
            return self._error("sent a malformed failure report")
        from bco_gym.errors import InfeasibleActionError

        row = document.get("row")
        self.failed_row = row if isinstance(row, int) and 0 <= row < self.batch_size else None
        rounds = document.get("round")
        self.failed_round = rounds if isinstance(rounds, int) else None
        kind, name = document.get("kind"), str(document.get("type", "Exception"))[:100]
        message = str(document.get("message", ""))[:10_000]
        if kind == "infeasible":
            return InfeasibleActionError(message)
        if kind == "agent":
            return AgentError(f"{message} (in its isolated process)")
        if kind in ("value", "type"):  # named by the engine as in-process (named_failure)
            return (ValueError if kind == "value" else TypeError)(message)
        cause = _foreign(name, f"{message} (in its isolated process)")
        error = AgentError(f"{self._where()}: {name}: {cause}")
        error.__cause__ = cause
        return error

    def _error(self, what: str) -> Exception:
        from bco_gym.errors import AgentError

        where = self._where()
        error = AgentError(f"{where}: its isolated process {what}")
        error.failed_round = self._round  # type: ignore[attr-defined]
        error.agent_failure_prefix = f"{where}: "  # type: ignore[attr-defined]
        return error

    def _where(self) -> str:
        row = 0 if self.batch_size == 1 else self.failed_row
        which = (
            f"seed {self.seeds[row]}"
            if row is not None and self.seeds[row] is not None
            else f"seeds {self.seeds}"
        )
        rounds = self.failed_round if self.failed_round is not None else self._round
        return f"agent {self.name!r} {which} failed in round {rounds}"

    def _describe(self, what: str) -> Exception:
        return self._error(what)


def played_elsewhere(agent: Any) -> float:
    """The CPU seconds ``agent`` spent in its own process during the run (0.0 for an agent
    in this process): what a result's ``cpu_seconds`` adds to this process's."""
    if not isinstance(agent, IsolatedAgents):
        return 0.0
    agent.finish()
    return agent.child_cpu_seconds


class SingleIsolated:
    """An isolated batch of one seen as a single agent (the Gymnasium loop's)."""

    def __init__(self, rows: IsolatedAgents):
        self.rows = rows
        self.feedback = rows.feedback
        self.horizon = rows.horizon
        self.name = rows.name
        self.failed_row: int | None = None

    @property
    def failed_round(self) -> int | None:
        return self.rows.failed_round

    def act(self, observation: Any = None) -> np.ndarray:
        return self.rows.act()[0]

    def update(self, loss: float, info: Mapping[str, Any]) -> None:
        row_info = {key: np.asarray(value)[np.newaxis] for key, value in info.items()}
        self.rows.update(np.array([loss], dtype=float), row_info)

    @property
    def stats(self) -> dict[str, Any]:
        return self.rows.row_stats(0)

    @property
    def params(self) -> dict[str, Any]:
        return self.rows.params

    def regret_bound(self) -> float | None:
        return self.rows.regret_bound()


def check_importable(spec: Any) -> None:
    """ValueError unless the child process can import ``spec``'s class or factory."""
    module, _, qualname = str(spec.import_path).partition(":")
    if module == "__main__" or not qualname or "<" in qualname:
        raise ValueError(
            f"isolate=True builds agent {spec.name!r} in its own process from its import path, "
            f"but {spec.import_path!r} cannot be imported there (a class defined in a script, "
            "a notebook or a function); define it in a module and pass 'package.module:Class'"
        )


# -- the pipe to the child ----------------------------------------------------------------------
class _Child:
    """The child process and its two pipes, with deadlines on every read and write."""

    def __init__(self, error: Any):
        self._error = error
        package_root = str(Path(__file__).resolve().parents[2])
        environment = dict(os.environ)
        known = environment.get("PYTHONPATH")
        environment["PYTHONPATH"] = package_root + (os.pathsep + known if known else "")
        protect()
        self._protected = True
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", CHILD_COMMAND],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=environment,
                close_fds=True,
                start_new_session=True,
            )
        except BaseException:
            self._release()
            raise
        assert self.process.stdin is not None and self.process.stdout is not None
        self._write_fd = self.process.stdin.fileno()
        self._read_fd = self.process.stdout.fileno()
        os.set_blocking(self._write_fd, False)
        self._closed = False

    def send(self, tag: bytes, payload: bytes) -> None:
        data = memoryview(HEADER.pack(tag, len(payload)) + payload)
        deadline = time.monotonic() + ROUND_TIMEOUT
        while len(data):
            remaining = deadline - time.monotonic()
            ready = select.select([], [self._write_fd], [], max(0.0, remaining))[1]
            if not ready:
                raise self._error(f"did not read its input within {ROUND_TIMEOUT:g} s")
            try:
                written = os.write(self._write_fd, data)
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError):
                raise self._error(self._ended("before it read its input")) from None
            data = data[written:]

    def receive(self, doing: str, size: int | None, timeout: float) -> tuple[bytes, bytes]:
        deadline = time.monotonic() + timeout
        tag, length = HEADER.unpack(self._read(HEADER.size, deadline, doing))
        if tag in (b"OKAY", b"STAT", b"FAIL"):
            if length > MAX_JSON_BYTES:
                raise self._error(
                    f"sent {length:,} bytes of JSON while {doing}; at most "
                    f"{MAX_JSON_BYTES:,} are read"
                )
        elif tag == b"PLAY":
            if size is None or length != size:
                raise self._error(
                    f"sent a play of {length:,} bytes while {doing}, expected {size or 0:,} "
                    "(the plays of every seed, float64)"
                )
        else:
            raise self._error(f"sent {tag!r}, not a message of the protocol, while {doing}")
        return tag, self._read(length, deadline, doing)

    def _read(self, count: int, deadline: float, doing: str) -> bytes:
        chunks, missing = [], count
        timeout = deadline - time.monotonic()
        while missing:
            remaining = deadline - time.monotonic()
            ready = select.select([self._read_fd], [], [], max(0.0, remaining))[0]
            if not ready:
                raise self._error(f"did not answer within {timeout:.3g} s while {doing}")
            chunk = os.read(self._read_fd, min(missing, 1 << 20))
            if not chunk:
                raise self._error(self._ended(f"while {doing}"))
            chunks.append(chunk)
            missing -= len(chunk)
        return b"".join(chunks)

    def cpu_seconds(self) -> float:
        """The child's CPU seconds so far (user and system, from ``/proc/<pid>/stat``;
        0.0 where there is no such file)."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks = os.sysconf("SC_CLK_TCK")
            return (int(fields[11]) + int(fields[12])) / ticks
        except (OSError, ValueError, IndexError):
            return 0.0

    def _ended(self, when: str) -> str:
        try:
            code = self.process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return f"closed its output {when}"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"was killed by {signal.Signals(-code).name} {when}"
        return f"ended with exit code {code} {when}"

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self.process.poll() is None:
                with contextlib.suppress(OSError, ValueError):
                    os.set_blocking(self._write_fd, True)
                    os.write(self._write_fd, HEADER.pack(b"EXIT", 0))
                try:
                    self.process.wait(timeout=1.0)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
        finally:
            for stream in (self.process.stdin, self.process.stdout):
                with contextlib.suppress(OSError):
                    if stream is not None:
                        stream.close()
            self._release()

    def _release(self) -> None:
        if getattr(self, "_protected", False):
            self._protected = False
            unprotect()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


def _foreign(name: str, message: str) -> Exception:
    """An exception standing for one raised in the child: of a class named as the child's
    (``RuntimeError``, a user's ``MyError``), so that a failure record reads as the
    in-process run's would."""
    name = name if name.isidentifier() else "Exception"
    return type(name, (Exception,), {"__module__": "isolated"})(message)


def _pickled(document: Mapping[str, Any], problem: Any) -> bytes:
    """The INIT message; ValueError naming the problem's set when it does not pickle."""
    try:
        return pickle.dumps(dict(document), protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError) as error:
        raise ValueError(
            f"isolate=True sends the Problem to the agent's process, but {problem.set!r} "
            f"cannot be pickled ({type(error).__name__}: {error})"
        ) from None


def _json(payload: bytes, error: Any) -> Any:
    try:
        return json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise error("sent an answer that is not JSON") from None


def _checked_built(found: Any, error: Any) -> dict[str, Any]:
    """The child's OKAY after building, checked (name, feedback, exponent, params, bound)."""
    if not isinstance(found, dict):
        raise error("sent a malformed OKAY")
    name, feedback = found.get("name"), found.get("feedback")
    exponent, bound = found.get("regret_exponent"), found.get("regret_bound")
    if not isinstance(name, str) or not 0 < len(name) <= 200 or feedback not in FEEDBACKS:
        raise error("sent a malformed OKAY (name, feedback)")
    for value in (exponent, bound):
        if value is not None and not isinstance(value, int | float):
            raise error("sent a malformed OKAY (regret exponent or bound)")
    if not isinstance(found.get("params"), dict):
        raise error("sent a malformed OKAY (params)")
    return found


def _checked_rows(found: Any, rows: int, error: Any) -> list[dict[str, Any]]:
    """The child's STAT: per row, scalar stats with int counters, params and the bound."""
    entries = found.get("rows") if isinstance(found, dict) else None
    if not isinstance(entries, list) or len(entries) != rows:
        raise error(f"sent a malformed STAT (expected {rows} rows)")
    checked = []
    for entry in entries:
        stats = entry.get("stats") if isinstance(entry, dict) else None
        if not isinstance(stats, dict) or not all(
            isinstance(value, bool | int | float | str) for value in stats.values()
        ):
            raise error("sent a malformed STAT (stats)")
        if not all(
            isinstance(stats.get(key), int) for key in ("rounds", "lmo_calls", "projections")
        ):
            raise error("sent a malformed STAT (counters)")
        if not isinstance(entry.get("params"), dict):
            raise error("sent a malformed STAT (params)")
        bound = entry.get("regret_bound")
        if bound is not None and not isinstance(bound, int | float):
            raise error("sent a malformed STAT (regret bound)")
        checked.append(entry)
    return checked
