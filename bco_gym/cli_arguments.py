"""The types of ``bco-gym``'s arguments: each parses one command-line value and refuses,
with a one-line message naming the value and what is allowed, what it cannot take
(argparse reports it with exit code 2)."""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from bco_gym.cli_checks import MAX_HORIZON, MAX_POINTS, MAX_SEED, MAX_SEEDS


def integer_in(text: str, low: int, high: int, what: str) -> int:
    """An integer in [low, high]; 1e5 notation accepted when integral; limit named."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value != int(value) or value < low:
        raise argparse.ArgumentTypeError(f"{text!r} must be {what}")
    if value > high:
        raise argparse.ArgumentTypeError(f"{text!r} exceeds the limit of {high:,}")
    exact = int(text) if text.strip().lstrip("+").isdigit() else int(value)
    if exact > high:
        raise argparse.ArgumentTypeError(f"{text!r} exceeds the limit of {high:,}")
    return exact


def horizon_int(text: str) -> int:
    """A horizon T in 1..MAX_HORIZON."""
    return integer_in(text, 1, MAX_HORIZON, "a positive integer (rounds)")


def points_int(text: str) -> int:
    """A number of grid or horizon points in 1..MAX_POINTS."""
    return integer_in(text, 1, MAX_POINTS, "a positive integer")


def batch_size_int(text: str) -> int:
    """Seeds computed together by one batched run: an integer in 1..MAX_REQUESTED_BATCH_SIZE."""
    from bco_gym.sweeps.backends import MAX_REQUESTED_BATCH_SIZE

    return integer_in(text, 1, MAX_REQUESTED_BATCH_SIZE, "a positive integer (seeds per batch)")


def non_negative_int(text: str) -> int:
    """A seed: an integer in 0..2^63-1 (1e3 notation accepted when integral)."""
    return integer_in(text, 0, MAX_SEED, "a non-negative integer")


def seed_list(text: str) -> list[int]:
    """``K`` (seeds 0..K-1) or ``A:B`` (seeds A..B-1, half-open as in Python); at most
    MAX_SEEDS seeds."""
    if ":" not in text:
        return list(range(integer_in(text, 1, MAX_SEEDS, "a positive integer (seed count)")))
    start_text, _, stop_text = text.partition(":")
    start, stop = non_negative_int(start_text), non_negative_int(stop_text)
    if stop <= start:
        raise argparse.ArgumentTypeError(f"seed range {text!r} is empty; use A:B with B > A")
    if stop - start > MAX_SEEDS:
        raise argparse.ArgumentTypeError(
            f"seed range {text!r} holds {stop - start:,} seeds, "
            f"more than the limit of {MAX_SEEDS:,}"
        )
    return list(range(start, stop))


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def positive_range(text: str) -> tuple[float, float]:
    """``LOW:HIGH`` with 0 < LOW < HIGH (finite floats; 1e3 notation allowed)."""
    low_text, separator, high_text = text.partition(":")
    if not separator or not (_is_number(low_text) and _is_number(high_text)):
        raise argparse.ArgumentTypeError(f"{text!r} must be a range LOW:HIGH of numbers")
    low, high = float(low_text), float(high_text)
    if not 0 < low < high:
        raise argparse.ArgumentTypeError(f"range {text!r} must satisfy 0 < LOW < HIGH")
    return low, high


def split_agents(text: str) -> list[str]:
    """``text`` split at the commas outside brackets and quotes, so that variants
    ``fkm[c=2,estimator=residual]`` stay whole."""
    parts, current, depth, quoted = [], [], 0, False
    for char in text:
        if char == '"':
            quoted = not quoted
        elif not quoted and char == "[":
            depth += 1
        elif not quoted and char == "]":
            depth = max(0, depth - 1)
        if char == "," and depth == 0 and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def name_list(text: str) -> list[str]:
    names = [name.strip() for name in split_agents(text) if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"{text!r} names nothing; give a comma-separated list")
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"{text!r} repeats a name")
    return names


def json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        raise argparse.ArgumentTypeError(f"{text[:80]!r} is not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(
            f"{text[:80]!r} must be a JSON object, e.g. '{{\"n\": 20}}'"
        )
    return value


def label_pair(text: str) -> tuple[str, str]:
    """``NAME=LABEL`` (split at the last '=' outside brackets: a variant's own '=' stay)."""
    depth, cut = 0, -1
    for index, char in enumerate(text):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "=" and depth == 0:
            cut = index
    name, label = (text[:cut].strip(), text[cut + 1 :].strip()) if cut > 0 else ("", "")
    if not name or not label:
        raise argparse.ArgumentTypeError(
            f"{text!r} must read NAME=LABEL (an agent of --agents, then what to call it)"
        )
    return name, label
