"""The pre-decision market-context card of paper 000 appendix B.

Built only from bars up to the session before the prediction day (`card_last_session`):
the stock's prior 1-, 5- and 20-session returns, the same for the market proxy and the
difference (relative performance), the realized-volatility state (20-session volatility
against its one-year median, for stock and proxy), and the trend (20- against 60-session
average price). It never sees a later bar, a label or a document.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
import statistics

import numpy as np
from pydantic import BaseModel, ConfigDict

from finkg import queries
from finkg.errors import InputError
from finkg.kg.iri import mint
from finkg.kg.store import BaseStore


class Returns(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    d1: float | None
    d5: float | None
    d20: float | None
    volatility_state: str  # "elevated", "normal", "low", or "unknown"


class MarketCard(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    ticker: str
    proxy: str
    as_of: dt.date  # the last session whose bar the card uses
    stock: Returns
    market: Returns
    trend: str  # "up", "down", "flat" or "unknown" for the stock

    def text(self) -> str:
        def pct(x: float | None) -> str:
            return "n/a" if x is None else f"{x:+.2%}"

        rel = (
            self.stock.d5 - self.market.d5
            if self.stock.d5 is not None and self.market.d5 is not None
            else None
        )
        return "\n".join(
            [
                f"as_of: {self.as_of} close",
                f"market_proxy: {self.proxy}",
                f"{self.ticker} prior 1D: {pct(self.stock.d1)}, 5D: {pct(self.stock.d5)}, "
                f"20D: {pct(self.stock.d20)}",
                f"{self.proxy} prior 1D: {pct(self.market.d1)}, 5D: {pct(self.market.d5)}, "
                f"20D: {pct(self.market.d20)}",
                f"relative 5D performance vs {self.proxy}: {pct(rel)}",
                f"realized volatility: {self.ticker} {self.stock.volatility_state}, "
                f"{self.proxy} {self.market.volatility_state}",
                f"{self.ticker} trend (20 vs 60 sessions): {self.trend}",
            ]
        )

    def brief(self) -> str:
        """The same numbers in two lines (a scored prompt's card: fewer tokens, no prose).

        >>> r = Returns(d1=0.01, d5=-0.02, d20=None, volatility_state="normal")
        >>> print(MarketCard(ticker="ACME", proxy="QQQ", as_of=dt.date(2020, 5, 1), stock=r,
        ...                  market=r, trend="up").brief())
        ACME to 2020-05-01: 1D +1.0%, 5D -2.0%, 20D n/a; volatility normal; trend up
        QQQ: 1D +1.0%, 5D -2.0%, 20D n/a; volatility normal
        """

        def pct(x: float | None) -> str:
            return "n/a" if x is None else f"{x:+.1%}"

        def line(r: Returns) -> str:
            return (
                f"1D {pct(r.d1)}, 5D {pct(r.d5)}, 20D {pct(r.d20)}; volatility {r.volatility_state}"
            )

        return (
            f"{self.ticker} to {self.as_of}: {line(self.stock)}; trend {self.trend}\n"
            f"{self.proxy}: {line(self.market)}"
        )


CARD_SESSIONS = 300  # the most a card looks back over (the trend needs 60)
CARD_DAYS = 450  # calendar days that hold CARD_SESSIONS sessions, holidays included


def _closes(store: BaseStore, ticker: str, last: dt.date) -> list[float]:
    """The adjusted closes of the last CARD_SESSIONS bars up to `last`, oldest first. The
    bars are asked for by key, one per calendar day (whatever the calendar, missing days
    simply have no bar): see `bars_on.rq`."""
    base = store.graphs.base
    days = (last - dt.timedelta(days=i) for i in range(CARD_DAYS))
    rows = queries.select(
        store, "bars_on", {"bar": [mint("bar", ticker, d.isoformat(), base=base) for d in days]}
    )
    return [r.double("adjClose") for r in reversed(list(rows)[:CARD_SESSIONS])]


def _ret(closes: list[float], n: int) -> float | None:
    return closes[-1] / closes[-1 - n] - 1 if len(closes) > n else None


def _volatility_state(closes: list[float]) -> str:
    rets = [math.log(b / a) for a, b in itertools.pairwise(closes)]
    if len(rets) < 60:
        return "unknown"
    # the 20-session population deviations, ending at each session (numpy: statistics.pstdev
    # is exact, with fractions, and took 0.1 s a card)
    windows = np.lib.stride_tricks.sliding_window_view(np.asarray(rets), 20).std(axis=1)
    now, typical = float(windows[-1]), float(np.median(windows[-250:]))
    if now > 1.5 * typical:
        return "elevated"
    if now < 0.67 * typical:
        return "low"
    return "normal"


def _returns(closes: list[float]) -> Returns:
    return Returns(
        d1=_ret(closes, 1),
        d5=_ret(closes, 5),
        d20=_ret(closes, 20),
        volatility_state=_volatility_state(closes),
    )


def market_card(store: BaseStore, ticker: str, last_session: dt.date, *, proxy: str) -> MarketCard:
    """The card for a decision whose prediction day follows `last_session`."""
    stock = _closes(store, ticker, last_session)
    if not stock:
        raise InputError(
            "no bars for the card",
            field="ticker",
            value=ticker,
            hint=f"ingest {ticker}'s prices up to {last_session}",
        )
    market = _closes(store, proxy, last_session)
    trend = "unknown"
    if len(stock) >= 60:
        short, long = statistics.fmean(stock[-20:]), statistics.fmean(stock[-60:])
        trend = "up" if short > 1.01 * long else "down" if short < 0.99 * long else "flat"
    return MarketCard(
        ticker=ticker,
        proxy=proxy,
        as_of=last_session,
        stock=_returns(stock),
        market=_returns(market),
        trend=trend,
    )
