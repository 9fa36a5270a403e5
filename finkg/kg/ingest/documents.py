"""Documents (PDF, DOCX, XLSX, HTML, TXT) through the paper-003 lifecycle.

Unlike the record loaders, documents are not written by the batch writer: each lifecycle
transition is its own atomic, audited write (see `finkg.kg.lifecycle`), so a document that
fails or is interrupted resumes from its last state. The checks are the same: every
stage's artifacts pass the shapes before they are written.

What finkg knows of a document besides its bytes comes from an optional sidecar
`<file>.meta.json` beside it:

    {"published": "2019-02-16" or "2019-02-16T08:00:00-05:00",
     "title": "...", "tickers": ["ZQAW"], "source": "https://..."}

A publication datetime with a zone is exact; a date alone is available at the end of that
day (next midnight in `--tz`, by default America/New_York), marked approximate. Without a
publication time the document is available from the moment it is ingested (approximate,
and said so): finkg never guesses an earlier time than it can prove.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

from pyoxigraph import Quad

from finkg import queries
from finkg.errors import InputError
from finkg.kg import lifecycle
from finkg.kg.ingest import doctext, jsontext, office
from finkg.kg.ingest.common import web_url, zoned
from finkg.kg.ingest.core import Reject
from finkg.kg.store import BaseStore
from finkg.shapes.validate import validate_quads

DEFAULT_TZ = ZoneInfo("America/New_York")
SIDECAR = ".meta.json"


@dataclass
class DocumentsReport:
    files: int
    ready: int = 0
    already_ready: int = 0
    chunks: int = 0
    facts: int = 0
    rejects: list[Reject] = field(default_factory=list)
    outcomes: list[lifecycle.Outcome] = field(default_factory=list)


def kind_of(path: Path, data: bytes) -> str:
    suffix = next((s.lower() for s in reversed(path.suffixes) if s.lower() != ".gz"), "")
    if data[:2] == b"PK":  # a zip: OOXML
        if suffix == ".docx":
            return office.DOCX
        if suffix == ".xlsx":
            return office.XLSX
        raise InputError(
            "a zip archive that is not .docx or .xlsx",
            source=str(path),
            field="media type",
            value=suffix,
        )
    return doctext.media_type(path, data)


def extract(upload: lifecycle.Upload) -> str | lifecycle.Extracted:
    if upload.media_type == doctext.PDF:
        pages = doctext.pdf_pages(upload.data, source=upload.source)
        text = doctext.normalize("\n\n".join(p for p in pages if p))
        return lifecycle.Extracted(text, tuple(pages))
    if upload.media_type == office.DOCX:
        return office.docx_to_text(upload.data, source=upload.source)
    if upload.media_type == office.XLSX:
        return office.xlsx_to_text(upload.data, source=upload.source)
    return doctext.extract(upload.data, upload.media_type, source=upload.source)


def _sidecar(path: Path) -> dict[str, object]:
    meta = path.with_name(path.name + SIDECAR)
    if not meta.exists():
        return {}
    try:
        data = jsontext.loads(meta.read_text(encoding="utf-8"), source=str(meta))
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"unreadable metadata sidecar: {e}", source=str(meta)) from None
    except InputError as e:
        message = f"unreadable metadata sidecar: {e.message}"
        raise InputError(message, source=str(meta), line=e.line, field=e.field) from None
    if not isinstance(data, dict):
        raise InputError("a metadata sidecar is a JSON object", source=str(meta))
    return data


def _publication(
    path: Path,
    meta: dict[str, object],
    zone: ZoneInfo,
    now: Callable[[], dt.datetime] | None,
) -> tuple[dt.datetime, str, str]:
    """When the document became available, how well that is known, and the rule used."""
    sidecar = str(path) + SIDECAR
    ingested = (now or (lambda: dt.datetime.now(dt.UTC)))()
    if "published" not in meta:
        rule = f"no publication time given (no {path.name}{SIDECAR}): available from its ingestion"
        return ingested, "approximate", rule
    text = meta["published"]
    if not isinstance(text, str):
        raise InputError(
            "published is an ISO date or a zoned ISO datetime string",
            source=sidecar,
            field="published",
            value=text,
        )
    if len(text) == 10:
        try:
            day = dt.date.fromisoformat(text)
        except ValueError as e:
            raise InputError(
                f"not a date: {e}", source=sidecar, field="published", value=text
            ) from None
        published = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), tzinfo=zone)
        quality = "approximate"
        rule = f"sidecar date {day}: available at the end of that day (next midnight, {zone.key})"
        future = day > ingested.astimezone(zone).date()
    else:
        try:
            published = zoned(text, tz=None, field="published")
        except InputError as e:
            raise InputError(e.message, source=sidecar, field="published", value=text) from None
        quality, rule = "exact", "sidecar publication time"
        future = published > ingested
    if future:
        raise InputError(
            f"published after the ingestion ({ingested.isoformat(timespec='seconds')}): "
            "a document cannot be known before it exists",
            source=sidecar,
            field="published",
            value=text,
            hint="fix the sidecar's publication time",
        )
    return published, quality, rule


def _source(path: Path, given: object) -> str:
    """The document's dcterms:source: the sidecar's http(s) URL, else the file's URI."""
    if given is None or given == "":
        return path.resolve().as_uri()
    sidecar = str(path) + SIDECAR
    if not isinstance(given, str):
        raise InputError("source is a URL string", source=sidecar, field="source", value=given)
    try:
        return web_url(given, field="source").value
    except InputError as e:
        raise InputError(
            e.message, source=sidecar, field="source", value=given, hint=e.hint
        ) from None


def upload(
    path: Path, *, tz: ZoneInfo | None = None, now: Callable[[], dt.datetime] | None = None
) -> lifecycle.Upload:
    """A file and its sidecar as a lifecycle `Upload` (see the module docstring)."""
    data = doctext.read_bytes(path)
    if not data.strip():
        raise InputError("empty file", source=str(path))
    meta = _sidecar(path)
    published, quality, rule = _publication(path, meta, tz or DEFAULT_TZ, now)
    tickers = meta.get("tickers", [])
    if not isinstance(tickers, list) or not all(isinstance(t, str) for t in tickers):
        raise InputError(
            "tickers is a list of strings",
            source=str(path) + SIDECAR,
            field="tickers",
            value=tickers,
        )
    return lifecycle.Upload(
        data=data,
        source=_source(path, meta.get("source")),
        media_type=kind_of(path, data),
        title=str(meta.get("title") or path.name),
        published=published,
        time_quality=quality,
        time_rule=rule,
        tickers=tuple(t.upper() for t in tickers),
    )


def ingest_documents(
    store: BaseStore,
    paths: Sequence[Path],
    *,
    tz: ZoneInfo | None = None,
    settings: lifecycle.Settings | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> DocumentsReport:
    """Take every document to Ready; failures end in Error with their reason (and a Reject)."""
    files = [p for p in paths if not p.name.endswith(SIDECAR)]
    report = DocumentsReport(files=len(files))
    rows = queries.select(store, "company_names")
    companies = {r.string("ticker"): r.string("name") for r in rows}
    for path in files:
        try:
            doc = upload(path, tz=tz)
        except InputError as e:
            report.rejects.append(Reject.of(e, source=str(path), line=None))
            continue
        outcome = lifecycle.process(
            store, doc, extract, settings=settings, companies=companies, check=check_artifacts
        )
        report.outcomes.append(outcome)
        if outcome.state == "Ready" and not outcome.transitions:
            report.already_ready += 1
        elif outcome.state == "Ready":
            report.ready += 1
            report.chunks += outcome.chunks
            report.facts += outcome.facts
        else:
            report.rejects.append(
                Reject(str(path), None, outcome.error or outcome.state, field=outcome.state)
            )
        if progress:
            progress("documents", 1)
    return report


def check_artifacts(quads: list[Quad]) -> None:
    """A stage's artifacts must conform before they are written."""
    result = validate_quads(quads)
    if not result.conforms:
        v = result.violations[0]
        raise InputError(f"{v.message} ({v.focus})", field=v.path, value=v.value)


__all__ = ["DocumentsReport", "ingest_documents", "upload"]
