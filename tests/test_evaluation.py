"""Paper 000 §4 metrics and the §4.4 portfolio, by hand on tiny inputs."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pandas as pd
import pytest

from finkg.evaluation.backtest import (
    DayScore,
    equal_weight,
    performance,
    portfolio,
    returns_panel,
    sleeves,
)
from finkg.evaluation.metrics import (
    Scored,
    macro_f1,
    non_neutral_f1,
    rank_ic,
    rank_ic_days,
    ticker_days,
)

D = [dt.date(2020, 5, d) for d in (4, 5, 6, 7, 8, 11, 12)]


def test_ticker_days_average_anchors_and_keep_the_days_label() -> None:
    rows = [
        Scored("A", D[0], 3, 1, 1, 1.4),
        Scored("A", D[0], 3, 0, 1, 1.4),
        Scored("B", D[0], 3, -1, 0, -0.3),
    ]
    days = ticker_days(rows)
    assert [(r.ticker, r.predicted, r.label) for r in days] == [("A", 0.5, 1), ("B", -1, 0)]


def test_rank_ic_is_the_daily_spearman_averaged() -> None:
    perfect = [
        Scored(t, D[0], 1, p, 0, z) for t, p, z in [("A", 1, 2.0), ("B", 0, 0.1), ("C", -1, -1.0)]
    ]
    inverse = [
        Scored(t, D[1], 1, p, 0, z) for t, p, z in [("A", 1, -2.0), ("B", 0, 0.1), ("C", -1, 1.0)]
    ]
    assert rank_ic(perfect) == pytest.approx(1.0)
    assert rank_ic(perfect + inverse) == pytest.approx(0.0)
    two = [Scored(t, D[2], 1, p, 0, z) for t, p, z in [("A", 1, 1.0), ("B", -1, -1.0)]]
    assert math.isnan(rank_ic(two))  # fewer than three tickers: no cross-section


def test_rank_ic_says_how_many_days_it_rests_on() -> None:
    """`finkg demo --impact` showed rank IC 0.333 for every variant: on its 4 tickers only
    two days had three predicted, so it was two Spearman values of three points each."""
    perfect = [
        Scored(t, D[0], h, p, 0, z)
        for t, p, z in [("A", 1, 2.0), ("B", 0, 0.1), ("C", -1, -1.0)]
        for h in (1, 3)
    ]
    two = [Scored(t, D[2], 1, p, 0, z) for t, p, z in [("A", 1, 1.0), ("B", -1, -1.0)]]
    flat = [Scored(t, D[1], 1, 0, 0, z) for t, z in [("A", 1.0), ("B", 0.0), ("C", -1.0)]]
    assert rank_ic_days(perfect) == 1
    assert rank_ic_days(perfect + two + flat) == 1  # two tickers, no spread: no cross-section
    assert rank_ic_days(two) == 0 and rank_ic_days([]) == 0


def test_f1s_per_horizon() -> None:
    rows = [Scored("A", D[0], 5, p, y, 0.0) for p, y in [(1, 1), (-1, -1), (0, 1), (0, 0)]]
    # +1: tp 1 fn 1 -> 2/3; -1: 1; 0: tp 1 fp 1 -> 2/3
    assert macro_f1(rows, 5) == pytest.approx((2 / 3 + 1 + 2 / 3) / 3)
    assert non_neutral_f1(rows) == pytest.approx((2 / 3 + 1) / 2)
    assert math.isnan(macro_f1(rows, 1))


def test_sleeves_take_the_top_k_positive_scores_with_ties_broken() -> None:
    scores = [
        DayScore("B", D[0], 0.5, 0.2),
        DayScore("A", D[0], 0.5, 0.2),
        DayScore("C", D[0], 0.5, 0.9),
        DayScore("Z", D[0], -1.0, 1.0),
        DayScore("E", D[0], 1.0, 0.0),
    ]
    assert sleeves(scores, k=3) == {D[0]: {"E": 1 / 3, "C": 1 / 3, "A": 1 / 3}}
    assert sleeves([DayScore("Z", D[0], 0.0, 1.0)], k=3) == {}  # nothing positive: all cash


def test_a_sleeve_earns_from_the_next_session_for_three_sessions() -> None:
    closes = {
        "A": pd.Series([100, 110, 121, 121, 133.1, 133.1, 133.1], index=D, dtype=float),
        "B": pd.Series([100.0] * 7, index=D),
    }
    returns = returns_panel(closes, D[1:])
    p = portfolio("s", [DayScore("A", D[1], 1.0, 0.0)], returns, k=1, cost=0.0)
    # formed on D1: a third of the capital in A on D2, D3, D4 (A: +10 %, 0 %, +10 %)
    assert p.daily.round(10).tolist() == [
        0.0,
        pytest.approx(0.1 / 3),
        0.0,
        pytest.approx(0.1 / 3),
        0.0,
        0.0,
    ]
    # costs: buying a third on D2, then the drift, then selling on D5
    q = portfolio("s", [DayScore("A", D[1], 1.0, 0.0)], returns, k=1, cost=0.001)
    diff = (p.daily - q.daily) / 0.001
    assert diff.iloc[1] == pytest.approx(0.5 * (1 / 3))  # one-way: half the traded weight
    assert diff.iloc[0] == 0.0 and diff.iloc[4] > 0  # nothing on D1, the sale on D5


def test_performance_figures_by_hand() -> None:
    daily = pd.Series([0.01, -0.02, 0.03, 0.0], index=D[:4])
    p = performance("x", daily)
    growth = 1.01 * 0.98 * 1.03
    assert p.annual_return == pytest.approx(growth ** (252 / 4) - 1)
    assert p.annual_volatility == pytest.approx(np.std([0.01, -0.02, 0.03, 0.0], ddof=1) * 252**0.5)
    assert p.sharpe == pytest.approx(0.005 * 252 / p.annual_volatility)
    assert p.max_drawdown == pytest.approx(0.98 - 1)
    ew = equal_weight("ew", pd.DataFrame({"A": [0.02, np.nan], "B": [0.0, 0.01]}, index=D[:2]))
    assert ew.daily.tolist() == [pytest.approx(0.01), pytest.approx(0.01)]
