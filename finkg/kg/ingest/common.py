"""What loaders share: typed literals, zoned times, source documents, numbers that must be
finite, and two builders of one named graph's statements: `Quads` (Quad objects) and
`Lines` (N-Quads text, for the news loader's throughput)."""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pyoxigraph import Literal, NamedNode, Quad

from finkg.errors import InputError, TimestampError
from finkg.kg.ingest.records import Reject, TextItem
from finkg.ontology.terms import DCTERMS, FKG, RDF, XSD
from finkg.shapes import castable


def zone(name: str) -> ZoneInfo:
    """A time zone by IANA name (America/New_York, UTC, Europe/Athens)."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InputError(
            "unknown time zone",
            field="--tz",
            value=name,
            hint="give an IANA name such as America/New_York or UTC",
        ) from None


def parse_instant(text: str, tz: str, *, field: str) -> dt.datetime:
    """A date (its first instant in `tz`) or a zoned instant; a naive time is refused."""
    text = text.strip()
    try:
        if len(text) == 10:
            return dt.datetime.combine(dt.date.fromisoformat(text), dt.time(), zone(tz))
        value = dt.datetime.fromisoformat(text)
    except ValueError:
        raise InputError(
            "not a date or an instant",
            field=field,
            value=text,
            hint="give YYYY-MM-DD or a zoned instant such as 2020-06-01T00:00+03:00",
        ) from None
    if value.tzinfo is None:
        raise TimestampError(
            "a time of day needs a zone",
            field=field,
            value=text,
            hint="add an offset (2020-06-01T09:00+03:00) or give the date alone",
        )
    return value


SECONDS = "%Y-%m-%d %H:%M:%S"  # its own offset may follow: 2019-11-03 01:30:00-04:00
_SECONDS = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:\d{2})?")


def zoned(text: str, *, tz: ZoneInfo | None, field: str, fmt: str | None = None) -> dt.datetime:
    """A zone-aware instant from `text`: its own offset if it has one, else the declared `tz`.
    A local time the clocks skipped in `tz` (a daylight-saving gap) is refused, and so is
    one they showed twice (an overlap): only its offset could say which instant it was.

    >>> zoned("2020-04-30 16:30:00", tz=ZoneInfo("America/New_York"), field="t").isoformat()
    '2020-04-30T16:30:00-04:00'
    >>> zoned("2019-11-03 01:30:00-05:00", tz=None, field="t", fmt=SECONDS).isoformat()
    '2019-11-03T01:30:00-05:00'
    """
    text = text.strip()
    try:
        if fmt == SECONDS and _SECONDS.fullmatch(text):
            value = dt.datetime.fromisoformat(text)  # the same form, 6x faster than strptime
        else:
            value = dt.datetime.strptime(text, fmt) if fmt else dt.datetime.fromisoformat(text)  # noqa: DTZ007 (zone attached below)
    except ValueError:
        raise TimestampError(
            "not a timestamp" + (f" in the form {fmt}" if fmt else " (ISO 8601)"),
            field=field,
            value=text,
        ) from None
    if value.tzinfo is not None:
        return value
    if tz is None:
        raise TimestampError(
            "timestamp has no zone and none was declared",
            field=field,
            value=text,
            hint="declare the source zone with --tz (for example America/New_York)",
        )
    return local(value, tz, field=field, text=text)


def local(value: dt.datetime, tz: ZoneInfo, *, field: str, text: str) -> dt.datetime:
    """The naive `value` as a wall-clock time in `tz`; one in a daylight-saving gap or
    overlap is a TimestampError (no offset can be guessed for it).

    >>> gap = dt.datetime(2019, 3, 10, 2, 30)
    >>> local(gap, ZoneInfo("America/New_York"), field="t", text="")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    finkg.errors.TimestampError: t: no such local time in America/New_York: the clocks skipped...
    """
    first, second = value.replace(tzinfo=tz), value.replace(tzinfo=tz, fold=1)
    if first.utcoffset() == second.utcoffset():
        return first
    if first.astimezone(dt.UTC).astimezone(tz).replace(tzinfo=None) != value:
        raise TimestampError(
            f"no such local time in {tz.key}: the clocks skipped it (a daylight-saving gap)",
            field=field,
            value=text or None,
            hint="check the time, or write it with its offset",
        )
    raise TimestampError(
        f"ambiguous local time in {tz.key}: the clocks showed it twice (a daylight-saving overlap)",
        field=field,
        value=text or None,
        hint=f"write it with its offset ({first.isoformat()} or {second.isoformat()})",
    )


def web_url(text: str, *, field: str, schemes: tuple[str, ...] = ("http", "https")) -> NamedNode:
    """`text` as the IRI of a web page: an absolute http(s) URL (or one of `schemes`) that
    is a valid IRI. A `javascript:` URL, a relative path, spaces or control characters are
    InputErrors naming `field`.

    >>> web_url("https://example.org/a?b=1", field="url").value
    'https://example.org/a?b=1'
    >>> web_url("javascript:alert(1)", field="url")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    finkg.errors.InputError: url: not an http(s) URL (got 'javascript:alert(1)'); give the...
    """
    scheme = text.split(":", 1)[0].lower() if ":" in text else ""  # schemes ignore case
    wanted = "/".join(schemes) if len(schemes) > 2 else "http(s)"
    if scheme not in schemes:
        raise InputError(
            f"not an {wanted} URL",
            field=field,
            value=text,
            hint="give the page's absolute http:// or https:// address",
        )
    try:
        iri = NamedNode(text)  # Oxigraph's IRI parser: spaces, quotes, a broken [IPv6] host
    except ValueError:
        raise InputError(
            "not a valid IRI (spaces, quotes or control characters must be %-encoded)",
            field=field,
            value=text,
        ) from None
    if scheme != "file" and not _HOST.match(text):
        raise InputError(f"an {wanted} URL without a host", field=field, value=text)
    return iri


_HOST = re.compile(r"[A-Za-z]+://[^/?#]")


def content_hash(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def string(value: str) -> Literal:
    return Literal(value)


def integer(value: int) -> Literal:
    """An xsd:integer; one beyond Oxigraph's 64 bits is an InputError."""
    if not castable.INTEGER_MIN <= int(value) <= castable.INTEGER_MAX:
        raise InputError("integer out of range (an xsd:integer is 64 bits)", value=value)
    return Literal(str(int(value)), datatype=XSD.integer)


def decimal(
    text: str | float | Decimal, *, field: str, positive: bool = False, non_negative: bool = False
) -> Literal:
    """An xsd:decimal Oxigraph holds (`shapes/castable.py`); NaN, infinities, numbers out
    of its range or finer than its 18 decimal places and (when asked) negative values are
    InputErrors."""
    try:
        value = Decimal(str(text).strip())
    except InvalidOperation:
        raise InputError("not a number", field=field, value=text) from None
    if not value.is_finite():
        raise InputError("not a finite number", field=field, value=text)
    if not castable.DECIMAL_MIN <= value <= castable.DECIMAL_MAX:  # 1e25, 1e400
        raise InputError(
            "number out of range (an xsd:decimal is within ±1.7e20)", field=field, value=text
        )
    if castable.decimal_places(value) > castable.DECIMAL_PLACES:  # 1e-30, 19 decimals
        raise InputError(
            f"more decimal places than an xsd:decimal keeps ({castable.DECIMAL_PLACES})",
            field=field,
            value=text,
            hint="round the value in the source",
        )
    if positive and value <= 0:
        raise InputError("must be positive", field=field, value=text)
    if non_negative and value < 0:
        raise InputError("must not be negative", field=field, value=text)
    return Literal(_plain(value), datatype=XSD.decimal)


def _plain(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text if "." in text else text + ".0"


def double(value: float) -> Literal:
    if not math.isfinite(value):
        raise InputError("not a finite number", value=value)
    return Literal(repr(float(value)), datatype=XSD.double)


def date(value: dt.date) -> Literal:
    return Literal(value.isoformat(), datatype=XSD.date)


def datetime(value: dt.datetime) -> Literal:
    if value.tzinfo is None:
        raise TimestampError("timestamp has no zone", value=value.isoformat())
    return Literal(value.isoformat(), datatype=XSD.dateTime)


class _Builder:
    """Statements of one named graph, made subject by subject."""

    graph: NamedNode

    def node(self, s: NamedNode, *pairs: tuple[NamedNode, NamedNode | Literal | None]) -> Any:
        raise NotImplementedError

    def source_document(
        self, iri: NamedNode, *, data: bytes, source: str | NamedNode, media_type: str
    ) -> Any:
        """A fkg:SourceDocument with its content hash, source (an http(s) URL or a file URI:
        anything else is an InputError; an IRI from `web_url` is taken as it is) and media
        type."""
        target = (
            source
            if isinstance(source, NamedNode)
            else web_url(source, field="source", schemes=("http", "https", "file"))
        )
        return self.node(
            iri,
            (RDF.type, FKG.SourceDocument),
            (FKG.contentHash, Literal(content_hash(data))),
            (DCTERMS.source, target),
            (FKG.mediaType, Literal(media_type)),
        )


@dataclass
class Quads(_Builder):
    """Quads of one named graph, built statement by statement."""

    graph: NamedNode
    items: list[Quad] = field(default_factory=list)

    def add(self, s: NamedNode, p: NamedNode, o: NamedNode | Literal | None) -> Quads:
        if o is not None:
            self.items.append(Quad(s, p, o, self.graph))
        return self

    def node(self, s: NamedNode, *pairs: tuple[NamedNode, NamedNode | Literal | None]) -> Quads:
        """Statements about one subject; pairs whose object is None are skipped."""
        g = self.graph
        self.items.extend(Quad(s, p, o, g) for p, o in pairs if o is not None)
        return self


_TYPE, _SOURCE_DOCUMENT = str(RDF.type), str(FKG.SourceDocument)  # as N-Triples terms


class Lines(_Builder):
    """The same statements written straight as N-Quads lines, for a loader whose throughput
    is a target (news): no Quad objects are built, and the ingest stages, checks and writes
    the text as it is. Terms are written by pyoxigraph (`str` of a term is its N-Triples
    form), so escaping is Oxigraph's own."""

    def __init__(self, graph: NamedNode) -> None:
        self.graph = graph
        self._graph = f" {graph} .\n"
        self.lines: list[str] = []
        self.statements: list[NamedNode | Literal] = []  # subject, predicate, object, ...
        self.types: dict[str, NamedNode | Literal] = {}  # subject (as written) -> its rdf:type
        self.sources: list[tuple[NamedNode, NamedNode]] = []

    def node(self, s: NamedNode, *pairs: tuple[NamedNode, NamedNode | Literal | None]) -> Lines:
        """Statements about one subject; pairs whose object is None are skipped."""
        subject = str(s)
        for p, o in pairs:
            if o is None:
                continue
            predicate, value = str(p), str(o)
            if predicate == _TYPE:
                self.types.setdefault(subject, o)
                if value == _SOURCE_DOCUMENT:
                    self.sources.append((s, self.graph))
            self.lines.append(f"{subject} {predicate} {value}{self._graph}")
            self.statements += (s, p, o)  # flat: a tuple each would cost the GC its time
        return self

    def item(
        self,
        key: NamedNode,
        source: str,
        line: int | None,
        *,
        siblings: frozenset[NamedNode] = frozenset(),
    ) -> TextItem:
        kind = self.types.get(str(key))
        if kind is None:
            raise ValueError(f"loader bug: the key {key} of {source} has no rdf:type statement")
        return TextItem(
            key,
            "".join(self.lines).encode("utf-8"),
            len(self.lines),
            Quad(key, RDF.type, kind, self.graph),
            tuple(self.sources),
            source,
            line,
            self.statements,
            siblings,
        )


@dataclass(frozen=True)
class Table:
    """A CSV file read for a loader: normalized column names (lower case, aliases applied),
    rows keyed by them with stripped values, and the rows that could not be read."""

    path: Path
    columns: tuple[str, ...]
    rows: list[tuple[int, dict[str, str]]]
    rejects: list[Reject]


def read_table(
    path: Path, *, required: Iterable[str] = (), aliases: Mapping[str, str] | None = None
) -> Table | Reject:
    """Read a CSV (UTF-8, optional BOM); a missing file, an empty file or missing required
    columns reject the whole file, a row with more values than the header rejects the row."""
    aliases = aliases or {}
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        return Reject(str(path), None, f"cannot read file: {e}")
    if not text.strip():
        return Reject(str(path), None, "empty file: no header and no rows")
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    names = {c: aliases.get(c.strip().lower(), c.strip().lower()) for c in header}
    missing = [c for c in required if c not in names.values()]
    if missing:
        return Reject(
            str(path),
            1,
            "missing columns: " + ", ".join(missing),
            field="header",
            value=",".join(header),
        )
    rows: list[tuple[int, dict[str, str]]] = []
    rejects: list[Reject] = []
    for line, row in enumerate(csv_rows(reader, path, rejects), start=2):
        if None in row:
            rejects.append(
                Reject(
                    str(path),
                    line,
                    f"{len(header) + len(row[None])} values for {len(header)} columns",
                    field="row",
                )
            )
            continue
        rows.append((line, {names[k]: (v or "").strip() for k, v in row.items()}))
    return Table(path, tuple(names.values()), rows, rejects)


def csv_rows(reader: csv.DictReader, path: Path, rejects: list[Reject]) -> Iterator[dict]:
    """The reader's rows until one cannot be read (a field over the csv module's limit of
    131,072 characters): that row, and the rest of the file, become one Reject."""
    try:
        yield from reader
    except csv.Error as e:
        rejects.append(
            Reject(str(path), reader.line_num + 1, f"not valid CSV from here on: {e}", field="row")
        )
