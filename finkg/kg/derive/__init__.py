"""Market evidence derived from one ticker's daily bars: ten-week price summaries
(`summaries`, paper 004) and five-session indicator windows with movement labels
(`indicators` computes the series, `windows` cuts and serializes them, paper 001).

`derived_items(ticker, bars, options, source=...)` yields ingest `Item`s: one per summary,
then one per candidate session holding that session's windows (one per series).
Everything is a function of the bars (and the source file's bytes), so the same file always
gives the same quads and a re-ingest adds nothing; and every node is a function of the bars
up to its `fkg:availableAt`, so a file cut at session T gives the same nodes for everything
available before T's close (future invariance, DESIGN §3).

Each item carries its source document: one `fkg:SourceDocument` per price file (per ticker
when no file bytes are given), keyed by the file's path and SHA-256, so the items of a file
share it and every ingest chunk can check `prov:wasDerivedFrom` against it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
from pyoxigraph import Literal, NamedNode, Quad

from finkg.errors import InputError
from finkg.kg.calendar import get_calendar
from finkg.kg.derive import indicators, summaries, windows
from finkg.kg.ingest import common
from finkg.kg.ingest.core import IngestOptions, Item
from finkg.kg.iri import mint
from finkg.ontology.terms import DCTERMS, FKG, RDF

COLUMNS = indicators.BASIC
# the statements fsh:SourceDocument requires of a source document
REQUIRED_DOC = frozenset({RDF.type, FKG.contentHash, DCTERMS.source})

__all__ = ["COLUMNS", "derived_items", "source_document"]


def derived_items(
    ticker: str,
    bars: pd.DataFrame,
    options: IngestOptions,
    *,
    source: str,
    content: bytes | None = None,
) -> Iterator[Item]:
    """The price summaries and indicator windows of one ticker's bars.

    `bars`: a session-date index (sorted, unique) and float columns open, high, low, close,
    adj_close, volume (NaN volume allowed). `source`: the price file's path or URL;
    `content`: its bytes, hashed for the source document (without them, the bars'
    canonical CSV is hashed).
    """
    bars = _checked(bars)
    if bars.empty:
        return
    doc, full = source_document(ticker, bars, options, source=source, content=content)
    found = summaries.summaries(bars, list(bars.index))
    yield from summaries.items(
        ticker, found, options, source_quads=full, source_doc=doc, source=source
    )
    # A session's windows carry the document's three required statements (what a chunk's
    # shape check needs); the last session, new whenever a longer file is ingested again,
    # carries all of them.
    w = windows.Windows.of(bars, indicators.series(bars), ticker)
    required = [q for q in full if q.predicate in REQUIRED_DOC]
    rest = [q for q in full if q.predicate not in REQUIRED_DOC]
    last = None
    for item in windows.items(w, options, source_quads=required, source_doc=doc, source=source):
        if last is not None:
            yield last
        last = item
    if last is not None:
        yield dataclasses.replace(last, quads=rest + last.quads)


def source_document(
    ticker: str,
    bars: pd.DataFrame,
    options: IngestOptions,
    *,
    source: str,
    content: bytes | None = None,
) -> tuple[NamedNode, list[Quad]]:
    """The source document derived items point at, and its quads (in the market graph):
    type, content hash, source, media type and a description of the derivation."""
    if content is None:
        data = canonical_csv(bars).encode("utf-8")
        what = f"the canonical CSV of {ticker}'s bars read from {Path(source).name}"
    else:
        data = content
        what = f"the price file {Path(source).name}"
    digest = hashlib.sha256(data).hexdigest()
    target = source if "://" in source else Path(source).resolve().as_uri()
    doc = mint("source/prices", target, digest, base=options.base)
    q = common.Quads(options.graphs.market)
    q.source_document(doc, data=data, source=target, media_type="text/csv")
    q.add(
        doc,
        DCTERMS.description,
        Literal(
            f"daily OHLCV bars: {what}; ten-week price summaries and five-session indicator "
            "windows are derived from them by finkg.kg.derive"
        ),
    )
    return doc, q.items


def canonical_csv(bars: pd.DataFrame) -> str:
    """The bars as CSV: ISO dates, the six columns in order, floats in full precision."""
    frame = bars.loc[:, list(COLUMNS)].copy()
    frame.index = [d.isoformat() if isinstance(d, dt.date) else str(d) for d in frame.index]
    return frame.to_csv(index_label="date", lineterminator="\n")


def _checked(bars: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in COLUMNS if c not in bars.columns]
    if missing:
        raise InputError(
            "bars lack columns: " + ", ".join(missing),
            field="bars",
            value=", ".join(map(str, bars.columns)),
            hint="give open, high, low, close, adj_close and volume (floats)",
        )
    index = pd.DatetimeIndex(pd.to_datetime(bars.index))
    if not index.is_monotonic_increasing or not index.is_unique:
        raise InputError(
            "bars must be sorted by session date, one row per session",
            field="bars",
            hint="sort the index and drop duplicate dates first",
        )
    days = [t.date() for t in index]
    cal = get_calendar()
    strays = [d.isoformat() for d in days if not cal.is_session(d)]
    if strays:
        raise InputError(
            "bars must be on XNYS sessions",
            field="bars",
            value=", ".join(strays[:5]),
            hint="drop weekend and holiday rows (the price loader rejects them)",
        )
    out = bars.loc[:, list(COLUMNS)].astype("float64")
    out.index = pd.Index(days)
    return out
