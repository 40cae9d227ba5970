"""The text of an identity and of a variant ``NAME[key=value,...]``: one canonical text per
keyword value, and the values of a variant's pairs parsed by the type of the constructor's
parameter (:func:`~bco_gym.agents.registry.resolve_agent` reads variants with them)."""

from __future__ import annotations

import inspect
import json
import math
import re
from collections.abc import Mapping
from typing import Any


def identity_text(import_path: str, kwargs: Mapping[str, Any]) -> str:
    """``"module:Class"`` or ``"module:Class[key=value,...]"``: keys sorted, each value
    written canonically (:func:`canonical_value`), so 2 and 2.0 give one identity."""
    if not kwargs:
        return import_path
    body = ",".join(f"{key}={canonical_value(kwargs[key])}" for key in sorted(kwargs))
    return f"{import_path}[{body}]"


def canonical_value(value: Any) -> str:
    """One text per value: true/false, none, an integral number without its ".0", other
    floats by repr, plain words as they are, any other string quoted as JSON."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float) or type(value).__module__ == "numpy":
        try:
            number = float(value)
        except (TypeError, ValueError):
            return json.dumps(repr(value))
        if math.isfinite(number) and number.is_integer() and abs(number) < 2**53:
            return str(int(number))
        return repr(number)
    if isinstance(value, str):
        return value if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.+-]*", value) else json.dumps(value)
    if callable(value) and hasattr(value, "__qualname__"):
        return json.dumps(f"{getattr(value, '__module__', '?')}:{value.__qualname__}")
    return json.dumps(repr(value))


def parse_variant(factory: Any, body: str, text: str = "") -> dict[str, Any]:
    """The keyword arguments of ``key=value,...`` for the agent class or factory
    ``factory``, each value parsed by the type of its parameter (:func:`_typed_value`)."""
    kwargs: dict[str, Any] = {}
    parameters = _parameters(factory)
    if not body.strip():
        raise ValueError(f"agent {text!r}: empty brackets; give key=value pairs, or no brackets")
    for item in (part.strip() for part in _split_pairs(body)):
        key, equals, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if not equals or not key.isidentifier():
            raise ValueError(
                f"agent {text!r}: {item!r} is not key=value (a variant reads "
                "'NAME[key=value,...]', e.g. 'fkm[c=2,estimator=residual]')"
            )
        if key in kwargs:
            raise ValueError(f"agent {text!r} gives {key!r} twice")
        where = f"agent {_clipped(text)!r}: keyword {key}"
        kwargs[key] = _typed_value(raw, parameters.get(key), where)
    return kwargs


def _clipped(text: str, limit: int = 60) -> str:
    """``text``, or its first characters and its length when longer than ``limit``."""
    return text if len(text) <= limit else f"{text[: limit - 20]}... ({len(text):,} characters)"


def _split_pairs(body: str) -> list[str]:
    """``body`` split at commas outside double quotes."""
    parts, current, quoted = [], [], False
    for char in body:
        if char == '"':
            quoted = not quoted
        if char == "," and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _parameters(factory: Any) -> dict[str, inspect.Parameter]:
    target = factory.__init__ if isinstance(factory, type) else factory
    try:
        return dict(inspect.signature(target).parameters)
    except (TypeError, ValueError):
        return {}


def _literal(raw: str) -> Any:
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    if raw.startswith('"'):
        try:
            value = json.loads(raw)
        except ValueError:
            raise ValueError(f"{raw!r} is not a quoted string") from None
        return value
    if re.fullmatch(r"[+-]?\d+", raw):
        digits = len(raw.lstrip("+-"))
        if digits > 4000:  # Python refuses str -> int beyond 4300 digits by default
            raise ValueError(
                f"an integer of {digits:,} digits; at most 4,000 digits are read (float64 "
                "holds constants up to about 1.8e308)"
            )
        return int(raw)
    try:
        return float(raw)
    except ValueError:
        return raw


def _typed_value(raw: str, parameter: inspect.Parameter | None, where: str) -> Any:
    """``raw`` as the parameter's type: its default's type (bool, int, float, str), else
    its annotation's (``float | None`` takes numbers as float), else as written
    (true/false, none, integers, floats, quoted or plain strings)."""
    try:
        value = _literal(raw)
    except ValueError as error:
        raise ValueError(f"{where}={_clipped(raw, 30)}: {error}") from None
    if parameter is None:
        return value
    default = parameter.default
    annotation = parameter.annotation
    words = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    words = str(words) if words is not inspect.Parameter.empty else ""
    if isinstance(default, bool) or (default is inspect.Parameter.empty and words == "bool"):
        if not isinstance(value, bool):
            raise ValueError(f"{where}={raw!r}: expected true or false")
        return value
    if isinstance(default, str) and not isinstance(value, str):
        return raw  # a string parameter takes the text as written
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and (isinstance(default, float) or re.search(r"\bfloat\b", words)):
        return float(value)
    if number and isinstance(default, int) and isinstance(value, float) and value.is_integer():
        return int(value)
    return value
