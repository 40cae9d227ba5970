"""The keywords of the ``sb3-*`` agents, their shared defaults, and what each accepts.

stable-baselines3 trusts its constructor arguments: ``n_steps="8"`` fails deep inside
a buffer, ``gamma=2.0`` or ``use_sde="yes"`` are silently used. The sb3 agents check
every keyword here first, so a wrong value is refused naming the keyword, the value
and what is allowed, and nothing is coerced.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

Check = Callable[[Any], bool]

# the SB3 constructor keywords worth overriding (tests check them against SB3's signatures),
# plus this module's own (hidden_sizes, vertex_tolerance, action_noise_std, model, torch_threads)
ON_POLICY_OPTIONS = (
    "learning_rate",
    "n_steps",
    "gamma",
    "gae_lambda",
    "ent_coef",
    "vf_coef",
    "max_grad_norm",
    "normalize_advantage",
    "use_sde",
    "sde_sample_freq",
    "policy_kwargs",
    "hidden_sizes",
    "vertex_tolerance",
    "model",
    "torch_threads",
)
OFF_POLICY_OPTIONS = (
    "learning_rate",
    "buffer_size",
    "learning_starts",
    "batch_size",
    "tau",
    "gamma",
    "train_freq",
    "gradient_steps",
    "policy_kwargs",
    "hidden_sizes",
    "action_noise_std",
    "vertex_tolerance",
    "model",
    "torch_threads",
)
ON_POLICY_COMMON = {"gamma": 0.0, "gae_lambda": 1.0, "hidden_sizes": [32, 32]}
OFF_POLICY_COMMON = {
    "gamma": 0.0,
    "learning_starts": 100,
    "batch_size": 64,
    "train_freq": 1,
    "gradient_steps": 1,
    "hidden_sizes": [64, 64],
}


def _integer(minimum: int) -> tuple[Check, str]:
    def check(value: Any) -> bool:
        return (
            isinstance(value, int | np.integer) and not isinstance(value, bool) and value >= minimum
        )

    return check, f"an integer >= {minimum}"


def _real(
    low: float, high: float = math.inf, *, open_low: bool = False, numpy: bool = True
) -> tuple[Check, str]:
    """A finite real number in the interval; numpy scalars only where SB3 takes them
    (its schedules accept Python numbers alone, np.float64 being one)."""
    kinds = (int, float, np.integer, np.floating) if numpy else (int, float)

    def check(value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, kinds):
            return False
        above = value > low if open_low else value >= low
        return math.isfinite(value) and above and value <= high

    bracket = "(" if open_low else "["
    upper = "inf)" if math.isinf(high) else f"{high:g}]"
    kind = "" if numpy else " (a Python int or float)"
    return check, f"a finite real number{kind} in {bracket}{low:g}, {upper}"


def _boolean() -> tuple[Check, str]:
    return (lambda value: isinstance(value, bool)), "True or False"


def _or_schedule(rule: tuple[Check, str]) -> tuple[Check, str]:
    check, text = rule
    return (lambda value: callable(value) or check(value)), f"{text}, or an SB3 schedule"


def _or_none(rule: tuple[Check, str]) -> tuple[Check, str]:
    check, text = rule
    return (lambda value: value is None or check(value)), f"None or {text}"


def _or_auto(rule: tuple[Check, str]) -> tuple[Check, str]:
    check, text = rule

    def auto(value: Any) -> bool:
        if not isinstance(value, str) or not value.startswith("auto"):
            return False
        rest = value.removeprefix("auto").removeprefix("_")
        if not rest:
            return value == "auto"
        try:
            return float(rest) > 0
        except ValueError:
            return False

    return (lambda value: auto(value) or check(value)), f"{text}, 'auto' or 'auto_<float>'"


def _layer_sizes() -> tuple[Check, str]:
    def check(value: Any) -> bool:
        return (
            isinstance(value, Sequence)
            and not isinstance(value, str)
            and all(
                isinstance(width, int | np.integer) and not isinstance(width, bool) and width >= 1
                for width in value
            )
        )

    return check, "a list of integer layer widths >= 1 (e.g. [32, 32])"


def _keyword_dict() -> tuple[Check, str]:
    def check(value: Any) -> bool:
        return value is None or (
            isinstance(value, Mapping) and all(isinstance(key, str) for key in value)
        )

    return check, "None or a dict of keyword arguments"


def _train_frequency() -> tuple[Check, str]:
    step, _ = _integer(1)

    def check(value: Any) -> bool:
        if step(value):
            return True
        return (
            isinstance(value, tuple)
            and len(value) == 2
            and step(value[0])
            and value[1] in ("step", "episode")
        )

    return check, "an integer >= 1 or a tuple (integer >= 1, 'step' or 'episode')"


#: option -> (check, what is allowed); options an algorithm lacks are never looked up.
RULES: dict[str, tuple[Check, str]] = {
    "learning_rate": _or_schedule(_real(0.0, open_low=True, numpy=False)),
    "n_steps": _integer(1),
    "batch_size": _integer(1),
    "n_epochs": _integer(1),
    "gamma": _real(0.0, 1.0),
    "gae_lambda": _real(0.0, 1.0),
    "clip_range": _or_schedule(_real(0.0, open_low=True, numpy=False)),
    "target_kl": _or_none(_real(0.0, open_low=True)),
    "ent_coef": _or_auto(_real(0.0)),
    "vf_coef": _real(0.0),
    "max_grad_norm": _real(0.0, open_low=True),
    "normalize_advantage": _boolean(),
    "use_sde": _boolean(),
    "sde_sample_freq": _integer(-1),
    "use_rms_prop": _boolean(),
    "rms_prop_eps": _real(0.0, open_low=True),
    "buffer_size": _integer(1),
    "learning_starts": _integer(0),
    "tau": _real(0.0, 1.0, open_low=True),
    "train_freq": _train_frequency(),
    "gradient_steps": _integer(-1),
    "target_entropy": (
        lambda value: value == "auto" or _real(-math.inf)[0](value),
        "'auto' or a finite real number",
    ),
    "use_sde_at_warmup": _boolean(),
    "policy_delay": _integer(1),
    "target_policy_noise": _real(0.0),
    "target_noise_clip": _real(0.0),
    "policy_kwargs": _keyword_dict(),
    "hidden_sizes": _layer_sizes(),
    "action_noise_std": _real(0.0),
}


def check_options(agent_name: str, options: Mapping[str, Any]) -> None:
    """Refuse any value in ``options`` that its keyword's rule does not allow."""
    for name, value in options.items():
        rule = RULES.get(name)
        if rule is not None and not rule[0](value):
            raise ValueError(f"{agent_name}: {name}={value!r} is not allowed; expected {rule[1]}")
