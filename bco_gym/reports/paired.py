"""Paired differences against a reference on the same seeds, the paired table: kept importable
under this name; the code lives in :mod:`bco_gym.stats.paired`, below both the reports and
the figures."""

from bco_gym.stats.paired import (
    FEEDBACK_MARKS,
    LEVEL,
    OBSERVATION_KWARGS,
    SCALING_EXPONENT,
    PairedRow,
    feedback_of,
    find_reference,
    group_series,
    is_bandit,
    is_full_information,
    paired_columns,
    paired_differences,
    paired_table,
    scale_text,
    series_key,
    series_label,
    t_interval,
)

__all__ = [
    "FEEDBACK_MARKS",
    "LEVEL",
    "OBSERVATION_KWARGS",
    "SCALING_EXPONENT",
    "PairedRow",
    "feedback_of",
    "find_reference",
    "group_series",
    "is_bandit",
    "is_full_information",
    "paired_columns",
    "paired_differences",
    "paired_table",
    "scale_text",
    "series_key",
    "series_label",
    "t_interval",
]
