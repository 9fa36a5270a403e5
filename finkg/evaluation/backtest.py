"""The downstream portfolio of paper 000 §4.4: is there money in the 3D signal?

On each prediction day t, the stocks with a positive 3D stock-day score are ranked (ties:
the mean static retrieval score, then the ticker) and the top K = 10 form a sleeve v_t,
equally weighted at 1/K each (cash for the empty slots). A sleeve formed on t earns from
the close of t on and is held three sessions, so the portfolio on session s is
w_s = (v_{s-1} + v_{s-2} + v_{s-3}) / 3, earning the close-to-close return of s. Turnover
is one-way, TO_s = 1/2 sum |w_s - w~_s| with w~ the previous weights after a day's drift;
net return r_s - 0.001 TO_s (10 bps). Benchmarks: the market proxy, and the equal-weight
universe rebalanced daily.

Annual return is compounded over 252 sessions a year; volatility is the daily standard
deviation times sqrt(252); Sharpe is the annualised mean daily net return over that
volatility (risk-free rate zero); drawdown is measured on the compounded equity curve.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from finkg.errors import InputError

SESSIONS_PER_YEAR = 252


@dataclass(frozen=True)
class DayScore:
    ticker: str
    day: dt.date  # the prediction day the stock-day score is for
    score: float  # mean 3D prediction of its anchors
    static: float  # mean static retrieval score, the first tie-break


@dataclass(frozen=True)
class Performance:
    name: str
    annual_return: float
    annual_volatility: float
    sharpe: float
    max_drawdown: float
    turnover: float  # mean daily one-way turnover
    daily: pd.Series  # net daily returns by session

    @property
    def equity(self) -> pd.Series:
        return (1 + self.daily).cumprod()


def sleeves(scores: Sequence[DayScore], *, k: int = 10) -> dict[dt.date, dict[str, float]]:
    """The sleeve formed on each prediction day: ticker -> weight (1/K each)."""
    if k < 1:
        raise InputError("K must be at least 1", field="k", value=k)
    by_day: dict[dt.date, list[DayScore]] = defaultdict(list)
    for s in scores:
        if s.score > 0:
            by_day[s.day].append(s)
    return {
        day: {s.ticker: 1 / k for s in sorted(g, key=lambda s: (-s.score, -s.static, s.ticker))[:k]}
        for day, g in by_day.items()
    }


def performance(name: str, daily: pd.Series, turnover: pd.Series | None = None) -> Performance:
    daily = daily.astype(float)
    n = len(daily)
    if n == 0:
        raise InputError("no sessions to evaluate", field="sessions", value=name)
    growth = float((1 + daily).prod())
    annual = growth ** (SESSIONS_PER_YEAR / n) - 1
    vol = float(daily.std(ddof=1)) * math.sqrt(SESSIONS_PER_YEAR) if n > 1 else float("nan")
    sharpe = float(daily.mean()) * SESSIONS_PER_YEAR / vol if vol and vol > 0 else float("nan")
    equity = (1 + daily).cumprod()
    drawdown = float((equity / equity.cummax() - 1).min())
    mean_to = float(turnover.mean()) if turnover is not None and len(turnover) else 0.0
    return Performance(name, annual, vol, sharpe, drawdown, mean_to, daily)


def returns_panel(closes: Mapping[str, pd.Series], sessions: Sequence[dt.date]) -> pd.DataFrame:
    """Close-to-close returns of each ticker on each session (NaN where a bar is missing)."""
    frame = pd.DataFrame({t: s for t, s in closes.items()}).sort_index()
    return frame.pct_change(fill_method=None).reindex(list(sessions))


def portfolio(
    name: str,
    scores: Sequence[DayScore],
    returns: pd.DataFrame,
    *,
    k: int = 10,
    hold: int = 3,
    cost: float = 0.001,
) -> Performance:
    """The strategy's net daily returns over `returns`' sessions (module docstring)."""
    formed = sleeves(scores, k=k)
    sessions = list(returns.index)
    weights = pd.DataFrame(0.0, index=sessions, columns=returns.columns)
    for i, s in enumerate(sessions):
        for lag in range(1, hold + 1):
            if i - lag >= 0 and (sleeve := formed.get(sessions[i - lag])):
                for ticker, w in sleeve.items():
                    if ticker in weights.columns:
                        weights.at[s, ticker] += w / hold
    r = returns.fillna(0.0)
    gross = (weights * r).sum(axis=1)
    drifted = weights.shift(1).fillna(0.0) * (1 + r.shift(1).fillna(0.0))
    total = drifted.sum(axis=1) + (1 - weights.shift(1).fillna(0.0).sum(axis=1))  # with cash
    drifted = drifted.div(total.where(total > 0, 1.0), axis=0)
    turnover = 0.5 * (weights - drifted).abs().sum(axis=1)
    turnover.iloc[0] = 0.5 * weights.iloc[0].abs().sum()
    return performance(name, gross - cost * turnover, turnover)


def equal_weight(name: str, returns: pd.DataFrame) -> Performance:
    """Every ticker with a return that day, equally weighted, rebalanced daily (no costs)."""
    return performance(name, returns.mean(axis=1, skipna=True).fillna(0.0))


def proxy(name: str, returns: pd.Series) -> Performance:
    return performance(name, returns.fillna(0.0))


def equity_png(path: str, curves: Sequence[Performance]) -> None:
    """A PNG of the compounded equity curves."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=110)
    for p in curves:
        ax.plot(pd.to_datetime(p.equity.index), np.asarray(p.equity), label=p.name, linewidth=1.2)
    ax.set_ylabel("growth of 1 (net of 10 bps on turnover)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.autofmt_xdate()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
