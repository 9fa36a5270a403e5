"""Reading RDF files into finkg quads, refusing what finkg must not store.

`read_rdf(path)` parses Turtle, N-Triples, N-Quads, TriG, JSON-LD, RDF/XML or N3 (also
gzipped) and returns quads ready for `Store.write`. It refuses, naming the file and line:
syntax errors, a file larger than `max_bytes` once decompressed, XML entity declarations
(RDF/XML entities are not expanded: a 659-byte file once became a 100 MB literal), RDF 1.2
triple terms and directional language strings (finkg does not use RDF 1.2), a literal
longer than `max_literal` characters, triples outside a named graph when no `--graph` is
given, quads in a graph that is not one of finkg's, and xsd:dateTime literals without a
zone. Blank nodes become stable IRIs (`{base}genid/...`, from the file's hash and the
node's label), so a file read twice gives the same quads and the remote backend can write
them.

`ingest_rdf(store, paths)` writes files through the ingest every loader uses
(`kg/ingest/core.py`): one record per file, staged, screened and checked against finkg's
shapes (with what the store holds about the file's nodes) before anything is written;
nothing may go into the `audit` or `ontology` graphs, which finkg alone writes.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyoxigraph as ox
from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, Triple

from finkg.errors import InputError, TimestampError, UnknownGraphError
from finkg.kg.graphs import Graphs
from finkg.kg.ingest.core import IngestOptions, Item, Reject, ingest
from finkg.kg.store import BaseStore
from finkg.ontology.terms import XSD

FORMATS = {
    ".ttl": ox.RdfFormat.TURTLE,
    ".nt": ox.RdfFormat.N_TRIPLES,
    ".nq": ox.RdfFormat.N_QUADS,
    ".trig": ox.RdfFormat.TRIG,
    ".jsonld": ox.RdfFormat.JSON_LD,
    ".json": ox.RdfFormat.JSON_LD,
    ".rdf": ox.RdfFormat.RDF_XML,
    ".owl": ox.RdfFormat.RDF_XML,
    ".xml": ox.RdfFormat.RDF_XML,
    ".n3": ox.RdfFormat.N3,
}
MAX_BYTES = 256 * 2**20  # a file's size once decompressed; split larger files
MAX_LITERAL = 4_000_000  # characters: twice the longest text a loader writes (news: 2 x 1M)
_ZONE = re.compile(r"(Z|[+-]\d{2}:\d{2})$")
# what Python's Decimal reads as NaN or infinity (rdflib does, and pyshacl then fails)
_NOT_A_NUMBER = re.compile(r"[+-]?(s?nan[0-9]*|inf|infinity)", re.IGNORECASE)
_ENTITY = re.compile(rb"<!ENTITY\b")


def rdf_format(path: Path) -> ox.RdfFormat:
    """The format of `path` from its extension (`.ttl`, `.nq.gz`, ...)."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    if not suffixes or suffixes[-1] not in FORMATS:
        raise InputError(
            "cannot tell the RDF format from the file name",
            source=path,
            hint="use one of " + ", ".join(sorted(FORMATS)) + " (optionally .gz)",
        )
    return FORMATS[suffixes[-1]]


def read_bytes(path: Path, *, limit: int = MAX_BYTES) -> bytes:
    """The file's bytes (decompressed for `.gz`), refused beyond `limit` bytes."""
    too_big = InputError(
        f"file larger than {limit:,} bytes once decompressed",
        source=path,
        hint="split it into smaller files",
    )
    try:
        if path.stat().st_size > limit:
            raise too_big
        data = path.read_bytes()
        return _gunzip(data, limit, too_big) if path.suffix.lower() == ".gz" else data
    except FileNotFoundError:
        raise InputError("no such file", source=path) from None
    except (OSError, EOFError, zlib.error) as e:
        raise InputError(f"cannot read file: {e}", source=path) from None


def _gunzip(data: bytes, limit: int, too_big: InputError) -> bytes:
    """Every gzip member of `data`, inflated no further than `limit` bytes (a small file
    can inflate to gigabytes)."""
    out = bytearray()
    while True:
        inflate = zlib.decompressobj(wbits=31)  # gzip framing
        out += inflate.decompress(data, limit + 1 - len(out))
        if len(out) > limit:
            raise too_big
        if not inflate.eof:
            raise EOFError("compressed file ended before the end-of-stream marker was reached")
        data = inflate.unused_data.lstrip(b"\0")
        if not data:
            return bytes(out)


def read_rdf(
    path: Path,
    *,
    graphs: Graphs,
    graph: NamedNode | None = None,
    format: ox.RdfFormat | None = None,
    max_bytes: int = MAX_BYTES,
    max_literal: int = MAX_LITERAL,
) -> list[Quad]:
    """The quads of an RDF file; triples go into `graph`, named graphs must be finkg's."""
    return _read(Path(path), graphs, graph, format, max_bytes, max_literal)[0]


def _read(
    path: Path,
    graphs: Graphs,
    graph: NamedNode | None,
    format: ox.RdfFormat | None,
    max_bytes: int,
    max_literal: int,
) -> tuple[list[Quad], bytes]:
    """The file's quads (see `read_rdf`) and its bytes."""
    fmt = format or rdf_format(path)
    data = read_bytes(path, limit=max_bytes)
    where = _Lines(data.decode("utf-8", errors="replace"))
    if fmt == ox.RdfFormat.RDF_XML and (entity := _ENTITY.search(data)):
        raise InputError(
            "XML entity declarations are refused (finkg does not expand entities)",
            source=path,
            line=data.count(b"\n", 0, entity.start()) + 1,
            field="DOCTYPE",
            hint="write the IRIs and values out in full",
        )
    digest = hashlib.sha256(data).hexdigest()[:16]
    try:
        parsed = list(ox.parse(data, format=fmt))
    except SyntaxError as e:
        raise InputError(f"not valid {fmt.name}: {e.msg}", source=path, line=e.lineno) from None

    def skolem(term: BlankNode) -> NamedNode:
        return NamedNode(f"{graphs.base}genid/{digest}-{term.value}")

    quads: list[Quad] = []
    for q in parsed:
        target = q.graph_name
        if isinstance(target, DefaultGraph):
            if graph is None:
                raise InputError(
                    "the file has triples outside a named graph",
                    source=path,
                    line=where(_value(q.subject)),
                    hint="pass --graph NAME (news, filings, documents, market, users/<id>, ...)",
                )
            target = graph
        elif not isinstance(target, NamedNode) or graphs.name_of(target) is None:
            raise UnknownGraphError(
                "quads in a graph that is not one of finkg's",
                source=path,
                line=where(_value(target)),
                field="graph",
                value=str(target),
                hint=f"finkg's graphs start with {graphs.prefix}",
            )
        _refuse_rdf12(q, path, where)
        o = q.object
        if isinstance(o, Literal):
            _check_literal(o, q.predicate, path, where, max_literal)
        s = skolem(q.subject) if isinstance(q.subject, BlankNode) else q.subject
        quads.append(Quad(s, q.predicate, skolem(o) if isinstance(o, BlankNode) else o, target))
    return quads, data


def _refuse_rdf12(q: Quad, path: Path, where: _Lines) -> None:
    """Triple terms and directional language strings are RDF 1.2, which finkg does not use
    (its exports, pyshacl and JSON-LD cannot carry them)."""
    for term in (q.subject, q.object):
        if isinstance(term, Triple):
            raise InputError(
                "an RDF 1.2 triple term: finkg does not use RDF 1.2",
                source=path,
                line=where(_value(term.subject)),
                field=q.predicate.value,
                hint="state the triple itself, or describe it with ordinary statements",
            )
        if isinstance(term, Literal) and term.direction is not None:
            raise InputError(
                "an RDF 1.2 directional language string: finkg does not use RDF 1.2",
                source=path,
                line=where(term.value),
                field=q.predicate.value,
                value=term.value[:80],
                hint=f'drop the direction (write "..."@{term.language})',
            )


def _check_literal(o: Literal, predicate: NamedNode, path: Path, where: _Lines, limit: int) -> None:
    if len(o.value) > limit:
        raise InputError(
            f"literal longer than {limit:,} characters",
            source=path,
            line=where(o.value[:40]),
            field=predicate.value,
            value=o.value[:80],
        )
    if o.datatype == XSD.decimal and _NOT_A_NUMBER.fullmatch(o.value.strip()):
        raise InputError(
            "not an xsd:decimal: NaN and infinities are xsd:double values",
            source=path,
            line=where(o.value),
            field=predicate.value,
            value=o.value,
            hint="write a finite decimal, or type the value xsd:double",
        )
    if o.datatype == XSD.dateTime and not _ZONE.search(o.value):
        raise TimestampError(
            "timestamp has no zone",
            source=path,
            line=where(o.value),
            field=predicate.value,
            value=o.value,
            hint="write it with an offset or Z (2020-04-30T16:30:00-04:00)",
        )


def _value(term: object) -> str:
    """How a term is looked for in its file: an IRI's text, a blank node's label."""
    return term.value if isinstance(term, NamedNode) else str(term)


def load(
    paths: Sequence[Path], options: IngestOptions, *, max_bytes: int = MAX_BYTES
) -> Iterator[Item | Reject]:
    """The ingest loader of RDF files: one `Item` per file (a bad file is one Reject)."""
    refused = {options.graphs.audit, options.graphs.ontology}
    for path in paths:
        path = Path(path)
        try:
            quads, data = _read(path, options.graphs, options.graph, None, max_bytes, MAX_LITERAL)
        except InputError as e:
            yield Reject.of(e, source=str(path), line=e.line)
            continue
        lines = _Lines(data.decode("utf-8", errors="replace"))  # for reports on its nodes
        owned = next((q for q in quads if q.graph_name in refused), None)
        if owned is not None:
            yield Reject(
                str(path),
                lines(_value(owned.graph_name)) or lines(_value(owned.subject)),
                "the audit and ontology graphs are written by finkg alone: "
                "user input cannot add commits or redefine finkg's terms",
                "graph",
                _value(owned.graph_name),
            )
            continue
        if not quads:
            continue
        key = NamedNode(f"{options.base}genid/{hashlib.sha256(data).hexdigest()[:32]}")
        yield Item(key, quads, str(path), None, extends_store=True, locate=lines)


_PREFIX = re.compile(r"(?:@prefix|PREFIX)\s+([A-Za-z][\w.-]*)?:\s*<([^<>\s]*)>", re.IGNORECASE)


class _Lines:
    """The line of a node or value in a file's text, for reports: where it first appears
    written in full or with one of the file's prefixes (`id:news-1`)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.prefixes = [(p, ns) for p, ns in _PREFIX.findall(text) if ns]

    def __call__(self, needle: str) -> int | None:
        """The line of `needle`, tried as an IRI, a prefixed name, a quoted string and as
        it is, in that order (the first form found counts)."""
        prefixed = [
            f"{p}:{needle[len(ns) :]}"
            for p, ns in self.prefixes
            if needle.startswith(ns) and len(needle) > len(ns)
        ]
        for form in (f"<{needle}>", *prefixed, f'"{needle}"', needle):
            at = self.text.find(form)
            if at >= 0:
                return self.text.count("\n", 0, at) + 1
        return None


@dataclass
class RdfIngest:
    """What `ingest_rdf` wrote and which files it set aside."""

    quads: int
    rejects: list[Reject] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)


def ingest_rdf(
    store: BaseStore,
    paths: list[Path],
    *,
    graph: NamedNode | None = None,
    skip_bad: bool = False,
    rejects_file: Path | None = None,
    max_bytes: int = MAX_BYTES,
) -> RdfIngest:
    """Check every file (records, then finkg's shapes) before anything is written, then
    write them. A bad file stops the ingest before any write, unless `skip_bad`: then it is
    set aside with its reason (in `rejects_file`, JSON Lines) and the other files are
    written."""
    options = IngestOptions(graphs=store.graphs, graph=graph)
    report = ingest(
        store,
        "rdf",
        lambda files, opts: load(files, opts, max_bytes=max_bytes),
        paths,
        options,
        skip_bad=skip_bad,
        rejects_file=rejects_file,
    )
    return RdfIngest(report.quads, report.rejects, report.commits)
