"""Data sets shipped inside the package (read offline, never downloaded at run time).

``portfolio/``: the six classic online-portfolio-selection price series (NYSE(O),
NYSE(N), TSE, SP500, MSCI, DJIA), one compressed NumPy file each with a single float64
array ``prices`` of shape (days, assets): the price of each asset at each day's close,
every asset's price taken as 1 the day before the first row. ``portfolio/PROVENANCE.md``
states their source, licence, the transformation applied and the files' sha256.
"""

from __future__ import annotations

from importlib import resources

import numpy as np

PORTFOLIO_DATASETS = ("nyse_o", "nyse_n", "tse", "sp500", "msci", "djia")


def portfolio_prices(dataset: str) -> np.ndarray:
    """The price series of ``dataset`` (days x assets, float64, read-only).

    Raises:
        ValueError: ``dataset`` is not one of :data:`PORTFOLIO_DATASETS`.
    """
    if not isinstance(dataset, str) or dataset not in PORTFOLIO_DATASETS:
        raise ValueError(
            f"dataset={dataset!r} is not allowed; allowed: {', '.join(PORTFOLIO_DATASETS)}"
        )
    source = resources.files(__name__).joinpath("portfolio", f"{dataset}.npz")
    with source.open("rb") as handle, np.load(handle, allow_pickle=False) as archive:
        prices = np.array(archive["prices"], dtype=np.float64)
    prices.setflags(write=False)
    return prices


def price_relatives(prices: np.ndarray) -> np.ndarray:
    """r_1 = p_1 (against prices of 1 the day before), r_t = p_t / p_{t-1} (rows)."""
    prices = np.asarray(prices, dtype=np.float64)
    relatives = np.empty_like(prices)
    relatives[0] = prices[0]
    np.divide(prices[1:], prices[:-1], out=relatives[1:])
    return relatives


__all__ = ["PORTFOLIO_DATASETS", "portfolio_prices", "price_relatives"]
