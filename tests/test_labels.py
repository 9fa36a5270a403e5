"""Residual-return labels (paper 000 §3.4) by hand, on a store, and on the demo world."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from finkg.evaluation.labels import NoLabel, PriceTable, ResidualLabel, residual_label, span_needed
from finkg.kg.calendar import get_calendar
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.store import open_store
from tests.test_derive import write_csv

CAL = get_calendar()
DAYS = CAL.sessions(dt.date(2018, 1, 2), dt.date(2020, 3, 31))
P = dt.date(2020, 3, 2)


def _table(jump: float = 0.0, beta: float = 1.3, seed: int = 3) -> PriceTable:
    """Stock = alpha + beta x market + noise, log returns; `jump` added on P."""
    rng = np.random.default_rng(seed)
    market = rng.normal(0.0004, 0.01, len(DAYS))
    stock = 0.0001 + beta * market + rng.normal(0, 0.01, len(DAYS))
    stock[DAYS.index(P)] += jump
    return PriceTable(
        {
            "ZQAW": pd.Series(100 * np.exp(np.cumsum(stock)), index=DAYS),
            "ZQMX": pd.Series(100 * np.exp(np.cumsum(market)), index=DAYS),
        }
    )


def test_the_label_follows_the_papers_formulas_by_hand() -> None:
    table = _table(jump=0.05)
    out = residual_label(table, "ZQAW", "ZQMX", P, 3, calendar=CAL)
    assert isinstance(out, ResidualLabel)
    start, end = CAL.label_window(P, 3)
    s, m = table.series["ZQAW"], table.series["ZQMX"]
    assert out.stock_return == pytest.approx(s[end] / s[start] - 1)
    assert out.market_return == pytest.approx(m[end] / m[start] - 1)
    # the estimation window: 12 months ending 20 sessions before P, overlapping 3-day returns
    w_end = CAL.session_offset(P, -20)
    window = CAL.sessions(dt.date(w_end.year - 1, w_end.month, w_end.day), w_end)
    ts = [d for d in window]
    r_s = np.array([s[t] / s[CAL.session_offset(t, -3)] - 1 for t in ts])
    r_m = np.array([m[t] / m[CAL.session_offset(t, -3)] - 1 for t in ts])
    beta, alpha = np.polyfit(r_m, r_s, 1)
    sigma = (r_s - alpha - beta * r_m).std(ddof=2)
    assert out.observations == len(ts)
    assert (out.alpha, out.beta) == pytest.approx((alpha, beta))
    assert out.beta == pytest.approx(1.3, abs=0.35)  # sampling noise: ~83 independent 3D returns
    z = (out.stock_return - alpha - beta * out.market_return) / sigma
    assert out.z == pytest.approx(z)
    assert out.z > 1 and out.label == 1
    assert out.matured_at == CAL.bar_available_at(end)
    assert out.matured_at.isoformat() == f"{end.isoformat()}T16:00:00-05:00"


def test_signs_and_the_neutral_band() -> None:
    assert residual_label(_table(jump=-0.06), "ZQAW", "ZQMX", P, 1, calendar=CAL).label == -1  # type: ignore[union-attr]
    calm = residual_label(_table(jump=0.0), "ZQAW", "ZQMX", P, 1, calendar=CAL)
    assert isinstance(calm, ResidualLabel) and abs(calm.z) <= 1 and calm.label == 0


def test_too_little_history_gives_no_label() -> None:
    short = PriceTable({k: v[-100:] for k, v in _table().series.items()})
    out = residual_label(short, "ZQAW", "ZQMX", P, 1, calendar=CAL)
    assert isinstance(out, NoLabel) and "fewer than 120" in out.reason
    gone = residual_label(_table(), "ZQAW", "NOPE", P, 1, calendar=CAL)
    assert isinstance(gone, NoLabel) and "NOPE" in gone.reason


def test_the_label_ignores_every_bar_after_its_window() -> None:
    full = _table(jump=0.05)
    _, end = CAL.label_window(P, 5)
    cut = PriceTable({k: v[v.index <= end] for k, v in full.series.items()})
    assert residual_label(cut, "ZQAW", "ZQMX", P, 5, calendar=CAL) == residual_label(
        full, "ZQAW", "ZQMX", P, 5, calendar=CAL
    )


def test_prices_load_from_the_store(tmp_path: Path) -> None:
    table = _table(jump=0.05)
    frames = {}
    for ticker, series in table.series.items():
        closes = series[series.index >= dt.date(2019, 1, 2)]
        frames[ticker] = pd.DataFrame(
            {
                "open": closes,
                "high": closes * 1.01,
                "low": closes * 0.99,
                "close": closes,
                "adj_close": closes,
                "volume": 1000.0,
            }
        )
    store = open_store(None)
    paths = [write_csv(tmp_path / f"{t}.csv", f) for t, f in frames.items()]
    ingest(store, "prices", loader("prices"), paths, IngestOptions(graphs=store.graphs))
    first, last = span_needed(CAL, P, P)
    loaded = PriceTable.load(store, ["ZQAW", "ZQMX"], first=first, last=last)
    assert loaded.series["ZQAW"].index[0] == first > dt.date(2019, 1, 2)
    assert loaded.series["ZQAW"].index[-1] == last
    direct = PriceTable({k: v[v.index >= dt.date(2019, 1, 2)] for k, v in table.series.items()})
    ours = residual_label(loaded, "ZQAW", "ZQMX", P, 3, calendar=CAL)
    assert isinstance(ours, ResidualLabel)
    assert ours.z == pytest.approx(residual_label(direct, "ZQAW", "ZQMX", P, 3, calendar=CAL).z)  # type: ignore[union-attr]
