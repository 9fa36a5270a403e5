"""Daily OHLCV bars from CSV: one file per ticker (the file stem is the ticker) or long
format (a `Ticker` or `Symbol` column).

Columns are matched case-insensitively: `Date, Open, High, Low, Close, Adj Close, Volume`
(`Adj close` and extra columns are accepted; a missing `Adj Close` is taken as `Close`).
`Date` is a session date (a `+00:00` suffix, as in the QQQ file, is ignored). Each bar is a
`fkg:PriceBar` in the market graph, about the company of its ticker, available at that
session's close on the XNYS calendar (early closes respected). A date that is not a session,
a price that is missing, not finite or not positive, or a low above the open, close or high
is rejected with its line; an empty file is rejected whole.

After a file's bars, the loader yields the market evidence derived from its valid bars,
ticker by ticker (`finkg.kg.derive`): ten-week price summaries and five-session indicator
windows, all derived from one source document per file (its path and SHA-256). Rejected
bars take no part in them; where a date repeats for a ticker, the first bar counts.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pandas as pd

from finkg.errors import InputError
from finkg.kg import derive  # (a module, not names: derive imports ingest.common)
from finkg.kg.calendar import get_calendar
from finkg.kg.ingest import common
from finkg.kg.ingest.core import IngestOptions, Item, Reject
from finkg.kg.iri import mint
from finkg.ontology.terms import FKG, RDF

REQUIRED = ("date", "open", "high", "low", "close")
_ALIASES = {
    "adj close": "adj_close",
    "adj_close": "adj_close",
    "adjclose": "adj_close",
    "ticker": "ticker",
    "symbol": "ticker",
}


def load(paths: Sequence[Path], options: IngestOptions) -> Iterator[Item | Reject]:
    for path in paths:
        yield from _file(path, options)


def _file(path: Path, options: IngestOptions) -> Iterator[Item | Reject]:
    table = common.read_table(path, required=REQUIRED, aliases=_ALIASES)
    if isinstance(table, Reject):
        yield table
        return
    yield from table.rejects
    if not table.rows and not table.rejects:
        yield Reject(str(path), 2, "no bars after the header")
    file_ticker = path.name.split(".")[0].upper()
    valid: dict[str, dict[dt.date, tuple[float, ...]]] = {}  # ticker -> session -> values
    first: dict[tuple[str, dt.date], int] = {}  # the line each session was first read on
    for line, row in table.rows:
        try:
            item, ticker, day, values = _bar(
                row, options, ticker=file_ticker, source=str(path), line=line
            )
        except InputError as e:
            yield Reject.of(e, source=str(path), line=line)
            continue
        seen = valid.setdefault(ticker, {})
        if day in seen:  # a repeated row is harmless; a second, different bar is not
            if seen[day] != values:
                yield Reject(
                    str(path),
                    line,
                    f"duplicate session {day} for {ticker}: line {first[ticker, day]} has "
                    "other values; keep one row per session",
                    field="Date",
                    value=day.isoformat(),
                )
            continue
        first[ticker, day] = line
        seen[day] = values
        yield item
    yield from _derived(path, valid, options)


def _derived(
    path: Path, valid: dict[str, dict[dt.date, tuple[float, ...]]], options: IngestOptions
) -> Iterator[Item]:
    """The derived market evidence of each ticker's valid bars in one file."""
    if not valid:
        return
    try:
        content: bytes | None = path.read_bytes()
    except OSError:
        content = None  # hash the bars' canonical CSV instead
    for ticker in sorted(valid):
        days = sorted(valid[ticker])
        bars = pd.DataFrame(
            [valid[ticker][d] for d in days], index=pd.Index(days), columns=list(derive.COLUMNS)
        )
        yield from derive.derived_items(ticker, bars, options, source=str(path), content=content)


def _session(text: str | None) -> dt.date:
    if not text or not text.strip():
        raise InputError("missing field", field="Date")
    raw = text.strip()
    try:
        day = dt.date.fromisoformat(raw[:10])
    except ValueError:
        raise InputError("not a date (YYYY-MM-DD)", field="Date", value=raw) from None
    if len(raw) > 10 and raw[10:] not in (
        "+00:00",
        " 00:00:00",
        "T00:00:00",
        " 00:00:00+00:00",
        "T00:00:00+00:00",
        "T00:00:00Z",
    ):
        raise InputError(
            "a daily bar's Date is a session date, not a time", field="Date", value=raw
        )
    try:
        session = get_calendar().is_session(day)
    except InputError as e:  # outside the calendar's years
        raise InputError(e.message, field="Date", value=raw, hint=e.hint) from None
    if not session:
        raise InputError("not an XNYS session (weekend or holiday)", field="Date", value=raw)
    return day


def bar(
    row: Mapping[str, str | None], options: IngestOptions, *, ticker: str, source: str, line: int
) -> Item:
    """The `fkg:PriceBar` item of one CSV row (an InputError names what is wrong)."""
    return _bar(row, options, ticker=ticker, source=source, line=line)[0]


def _bar(
    row: Mapping[str, str | None], options: IngestOptions, *, ticker: str, source: str, line: int
) -> tuple[Item, str, dt.date, tuple[float, ...]]:
    """The bar's item, its ticker and session, and its values in `COLUMNS` order."""
    ticker = (row.get("ticker") or ticker).strip().upper()
    day = _session(row.get("date"))
    closed = get_calendar().bar_available_at(day)
    if closed > options.moment:
        raise InputError(
            f"the session closes after the moment of ingestion ({options.moment:%Y-%m-%d %H:%M%z})"
            ": a bar is known at its close",
            field="Date",
            value=day.isoformat(),
            hint="ingest the bar once the session has closed",
        )
    values = {}
    texts: dict[str, str] = {}
    for name in ("open", "high", "low", "close"):
        text = row.get(name)
        if text is None or text == "":
            raise InputError("missing price", field=name.capitalize())
        texts[name] = text
        values[name] = common.decimal(text, field=name.capitalize(), positive=True)
    adj = row.get("adj_close")
    values["adj_close"] = common.decimal(adj or texts["close"], field="Adj Close", positive=True)
    o, h, lo, c = (float(values[k].value) for k in ("open", "high", "low", "close"))
    if not (lo <= min(o, c) and max(o, c) <= h):
        raise InputError(
            "inconsistent bar: need low <= open, close <= high",
            field="Low/High",
            value=f"O={o} H={h} L={lo} C={c}",
        )
    volume = row.get("volume")
    volume_value = None
    if volume not in (None, ""):
        volume_value = common.decimal(volume, field="Volume", non_negative=True)
    node = mint("bar", ticker, day.isoformat(), base=options.base)
    q = common.Quads(options.graphs.market)
    (
        q.add(node, RDF.type, FKG.PriceBar)
        .add(node, FKG.about, mint("company", ticker, base=options.base))
        .add(node, FKG.sessionDate, common.date(day))
        .add(node, FKG.availableAt, common.datetime(closed))
        .add(node, FKG.open, values["open"])
        .add(node, FKG.high, values["high"])
        .add(node, FKG.low, values["low"])
        .add(node, FKG.close, values["close"])
        .add(node, FKG.adjClose, values["adj_close"])
        .add(node, FKG.volume, volume_value)
    )
    floats = (
        o,
        h,
        lo,
        c,
        float(values["adj_close"].value),
        float("nan") if volume_value is None else float(volume_value.value),
    )
    return Item(node, q.items, source, line), ticker, day, floats
