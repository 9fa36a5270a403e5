"""finkg.demo.world: real-format files, determinism, and planted effects found from the files."""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import math
import re
import time
from collections import Counter, defaultdict
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import exchange_calendars as xc
import numpy as np
import pandas as pd
import pytest

from finkg.demo.world import WorldManifest, WorldSpec, build_world
from finkg.errors import InputError

# exchange_calendars 4.13 on pandas 3.1: library noise only
pytestmark = pytest.mark.filterwarnings("ignore:.*values returning an ndarray")

SMALL = WorldSpec(tickers=4, sessions=80, users=6)
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "event"
NEWS_KEYS = ["symbol", "publishedDate", "title", "image", "site", "text", "url"]
PRICE_HEADER = "Date,Open,High,Low,Close,Adj Close,Volume"
RECENT_KEYS = [
    "accessionNumber",
    "filingDate",
    "reportDate",
    "acceptanceDateTime",
    "act",
    "form",
    "fileNumber",
    "filmNumber",
    "items",
    "core_type",
    "size",
    "isXBRL",
    "isInlineXBRL",
    "primaryDocument",
    "primaryDocDescription",
]
FARTRANS_HEADERS = {
    "customer_information.csv": ["customerID", "customerType", "riskLevel", "investmentCapacity"],
    "asset_information.csv": [
        "ISIN",
        "assetName",
        "assetCategory",
        "assetSubCategory",
        "sector",
        "industry",
    ],
    "close_prices.csv": ["ISIN", "timestamp", "closePrice"],
    "transactions.csv": [
        "customerID",
        "ISIN",
        "transactionID",
        "transactionType",
        "timestamp",
        "totalValue",
        "units",
    ],
}


# ---------------------------------------------------------------- fixtures and small helpers


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, WorldManifest]:
    out = tmp_path_factory.mktemp("small")
    return out, build_world(out, SMALL)


@pytest.fixture(scope="module")
def default(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, WorldManifest]:
    out = tmp_path_factory.mktemp("default")
    return out, build_world(out)


def _rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames or []), list(reader)


def _digests(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.rglob("*")
        if p.is_file()
    }


def _xnys(first: str, last: str) -> list[str]:
    cal = xc.get_calendar("XNYS", start="2018-06-01", end="2021-06-30")
    return [d.strftime("%Y-%m-%d") for d in cal.sessions_in_range(first, last)]


def _abnormal(folder: Path, m: WorldManifest) -> tuple[list[str], dict[str, np.ndarray]]:
    """Market-model abnormal returns from the price files alone (index = session index)."""

    def adj(ticker: str) -> tuple[list[str], np.ndarray]:
        _, rows = _rows(folder / "prices" / f"{ticker}.csv")
        return [r["Date"] for r in rows], np.array([float(r["Adj Close"]) for r in rows])

    days, market = adj(m.market_ticker)
    rm = market[1:] / market[:-1] - 1
    out = {}
    for c in m.companies:
        _, p = adj(c.ticker)
        r = p[1:] / p[:-1] - 1
        beta = np.cov(r, rm)[0, 1] / np.var(rm, ddof=1)
        out[c.ticker] = np.concatenate([[np.nan], r - beta * rm])
    return days, out


def _car(
    days: list[str], ar: dict[str, np.ndarray], ticker: str, p: str, lo: int, hi: int
) -> float | None:
    i = days.index(p)
    return None if i + hi >= len(days) else float(ar[ticker][i + lo : i + hi + 1].sum())


def _gap(
    days: list[str],
    ar: dict[str, np.ndarray],
    a: list[tuple[str, str]],
    b: list[tuple[str, str]],
    lo: int,
    hi: int,
) -> tuple[float, float]:
    """Mean CAR over [P+lo, P+hi] of events a minus events b, and Welch's t."""
    xa = np.array([v for t, p in a if (v := _car(days, ar, t, p, lo, hi)) is not None])
    xb = np.array([v for t, p in b if (v := _car(days, ar, t, p, lo, hi)) is not None])
    diff = xa.mean() - xb.mean()
    return diff, diff / math.sqrt(xa.var(ddof=1) / len(xa) + xb.var(ddof=1) / len(xb))


def _isin_ok(code: str) -> bool:
    digits = "".join(str(int(ch, 36)) for ch in code[:-1])
    total = sum(sum(divmod(int(d) * (2 - i % 2), 10)) for i, d in enumerate(reversed(digits)))
    return code[-1] == str((10 - total % 10) % 10)


# ---------------------------------------------------------------- determinism and manifest


def test_same_spec_writes_identical_bytes(
    small: tuple[Path, WorldManifest], tmp_path: Path
) -> None:
    first, _ = small
    build_world(tmp_path / "again", SMALL)
    assert _digests(first) == _digests(tmp_path / "again")


def test_other_seed_writes_other_files(small: tuple[Path, WorldManifest], tmp_path: Path) -> None:
    first, _ = small
    build_world(tmp_path / "other", WorldSpec(seed=8, tickers=4, sessions=80, users=6))
    a, b = _digests(first), _digests(tmp_path / "other")
    seedless = {"companies.csv", "fartrans/asset_information.csv"}  # names only, no draws
    for path in (
        "news/news.jsonl",
        "prices/ZQAW.csv",
        "prices/ZQMX.csv",
        "world.json",
        "fartrans/transactions.csv",
        "fartrans/customer_information.csv",
        "edgar/submissions/CIK0099000001.json",
        "documents/zqib_analyst_note.txt",
    ):
        assert a[path] != b[path], path
    same = {p for p in a.keys() & b.keys() if a[p] == b[p]}
    # document sidecars hold dates, titles and tickers fixed by the calendar and the names
    assert {p for p in same if not p.endswith(".meta.json")} <= seedless


def test_manifest_lists_every_file_with_its_sha256(small: tuple[Path, WorldManifest]) -> None:
    folder, m = small
    on_disk = _digests(folder)
    assert on_disk.pop("world.json")
    assert {f.path: f.sha256 for f in m.files} == on_disk
    assert all(f.bytes == (folder / f.path).stat().st_size for f in m.files)
    raw = json.loads((folder / "world.json").read_text())
    assert raw["synthetic"] is True and "synthetic" in raw["notice"]
    assert WorldManifest.load(folder) == m
    assert m.time_zone == "America/New_York"
    assert {e.name for e in m.effects} >= {
        "news_tone_1d",
        "guidance_drift",
        "user_sector_preference",
        "risk_category_mix",
    }


def test_names_and_ids_are_obviously_synthetic(small: tuple[Path, WorldManifest]) -> None:
    _, m = small
    for c in m.companies:
        assert c.name.endswith("(synthetic)") and c.ticker.startswith("ZQ")
        assert int(c.cik) > 99_000_000 and c.isin.startswith("ZZ") and _isin_ok(c.isin)


# ---------------------------------------------------------------- file formats


def test_news_lines_have_the_nasdaq_news_fields(small: tuple[Path, WorldManifest]) -> None:
    folder, m = small
    lines = (folder / "news" / "news.jsonl").read_text().splitlines()
    items = [json.loads(line) for line in lines]
    assert all(list(it) == NEWS_KEYS for it in items)
    ny = ZoneInfo("America/New_York")
    stamps = [
        datetime.strptime(it["publishedDate"], "%Y-%m-%d %H:%M:%S").replace(tzinfo=ny)
        for it in items
    ]
    sessions = set(_xnys(m.calendar["first_session"], m.calendar["last_session"]))
    on = [s for s in stamps if s.strftime("%Y-%m-%d") in sessions]
    assert any(s.hour < 9 or (s.hour == 9 and s.minute < 30) for s in on)  # pre-market
    assert any(s.hour >= 16 for s in on)  # after close
    assert any(s.weekday() >= 5 for s in stamps)  # weekend
    urls = Counter(it["url"] for it in items)
    assert any(k == 2 for k in urls.values())  # exact duplicates: same url twice
    near = [n for n in m.news if n.duplicate_of]
    assert near and all(n.url != n.duplicate_of and urls[n.duplicate_of] for n in near)
    assert {n.url for n in m.news} == set(urls)


def test_news_words_carry_tone_and_event_type(default: tuple[Path, WorldManifest]) -> None:
    folder, m = default
    pos = {
        "beats",
        "beating",
        "tops",
        "topping",
        "record",
        "strong",
        "jumped",
        "lifted",
        "wins",
        "won",
        "favorable",
        "rallied",
        "gained",
        "rose",
        "upgraded",
        "surged",
        "positive",
    }
    neg = {
        "misses",
        "fell",
        "falls",
        "weak",
        "disappoint",
        "cut",
        "slid",
        "slide",
        "lost",
        "loses",
        "negative",
        "collapsed",
        "terminated",
        "resigned",
        "departed",
        "recall",
        "downgraded",
        "plunged",
        "halted",
        "disappointing",
    }
    kinds = {
        "earnings": r"earnings|revenue|\beps\b",
        "legal": r"lawsuit|litigation|court",
        "deals": r"acqui|merger|contract|partnership|\bdeal\b",
        "management": r"\bceo\b|\bcfo\b|board|chief executive|appoint|officer",
    }
    truth = {n.url: n for n in m.news}
    hits = total = 0
    for line in (folder / "news" / "news.jsonl").read_text().splitlines():
        it = json.loads(line)
        words = set(re.findall(r"[a-z]+", (it["title"] + " " + it["text"]).lower()))
        score = len(words & pos) - len(words & neg)
        tone = "positive" if score > 0 else "negative" if score < 0 else "neutral"
        text = (it["title"] + " " + it["text"]).lower()
        kind = next((k for k, rx in kinds.items() if re.search(rx, text)), "other")
        hits += (tone, kind) == (truth[it["url"]].tone, truth[it["url"]].flavour)
        total += 1
    assert hits / total >= 0.95


def test_price_files_are_sessions_with_sane_bars(default: tuple[Path, WorldManifest]) -> None:
    folder, m = default
    expected = _xnys(m.calendar["first_session"], m.calendar["last_session"])
    assert len(expected) == m.spec["sessions"] and "2019-07-04" not in expected
    payers = {c.ticker for c in m.companies if c.dividend_payer}
    for ticker in [c.ticker for c in m.companies] + [m.market_ticker]:
        path = folder / "prices" / f"{ticker}.csv"
        assert path.read_bytes().splitlines()[0] == PRICE_HEADER.encode()
        _, rows = _rows(path)
        assert [r["Date"] for r in rows] == expected
        assert all(date.fromisoformat(r["Date"]).weekday() < 5 for r in rows)
        o, h, lo, c, a = (
            np.array([float(r[k]) for r in rows])
            for k in ("Open", "High", "Low", "Close", "Adj Close")
        )
        assert (lo <= np.minimum(o, c)).all() and (h >= np.maximum(o, c)).all() and (lo > 0).all()
        assert all(int(r["Volume"]) > 0 for r in rows)
        if ticker in payers:  # Adj Close = Close x a step factor below 1, 1 after the last ex-date
            factor = np.round(a / c, 4)
            assert factor[-1] == 1.0 and (factor <= 1.0).all() and len(set(factor)) > 1
            assert (np.diff(factor) >= 0).all()
        else:
            assert (a == c).all()
    assert 1 <= len(payers) <= 2 and {d.ticker for d in m.dividends} == payers


def test_companies_csv(small: tuple[Path, WorldManifest]) -> None:
    folder, m = small
    header, rows = _rows(folder / "companies.csv")
    assert header == ["ticker", "cik", "name", "sector", "industry"]
    assert [r["ticker"] for r in rows] == [c.ticker for c in m.companies]
    assert {r["sector"] for r in rows} == {"Technology", "Healthcare", "Energy"}


def test_edgar_submissions_and_documents(default: tuple[Path, WorldManifest]) -> None:
    folder, m = default
    truth = {f.accession: f for f in m.filings}
    seen = set()
    for c in m.companies:
        sub = json.loads((folder / "edgar" / "submissions" / f"CIK{c.cik}.json").read_text())
        assert {"cik", "name", "tickers", "exchanges", "sic", "sicDescription", "filings"} <= set(
            sub
        )
        assert sub["cik"] == c.cik and sub["tickers"] == [c.ticker]
        recent = sub["filings"]["recent"]
        assert list(recent) == RECENT_KEYS
        assert len({len(v) for v in recent.values()}) == 1
        assert recent["acceptanceDateTime"] == sorted(recent["acceptanceDateTime"], reverse=True)
        for i, acc in enumerate(recent["accessionNumber"]):
            seen.add(acc)
            stamp, form = recent["acceptanceDateTime"][i], recent["form"][i]
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z", stamp)
            assert form in {"8-K", "10-Q", "10-K"} and recent["filingDate"][i] == stamp[:10]
            items = recent["items"][i]
            assert re.fullmatch(r"\d\.\d\d(,\d\.\d\d)*", items) if form == "8-K" else items == ""
            text = (folder / "edgar" / "documents" / f"{acc}.txt").read_text()
            assert len(text.encode()) == recent["size"][i]
            head = re.search(r"<ACCEPTANCE-DATETIME>(\d{14})", text)
            assert head and head.group(1) == re.sub(r"\D", "", stamp[:19])
            body = text.split("<TEXT>", 1)[1]
            assert 150 <= len(body.split()) <= 1500
            if "2.02" in items:
                assert "Item 2.02 Results of Operations and Financial Condition" in body
            if form == "10-K":
                assert "Item 7. Management's Discussion and Analysis" in body
            if form == "10-Q":
                assert "Item 2. Management's Discussion and Analysis" in body
            said = (
                "raise"
                if re.search(r"raises (full-year guidance|its outlook)", body)
                else "lower"
                if re.search(r"lowers (its outlook|its full-year guidance)", body)
                else "reaffirm"
                if "reaffirms its full-year guidance" in body
                else "none"
            )
            assert said == truth[acc].guidance
    assert seen == set(truth)


@pytest.mark.realdata
def test_shapes_match_the_real_files(small: tuple[Path, WorldManifest]) -> None:
    if not SHARED.is_dir():
        pytest.skip(f"no shared data at {SHARED}")
    folder, m = small
    with gzip.open(SHARED / "news" / "nasdaq_news_2015_2020.jsonl.gz", "rt") as fh:
        real_news = json.loads(fh.readline())
    ours = json.loads((folder / "news" / "news.jsonl").read_text().splitlines()[0])
    assert list(ours) == list(real_news)
    real_header = (SHARED / "prices" / "AAPL.csv").read_bytes().split(b"\n")[0]
    assert (folder / "prices" / "ZQAW.csv").read_bytes().split(b"\n")[0] == real_header
    real_sub = json.loads((SHARED / "edgar" / "submissions" / "CIK0000320193.json").read_text())
    sub_path = folder / "edgar" / "submissions" / f"CIK{m.companies[0].cik}.json"
    sub = json.loads(sub_path.read_text())
    assert list(sub) == list(real_sub)
    assert list(sub["filings"]["recent"]) == list(real_sub["filings"]["recent"])
    real_tickers = {p.stem for p in (SHARED / "prices").glob("*.csv")}
    assert not real_tickers & ({c.ticker for c in m.companies} | {m.market_ticker})


def test_prediction_days_follow_the_rule(default: tuple[Path, WorldManifest]) -> None:
    _, m = default
    cal = xc.get_calendar("XNYS", start="2018-06-01", end="2021-06-30")

    def p(wall: str) -> str:
        ts = pd.Timestamp(wall).tz_localize("America/New_York").tz_convert("UTC").floor("min")
        return cal.next_open(ts).tz_convert("America/New_York").strftime("%Y-%m-%d")

    assert all(p(n.published) == n.prediction_day for n in m.news)
    assert all(p(f.acceptance) == f.prediction_day for f in m.filings)
    at_open = [n for n in m.news if n.published.endswith(" 09:30:00")]
    assert at_open and all(n.prediction_day > n.published[:10] for n in at_open)


def test_fartrans_files(default: tuple[Path, WorldManifest]) -> None:
    folder = default[0] / "fartrans"
    tables = {}
    for name, header in FARTRANS_HEADERS.items():
        got, rows = _rows(folder / name)
        assert got == header, name
        tables[name] = rows

    def strip(value: str) -> str:  # FAR-Trans marks inferred profiles "Predicted_..."
        return value.removeprefix("Predicted_")

    for r in tables["customer_information.csv"]:
        assert re.fullmatch(r"[0-9A-F]{20}", r["customerID"])
        assert r["customerType"] in {"Mass", "Premium", "Professional"}
        assert strip(r["riskLevel"]) in {"Conservative", "Income", "Balanced", "Aggressive"}
        assert strip(r["investmentCapacity"]) in {
            "CAP_LT30K",
            "CAP_30K_80K",
            "CAP_80K_300K",
            "CAP_GT300K",
        }
    assets = {r["ISIN"]: r for r in tables["asset_information.csv"]}
    assert all(_isin_ok(code) and code.startswith("ZZ") for code in assets)
    assert {r["assetCategory"] for r in assets.values()} == {"Stock", "Bond", "MTF"}
    prices = {
        (r["ISIN"], r["timestamp"]): float(r["closePrice"]) for r in tables["close_prices.csv"]
    }
    n_sessions = default[1].spec["sessions"]
    assert len(prices) == len(tables["close_prices.csv"]) == len(assets) * n_sessions
    held: dict[tuple[str, str], float] = defaultdict(float)
    ids = [int(r["transactionID"]) for r in tables["transactions.csv"]]
    assert ids == list(range(1, len(ids) + 1))
    for r in tables["transactions.csv"]:
        assert r["transactionType"] in {"Buy", "Sell"} and r["ISIN"] in assets
        units, value = float(r["units"]), float(r["totalValue"])
        assert units > 0 and value == pytest.approx(
            units * prices[r["ISIN"], r["timestamp"]], abs=0.01
        )
        key = (r["customerID"], r["ISIN"])
        held[key] += units if r["transactionType"] == "Buy" else -units
        assert held[key] >= -1e-9  # never sells more than it holds


def test_documents_hold_their_answers(small: tuple[Path, WorldManifest]) -> None:
    folder, m = small
    assert 3 <= len(m.documents) <= 5 and len(m.qa) >= 6
    for d in m.documents:
        text = (folder / d.path).read_text()
        assert 300 <= len(text.split()) <= 1500 and "Synthetic" in text
    for qa in m.qa:
        assert qa.answer in (folder / qa.document).read_text(), qa


# ---------------------------------------------------------------- planted effects, from the files


def _news_events(m: WorldManifest, tone: str) -> list[tuple[str, str]]:
    return [(n.ticker, n.prediction_day) for n in m.news if n.tone == tone and n.carries_effect]


@pytest.mark.parametrize("world", ["small", "default"])
def test_news_tone_moves_the_1d_residual(world: str, request: pytest.FixtureRequest) -> None:
    folder, m = request.getfixturevalue(world)
    days, ar = _abnormal(folder, m)
    pos, neg = _news_events(m, "positive"), _news_events(m, "negative")
    gap1, t1 = _gap(days, ar, pos, neg, 0, 0)
    assert t1 > 3 and 0.015 < gap1 < 0.045  # planted: +1.5 % vs -1.5 %
    if world == "default":
        gap5, _ = _gap(days, ar, pos, neg, 0, 4)
        _, t_after = _gap(days, ar, pos, neg, 1, 4)
        assert t1 > 10 and abs(t_after) < 3 and gap5 < 1.5 * gap1


def test_guidance_moves_the_stock_over_five_sessions(default: tuple[Path, WorldManifest]) -> None:
    folder, m = default
    days, ar = _abnormal(folder, m)
    up = [(f.ticker, f.prediction_day) for f in m.filings if f.guidance == "raise"]
    down = [(f.ticker, f.prediction_day) for f in m.filings if f.guidance == "lower"]
    assert len(up) + len(down) >= 50
    gap1, t1 = _gap(days, ar, up, down, 0, 0)
    gap5, t5 = _gap(days, ar, up, down, 0, 4)
    _, t_drift = _gap(days, ar, up, down, 1, 4)
    assert t5 > 3 and t_drift > 3 and gap5 > 3 * gap1 and abs(t1) < 3


def test_users_buy_in_their_preferred_sectors(default: tuple[Path, WorldManifest]) -> None:
    folder, m = default
    _, assets = _rows(folder / "fartrans" / "asset_information.csv")
    sector = {a["ISIN"]: a["sector"] for a in assets if a["assetCategory"] == "Stock"}
    _, trades = _rows(folder / "fartrans" / "transactions.csv")
    liked = {u.customer_id: set(u.preferred_sectors) for u in m.users}
    per_user: dict[str, list[bool]] = defaultdict(list)
    for t in trades:
        if t["transactionType"] == "Buy" and t["ISIN"] in sector:
            per_user[t["customerID"]].append(sector[t["ISIN"]] in liked[t["customerID"]])
    assert set(per_user) == set(liked)
    assert all(sum(v) / len(v) >= 0.7 for v in per_user.values())


def test_risk_level_shapes_the_categories_bought(default: tuple[Path, WorldManifest]) -> None:
    folder, m = default
    _, assets = _rows(folder / "fartrans" / "asset_information.csv")
    category = {a["ISIN"]: a["assetCategory"] for a in assets}
    _, trades = _rows(folder / "fartrans" / "transactions.csv")
    risk = {u.customer_id: u.risk_level for u in m.users}
    stock: dict[str, list[bool]] = defaultdict(list)
    for t in trades:
        if t["transactionType"] == "Buy":
            stock[risk[t["customerID"]]].append(category[t["ISIN"]] == "Stock")
    cautious = [x for k in ("Conservative", "Income") for x in stock[k]]
    bold = [x for k in ("Balanced", "Aggressive") for x in stock[k]]
    assert cautious and bold and np.mean(bold) > np.mean(cautious) + 0.15


# ---------------------------------------------------------------- spec checks and the folder


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"tickers": 2}, "tickers"),
        ({"sessions": 10}, "sessions"),
        ({"seed": -1}, "seed"),
        ({"seed": True}, "seed"),
        ({"news_tone_effect": "big"}, "news_tone_effect"),
        ({"start": date(1985, 1, 2)}, "start"),
        ({"dividend_tickers": 5, "tickers": 4}, "dividend_tickers"),
    ],
)
def test_bad_spec_values_are_quoted(kwargs: dict, field: str) -> None:
    with pytest.raises(InputError) as err:
        WorldSpec(**kwargs)
    assert err.value.field == field and "got" in str(err.value)


def test_folder_must_be_empty_unless_overwriting(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="not empty"):
        build_world(tmp_path, SMALL)
    world = tmp_path / "world"
    build_world(world, SMALL)
    m = build_world(world, WorldSpec(tickers=3, sessions=60, users=4, seed=3), overwrite=True)
    on_disk = _digests(world)
    on_disk.pop("world.json")
    assert on_disk == {f.path: f.sha256 for f in m.files}  # no file of the old world is left


def test_small_world_builds_fast(tmp_path: Path, small: tuple[Path, WorldManifest]) -> None:
    start = time.perf_counter()
    build_world(tmp_path / "fast", SMALL)
    assert time.perf_counter() - start < 1.0


def test_chatter_before_reported_8ks_is_planted_unreliable(
    default: tuple[Path, WorldManifest],
) -> None:
    """Effect source_reliability: chatter precedes its 8-K, mostly contradicts it, moves nothing."""
    _, m = default
    effect = next(e for e in m.effects if e.name == "source_reliability")
    assert effect.parameters["planted"] and effect.parameters["reliable_family"] == "SecFiling"
    filings = {f.accession: f for f in m.filings}
    reported = {n.reports for n in m.news if n.reports}
    chatter = [n for n in m.news if n.chatter_on]
    assert len(chatter) == len([a for a in reported if filings[a].guidance in ("raise", "lower")])
    contrary = 0
    for n in chatter:
        f = filings[n.chatter_on]
        assert n.published < f.acceptance.replace("T", " ") and not n.carries_effect
        contrary += (n.tone == "positive") == (f.guidance == "lower")
    share = effect.parameters["contrary_share"]
    assert abs(contrary / len(chatter) - share) < 0.15


def test_a_world_that_would_run_past_today_is_refused() -> None:
    """Ingest refuses items from after the moment of ingestion (issue 24), so a world whose
    sessions run past today could never be loaded."""
    from datetime import UTC, datetime, timedelta

    today = datetime.now(UTC).date()
    with pytest.raises(InputError, match="before today"):
        WorldSpec(start=today - timedelta(days=30))
    assert WorldSpec().start < today
