"""SHACL validation of finkg data, by two engines that must agree.

`validate_quads` checks any set of quads (an ingest batch, one output, a file);
`validate_store` checks a store's data graphs in place. Both check finkg's shapes, or the
`shapes` given (an rdflib Graph, for `finkg validate --shapes`).

- engine "sparql" (the default): the shapes compiled to SPARQL (`compile.py`) and run by
  Oxigraph (`engine.py`), on a scratch store for quads or on the store itself; fast enough
  for ingest. It refuses (ShapeCompileError, exit code 2) the SHACL it does not implement.
- engine "pyshacl": the reference implementation; finkg's ontology is mixed in so that
  `sh:targetClass fkg:Evidence` reaches every subclass. Data crosses from pyoxigraph to
  rdflib as N-Triples, so string literals arrive as plain literals on both sides (DESIGN §9).

Oxigraph stores literals in a canonical form (`"01"^^xsd:integer` as `"1"`, `xsd:byte` as
`xsd:integer`), so the SPARQL engine checks quads as the store will hold them; with
`exact=True` (files) it refuses a literal it would check rewritten instead.
The tests run every fixture through both and require the same violations.
"""

from __future__ import annotations

import decimal
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Protocol

import pyoxigraph as ox
import pyshacl
import rdflib
from rdflib.namespace import SH

from finkg import queries
from finkg.errors import InputError
from finkg.ontology import ontology_path
from finkg.queries.results import Term
from finkg.shapes.checks import Check
from finkg.shapes.compile import compile_shapes
from finkg.shapes.engine import Progress, Select, run_checks
from finkg.shapes.report import FSH, Report, Violation
from finkg.shapes.terms import rewritten

__all__ = [
    "ENGINES",
    "FSH",
    "Report",
    "Violation",
    "ontology_graph",
    "read_shapes",
    "shape_files",
    "shapes_graph",
    "validate_graph",
    "validate_quads",
    "validate_store",
]

ENGINES = ("sparql", "pyshacl")


class ValidatedStore(queries.QueryRunner, Protocol):
    """What `validate_store` reads of a store (any `kg.store.Store` has it)."""

    def quads(self, graph: ox.NamedNode | None = None) -> Iterator[ox.Quad]: ...
    def named_graphs(self) -> list[ox.NamedNode]: ...


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


@cache
def finkg_checks() -> tuple[Check, ...]:
    """The compiled checks of finkg's packaged shapes (built once per process)."""
    return tuple(compile_shapes(shapes_graph(), ontology_graph()))


def read_shapes(paths: Iterable[Path]) -> rdflib.Graph:
    """A shapes graph from RDF files (any format Oxigraph reads, by extension), literals as
    written: rdflib's parser would rewrite "1"^^xsd:boolean as "true" and "01" as "1"."""
    g = rdflib.Graph()
    for path in paths:
        fmt = ox.RdfFormat.from_extension(path.suffix.lstrip("."))
        if fmt is None:
            raise InputError(
                "unknown RDF file extension",
                source=path,
                hint="use .ttl, .nt, .nq, .trig, .rdf or .jsonld",
            )
        try:
            for q in ox.parse(path=str(path), format=fmt, base_iri=path.resolve().as_uri()):
                g.add((_rdflib(q.subject), _rdflib(q.predicate), _rdflib(q.object)))
        except (OSError, SyntaxError) as e:
            raise InputError(f"cannot read shapes: {e}", source=path) from None
    return g


def _rdflib(term: object) -> rdflib.term.Node:
    if isinstance(term, ox.NamedNode):
        return rdflib.URIRef(term.value)
    if isinstance(term, ox.BlankNode):
        return rdflib.BNode(term.value)
    if isinstance(term, ox.Literal):
        if term.language:
            return rdflib.Literal(term.value, lang=term.language, normalize=False)
        return rdflib.Literal(
            term.value, datatype=rdflib.URIRef(term.datatype.value), normalize=False
        )
    raise InputError("shapes hold an RDF 1.2 triple term", value=str(term))


def validate_quads(
    quads: Iterable[ox.Quad],
    *,
    nquads: bytes = b"",
    engine: str = "sparql",
    shapes: rdflib.Graph | None = None,
    exact: bool = False,
) -> Report:
    """Validate quads, and the quads written as N-Quads text in `nquads` (their graphs
    merged), against every shape (finkg's, or `shapes`).

    With `exact`, the SPARQL engine refuses (InputError) a literal that Oxigraph would
    store rewritten, rather than check it as the store would hold it."""
    _check_engine(engine)
    quads = list(quads) + _parsed(nquads) if engine == "pyshacl" or exact else quads
    if engine == "pyshacl":
        triples = [ox.Triple(q.subject, q.predicate, q.object) for q in quads]
        data = rdflib.Graph()
        if triples:
            data.parse(data=ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES), format="nt")
        return validate_graph(data, shapes=shapes)
    checks = _checks(shapes)
    if exact:
        _refuse_rewritten([q.object for q in quads], checks)
    scratch = ox.Store()
    scratch.extend(quads)  # graph names kept; the checks read the union of all graphs
    if nquads and not exact:  # parsed by Oxigraph straight into the store: no Quad objects
        scratch.load(nquads, format=ox.RdfFormat.N_QUADS)
    return _run(
        lambda text: _solutions(scratch.query(text, use_default_graph_as_union=True)),
        len(scratch),
        shapes,
        checks,
    )


# the constraints that read a literal's lexical form or identity, not only its value
_LEXICAL = {"Pattern", "MinLength", "MaxLength", "In", "HasValue", "Equals", "Disjoint", "SPARQL"}


def _refuse_rewritten(objects: list[object], checks: Sequence[Check]) -> None:
    """Refuse data literals that the checks would read otherwise than written: another
    datatype (xsd:byte stored as xsd:integer); another lexical form ("4.0" stored as "4")
    where a check reads lexical forms or term identity, or where two terms become one."""
    literals = [o for o in objects if isinstance(o, ox.Literal)]
    changed = rewritten(literals)
    if not changed:
        return
    retyped = [a for a, b in changed.items() if a.datatype != b.datatype]
    merged = set(changed.values()) & set(literals) or len(set(changed.values())) < len(changed)
    if retyped or merged or any(c.component in _LEXICAL for c in checks):
        shown = retyped or list(changed)
        raise InputError(
            f"{len(shown)} literal(s) that Oxigraph stores rewritten, so the SPARQL engine "
            "cannot check them as written",
            field="data",
            value=", ".join(f"{a} (stored as {changed[a]})" for a in shown[:3]),
            hint="validate with --engine pyshacl",
        )


def _parsed(nquads: bytes) -> list[ox.Quad]:
    return list(ox.parse(nquads, format=ox.RdfFormat.N_QUADS)) if nquads else []


def _solutions(
    result: ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples,
) -> list[dict[str, Term | None]]:
    assert isinstance(result, ox.QuerySolutions)  # the checks are SELECTs
    variables = [v.value for v in result.variables]
    return [{v: s[v] for v in variables} for s in result]


def _check_engine(engine: str) -> None:
    if engine not in ENGINES:
        raise InputError(
            "unknown validation engine",
            field="engine",
            value=engine,
            hint="use one of " + ", ".join(ENGINES),
        )


def _checks(shapes: rdflib.Graph | None) -> Sequence[Check]:
    """finkg's compiled checks, or those of `shapes` (no ontology beside the data)."""
    return finkg_checks() if shapes is None else compile_shapes(shapes, rdflib.Graph())


def _run(
    select: Select,
    triples: int,
    shapes: rdflib.Graph | None,
    checks: Sequence[Check],
    progress: Progress | None = None,
    workers: int = 1,
) -> Report:
    return run_checks(
        select,
        triples,
        shapes=shapes_graph() if shapes is None else shapes,
        ontology=ontology_graph() if shapes is None else rdflib.Graph(),
        checks=checks,
        progress=progress,
        workers=workers,
    )


def validate_graph(data: rdflib.Graph, *, shapes: rdflib.Graph | None = None) -> Report:
    """pyshacl's report on `data`, against finkg's shapes and ontology or `shapes`."""
    try:
        conforms, results, _ = pyshacl.validate(
            data,
            shacl_graph=shapes_graph() if shapes is None else shapes,
            ont_graph=ontology_graph() if shapes is None else None,
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
    store: ValidatedStore,
    graphs: Sequence[ox.NamedNode] | None = None,
    *,
    engine: str = "sparql",
    shapes: rdflib.Graph | None = None,
    progress: Progress | None = None,
    workers: int = 1,
) -> Report:
    """Validate a store's data graphs (all but the ontology graph, unless `graphs`);
    `progress` hears (stage, done, total) as the sparql engine's checks run, in passes
    `workers` at a time (`Settings.threads`: the 950,000-triple demo store takes 18 s with
    1 and 12 s with 2 on 2 cores; 40 s and 22 s with one query per check)."""
    names = (
        list(graphs)
        if graphs is not None
        else [g for g in store.named_graphs() if g != store.graphs.ontology]
    )
    _check_engine(engine)
    if engine == "pyshacl":
        return validate_quads(
            (q for g in names for q in store.quads(g)),
            engine=engine,
            shapes=shapes,
        )
    checks = _checks(shapes)  # refuses what it cannot check, data or not
    if not names:
        return Report(True, [], 0)
    counts = queries.select(store, "graph_counts")
    triples = sum(r.integer("triples") for r in counts if r.iri("graph") in names)
    # The whole store reads fastest as the union default graph (10x over a list of graphs);
    # the ontology graph holds classes, not instances of the classes shapes target.
    dataset = "union" if graphs is None else names
    return _run(
        lambda text: list(store.select(text, default_graphs=dataset)),
        triples,
        shapes,
        checks,
        progress,
        workers,
    )


def _describe(results: rdflib.Graph, shape: rdflib.term.Node | None) -> str:
    """A blank-node shape as the path it constrains."""
    if shape is None:
        return ""
    path = results.value(shape, SH.path)
    return f"[shape on {path}]" if path is not None else str(shape)
