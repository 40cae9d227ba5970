"""All-pairs paired tests with Holm's correction, the ordered groups: kept importable under
this name; the code lives in :mod:`bco_gym.stats.ranking`, below both the reports and the
figures."""

from bco_gym.stats.ranking import (
    ALPHA,
    EXHAUSTIVE_LIMIT,
    Family,
    PairComparison,
    Ranking,
    compare_family,
    holm,
    ordered_groups,
    paired_p_value,
    rank,
    ranking_text,
    relations_text,
)

__all__ = [
    "ALPHA",
    "EXHAUSTIVE_LIMIT",
    "Family",
    "PairComparison",
    "Ranking",
    "compare_family",
    "holm",
    "ordered_groups",
    "paired_p_value",
    "rank",
    "ranking_text",
    "relations_text",
]
