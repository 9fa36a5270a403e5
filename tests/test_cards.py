"""The pre-decision market-context card (paper 000 appendix B): values by hand, and blind to
every bar after its last session."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from finkg.errors import InputError
from finkg.kg.derive.cards import market_card
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.store import BaseStore, open_store
from tests.test_derive import synthetic, write_csv

START = dt.date(2019, 1, 2)


def _load(store: BaseStore, folder: Path, n: int) -> None:
    paths = [
        write_csv(folder / "ZQAW.csv", synthetic(START, n, seed=1)),
        write_csv(folder / "ZQMX.csv", synthetic(START, n, seed=2)),
    ]
    ingest(store, "prices", loader("prices"), paths, IngestOptions(graphs=store.graphs))


def test_returns_trend_and_text_by_hand(tmp_path: Path) -> None:
    store = open_store(None)
    _load(store, tmp_path, 90)
    bars = synthetic(START, 90, seed=1)
    last = bars.index[79]
    card = market_card(store, "ZQAW", last, proxy="ZQMX")
    closes = list(bars.adj_close[:80])
    assert card.as_of == last
    assert card.stock.d1 == pytest.approx(closes[-1] / closes[-2] - 1)
    assert card.stock.d5 == pytest.approx(closes[-1] / closes[-6] - 1)
    assert card.stock.d20 == pytest.approx(closes[-1] / closes[-21] - 1)
    market = list(synthetic(START, 90, seed=2).adj_close[:80])
    assert card.market.d5 == pytest.approx(market[-1] / market[-6] - 1)
    short, long = sum(closes[-20:]) / 20, sum(closes[-60:]) / 60
    expected = "up" if short > 1.01 * long else "down" if short < 0.99 * long else "flat"
    assert card.trend == expected
    assert card.stock.volatility_state in ("elevated", "normal", "low")
    text = card.text()
    assert f"as_of: {last} close" in text and "relative 5D performance vs ZQMX" in text


def test_a_card_never_sees_a_later_bar(tmp_path: Path) -> None:
    early, full = open_store(None), open_store(None)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _load(early, tmp_path / "a", 60)
    _load(full, tmp_path / "b", 90)
    last = synthetic(START, 60).index[-1]
    assert market_card(early, "ZQAW", last, proxy="ZQMX") == market_card(
        full, "ZQAW", last, proxy="ZQMX"
    )


def test_short_history_says_unknown_and_no_bars_is_an_error(tmp_path: Path) -> None:
    store = open_store(None)
    _load(store, tmp_path, 30)
    card = market_card(store, "ZQAW", synthetic(START, 30).index[-1], proxy="ZQMX")
    assert (card.trend, card.stock.volatility_state) == ("unknown", "unknown")
    assert card.stock.d20 is not None
    with pytest.raises(InputError, match="ZZZZ"):
        market_card(store, "ZZZZ", START, proxy="ZQMX")
