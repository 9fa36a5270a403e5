"""Daily OHLCV bars: market factor, sector factors, betas, noise, planted shocks, dividends.

Total return of stock i on session t (close t-1 to close t, dividends reinvested)::

    r[t, i] = beta_i * m[t] + s[t, sector(i)] + e[t, i] + shock[t, i]

with ``m ~ N(0.0004, market_vol)``, ``s ~ N(0, sector_vol)``, ``e ~ N(0, idio_vol_i)`` and
``shock`` the planted event effects (see :mod:`finkg.demo.world`).  ``Adj Close`` follows
the total return exactly (up to cent rounding); ``Close`` drops by the dividend on an
ex-date and ``Adj Close`` before it is scaled by ``1 - D / Close[ex-1]`` (Yahoo's rule).
Files are written like the real ones: ``Date,Open,High,Low,Close,Adj Close,Volume``,
CRLF line ends, session dates only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from finkg.demo.universe import SECTORS, Company, stream

HEADER = "Date,Open,High,Low,Close,Adj Close,Volume"
MARKET_START = 250.0
DIVIDEND_YIELD = 0.005  # per quarterly ex-date
DIVIDEND_EVERY = 63  # sessions between ex-dates
DIVIDEND_FIRST = 15  # session index of the first ex-date (plus 5 per dividend payer)


@dataclass(frozen=True)
class Bars:
    """One instrument's daily bars, aligned with the sessions."""

    open: np.ndarray
    high: np.ndarray
    low: np.ndarray
    close: np.ndarray
    adj_close: np.ndarray
    volume: np.ndarray


@dataclass(frozen=True)
class Dividend:
    ticker: str
    session: int
    amount: float


@dataclass(frozen=True)
class PricePanel:
    market: Bars
    stocks: dict[str, Bars]
    dividends: tuple[Dividend, ...]


def dividend_payers(companies: Sequence[Company], count: int) -> list[str]:
    """The tickers that pay dividends: Energy first, then Healthcare, then Technology."""
    order = sorted(companies, key=lambda c: (-SECTORS.index(c.sector), c.ticker))
    return [c.ticker for c in order[:count]]


def simulate(
    *,
    seed: int,
    companies: Sequence[Company],
    n: int,
    shocks: np.ndarray,
    market_vol: float,
    sector_vol: float,
    dividend_tickers: int,
) -> PricePanel:
    """Bars for the market ETF and every company over ``n`` sessions."""
    rng = stream(seed, "prices")
    market = rng.normal(0.0004, market_vol, n)
    sector = {s: rng.normal(0.0, sector_vol, n) for s in SECTORS}
    betas = np.array([c.beta for c in companies])
    vols = np.array([c.idio_vol for c in companies])
    noise = rng.standard_normal((n, len(companies))) * vols
    sect = np.column_stack([sector[c.sector] for c in companies])
    resid = sect + noise + shocks
    total = np.clip(betas * market[:, None] + resid, -0.5, 1.0)

    payers = dividend_payers(companies, dividend_tickers)
    stocks: dict[str, Bars] = {}
    dividends: list[Dividend] = []
    for i, c in enumerate(companies):
        ex = []
        if c.ticker in payers:
            first = DIVIDEND_FIRST + 5 * payers.index(c.ticker)
            ex = list(range(first, n, DIVIDEND_EVERY))
        bars, amounts = _bars(rng, total[:, i], c.start_price, c.base_volume, resid[:, i], ex)
        stocks[c.ticker] = bars
        dividends += [Dividend(c.ticker, e, a) for e, a in zip(ex, amounts, strict=True)]
    market_bars, _ = _bars(rng, market, MARKET_START, 6.0e7, market, [])
    return PricePanel(market_bars, stocks, tuple(dividends))


def _bars(
    rng: np.random.Generator,
    ret: np.ndarray,
    start: float,
    base_volume: float,
    resid: np.ndarray,
    ex_dates: list[int],
) -> tuple[Bars, list[float]]:
    n = len(ret)
    raw = start * np.cumprod(1.0 + ret)
    amounts: list[float] = []
    div = np.zeros(n)
    for e in ex_dates:  # a few per year: scale the path from each ex-date on
        amount = round(DIVIDEND_YIELD * raw[e - 1], 2)
        raw[e:] *= (1.0 + ret[e] - amount / raw[e - 1]) / (1.0 + ret[e])
        div[e] = amount
        amounts.append(amount)
    prev = np.concatenate([[start], raw[:-1]])
    gap = rng.uniform(0.2, 0.6, n) * ret + rng.normal(0.0, 0.003, n)
    close = np.round(raw, 2)
    open_ = np.round(prev * (1.0 + gap) - div, 2)
    spread = np.abs(rng.normal(0.0, 0.007, (2, n)))
    high = np.maximum(
        np.round(np.maximum(open_, close) * (1.0 + spread[0]), 2), np.maximum(open_, close)
    )
    low = np.minimum(
        np.round(np.minimum(open_, close) * (1.0 - spread[1]), 2), np.minimum(open_, close)
    )
    low = np.maximum(low, 0.01)
    factor = np.ones(n)
    for e, amount in zip(ex_dates, amounts, strict=True):
        factor[:e] *= 1.0 - amount / close[e - 1]
    adj = np.round(close * factor, 6)
    volume = base_volume * np.exp(rng.normal(0.0, 0.25, n)) * (1.0 + 25.0 * np.abs(resid))
    return Bars(open_, high, low, close, adj, volume.round().astype(np.int64)), amounts


def write_csv(path: Path, days: Sequence[str], bars: Bars) -> None:
    """Write one instrument's bars as the real per-ticker CSV (CRLF, like the shared files)."""
    cols = zip(
        days,
        bars.open.tolist(),
        bars.high.tolist(),
        bars.low.tolist(),
        bars.close.tolist(),
        bars.adj_close.tolist(),
        bars.volume.tolist(),
        strict=True,
    )
    lines = [HEADER] + [f"{d},{o!r},{h!r},{lo!r},{c!r},{a!r},{v}" for d, o, h, lo, c, a, v in cols]
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
