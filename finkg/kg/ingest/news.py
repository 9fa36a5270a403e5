"""News items: the nasdaq-news JSON shape (JSON Lines or a JSON array) and the FNSPID CSV
shape, optionally gzipped; the format is told by the file (a `.csv` name, or JSON).

- nasdaq-news: `symbol, publishedDate ("YYYY-MM-DD HH:MM:SS"), title, site, text, url`.
  No zone in the data: read in `--tz`, by default America/New_York (its pre-market items at
  07:xx describe pre-market trading).
- FNSPID: `Date ("YYYY-MM-DD HH:MM:SS UTC"), Article_title, Stock_symbol, Url, Publisher,
  Author, Article, *_summary`. The zone is the `UTC` suffix when present, else `--tz`, by
  default UTC.

One `fkg:NewsArticle` per (symbol, url) in the news graph, about the company of the symbol,
available at its publication instant, with the rule that gave that instant; its source
document is the record itself (hash of its canonical JSON, source = its URL). An FNSPID
row without an article body uses its first non-empty summary as text. Its source family is
derived from its publisher site (or, failing that, its URL's host) by the mapping kept in
the ontology (`finkg.ontology.families`): a press release, analysis, news report, or News.
"""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import io
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

from finkg.errors import InputError
from finkg.kg.ingest import common, jsontext
from finkg.kg.ingest.core import IngestOptions, Reject, TextItem
from finkg.kg.iri import mint
from finkg.ontology.families import family_of_site
from finkg.ontology.terms import DCTERMS, FKG, PROV, RDF


@dataclass(frozen=True)
class Shape:
    """Where a news format keeps each field, and how to read its times."""

    name: str
    symbol: str
    published: str
    title: str
    text: tuple[str, ...]  # the body, then fallbacks
    url: str
    site: str
    default_tz: ZoneInfo
    zone_suffix: str | None = None  # a literal suffix that names the zone of the value


NASDAQ = Shape(
    "nasdaq-news",
    "symbol",
    "publishedDate",
    "title",
    ("text",),
    "url",
    "site",
    ZoneInfo("America/New_York"),
)
FNSPID = Shape(
    "FNSPID",
    "Stock_symbol",
    "Date",
    "Article_title",
    ("Article", "Lsa_summary", "Luhn_summary", "Textrank_summary", "Lexrank_summary"),
    "Url",
    "Publisher",
    ZoneInfo("UTC"),
    zone_suffix=" UTC",
)

TIME_FORMAT = common.SECONDS
MAX_FIELD = 1_000_000  # characters; longer fields are rejected, not truncated


def load(paths: Sequence[Path], options: IngestOptions) -> Iterator[TextItem | Reject]:
    for path in paths:
        shape = FNSPID if ".csv" in [s.lower() for s in path.suffixes] else NASDAQ
        for line, record in _records(path, shape):
            if isinstance(record, Reject):
                yield record
                continue
            try:
                yield item(record, options, shape=shape, source=str(path), line=line)
            except InputError as e:
                yield Reject.of(e, source=str(path), line=line)


def _records(path: Path, shape: Shape) -> Iterator[tuple[int | None, dict | Reject]]:
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        text = raw.decode("utf-8-sig")
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as e:
        yield None, Reject(str(path), None, f"cannot read file: {e}")
        return
    if not text.strip():
        yield None, Reject(str(path), None, "empty file: no news records")
        return
    if shape is FNSPID:
        yield from _csv_records(path, text)
        return
    if text.lstrip().startswith("["):
        try:
            records = jsontext.loads(text, source=str(path))
        except InputError as e:
            yield e.line, Reject.of(e, source=str(path), line=e.line)
            return
        assert isinstance(records, list)  # the text opens a JSON array
        for i, record in enumerate(records, start=1):
            yield (
                i,
                record
                if isinstance(record, dict)
                else Reject(str(path), None, f"array element {i} is not an object"),
            )
        return
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = jsontext.loads(line, source=str(path), line=i)
        except InputError as e:
            yield i, Reject.of(e, source=str(path), line=i)
            continue
        yield i, record if isinstance(record, dict) else Reject(str(path), i, "not a JSON object")


def _csv_records(path: Path, text: str) -> Iterator[tuple[int | None, dict | Reject]]:
    reader = csv.DictReader(io.StringIO(text))
    missing = [
        c
        for c in (FNSPID.symbol, FNSPID.published, FNSPID.title)
        if c not in (reader.fieldnames or [])
    ]
    if missing:
        yield (
            1,
            Reject(
                str(path),
                1,
                "missing columns: " + ", ".join(missing),
                field="header",
                value=",".join(reader.fieldnames or []),
            ),
        )
        return
    start = 2
    unreadable: list[Reject] = []
    for row in common.csv_rows(reader, path, unreadable):
        if None in row:
            yield start, Reject(str(path), start, "more values than columns", field="row")
        else:
            yield start, row
        start = reader.line_num + 1
    for reject in unreadable:
        yield reject.line, reject


def _field(record: dict, name: str, *, required: bool = True) -> str | None:
    value = record.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise InputError("missing field", field=name)
        return None
    if not isinstance(value, str):
        raise InputError("expected a string", field=name, value=value)
    if len(value) > MAX_FIELD:
        raise InputError(f"field longer than {MAX_FIELD} characters", field=name, value=value[:80])
    return value.strip()


def _published(record: dict, shape: Shape, options: IngestOptions) -> tuple[dt.datetime, str]:
    text = _field(record, shape.published) or ""
    if shape.zone_suffix and text.endswith(shape.zone_suffix):
        zone = ZoneInfo(shape.zone_suffix.strip())
        at = common.zoned(
            text.removesuffix(shape.zone_suffix), tz=zone, field=shape.published, fmt=TIME_FORMAT
        )
        return at, f"{shape.published} with its {shape.zone_suffix.strip()} suffix"
    tz = options.tz or shape.default_tz
    at = common.zoned(text, tz=tz, field=shape.published, fmt=TIME_FORMAT)
    if at.tzinfo is not tz:  # the text named its offset
        return at, f"{shape.published} with its own offset"
    return at, f"{shape.published} read as {tz.key}"


def item(
    record: dict, options: IngestOptions, *, shape: Shape = NASDAQ, source: str, line: int | None
) -> TextItem:
    symbol = (_field(record, shape.symbol) or "").upper()
    published, rule = _published(record, shape, options)
    if published > options.moment:
        raise InputError(
            f"published after the moment of ingestion ({options.moment:%Y-%m-%d %H:%M:%S%z})",
            field=shape.published,
            value=record.get(shape.published),
            hint="fix the date; news cannot be known before it is published",
        )
    title = _field(record, shape.title) or ""
    body = next((b for b in (_field(record, f, required=False) for f in shape.text) if b), None)
    url = _field(record, shape.url, required=False)
    page = common.web_url(url, field=shape.url) if url is not None else None
    site = _field(record, shape.site, required=False)
    key = url or f"{published.isoformat()}|{title}"
    node = mint("news", symbol, key, base=options.base)
    doc = mint("source/news", symbol, key, base=options.base)
    canonical = json.dumps(record, sort_keys=True, ensure_ascii=False).encode("utf-8")
    q = common.Lines(options.graph or options.graphs.news)  # text: news has a speed target
    q.source_document(
        doc,
        data=canonical,
        source=page or f"{Path(source).resolve().as_uri()}#line={line}",
        media_type="application/json" if shape is NASDAQ else "text/csv",
    )
    q.node(
        node,
        (RDF.type, FKG.NewsArticle),
        (DCTERMS.title, common.string(title)),
        (FKG.text, common.string(title + ("\n\n" + body if body else ""))),
        (FKG.availableAt, common.datetime(published)),
        (FKG.timeQuality, common.string("exact")),
        (FKG.timeRule, common.string(rule)),
        (FKG.sourceFamily, family_of_site(site, url=url)),
        (FKG.about, mint("company", symbol, base=options.base)),
        (FKG.site, common.string(site) if site else None),
        (PROV.wasDerivedFrom, doc),
    )
    return q.item(node, source, line, siblings=frozenset({doc}))  # minted from the same key
