"""Local slopes and bootstrap bands of regret exponents: kept importable under this name; the
code lives in :mod:`bco_gym.stats.slopes`, below both the reports and the figures."""

from bco_gym.stats.slopes import (
    ExponentBand,
    exponent_band,
    exponent_bands,
    local_slopes,
)

__all__ = [
    "ExponentBand",
    "exponent_band",
    "exponent_bands",
    "local_slopes",
]
