"""The impact job's no-skill rules and head features (finkg.evaluation.baselines): momentum
by hand and blind to every bar from the prediction day on, tone with negation, and the
card's and event type's numbers."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pyoxigraph import NamedNode

from finkg.errors import InputError
from finkg.evaluation.baselines import (
    CARD_FEATURES,
    EVENT_FEATURES,
    EVENT_TYPES,
    NEGATIONS,
    NEGATIVE,
    POSITIVE,
    card_features,
    event_type_features,
    momentum,
    prior_z,
    tone,
)
from finkg.evaluation.labels import PriceTable
from finkg.kg.calendar import get_calendar
from finkg.kg.derive.cards import MarketCard, Returns, market_card
from finkg.kg.enrich import EVENT_CONCEPTS
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.store import open_store
from tests.test_derive import synthetic, write_csv

CAL = get_calendar()
DAYS = CAL.sessions(dt.date(2018, 1, 2), dt.date(2020, 3, 31))
P = dt.date(2020, 3, 2)


def back(n: int) -> dt.date:
    return CAL.session_offset(P, -n)


def _table(jumps: dict[dt.date, float] | None = None, seed: int = 3) -> PriceTable:
    """Stock = alpha + 1.3 x market + noise in log returns, the noise switched off over the
    ten sessions before P (a quiet stock); each jump added to the return into its session
    (so it moves every close from that session on)."""
    rng = np.random.default_rng(seed)
    market = rng.normal(0.0004, 0.01, len(DAYS))
    noise = rng.normal(0, 0.01, len(DAYS))
    noise[DAYS.index(back(10)) : DAYS.index(P)] = 0.0
    stock = 0.0001 + 1.3 * market + noise
    for day, jump in (jumps or {}).items():
        stock[DAYS.index(day)] += jump
    return PriceTable(
        {
            "ZQAW": pd.Series(100 * np.exp(np.cumsum(stock)), index=DAYS),
            "ZQMX": pd.Series(100 * np.exp(np.cumsum(market)), index=DAYS),
        }
    )


def _z(table: PriceTable) -> float | None:
    return prior_z(table, "ZQAW", "ZQMX", P, calendar=CAL)


def _momentum(table: PriceTable) -> int:
    return momentum(table, "ZQAW", "ZQMX", P, calendar=CAL)


# --- momentum ------------------------------------------------------------------------------


def test_momentum_z_follows_the_label_market_model_by_hand() -> None:
    table = _table({back(3): 0.06})
    s, m = table.series["ZQAW"], table.series["ZQMX"]
    # the labels' estimation window: 12 months ending 20 sessions before P, 5-day returns
    w_end = back(20)
    window = CAL.sessions(dt.date(w_end.year - 1, w_end.month, w_end.day), w_end)
    r_s = np.array([s[t] / s[CAL.session_offset(t, -5)] - 1 for t in window])
    r_m = np.array([m[t] / m[CAL.session_offset(t, -5)] - 1 for t in window])
    beta, alpha = np.polyfit(r_m, r_s, 1)
    sigma = (r_s - alpha - beta * r_m).std(ddof=2)
    # the prior five sessions: (P-6, P-1]
    stock, market = s[back(1)] / s[back(6)] - 1, m[back(1)] / m[back(6)] - 1
    assert _z(table) == pytest.approx((stock - alpha - beta * market) / sigma)
    assert _z(table) > 1 and _momentum(table) == 1


def test_a_planted_drop_gives_minus_one_and_a_quiet_stock_zero() -> None:
    down = _table({back(2): -0.06})
    assert _z(down) < -1 and _momentum(down) == -1  # type: ignore[operator]
    quiet = _table()
    assert abs(_z(quiet)) <= 1 and _momentum(quiet) == 0  # type: ignore[arg-type]


def test_the_five_sessions_are_those_ending_the_session_before_p() -> None:
    quiet = _z(_table())
    assert quiet is not None
    # the return into P-5 is the first of the five; into P-6, before them; into P, after
    assert _momentum(_table({back(5): 0.06})) == 1
    assert _momentum(_table({back(1): 0.06})) == 1
    assert _z(_table({back(6): 0.06})) == pytest.approx(quiet)
    assert _z(_table({P: 0.06})) == pytest.approx(quiet)


@pytest.mark.parametrize("jumps", [{}, {back(3): 0.06}, {back(2): -0.06}])
def test_momentum_never_sees_a_bar_on_or_after_p(jumps: dict[dt.date, float]) -> None:
    table = _table(jumps)
    z = _z(table)
    later = [d for d in DAYS if d >= P]
    rng = np.random.default_rng(11)
    for day in later:  # any one bar changed, on either series
        for ticker in ("ZQAW", "ZQMX"):
            changed = PriceTable({k: v.copy() for k, v in table.series.items()})
            changed.series[ticker][day] *= rng.uniform(0.5, 1.5)
            assert _z(changed) == z
    cut = PriceTable({k: v[v.index < P] for k, v in table.series.items()})
    assert _z(cut) == z and _momentum(cut) == _momentum(table)
    # while the session before P is in view: changing it changes the score
    moved = PriceTable({k: v.copy() for k, v in table.series.items()})
    moved.series["ZQAW"][back(1)] *= 1.1
    assert _z(moved) != pytest.approx(z)


def test_not_enough_history_gives_zero() -> None:
    short = PriceTable({k: v[-100:] for k, v in _table({back(3): 0.06}).series.items()})
    assert _z(short) is None and _momentum(short) == 0
    table = _table({back(3): 0.06})
    assert prior_z(table, "ZQAW", "NOPE", P, calendar=CAL) is None
    assert momentum(table, "ZQAW", "NOPE", P, calendar=CAL) == 0
    gap = PriceTable({k: v.drop(back(6)) for k, v in table.series.items()})
    assert _z(gap) is None and _momentum(gap) == 0


# --- tone ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headline", "expected"),
    [
        ("Acme beats estimates, shares surge", 1),
        ("UPGRADE: analysts lift Acme to buy", 1),
        ("Acme shares plunge after earnings miss", -1),
        ("Acme faces SEC probe over accounting fraud", -1),
        ("Acme names new chief financial officer", 0),
        ("Acme growth offsets lawsuit costs", 0),  # one each
        ("Regulator finds no violation at Acme", 1),  # negation flips a negative word
        ("Acme does not expect further losses", 1),  # within three words
        ("Acme\u2019s quarter wasn't strong", -1),  # curly apostrophe, contraction
        ("Acme's growth was not strong", 0),
        ("No change to Acme board; shares surge", 1),  # negation out of reach by then
        ("Not only growth but strong margins", 0),  # a negation flips one word only
        ("", 0),
    ],
)
def test_tone(headline: str, expected: int) -> None:
    assert tone(headline) == expected


def test_the_word_lists_are_small_lower_case_and_disjoint() -> None:
    for words in (POSITIVE, NEGATIVE, NEGATIONS):
        assert all(w == w.lower() and w.strip() == w for w in words)
    assert 40 <= len(POSITIVE) <= 70 and 40 <= len(NEGATIVE) <= 70
    assert not POSITIVE & NEGATIVE and not (POSITIVE | NEGATIVE) & NEGATIONS


# --- features ------------------------------------------------------------------------------


def _card(**changes: object) -> MarketCard:
    fields: dict[str, object] = {
        "ticker": "ZQAW",
        "proxy": "ZQMX",
        "as_of": back(1),
        "stock": Returns(d1=0.01, d5=0.04, d20=-0.02, volatility_state="elevated"),
        "market": Returns(d1=-0.005, d5=0.01, d20=0.03, volatility_state="low"),
        "trend": "down",
    }
    return MarketCard(**(fields | changes))  # type: ignore[arg-type]


def test_card_features_by_hand() -> None:
    got = card_features(_card())
    assert len(got) == len(CARD_FEATURES) == len(set(CARD_FEATURES))
    assert got == pytest.approx((0.01, 0.04, -0.02, -0.005, 0.01, 0.03, 0.03, 1.0, -1.0, -1.0))
    unknown = card_features(
        _card(
            stock=Returns(d1=0.0, d5=None, d20=None, volatility_state="unknown"),
            market=Returns(d1=0.0, d5=0.0, d20=0.0, volatility_state="normal"),
            trend="flat",
        )
    )
    named = dict(zip(CARD_FEATURES, unknown, strict=True))
    assert named["stock_1d"] == 0.0 and named["market_volatility"] == 0.0
    assert named["trend"] == 0.0
    for name in ("stock_5d", "stock_20d", "relative_5d", "stock_volatility"):
        assert math.isnan(named[name]), name
    with pytest.raises(InputError, match="trend"):
        card_features(_card(trend="sideways"))


def _scaled(bars: pd.DataFrame, rows: np.ndarray, factor: float) -> pd.DataFrame:
    out = bars.copy()
    out.loc[rows, ["open", "high", "low", "close", "adj_close"]] *= factor
    return out


def test_card_features_never_see_a_bar_on_or_after_p(tmp_path: Path) -> None:
    """The card as of the session before P, from a store with bars up to it and from one
    whose bars from P on are all different: the same features."""
    stock, market = (
        synthetic(dt.date(2019, 1, 2), 90, seed=1),
        synthetic(dt.date(2019, 1, 2), 90, seed=2),
    )
    p, last = stock.index[80], stock.index[79]
    later = stock.index >= p
    stores = []
    for name, frames in (
        ("cut", (stock[~later], market[~later])),
        ("changed", (_scaled(stock, later, 1.3), _scaled(market, later, 0.7))),
    ):
        (tmp_path / name).mkdir()
        store = open_store(None)
        paths = [
            write_csv(tmp_path / name / f"{t}.csv", f)
            for t, f in zip(("ZQAW", "ZQMX"), frames, strict=True)
        ]
        ingest(store, "prices", loader("prices"), paths, IngestOptions(graphs=store.graphs))
        stores.append(store)
    cut, changed = (card_features(market_card(s, "ZQAW", last, proxy="ZQMX")) for s in stores)
    assert len(cut) == len(CARD_FEATURES) and not any(math.isnan(x) for x in cut)
    np.testing.assert_array_equal(cut, changed)
    # the changed bars are seen once they are in view
    seen = card_features(market_card(stores[1], "ZQAW", p, proxy="ZQMX"))
    assert seen[0] == pytest.approx(1.3 * stock.adj_close[p] / stock.adj_close[last] - 1)


def test_event_type_features_are_one_hot_over_the_mappers_types() -> None:
    assert set(EVENT_TYPES) == set(EVENT_CONCEPTS.values())
    assert len(EVENT_FEATURES) == len(EVENT_TYPES) == 5
    rows = [event_type_features(t) for t in EVENT_TYPES]
    assert all(len(r) == len(EVENT_FEATURES) for r in rows)
    assert np.array_equal(np.array(rows), np.eye(5))
    assert EVENT_FEATURES[0] == "event_EarningsGuidance"
    with pytest.raises(InputError, match="event type"):
        event_type_features(NamedNode("https://w3id.org/finkg/ns#Weather"))
