"""The agent's side of an isolated run (:mod:`bco_gym.engine.isolation`): the process
that builds the user's agent, counts its oracle calls through its own set, plays the
rounds its parent asks for over the pipe, and reports a failure with its row and round.
It exits when its parent dies."""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bco_gym.engine.isolation import HEADER, PROTOCOL, ROUND


class _Counter:
    """Oracle calls through one agent's set: the outermost call counts."""

    def __init__(self) -> None:
        self.counts = {"lmo_calls": 0, "projections": 0}
        self.depth = 0


_COUNTED = (
    ("lmo", "lmo_calls", False),
    ("lmo_many", "lmo_calls", True),
    ("project", "projections", False),
    ("project_many", "projections", True),
)


def _count_oracles(convex_set: Any, counter: _Counter) -> None:
    """Wrap ``convex_set``'s oracles (on the instance) so that ``counter`` counts them."""
    for method_name, key, batched in _COUNTED:
        method = getattr(convex_set, method_name, None)
        if method is None:
            continue

        def counting(
            *args: Any,
            _method: Any = method,
            _key: str = key,
            _batched: bool = batched,
            **kwargs: Any,
        ) -> Any:
            if counter.depth:
                return _method(*args, **kwargs)
            counter.depth += 1
            try:
                value = _method(*args, **kwargs)
            finally:
                counter.depth -= 1
            counter.counts[_key] += int(np.shape(args[0])[0]) if _batched and args else 1
            return value

        setattr(convex_set, method_name, counting)


class _Session:
    """The child's state: the agents (a RowAgents), their counters and the problem."""

    def __init__(self, document: Mapping[str, Any]):
        from bco_gym.agents.registry import resolve_agent
        from bco_gym.engine.result import jsonable
        from bco_gym.engine.rows import RowAgents
        from bco_gym.problem import own_copy

        if document.get("protocol") != PROTOCOL:
            raise RuntimeError(
                f"the bench speaks protocol {document.get('protocol')!r} and the agent's "
                f"process, another bco_gym, protocol {PROTOCOL}; install one version"
            )
        sys.path[:] = list(document["sys_path"])
        problem = document["problem"]
        spec = resolve_agent(document["import_path"])
        self.counters, agents = [], []
        for _ in range(int(document["rows"])):
            own = own_copy(problem)
            counter = _Counter()
            _count_oracles(own.set, counter)
            agents.append(spec.build(own, **dict(document["kwargs"])))
            self.counters.append(counter)
        self.rows = RowAgents(agents)
        self.horizon = problem.horizon
        self.shape = tuple(problem.set.shape)
        labelled = spec.labelled(agents[0])
        self.jsonable = jsonable
        self.built = {
            "name": labelled.name,
            "feedback": labelled.feedback,
            "regret_exponent": labelled.regret_exponent,
            "params": jsonable(dict(agents[0].params)),
            "regret_bound": _bound(agents[0]),
        }
        self.round = 0
        self.action_shape = (2, *self.shape) if problem.feedback == "two-point" else self.shape
        self.described = f"a point of {problem.set!r}" + (
            " twice: two-point feedback" if problem.feedback == "two-point" else ""
        )

    def reset(self, seeds: Sequence[int]) -> None:
        self.rows.reset(seed=[int(seed) for seed in seeds])
        for counter in self.counters:
            counter.counts = {"lmo_calls": 0, "projections": 0}
        self.round = 0

    def feed(self, payload: bytes, feedback: str) -> None:
        """Hand the agents the feedback of round ``self.round - 1`` (raw float64 arrays: the
        losses, then what ``feedback``, the agents' entitlement, adds)."""
        rows = self.rows.batch_size
        values = np.frombuffer(payload, dtype="<f8").copy()  # writable, as in-process
        losses = values[:rows]
        info: dict[str, Any] = {"loss": losses, "t": self.round}
        extra = values[rows:]
        if feedback == "full":
            info["gradient"] = extra.reshape((rows, *self.shape))
        elif feedback == "two-point":
            info["losses"] = extra.reshape((rows, 2))
        self.rows.update(losses, info)

    def play(self, action_shape: tuple[int, ...], described: str) -> bytes:
        observations = np.full((self.rows.batch_size, 1), self.round / self.horizon, np.float32)
        plays = np.asarray(self.rows.act(observations))
        expected = (self.rows.batch_size, *action_shape)
        if plays.shape != expected:
            from bco_gym.errors import InfeasibleActionError

            shape = plays.shape[1:] if plays.ndim else plays.shape
            raise InfeasibleActionError(
                f"round {self.round}: action of shape {shape}, expected {action_shape} "
                f"({described})"
            )
        self.round += 1
        return np.ascontiguousarray(plays, dtype="<f8").tobytes()

    def final(self) -> dict[str, Any]:
        from bco_gym.engine.result import scalar_stats

        rows = []
        for row, counter in enumerate(self.counters):
            agent = self.rows.agents[row]
            stats = {**scalar_stats(agent.stats), **counter.counts, "rounds": self.round}
            rows.append(
                {
                    "stats": stats,
                    "params": self.jsonable(dict(agent.params)),
                    "regret_bound": _bound(agent),
                }
            )
        return {"rows": rows}


def _bound(agent: Any) -> float | None:
    value = agent.regret_bound()
    return None if value is None else float(value)


def _report(error: Exception, session: _Session | None) -> dict[str, Any]:
    """What the parent is told of an exception: the row and round where it was raised
    (the agent's own round count), its kind (how the parent raises it again), its type's
    name and its message."""
    from bco_gym.errors import AgentError, InfeasibleActionError

    row = rounds = None
    if session is not None:
        row = getattr(session.rows, "failed_row", None)
        rounds = session.round
        if row is not None and 0 <= row < len(session.rows.agents):
            rounds = getattr(session.rows.agents[row], "_round", rounds)
    kinds = (
        (InfeasibleActionError, "infeasible"),
        (AgentError, "agent"),
        (ValueError, "value"),
        (TypeError, "type"),
    )
    kind = next((name for cls, name in kinds if isinstance(error, cls)), "other")
    return {
        "row": row,
        "round": rounds,
        "kind": kind,
        "type": type(error).__name__,
        "message": str(error),
    }


def _watch_parent() -> None:
    """Exit as soon as the parent is gone (a daemon thread; the agent may be busy)."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def child_main() -> None:
    """The child's loop (:data:`~bco_gym.engine.isolation.CHILD_COMMAND`)."""
    _watch_parent()
    reader = os.fdopen(os.dup(0), "rb", buffering=0)
    writer = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)  # what the agent prints goes to stderr, never into the protocol

    def read(count: int) -> bytes:
        chunks, missing = [], count
        while missing:
            chunk = reader.read(missing)
            if not chunk:
                raise SystemExit(0)
            chunks.append(chunk)
            missing -= len(chunk)
        return b"".join(chunks)

    def send(tag: bytes, payload: bytes) -> None:
        writer.write(HEADER.pack(tag, len(payload)) + payload)

    session: _Session | None = None
    entitled = "bandit"
    while True:
        tag, length = HEADER.unpack(read(HEADER.size))
        payload = read(length)
        if tag == b"EXIT":
            if session is not None:
                with contextlib.suppress(Exception):
                    session.rows.close()
            return
        try:
            if tag == b"INIT":
                document = pickle.loads(payload)
                session = _Session(document)
                send(b"OKAY", json.dumps(session.built).encode())
            elif session is None:
                raise RuntimeError(f"message {tag!r} before INIT")
            elif tag == b"SEED":
                message = json.loads(payload)
                entitled = message["feedback"]
                session.reset(message["seeds"])
                send(b"OKAY", b"{}")
            elif tag in (b"PLAY", b"DONE"):
                start = 0 if tag == b"DONE" else ROUND.size
                if tag == b"PLAY" and ROUND.unpack(payload[: ROUND.size])[0] != session.round:
                    raise RuntimeError("rounds out of step with the parent")
                if session.round > 0 and len(payload) > start:
                    session.feed(payload[start:], entitled)
                if tag == b"PLAY":
                    send(b"PLAY", session.play(session.action_shape, session.described))
                else:
                    send(b"STAT", json.dumps(session.final()).encode())
            else:
                raise RuntimeError(f"unknown message {tag!r}")
        except Exception as error:  # the agent's code (or its import) raised: report it
            send(b"FAIL", json.dumps(_report(error, session)).encode())
