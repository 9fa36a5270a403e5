"""Residual-return labels (paper 000 §3.4): what the market said about an anchor, after the fact.

For prediction day P and horizon h (sessions of the XNYS calendar):

- the stock's and the market proxy's returns R_h = adjClose(P+h-1) / adjClose(P-1) - 1;
- a horizon-specific market model fitted by least squares on overlapping h-day returns
  r_t = adjClose(t) / adjClose(t-h) - 1 of the sessions t in the twelve calendar months
  that end 20 sessions before P (the gap keeps pre-event drift and nearby news out);
  at least 120 observations, else there is no label;
- the residual eps = R_h - (alpha + beta * R^m_h), standardised by the residual volatility
  sigma of the same fit: z = eps / sigma, and the label +1 if z > 1, -1 if z < -1, else 0.

A label is knowable only at the close of session P+h-1 (`matured_at`), the instant the
feedback loop may first use it. Everything here reads adjusted closes only; nothing about
the anchor's text.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from finkg import queries
from finkg.errors import InputError
from finkg.kg.calendar import MarketCalendar
from finkg.kg.iri import mint
from finkg.kg.store import BaseStore

GAP_SESSIONS = 20
WINDOW_MONTHS = 12
MIN_OBSERVATIONS = 120
THRESHOLD = 1.0


@dataclass(frozen=True)
class ResidualLabel:
    ticker: str
    prediction_day: dt.date
    horizon: int
    stock_return: float
    market_return: float
    alpha: float
    beta: float
    sigma: float
    z: float
    label: int  # -1, 0 or +1
    observations: int
    matured_at: dt.datetime


@dataclass(frozen=True)
class NoLabel:
    """Why an anchor-horizon pair has no label (it is left out, as in the paper)."""

    ticker: str
    prediction_day: dt.date
    horizon: int
    reason: str


class PriceTable:
    """Adjusted closes by ticker, read from the store once per ticker and span."""

    def __init__(self, series: Mapping[str, pd.Series]) -> None:
        self.series = dict(series)

    @classmethod
    def load(
        cls, store: BaseStore, tickers: Iterable[str], *, first: dt.date, last: dt.date
    ) -> PriceTable:
        names = sorted(set(tickers))
        if not names:
            return cls({})
        by_iri = {mint("company", t, base=store.graphs.base): t for t in names}
        rows = queries.select(
            store, "adj_closes", {"entity": list(by_iri), "first": first, "last": last}
        )
        data: dict[str, dict[dt.date, float]] = {t: {} for t in names}
        for r in rows:
            data[by_iri[r.iri("entity")]][r.date("day")] = r.double("adjClose")
        return cls({t: pd.Series(v, dtype=float).sort_index() for t, v in data.items()})

    def close(self, ticker: str, day: dt.date) -> float | None:
        s = self.series.get(ticker)
        if s is None or day not in s.index:
            return None
        return float(s[day])

    def aligned(self, tickers: tuple[str, str], days: list[dt.date]) -> np.ndarray:
        """A (len(days), 2) array of the two tickers' closes; NaN where a bar is missing."""
        cols = [self.series.get(t, pd.Series(dtype=float)).reindex(days) for t in tickers]
        return np.column_stack([c.to_numpy(dtype=float) for c in cols])


@dataclass(frozen=True)
class MarketModel:
    """A horizon-h market model fitted on the estimation window of a prediction day."""

    alpha: float
    beta: float
    sigma: float  # residual volatility of the fit (ddof=2)
    observations: int

    def z(self, stock_return: float, market_return: float) -> float:
        """The standardised residual of an h-day return pair under this model."""
        return float((stock_return - (self.alpha + self.beta * market_return)) / self.sigma)


def market_model(
    prices: PriceTable,
    ticker: str,
    proxy: str,
    prediction_day: dt.date,
    horizon: int,
    *,
    calendar: MarketCalendar,
    gap: int = GAP_SESSIONS,
    months: int = WINDOW_MONTHS,
    min_observations: int = MIN_OBSERVATIONS,
) -> MarketModel | NoLabel:
    """The market model of the module docstring: least squares on overlapping h-day returns
    of the `months` calendar months ending `gap` sessions before P. It reads no bar after
    that window's end, so it is knowable long before P. `NoLabel` says why there is none."""
    if horizon < 1:
        raise InputError("horizon must be at least 1 session", field="horizon", value=horizon)
    window_end = calendar.session_offset(prediction_day, -gap)
    window_start = (pd.Timestamp(window_end) - pd.DateOffset(months=months)).date()
    days = calendar.sessions(window_start, window_end)
    history = calendar.sessions(
        calendar.session_offset(days[0], -horizon) if days else window_start, window_end
    )
    closes = prices.aligned((ticker, proxy), history)
    rets = closes[horizon:] / closes[:-horizon] - 1  # r_t over (t-h, t], overlapping
    rets = rets[np.isfinite(rets).all(axis=1)]
    n = len(rets)
    if n < min_observations:
        return NoLabel(
            ticker,
            prediction_day,
            horizon,
            f"{n} observations in the estimation window, fewer than {min_observations}",
        )
    x, y = rets[:, 1], rets[:, 0]
    beta, alpha = np.polyfit(x, y, 1)
    residuals = y - (alpha + beta * x)
    sigma = float(residuals.std(ddof=2))
    if not sigma > 0:
        return NoLabel(
            ticker, prediction_day, horizon, "zero residual volatility in the estimation window"
        )
    return MarketModel(float(alpha), float(beta), sigma, n)


def residual_label(
    prices: PriceTable,
    ticker: str,
    proxy: str,
    prediction_day: dt.date,
    horizon: int,
    *,
    calendar: MarketCalendar,
    gap: int = GAP_SESSIONS,
    months: int = WINDOW_MONTHS,
    min_observations: int = MIN_OBSERVATIONS,
    threshold: float = THRESHOLD,
) -> ResidualLabel | NoLabel:
    """The label of one anchor at one horizon (see the module docstring)."""
    if horizon < 1:
        raise InputError("horizon must be at least 1 session", field="horizon", value=horizon)
    start, end = calendar.label_window(prediction_day, horizon)
    now = prices.aligned((ticker, proxy), [start, end])
    if np.isnan(now).any():
        return NoLabel(
            ticker,
            prediction_day,
            horizon,
            f"no adjusted close for {ticker} or {proxy} on {start} or {end}",
        )
    stock_ret, market_ret = now[1] / now[0] - 1
    model = market_model(
        prices,
        ticker,
        proxy,
        prediction_day,
        horizon,
        calendar=calendar,
        gap=gap,
        months=months,
        min_observations=min_observations,
    )
    if isinstance(model, NoLabel):
        return model
    z = model.z(stock_ret, market_ret)
    label = 1 if z > threshold else -1 if z < -threshold else 0
    return ResidualLabel(
        ticker=ticker,
        prediction_day=prediction_day,
        horizon=horizon,
        stock_return=float(stock_ret),
        market_return=float(market_ret),
        alpha=model.alpha,
        beta=model.beta,
        sigma=model.sigma,
        z=z,
        label=label,
        observations=model.observations,
        matured_at=calendar.bar_available_at(end),
    )


def span_needed(
    calendar: MarketCalendar, first_day: dt.date, last_day: dt.date, *, horizon: int = 5
) -> tuple[dt.date, dt.date]:
    """The session span a PriceTable must cover to label prediction days in
    [first_day, last_day] at horizons up to `horizon`."""
    end = calendar.session_offset(first_day, -GAP_SESSIONS)
    start = (pd.Timestamp(end) - pd.DateOffset(months=WINDOW_MONTHS)).date()
    return calendar.session_offset(calendar.sessions(start, end)[0], -horizon - 1), (
        calendar.session_offset(last_day, horizon)
    )
