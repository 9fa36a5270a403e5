"""News in the nasdaq-news shape: JSON Lines or a JSON array (optionally gzipped).

Fields: `symbol, publishedDate ("YYYY-MM-DD HH:MM:SS"), title, site, text, url, image`.
The feed gives no zone: publication times are read in the declared `--tz`, by default
America/New_York (the feed's pre-market items at 07:xx describe pre-market trading).
One `fkg:NewsArticle` per (symbol, url) in the news graph, about the company of `symbol`,
available at its publication instant; its source document is the record itself (hash of its
canonical JSON, source = its URL).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from zoneinfo import ZoneInfo

from finkg.errors import InputError
from finkg.kg.ingest import common
from finkg.kg.ingest.core import IngestOptions, Item, Reject
from finkg.kg.iri import mint
from finkg.ontology.terms import DCTERMS, FKG, PROV, RDF

DEFAULT_TZ = ZoneInfo("America/New_York")
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
MAX_FIELD = 1_000_000  # characters; longer fields are rejected, not truncated


def load(paths: Sequence[Path], options: IngestOptions) -> Iterator[Item | Reject]:
    for path in paths:
        for line, record in _records(path):
            if isinstance(record, Reject):
                yield record
                continue
            try:
                yield item(record, options, source=str(path), line=line)
            except InputError as e:
                yield Reject.of(e, source=str(path), line=line)


def _records(path: Path) -> Iterator[tuple[int | None, dict | Reject]]:
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        text = raw.decode("utf-8")
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as e:
        yield None, Reject(str(path), None, f"cannot read file: {e}")
        return
    if not text.strip():
        yield None, Reject(str(path), None, "empty file: no news records")
        return
    if text.lstrip().startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as e:
            yield e.lineno, Reject(str(path), e.lineno, f"not valid JSON: {e.msg}")
            return
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
            record = json.loads(line)
        except json.JSONDecodeError as e:
            yield i, Reject(str(path), i, f"not valid JSON: {e.msg}")
            continue
        yield i, record if isinstance(record, dict) else Reject(str(path), i, "not a JSON object")


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


def item(record: dict, options: IngestOptions, *, source: str, line: int | None) -> Item:
    symbol = _field(record, "symbol")
    assert symbol is not None
    symbol = symbol.upper()
    tz = options.tz or DEFAULT_TZ
    published = common.zoned(
        _field(record, "publishedDate") or "",
        tz=tz,
        field="publishedDate",
        fmt=TIME_FORMAT,
    )
    title = _field(record, "title")
    body = _field(record, "text", required=False)
    url = _field(record, "url", required=False)
    site = _field(record, "site", required=False)
    key = url or f"{published.isoformat()}|{title}"
    node = mint("news", symbol, key, base=options.base)
    doc = mint("source/news", symbol, key, base=options.base)
    canonical = json.dumps(record, sort_keys=True, ensure_ascii=False).encode("utf-8")
    q = common.Quads(options.graph or options.graphs.news)
    q.source_document(
        doc,
        data=canonical,
        source=url or f"{Path(source).resolve().as_uri()}#line={line}",
        media_type="application/json",
    )
    (
        q.add(node, RDF.type, FKG.NewsArticle)
        .add(node, DCTERMS.title, common.string(title or ""))
        .add(node, FKG.text, common.string(title + ("\n\n" + body if body else "")))
        .add(node, FKG.availableAt, common.datetime(published))
        .add(node, FKG.timeQuality, common.string("exact"))
        .add(node, FKG.timeRule, common.string(f"publishedDate read as {tz.key}"))
        .add(node, FKG.sourceFamily, FKG.News)
        .add(node, FKG.about, mint("company", symbol, base=options.base))
        .add(node, FKG.site, common.string(site) if site else None)
        .add(node, PROV.wasDerivedFrom, doc)
    )
    return Item(node, q.items, source, line)
