"""How an agent class declares its compiled per-round kernel (``KERNEL``) to the compiled
lean loop (:mod:`bco_gym.engine.compiled`); no numba here: the kernel's module is imported
only when it is about to run."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CompiledRounds:
    """An agent's per-round kernel, as its class declares it (``KERNEL``) for the compiled
    lean loop (:mod:`bco_gym.engine.compiled`), which plays it for the exact class only.

    Attributes:
        name: what the loop calls it ("fkm"), in its compile message.
        module: the kernel's module (imported only when the kernel is about to run).
        rounds: the compiled function (numba's dispatcher) in ``module``.
        window: the function in ``module`` that calls ``rounds`` for one window,
            ``(runner, directions, start, theta, offset, weights, losses, window, first,
            trusted) -> int`` (:class:`bco_gym.engine.compiled.KernelRunner`).
        feedback: the feedbacks under which it plays ("bandit", "full", "two-point"; a
            bandit agent ignores the gradient full information adds).
        plays: "one-point" (x + delta u), "two-point" (x +- delta u) or "points" (x).
        shrunk: whether its oracle is K_delta (the smoothing radius) rather than K.
        weight_exponent: a, for Frank-Wolfe weights sigma_t = min(1, 2 t^(-a)), or None.
        counter: the counter each round adds one to ("projections" or "lmo_calls").
        compile_seconds: CPU seconds numba takes here to compile it with an empty cache
            (benchmarks/bench_cold_start.py).
    """

    name: str
    module: str
    rounds: str
    window: str
    feedback: tuple[str, ...]
    plays: str
    shrunk: bool
    counter: str
    compile_seconds: int
    weight_exponent: float | None = None

    def function(self, attribute: str) -> Any:
        """``rounds`` or ``window`` of the kernel's module (imported here: numba)."""
        return getattr(importlib.import_module(self.module), attribute)
