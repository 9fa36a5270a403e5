"""Derived market evidence: ten-week price summaries and paper-001 indicator windows."""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pyoxigraph import Literal, NamedNode, Quad
from ta.momentum import RSIIndicator
from ta.trend import MACD

from finkg.errors import InputError
from finkg.kg.calendar import get_calendar
from finkg.kg.derive import COLUMNS, derived_items, indicators, summaries, windows
from finkg.kg.graphs import Graphs
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.ingest.core import Item
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG, PROV, RDF
from finkg.shapes.validate import validate_quads, validate_store

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is absent")
AAPL = SHARED / "event/prices/AAPL.csv"
OPTIONS = IngestOptions(graphs=Graphs())


# --- helpers -------------------------------------------------------------------------------


def synthetic(start: dt.date, n: int, *, seed: int = 7) -> pd.DataFrame:
    """`n` consecutive XNYS sessions from `start` of a seeded random walk."""
    days = get_calendar().sessions(start, start + dt.timedelta(days=n * 2 + 10))[:n]
    rng = np.random.default_rng(seed)
    close = 50 * np.exp(np.cumsum(rng.normal(0, 0.015, n)))
    open_ = close * np.exp(rng.normal(0, 0.005, n))
    high = np.maximum(open_, close) * (1 + rng.uniform(0, 0.01, n))
    low = np.minimum(open_, close) * (1 - rng.uniform(0, 0.01, n))
    return pd.DataFrame(
        {
            "open": open_,
            "high": high,
            "low": low,
            "close": close,
            "adj_close": close * 0.9,
            "volume": rng.integers(1_000, 100_000, n).astype(float),
        },
        index=pd.Index(days),
    )


def flat(days: list[dt.date], close: float = 100.0) -> pd.DataFrame:
    return pd.DataFrame(
        {c: [close] * len(days) for c in COLUMNS} | {"volume": [1000.0] * len(days)},
        index=pd.Index(days),
    )


def derive(bars: pd.DataFrame, ticker: str = "ZQAW") -> list[Item]:
    return list(derived_items(ticker, bars, OPTIONS, source=f"/data/{ticker}.csv"))


def nodes(items: list[Item]) -> dict[NamedNode, dict[NamedNode, Literal | NamedNode]]:
    """{node: {predicate: object}} of every derived node (summaries and windows)."""
    out: dict[NamedNode, dict] = {}
    for item in items:
        for q in item.quads:
            out.setdefault(q.subject, {})[q.predicate] = q.object  # type: ignore[index]
    derived = (FKG.PriceSummary, FKG.IndicatorWindow)
    return {n: p for n, p in out.items() if p.get(RDF.type) in derived}


def of_type(items: list[Item], cls: NamedNode) -> list[dict[NamedNode, Literal | NamedNode]]:
    """{predicate: object} of each node of class `cls` (its IRI under rdf:type)."""
    return [p | {RDF.type: n} for n, p in nodes(items).items() if p[RDF.type] == cls]


def close_of(day: str) -> dt.datetime:
    return get_calendar().bar_available_at(dt.date.fromisoformat(day))


def at(props: dict) -> dt.datetime:
    return dt.datetime.fromisoformat(props[FKG.availableAt].value)


def write_csv(path: Path, bars: pd.DataFrame) -> Path:
    lines = ["Date,Open,High,Low,Close,Adj Close,Volume"]
    for day, r in bars.iterrows():
        lines.append(
            ",".join([day.isoformat(), *(repr(float(r[c])) for c in COLUMNS[:5])])
            + f",{int(r.volume)}"
        )
    path.write_text("\n".join(lines) + "\n")
    return path


# --- ten-week summaries --------------------------------------------------------------------

PERIOD = get_calendar().sessions(dt.date(2020, 4, 13), dt.date(2020, 6, 19))  # 49 sessions


def test_summary_values_by_hand() -> None:
    assert len(PERIOD) == 49 and summaries.period_of(dt.date(2020, 5, 1)) == (
        dt.date(2020, 4, 13),
        dt.date(2020, 6, 21),
    )
    days = [*PERIOD, dt.date(2020, 6, 22)]  # the next period's first session: not complete
    bars = flat(days)
    bars.loc[dt.date(2020, 5, 1), "high"] = 120.0
    bars.loc[dt.date(2020, 5, 15), "low"] = 80.0
    bars.loc[dt.date(2020, 6, 19), ["close", "high"]] = 110.0
    [s] = of_type(derive(bars), FKG.PriceSummary)
    assert s[RDF.type].value.endswith("/summary/ZQAW/2020-06-21")
    assert s[FKG.periodStartDate].value == "2020-04-13"
    assert s[FKG.periodEndDate].value == "2020-06-21"
    assert s[FKG.periodHighPrice].value == "120.0"
    assert s[FKG.periodLowPrice].value == "80.0"
    assert s[FKG.periodAveragePrice].value == "100.2041"  # (48 * 100 + 110) / 49
    assert s[FKG.periodEndPrice].value == "110.0"
    assert s[FKG.availableAt].value == "2020-06-19T16:00:00-04:00"  # the last session's close
    assert s[FKG.timeRule].value == "close of the period's last session (XNYS)"
    assert s[FKG.sourceFamily] == FKG.Market and s[FKG.timeQuality].value == "exact"
    text = json.loads(s[FKG.text].value)
    assert (text["periodHighPrice"], text["sessions"], text["stock"]) == (120.0, 49, "ZQAW")


@pytest.mark.parametrize(
    "days",
    [PERIOD[:-1], PERIOD[1:]],  # no bar on its last session; none on its first
    ids=["ends-early", "starts-late"],
)
def test_no_summary_for_an_incomplete_period(days: list[dt.date]) -> None:
    assert of_type(derive(flat(days)), FKG.PriceSummary) == []


def test_a_summary_is_available_at_an_early_close() -> None:
    # the period 2014-09-22 .. 2014-11-30 ends with Black Friday, closing at 13:00
    start, end = summaries.period_of(dt.date(2014, 11, 28))
    assert (start, end) == (dt.date(2014, 9, 22), dt.date(2014, 11, 30))
    [s] = of_type(derive(flat(get_calendar().sessions(start, end))), FKG.PriceSummary)
    assert s[FKG.availableAt].value == "2014-11-28T13:00:00-05:00"


# --- windows and labels ---------------------------------------------------------------------


def test_labels_on_a_hand_made_series() -> None:
    days = get_calendar().sessions(dt.date(2020, 4, 20), dt.date(2020, 5, 1))  # 10 sessions
    adj = [100.0] * 7 + [101.0, 99.99, 100.18998]  # +1 %, -1 %, +0.19 %
    bars = flat(days)
    bars["adj_close"] = adj
    found = {
        (w[FKG.indicator].value, w[FKG.sessionDate].value): w
        for w in of_type(derive(bars), FKG.IndicatorWindow)
    }
    labels = {day: w[FKG.movement].value for (name, day), w in found.items() if name == "close"}
    assert labels == {
        "2020-04-27": "freeze",  # the first day with five sessions before it
        "2020-04-28": "freeze",
        "2020-04-29": "rise",
        "2020-04-30": "fall",
        "2020-05-01": "freeze",
    }
    w = found["adj_close", "2020-04-30"]
    assert w[FKG.availableAt].value == "2020-04-30T16:00:00-04:00"
    assert json.loads(w[FKG.text].value) == {
        "candidate_stock": "ZQAW",
        "candidate_date": "2020-04-30",
        "candidate_movement": "fall",
        "recent_date_list": ["2020-04-23", "2020-04-24", "2020-04-27", "2020-04-28", "2020-04-29"],
        "adj_close_list": [100.0, 100.0, 100.0, 100.0, 101.0],
    }


def test_the_movement_thresholds_are_the_papers() -> None:
    # returns: +0.56 %, -0.557 %, -0.4 %, +0.502 %: rise above 0.55 %, fall below -0.5 %
    adj = np.array([100.0, 100.56, 100.0, 99.6, 100.1])
    assert windows.movements(adj).tolist() == ["", "rise", "fall", "freeze", "freeze"]


def _check_window(w: dict, bars: pd.DataFrame, ticker: str) -> None:
    text = json.loads(w[FKG.text].value)
    name, day = w[FKG.indicator].value, w[FKG.sessionDate].value
    assert set(text) == {
        "candidate_stock",
        "candidate_date",
        "candidate_movement",
        "recent_date_list",
        f"{name}_list",
    }
    assert (text["candidate_stock"], text["candidate_date"]) == (ticker, day)
    assert text["candidate_movement"] == w[FKG.movement].value
    recent = text["recent_date_list"]
    assert len(recent) == len(text[f"{name}_list"]) == 5
    cal = get_calendar()
    candidate = dt.date.fromisoformat(day)
    assert recent == [cal.session_offset(candidate, k).isoformat() for k in range(-5, 0)]
    # the label is the candidate session's own return; the window is knowable only at its
    # close, which is after every value in it
    assert at(w) >= close_of(day) > close_of(recent[-1])
    adj = bars["adj_close"]
    r = (adj[candidate] / adj[dt.date.fromisoformat(recent[-1])] - 1) * 100
    assert w[FKG.movement].value == ("rise" if r > 0.55 else "fall" if r < -0.5 else "freeze")


def test_every_window_is_labelled_by_its_own_session_and_knowable_only_then() -> None:
    bars = synthetic(dt.date(2019, 1, 2), 120)
    found = of_type(derive(bars), FKG.IndicatorWindow)
    assert {w[FKG.indicator].value for w in found} == set(indicators.SERIES)
    for w in found:
        _check_window(w, bars, "ZQAW")


def test_groups_cover_the_paper_and_the_issue() -> None:
    groups = set(indicators.GROUPS) - set(indicators.BASIC)
    assert len(groups) >= 14
    for name in ("macd", "macd_crossover", "bollinger_bands", "kdj", "kdj_crossover", "rsi"):
        assert name in groups
    wanted = {"alpha002", "alpha003", "alpha006", "alpha012", "alpha033", "alpha054", "alpha101"}
    assert set(indicators.ALPHAS) >= wanted


def test_macd_and_rsi_agree_with_ta() -> None:
    bars = synthetic(dt.date(2019, 1, 2), 80, seed=3)
    s = indicators.series(bars)
    adj = bars["adj_close"]
    macd = MACD(adj, window_slow=26, window_fast=12, window_sign=9)
    pd.testing.assert_series_equal(s["macd"], macd.macd(), check_names=False)
    pd.testing.assert_series_equal(s["macd_histogram"], macd.macd_diff(), check_names=False)
    pd.testing.assert_series_equal(s["rsi"], RSIIndicator(adj, window=14).rsi(), check_names=False)
    # and the windows carry them, rounded to six significant digits
    [w] = [
        w
        for w in of_type(derive(bars), FKG.IndicatorWindow)
        if w[FKG.indicator].value == "rsi" and w[FKG.sessionDate].value == "2019-04-25"
    ]
    values = json.loads(w[FKG.text].value)["rsi_list"]
    expected = RSIIndicator(adj, window=14).rsi()
    last = bars.index.get_loc(dt.date(2019, 4, 25))
    assert values == pytest.approx(expected.iloc[last - 5 : last].tolist(), rel=1e-5)


def test_known_values_of_simple_series() -> None:
    rising = pd.DataFrame({c: [10.0 + i for i in range(40)] for c in COLUMNS})
    s = indicators.series(rising)
    assert s["rsi"].iloc[-1] == 100.0  # no down day
    assert s["returns"].iloc[1] == pytest.approx(0.1)
    assert s["alpha101"].iloc[0] == 0.0  # close == open
    assert s["kdj_k"].iloc[-1] == pytest.approx(100.0)  # closes at the top of its range
    crossing = indicators.crossover(pd.Series([1.0, 3.0, 3.0, 1.0]), pd.Series([2.0] * 4))
    assert crossing.tolist()[1:] == [1.0, 0.0, -1.0]


def test_a_gap_in_the_bars_breaks_the_windows_across_it() -> None:
    bars = synthetic(dt.date(2019, 1, 2), 40)
    gap = bars.index[20]
    days = {w[FKG.sessionDate].value for w in of_type(derive(bars.drop(gap)), FKG.IndicatorWindow)}
    after = [d.isoformat() for d in bars.index[21:26]]  # their five sessions span the gap
    assert not days & set(after) and bars.index[26].isoformat() in days


def test_derived_items_check_their_input() -> None:
    bars = synthetic(dt.date(2019, 1, 2), 10)
    with pytest.raises(InputError, match="sorted"):
        derive(bars.iloc[::-1])
    with pytest.raises(InputError, match="adj_close"):
        derive(bars.drop(columns="adj_close"))
    assert derive(bars.iloc[:0]) == []


# --- shapes, provenance, determinism, future invariance ------------------------------------


def test_derived_quads_conform_to_the_shapes() -> None:
    items = derive(synthetic(dt.date(2019, 1, 2), 300))
    quads = [q for i in items for q in i.quads]
    report = validate_quads(quads)
    assert report.conforms, report.text()
    some = items[:3] + items[-2:]  # summaries, and the last sessions (full source document)
    report = validate_quads([q for i in some for q in i.quads], engine="pyshacl")
    assert report.conforms, report.text()


def test_every_item_points_at_one_source_document_of_the_file() -> None:
    bars = synthetic(dt.date(2019, 1, 2), 120)
    items = derive(bars)
    docs = {q.object for i in items for q in i.quads if q.predicate == PROV.wasDerivedFrom}
    [doc] = docs
    for item in items:  # each item is checkable alone: it carries its document's hash
        assert Quad(doc, RDF.type, FKG.SourceDocument, OPTIONS.graphs.market) in item.quads
        assert report_ok([item])
    described = [i for i in items if any(q.predicate == FKG.mediaType for q in i.quads)]
    assert described[-1] is items[-1]
    # a session's windows are one item, keyed by its first window
    last = items[-1]
    keys = {q.subject for q in last.quads if q.predicate == FKG.indicator}
    assert len(keys) == len(indicators.SERIES) and last.key in keys
    assert last.key.value.endswith(f"/window/ZQAW/open/{bars.index[-1].isoformat()}")
    assert last.siblings == keys - {last.key}  # written only with the key


def report_ok(items: list[Item]) -> bool:
    return validate_quads([q for i in items for q in i.quads]).conforms


def test_the_same_bars_give_the_same_quads() -> None:
    bars = synthetic(dt.date(2019, 1, 2), 150)
    assert [i.quads for i in derive(bars)] == [i.quads for i in derive(bars.copy())]


def _content(found: dict[NamedNode, dict], before: dt.datetime) -> dict[NamedNode, dict]:
    """Each derived node available before `before`, with its statements (less provenance,
    which names the file's hash: a shorter file is another source document)."""
    out = {}
    for node, props in found.items():
        if dt.datetime.fromisoformat(props[FKG.availableAt].value) < before:  # type: ignore[union-attr]
            out[node] = {p: o for p, o in props.items() if p != PROV.wasDerivedFrom}
    return out


def _future_invariance(bars: pd.DataFrame, cuts: list[dt.date], ticker: str = "ZQAW") -> int:
    """Derive from the bars up to each cut T and from all bars: the same nodes, with the
    same statements, for everything available before T's close. Returns the fewest compared."""
    everything = nodes(derive(bars, ticker))
    compared = []
    for cut in cuts:
        before = get_calendar().bar_available_at(cut)
        early = _content(nodes(derive(bars.loc[:cut], ticker)), before)
        assert early == _content(everything, before)
        compared.append(len(early))
    return min(compared)


def test_future_invariance_on_a_synthetic_ticker() -> None:
    bars = synthetic(dt.date(2019, 1, 2), 200)
    # any session; the last session of a summary period
    assert _future_invariance(bars, [bars.index[100], dt.date(2019, 6, 28)]) > 1000


def test_ingesting_a_price_file_twice_adds_nothing(store: BaseStore, tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ZQAW.csv", synthetic(dt.date(2019, 1, 2), 90))
    options = IngestOptions(graphs=store.graphs)
    first = ingest(store, "prices", loader("prices"), [path], options)
    count = len(list(store.quads(store.graphs.market)))
    assert first.written > 90 + 80  # 90 bars, then one item per summary and per session
    again = ingest(store, "prices", loader("prices"), [path], options)
    assert (again.written, again.quads) == (0, 0)
    assert len(list(store.quads(store.graphs.market))) == count
    assert validate_store(store, [store.graphs.market]).conforms
    rows = store.select(
        "SELECT (COUNT(?w) AS ?n) WHERE { GRAPH ?g { ?w a <https://w3id.org/finkg/ns#"
        "IndicatorWindow> } }"
    )
    assert int(next(iter(rows))["n"].value) > 2_000  # type: ignore[union-attr]


def test_the_vetting_reads_no_stored_context_for_what_a_new_record_mints_with_its_key(
    store: BaseStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session's windows are written only with its key, and a news item's source document
    only with the item, so when the key is new none of them is in the store: the vetting
    looks up what the store holds about the price file's document the items share, not
    about the windows or the news documents (on the 6× scale store: 87,806 lookups a unit,
    85 µs each, none found)."""
    from finkg.kg.ingest import vetting

    looked_up: list[NamedNode] = []
    select = vetting.queries.select

    def counting(store_: BaseStore, name: str, values: dict | None = None, **kw: object):
        if name == "subject_quads" and values:
            looked_up.extend(values["node"])
        return select(store_, name, values, **kw)

    monkeypatch.setattr(vetting.queries, "select", counting)
    path = write_csv(tmp_path / "ZQAW.csv", synthetic(dt.date(2019, 1, 2), 90))
    written = ingest(store, "prices", loader("prices"), [path], IngestOptions(graphs=store.graphs))
    assert written.written > 90 + 80
    assert looked_up and all("/window/" not in n.value for n in looked_up)
    assert any("/source/prices/" in n.value for n in looked_up)
    news = tmp_path / "news.jsonl"
    record = {"symbol": "ZQAW", "title": "Acme raises guidance", "site": "wire", "text": ""}
    news.write_text(
        "".join(
            json.dumps(
                {**record, "publishedDate": f"2019-03-0{i} 09:00:00", "url": f"https://e.org/{i}"}
            )
            + "\n"
            for i in range(1, 4)
        )
    )
    looked_up.clear()
    options = IngestOptions(graphs=store.graphs)
    assert ingest(store, "news", loader("news"), [news], options).written == 3
    assert not any("/source/news/" in n.value for n in looked_up)
    assert validate_store(store).conforms


def test_rejected_bars_take_no_part(store: BaseStore, tmp_path: Path) -> None:
    bars = synthetic(dt.date(2019, 1, 2), 40)
    path = write_csv(tmp_path / "ZQAW.csv", bars)
    lines = path.read_text().splitlines()
    lines[21] = lines[21].replace(",", ",-", 1)  # a negative open: the bar is rejected
    path.write_text("\n".join(lines) + "\n")
    report = ingest(
        store,
        "prices",
        loader("prices"),
        [path],
        IngestOptions(graphs=store.graphs),
        skip_bad=True,
    )
    assert [r.line for r in report.rejects] == [22]
    bad = bars.index[20].isoformat()
    rows = store.select("SELECT ?t WHERE { GRAPH ?g { ?w <https://w3id.org/finkg/ns#text> ?t } }")
    texts = [r["t"].value for r in rows]  # type: ignore[union-attr]
    assert texts and not [t for t in texts if bad in t]


# --- the real price file --------------------------------------------------------------------


def _real_bars() -> pd.DataFrame:
    frame = pd.read_csv(AAPL)
    frame.columns = [c.lower().replace(" ", "_") for c in frame.columns]
    frame.index = pd.Index([dt.date.fromisoformat(d) for d in frame.pop("date")])
    return frame.loc[:, list(COLUMNS)].astype(float)


@pytest.mark.realdata
@needs_shared
def test_real_aapl_windows_are_knowable_only_when_labelled() -> None:
    bars = _real_bars()
    items = list(derived_items("AAPL", bars, OPTIONS, source=str(AAPL)))
    assert len(of_type(items[:100], FKG.PriceSummary)) == 51  # 2011-02 .. 2020-12
    assert len(items) - 51 > 2_400  # sessions with windows
    sample = items[251::13]  # sessions from 2012 on, when every series has its history
    found = of_type(sample, FKG.IndicatorWindow)
    assert {w[FKG.indicator].value for w in found} == set(indicators.SERIES)
    # all 35 series each session, less a rare undefined value (alpha #53 on a close at the low)
    assert len(found) > 0.98 * len(sample) * len(indicators.SERIES)
    for w in found:
        _check_window(w, bars, "AAPL")
    assert validate_quads([q for i in items[:100] + items[-100:] for q in i.quads]).conforms


@pytest.mark.realdata
@needs_shared
def test_real_aapl_is_future_invariant() -> None:
    bars = _real_bars().loc[dt.date(2016, 1, 1) : dt.date(2017, 12, 31)]
    cuts = [dt.date(2016, 11, 11), dt.date(2017, 6, 30)]  # a summary period's last session
    assert _future_invariance(bars, cuts, "AAPL") > 5_000


@pytest.mark.bench
@needs_shared
def test_bench_aapl_windows_per_second() -> None:
    """Indicators, then summaries and windows as ingest items (no store write)."""
    bars = _real_bars()
    t0 = time.perf_counter()
    indicators.series(bars)
    t1 = time.perf_counter()
    items = list(derived_items("AAPL", bars, OPTIONS, source=str(AAPL), content=AAPL.read_bytes()))
    t2 = time.perf_counter()
    quads = sum(len(i.quads) for i in items)
    found = nodes(items)
    windows = sum(p[RDF.type] == FKG.IndicatorWindow for p in found.values())
    print(
        f"\nAAPL: {len(bars)} bars; indicators {t1 - t0:.3f} s; {len(found) - windows} "
        f"summaries and {windows} windows, {len(items)} items, {quads} quads in {t2 - t1:.2f} s:"
        f" {windows / (t2 - t1):,.0f} windows/s, {quads / (t2 - t1):,.0f} quads/s"
    )
