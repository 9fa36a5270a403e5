"""SHACL validation of finkg data, by two engines that must agree.

`validate_quads` checks any set of quads (an ingest batch, one output, a file);
`validate_store` checks a store's data graphs in place.

- engine "sparql" (the default): the shapes compiled to SPARQL (`compile.py`) and run by
  Oxigraph, on a scratch store for quads or on the store itself; fast enough for ingest.
- engine "pyshacl": the reference implementation; the ontology is mixed in so that
  `sh:targetClass fkg:Evidence` reaches every subclass. Data crosses from pyoxigraph to
  rdflib as N-Triples, so string literals arrive as plain literals on both sides (DESIGN §9).

The tests run every fixture through both and require the same violations.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

import pyoxigraph as ox
import pyshacl
import rdflib
from rdflib.namespace import SH

from finkg import queries
from finkg.errors import InputError
from finkg.ontology import ontology_path
from finkg.shapes.compile import finkg_checks

FSH = "https://w3id.org/finkg/shapes#"
ENGINES = ("sparql", "pyshacl")


@dataclass(frozen=True)
class Violation:
    focus: str
    shape: str
    message: str
    path: str | None = None
    value: str | None = None
    severity: str = "Violation"


@dataclass(frozen=True)
class Report:
    conforms: bool
    violations: list[Violation] = field(default_factory=list)
    triples: int = 0

    def text(self, *, limit: int = 50) -> str:
        """A readable report: one block per violation (focus node, path, message)."""
        if self.conforms:
            return f"conforms: {self.triples} triples checked against finkg's shapes"
        lines = [f"{len(self.violations)} violation(s) in {self.triples} triples:"]
        for v in self.violations[:limit]:
            lines.append(f"- {v.severity} of {_short(v.shape)}")
            lines.append(f"  focus node: {v.focus}")
            if v.path:
                lines.append(f"  path: {v.path}")
            if v.value is not None:
                lines.append(f"  value: {v.value}")
            lines.append(f"  message: {v.message}")
        if len(self.violations) > limit:
            lines.append(f"... and {len(self.violations) - limit} more")
        return "\n".join(lines)


def shape_files() -> list[Path]:
    folder = Path(str(resources.files(__package__)))
    return sorted(folder.glob("*.ttl"))


@cache
def shapes_graph() -> rdflib.Graph:
    g = rdflib.Graph()
    for path in shape_files():
        g.parse(path, format="turtle")
    return g


@cache
def ontology_graph() -> rdflib.Graph:
    return rdflib.Graph().parse(ontology_path(), format="turtle")


def validate_quads(
    quads: Iterable[ox.Quad], *, nquads: bytes = b"", engine: str = "sparql"
) -> Report:
    """Validate quads, and the quads written as N-Quads text in `nquads` (their graphs
    merged), against every shape."""
    if engine == "pyshacl":
        triples = [ox.Triple(q.subject, q.predicate, q.object) for q in quads]
        triples += [ox.Triple(q.subject, q.predicate, q.object) for q in _parsed(nquads)]
        data = rdflib.Graph()
        if triples:
            data.parse(data=ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES), format="nt")
        return validate_graph(data)
    _check_engine(engine)
    scratch = ox.Store()
    scratch.extend(quads)  # graph names kept; the checks read the union of all graphs
    if nquads:  # parsed by Oxigraph straight into the store: no Quad objects
        scratch.load(nquads, format=ox.RdfFormat.N_QUADS)
    return _run_checks(
        lambda text: _solutions(scratch.query(text, use_default_graph_as_union=True)),
        len(scratch),
    )


_PRESENT = "classes_present"


def _parsed(nquads: bytes) -> list[ox.Quad]:
    return list(ox.parse(nquads, format=ox.RdfFormat.N_QUADS)) if nquads else []


def _solutions(result: object) -> list[dict[str, object]]:
    variables = [v.value for v in result.variables]  # type: ignore[attr-defined]
    return [{v: s[v] for v in variables} for s in result]  # type: ignore[attr-defined]


def _check_engine(engine: str) -> None:
    if engine not in ENGINES:
        raise InputError(
            "unknown validation engine",
            field="engine",
            value=engine,
            hint="use one of " + ", ".join(ENGINES),
        )


def _run_checks(select: Callable[[str], list[dict[str, object]]], triples: int) -> Report:
    """Run the compiled checks whose target classes occur in the data."""
    present = {row["class"].value for row in select(queries.load(_PRESENT).text)}  # type: ignore[attr-defined]
    violations = []
    for check in finkg_checks():
        if not check.classes & present:
            continue
        for row in select(check.query):
            value = row.get("value")
            violations.append(
                Violation(
                    focus=row["focus"].value,  # type: ignore[attr-defined]
                    shape=check.shape,
                    message=check.message,
                    path=check.path or None,
                    value=None if value is None else value.value,  # type: ignore[attr-defined]
                )
            )
    violations.sort(key=lambda v: (v.shape, v.focus, v.path or ""))
    return Report(not violations, violations, triples)


def validate_graph(data: rdflib.Graph) -> Report:
    try:
        conforms, results, _ = pyshacl.validate(
            data,
            shacl_graph=shapes_graph(),
            ont_graph=ontology_graph(),
            inference="none",
            advanced=True,
            allow_warnings=True,
        )
    except decimal.InvalidOperation:  # rdflib reads "NaN"^^xsd:decimal as Decimal("NaN")
        raise InputError(
            "an xsd:decimal that is NaN or infinite: pyshacl cannot compare it",
            field="xsd:decimal",
            hint="validate with --engine sparql, which reports it as a violation",
        ) from None
    violations = []
    for result in results.subjects(rdflib.RDF.type, SH.ValidationResult):

        def one(p: rdflib.URIRef, result: rdflib.term.Node = result) -> str | None:
            v = results.value(result, p)
            return None if v is None else str(v)

        shape = results.value(result, SH.sourceShape)
        violations.append(
            Violation(
                focus=one(SH.focusNode) or "",
                shape=str(shape) if isinstance(shape, rdflib.URIRef) else _describe(results, shape),
                message=one(SH.resultMessage) or "",
                path=one(SH.resultPath),
                value=one(SH.value),
                severity=(one(SH.resultSeverity) or "Violation").rsplit("#", 1)[-1],
            )
        )
    violations.sort(key=lambda v: (v.shape, v.focus, v.path or ""))
    return Report(bool(conforms), violations, len(data))


def validate_store(
    store: object, graphs: Sequence[ox.NamedNode] | None = None, *, engine: str = "sparql"
) -> Report:
    """Validate a store's data graphs (all but the ontology graph, unless `graphs`)."""
    names = (
        list(graphs)
        if graphs is not None
        else [
            g
            for g in store.named_graphs()
            if g != store.graphs.ontology  # type: ignore[attr-defined]
        ]
    )
    if engine == "pyshacl":
        return validate_quads((q for g in names for q in store.quads(g)), engine=engine)  # type: ignore[attr-defined]
    _check_engine(engine)
    if not names:
        return Report(True, [], 0)
    counts = queries.run(store, "graph_counts")  # type: ignore[arg-type]
    triples = sum(int(r["triples"].value) for r in counts if r["graph"] in names)  # type: ignore[union-attr, index]
    # The whole store reads fastest as the union default graph (10x over a list of graphs);
    # the ontology graph holds classes, not instances of the classes shapes target.
    dataset = "union" if graphs is None else names
    return _run_checks(lambda text: list(store.select(text, default_graphs=dataset)), triples)  # type: ignore[attr-defined]


def _short(iri: str) -> str:
    return "fsh:" + iri[len(FSH) :] if iri.startswith(FSH) else iri


def _describe(results: rdflib.Graph, shape: rdflib.term.Node | None) -> str:
    """A blank-node shape as the path it constrains."""
    if shape is None:
        return ""
    path = results.value(shape, SH.path)
    return f"[shape on {path}]" if path is not None else str(shape)
