"""Reading RDF files into finkg quads, refusing what finkg must not store.

`read_rdf(path)` parses Turtle, N-Triples, N-Quads, TriG, JSON-LD, RDF/XML or N3 (also
gzipped) and returns quads ready for `Store.write`. It refuses, naming the file and line:
syntax errors, triples outside a named graph when no `--graph` is given, quads in a graph
that is not one of finkg's, and xsd:dateTime literals without a zone. Blank nodes become
stable IRIs (`{base}genid/...`, from the file's hash and the node's label), so a file read
twice gives the same quads and the remote backend can write them.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

import pyoxigraph as ox
from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad

from finkg.errors import InputError, TimestampError, UnknownGraphError
from finkg.kg.graphs import Graphs
from finkg.kg.ingest.core import Reject, write_rejects
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
_ZONE = re.compile(r"(Z|[+-]\d{2}:\d{2})$")


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


def read_bytes(path: Path) -> bytes:
    try:
        data = path.read_bytes()
        return gzip.decompress(data) if path.suffix.lower() == ".gz" else data
    except FileNotFoundError:
        raise InputError("no such file", source=path) from None
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise InputError(f"cannot read file: {e}", source=path) from None


def read_rdf(
    path: Path,
    *,
    graphs: Graphs,
    graph: NamedNode | None = None,
    format: ox.RdfFormat | None = None,
) -> list[Quad]:
    """The quads of an RDF file; triples go into `graph`, named graphs must be finkg's."""
    path = Path(path)
    fmt = format or rdf_format(path)
    data = read_bytes(path)
    digest = hashlib.sha256(data).hexdigest()[:16]
    try:
        parsed = list(ox.parse(data, format=fmt))
    except SyntaxError as e:
        raise InputError(f"not valid {fmt.name}: {e.msg}", source=path, line=e.lineno) from None
    text = data.decode("utf-8", errors="replace")

    def skolem(term: object) -> object:
        if isinstance(term, BlankNode):
            return NamedNode(f"{graphs.base}genid/{digest}-{term.value}")
        return term

    quads = []
    for q in parsed:
        target = q.graph_name
        if isinstance(target, DefaultGraph):
            if graph is None:
                raise InputError(
                    "the file has triples outside a named graph",
                    source=path,
                    line=_line_of(text, q.subject),
                    hint="pass --graph NAME (news, filings, documents, market, users/<id>, ...)",
                )
            target = graph
        elif not isinstance(target, NamedNode) or graphs.name_of(target) is None:
            raise UnknownGraphError(
                "quads in a graph that is not one of finkg's",
                source=path,
                line=_line_of(text, target),
                field="graph",
                value=str(target),
                hint=f"finkg's graphs start with {graphs.prefix}",
            )
        o = q.object
        if isinstance(o, Literal) and o.datatype == XSD.dateTime and not _ZONE.search(o.value):
            raise TimestampError(
                "timestamp has no zone",
                source=path,
                line=_line_of(text, o.value),
                field=q.predicate.value,
                value=o.value,
                hint="write it with an offset or Z (2020-04-30T16:30:00-04:00)",
            )
        quads.append(Quad(skolem(q.subject), q.predicate, skolem(o), target))  # type: ignore[arg-type]
    return quads


def _line_of(text: str, needle: object) -> int | None:
    """1-based line of the first occurrence of a term's value in the file, if found."""
    value = needle.value if hasattr(needle, "value") else str(needle)
    for candidate in (str(needle), value):
        i = text.find(candidate)
        if i >= 0:
            return text.count("\n", 0, i) + 1
    return None


@dataclass
class RdfIngest:
    """What `ingest_rdf` wrote and which files it set aside."""

    quads: int
    rejects: list[Reject] = field(default_factory=list)


def ingest_rdf(
    store: object,
    paths: list[Path],
    *,
    graph: NamedNode | None = None,
    skip_bad: bool = False,
    rejects_file: Path | None = None,
) -> RdfIngest:
    """Read every file (all checked before anything is written), then write them as one
    commit. A bad file stops the ingest before any write, unless `skip_bad`: then it is set
    aside with its reason (in `rejects_file`, JSON Lines) and the other files are written."""
    quads: list[Quad] = []
    rejects: list[Reject] = []
    for path in paths:
        try:
            quads += read_rdf(path, graphs=store.graphs, graph=graph)  # type: ignore[attr-defined]
        except InputError as e:
            if not skip_bad:
                raise
            rejects.append(Reject.of(e, source=str(path), line=e.line))
    if rejects and rejects_file is not None:
        write_rejects(rejects_file, rejects)
    note = "ingest rdf: " + ", ".join(p.name for p in paths)
    commit = store.write(add=quads, note=note) if quads else None  # type: ignore[attr-defined]
    return RdfIngest(commit.quad_count if commit else 0, rejects)
