"""The event-impact benchmark's store: the real event data of `../shared/data/event/`.

The universe is the tickers that have both news and prices (in the shared data, 62:
`AFRM.csv` is empty, so AFRM is out). Into one on-disk store:

- the news of those tickers, all of it (2015-2020; dense from 2019), so that pools of early
  anchors still see a year of earlier evidence;
- their daily bars from `first_day` to `last_day` (META's from `FB.csv`, under the news's
  ticker), and the market proxy's: the residual label of an anchor fits a 12-month market
  model ending 20 sessions before it, so the bars start 16 months before the validation
  period (`bars_span`);
- the EDGAR submissions and the filing PDFs (SEC evidence; PDFs without an acceptance time
  are stored as approximate, as ingest does).

    python -m benchmarks.impact_data --store /tmp/finkg-impact-store
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import sys
import time
from pathlib import Path

from benchmarks.harness import DATA, data_option
from finkg.config import Settings
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.setup import init_store
from finkg.kg.store import BaseStore, open_store

PRICE_HISTORY_FROM = dt.date(2017, 9, 1)
LAST_DAY = dt.date(2020, 12, 31)
PROXY_FILE = "market/QQQ_2013_2020.csv"
PRICE_FILE = {"META": "FB"}  # the news uses today's ticker; the bars file, 2020's


def universe(data: Path) -> list[str]:
    """Tickers with news and a non-empty price file, sorted."""
    with gzip.open(data / "event/news/nasdaq_news_2015_2020.jsonl.gz", "rt") as f:
        news = {json.loads(line)["symbol"].upper() for line in f}
    return sorted(t for t in news if _price_file(data, t).is_file() and _has_bars(data, t))


def describe(data: Path) -> str:
    """What the folder holds, for a report: tickers, EDGAR indexes, filing PDFs."""
    tickers = universe(data)
    edgar = len(list((data / "event/edgar/submissions").glob("*.json")))
    pdfs = len(list((data / "event/filings_pdf").glob("*.pdf")))
    return (
        f"{len(tickers)} tickers with news and prices; SEC evidence from the EDGAR "
        f"submissions of {edgar} companies and {pdfs} filing PDFs"
    )


def _price_file(data: Path, ticker: str) -> Path:
    return data / "event/prices" / f"{PRICE_FILE.get(ticker, ticker)}.csv"


def _has_bars(data: Path, ticker: str) -> bool:
    return len(_price_file(data, ticker).read_text().splitlines()) > 1


def _news(data: Path, tickers: set[str], out: Path) -> int:
    n = 0
    with (
        gzip.open(data / "event/news/nasdaq_news_2015_2020.jsonl.gz", "rt") as f,
        out.open("w") as w,
    ):
        for line in f:
            if json.loads(line)["symbol"].upper() in tickers:
                w.write(line)
                n += 1
    return n


def bars_span(first_anchor: dt.date, last_anchor: dt.date) -> tuple[dt.date, dt.date]:
    """The bars a store needs for anchors from `first_anchor` to `last_anchor`: 16 months
    before (the labels' market model) and three weeks after (the 5-session labels)."""
    start = dt.date(first_anchor.year - 1, first_anchor.month, 1) - dt.timedelta(days=130)
    return start, last_anchor + dt.timedelta(days=21)


def _bars(src: Path, out: Path, first_day: dt.date, last_day: dt.date) -> None:
    lines = src.read_text().splitlines()
    first, last = first_day.isoformat(), last_day.isoformat()
    out.write_text("\n".join([lines[0], *(x for x in lines[1:] if first <= x[:10] <= last)]) + "\n")


def _load(store: BaseStore, kind: str, paths: list[Path]) -> None:
    started = time.perf_counter()
    report = ingest(
        store, kind, loader(kind), paths, IngestOptions(graphs=store.graphs), skip_bad=True
    )
    print(
        f"{kind}: {len(paths)} files, {report.records} records, {report.written} written, "
        f"{report.quads:,} quads, {len(report.rejects)} rejects, "
        f"{time.perf_counter() - started:.0f} s",
        flush=True,
    )
    for reject in report.rejects[:5]:
        print(f"  rejected: {reject}", flush=True)


def build(
    store_dir: Path,
    data: Path = DATA,
    *,
    first_day: dt.date = PRICE_HISTORY_FROM,
    last_day: dt.date = LAST_DAY,
) -> BaseStore:
    """The store, built into `store_dir` when it is new (bars from `first_day` to
    `last_day`), else opened as it is."""
    fresh = not store_dir.exists() or not any(store_dir.iterdir())
    store = open_store(store_dir / "store", settings=Settings(home=store_dir / "home"))
    if not fresh:
        return store
    init_store(store)
    staged = store_dir / "staged"
    (staged / "prices").mkdir(parents=True)
    tickers = universe(data)
    print(f"universe: {len(tickers)} tickers with news and prices", flush=True)
    n = _news(data, set(tickers), staged / "news.jsonl")
    print(f"news of the universe: {n} items", flush=True)
    prices = []
    for t in tickers:
        _bars(_price_file(data, t), staged / "prices" / f"{t}.csv", first_day, last_day)
        prices.append(staged / "prices" / f"{t}.csv")
    proxy = staged / "prices" / "QQQ.csv"  # a bars file names its ticker
    _bars(data / "event" / PROXY_FILE, proxy, first_day, last_day)
    _load(store, "prices", [*prices, proxy])
    _load(
        store,
        "filings",
        sorted((data / "event/edgar/submissions").glob("*.json"))
        + sorted((data / "event/filings_pdf").glob("*.pdf")),
    )
    _load(store, "news", [staged / "news.jsonl"])
    return store


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True, help="a new or an existing folder")
    data_option(parser)
    args = parser.parse_args(argv)
    if not (args.data / "event").is_dir():
        print(f"no event data under {args.data}; pass --data", file=sys.stderr)
        return 2
    build(args.store, args.data).close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
