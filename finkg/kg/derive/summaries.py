"""Ten-week price summaries (paper 004 §3.1, its TenWeekPriceSummary).

Periods are consecutive, non-overlapping blocks of ten calendar weeks (70 days) counted
from Monday 1990-01-01, so every period runs Monday to Sunday and the periods of all
tickers line up. A period gets a summary only when the bars cover it completely: the
ticker's first bar is on or before the period's first XNYS session and a bar exists on or
after its last XNYS session. The summary holds the period's highest high, lowest low,
average close and end close (the close of its last bar), all unadjusted, and the period's
first and last calendar days. It is available at the close of the period's last XNYS
session: only then is the period's high or low final.

>>> import datetime as dt
>>> period_of(dt.date(2020, 5, 1))
(datetime.date(2020, 4, 13), datetime.date(2020, 6, 21))
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pyoxigraph import NamedNode, Quad

from finkg.kg.calendar import get_calendar
from finkg.kg.ingest import common
from finkg.kg.ingest.core import IngestOptions, Item
from finkg.kg.iri import mint
from finkg.ontology.terms import FKG, PROV, RDF

ANCHOR = dt.date(1990, 1, 1)  # a Monday, the calendar's first day
PERIOD_DAYS = 70
TIME_RULE = "close of the period's last session (XNYS)"


@dataclass(frozen=True)
class Summary:
    """One complete ten-week period of one ticker's bars."""

    start: dt.date  # the period's first calendar day (a Monday)
    end: dt.date  # its last calendar day (a Sunday)
    last_session: dt.date  # its last XNYS session: the summary is available at its close
    last_bar: dt.date  # the period's last session with a bar
    sessions: int  # bars in the period
    high: float
    low: float
    average: float
    end_close: float


def period_of(day: dt.date) -> tuple[dt.date, dt.date]:
    """The first and last calendar day of the ten-week period holding `day`."""
    k = (day - ANCHOR).days // PERIOD_DAYS
    start = ANCHOR + dt.timedelta(days=k * PERIOD_DAYS)
    return start, start + dt.timedelta(days=PERIOD_DAYS - 1)


def summaries(bars: pd.DataFrame, dates: list[dt.date]) -> list[Summary]:
    """The complete periods of `bars` (sorted; `dates` are its index as `datetime.date`)."""
    if not dates:
        return []
    cal = get_calendar()
    days = np.array([(d - ANCHOR).days for d in dates], dtype=np.int64)
    keys = days // PERIOD_DAYS
    frame = pd.DataFrame(
        {
            "k": keys,
            "high": bars["high"].to_numpy(float),
            "low": bars["low"].to_numpy(float),
            "close": bars["close"].to_numpy(float),
            "pos": np.arange(len(dates)),
        }
    )
    grouped = frame.groupby("k", sort=True).agg(
        high=("high", "max"),
        low=("low", "min"),
        average=("close", "mean"),
        first=("pos", "min"),
        last=("pos", "max"),
        n=("pos", "size"),
    )
    closes = frame["close"].to_numpy()
    first_bar, last_bar = dates[0], dates[-1]
    out = []
    for k, row in grouped.iterrows():
        start = ANCHOR + dt.timedelta(days=int(k) * PERIOD_DAYS)
        end = start + dt.timedelta(days=PERIOD_DAYS - 1)
        sessions = cal.sessions(start, end)
        if not sessions or first_bar > sessions[0] or last_bar < sessions[-1]:
            continue  # the bars do not cover this period completely
        out.append(
            Summary(
                start=start,
                end=end,
                last_session=sessions[-1],
                last_bar=dates[int(row["last"])],
                sessions=int(row["n"]),
                high=float(row["high"]),
                low=float(row["low"]),
                average=float(row["average"]),
                end_close=float(closes[int(row["last"])]),
            )
        )
    return out


def _price(x: float) -> str:
    return f"{x:.4f}"


def text(ticker: str, s: Summary) -> str:
    """What readers see: one JSON object with the paper-004 field names.

    >>> s = Summary(dt.date(2020, 4, 13), dt.date(2020, 6, 21), dt.date(2020, 6, 19),
    ...             dt.date(2020, 6, 19), 50, 88.3, 66.36, 77.123456, 87.43)
    >>> print(text("AAPL", s))  # doctest: +NORMALIZE_WHITESPACE
    {"stock": "AAPL", "summary": "ten-week price summary", "periodStartDate": "2020-04-13",
     "periodEndDate": "2020-06-21", "lastSession": "2020-06-19", "sessions": 50,
     "periodHighPrice": 88.3, "periodLowPrice": 66.36, "periodAveragePrice": 77.1235,
     "periodEndPrice": 87.43}
    """
    return json.dumps(
        {
            "stock": ticker,
            "summary": "ten-week price summary",
            "periodStartDate": s.start.isoformat(),
            "periodEndDate": s.end.isoformat(),
            "lastSession": s.last_bar.isoformat(),
            "sessions": s.sessions,
            "periodHighPrice": float(_price(s.high)),
            "periodLowPrice": float(_price(s.low)),
            "periodAveragePrice": float(_price(s.average)),
            "periodEndPrice": float(_price(s.end_close)),
        }
    )


def items(
    ticker: str,
    found: list[Summary],
    options: IngestOptions,
    *,
    source_quads: list[Quad],
    source_doc: NamedNode,
    source: str,
) -> Iterator[Item]:
    """One `fkg:PriceSummary` item per summary, each carrying its source document's quads."""
    cal = get_calendar()
    company = mint("company", ticker, base=options.base)
    for s in found:
        node = mint("summary", ticker, s.end.isoformat(), base=options.base)
        q = common.Quads(options.graphs.market, list(source_quads))
        q.node(
            node,
            (RDF.type, FKG.PriceSummary),
            (FKG.about, company),
            (FKG.periodStartDate, common.date(s.start)),
            (FKG.periodEndDate, common.date(s.end)),
            (FKG.periodHighPrice, common.decimal(_price(s.high), field="high")),
            (FKG.periodLowPrice, common.decimal(_price(s.low), field="low")),
            (FKG.periodAveragePrice, common.decimal(_price(s.average), field="average")),
            (FKG.periodEndPrice, common.decimal(_price(s.end_close), field="end close")),
            (FKG.text, common.string(text(ticker, s))),
            (FKG.availableAt, common.datetime(cal.bar_available_at(s.last_session))),
            (FKG.timeQuality, common.string("exact")),
            (FKG.timeRule, common.string(TIME_RULE)),
            (FKG.sourceFamily, FKG.Market),
            (PROV.wasDerivedFrom, source_doc),
        )
        yield Item(node, q.items, source, derived=True)
