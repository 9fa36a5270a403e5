"""Which graphs a SPARQL update writes, and whether finkg lets it.

finkg's audit trail (`audit`: commits, ingest batches, lifecycle transitions) and its
vocabulary (`ontology`: finkg.ttl) are what `finkg audit`, the lifecycle and the shapes stand
on; an update may rewrite them only when the user says it is maintenance (`finkg query
--update --maintenance`), and even then it is recorded as a commit like every write. The
personal `users/*` graphs are written through a server only when it serves them
(`finkg serve --include-users`).

`update_targets(text)` reads the update's operations from their algebra (rdflib's SPARQL
parser, so prefixes, `WITH`, `GRAPH` templates and graph-management operations are read as
an engine reads them) and returns the graphs it may add to or remove from. A template
`GRAPH ?g { ... }` writes whatever graphs `?g` matches: a `VALUES` block of the WHERE
clause's top group that binds `?g` to IRIs names them; otherwise the update may write any
graph, and so does `CLEAR ALL` / `DROP NAMED`. Reading a graph (in WHERE or USING) is no
write.

>>> t = update_targets("PREFIX g: <https://w3id.org/finkg/id/graph/> "
...                    "DELETE WHERE { GRAPH g:audit { ?s ?p ?o } }")
>>> sorted(t.graphs), t.any_graph
(['https://w3id.org/finkg/id/graph/audit'], None)
>>> update_targets("DELETE { GRAPH ?g { ?s ?p ?o } } WHERE { GRAPH ?g { ?s ?p ?o } }").any_graph
'GRAPH ?g in a template, not fixed by a VALUES block'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyoxigraph as ox
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.term import Identifier, URIRef, Variable

from finkg.errors import QueryError
from finkg.kg.graphs import Graphs
from finkg.ontology.terms import is_vocabulary_term


@dataclass(frozen=True)
class Targets:
    """What an update writes: named graphs by IRI, the default graph, and why it may write
    any graph (None when its targets are all named)."""

    graphs: frozenset[str] = frozenset()
    # the graphs it only adds ground statements to (INSERT DATA): how finkg's remote
    # backend appends a commit to the audit graph
    appended: frozenset[str] = frozenset()
    default: bool = False
    any_graph: str | None = None
    # template statements with a constant subject, as (subject, predicate, graph or None)
    statements: tuple[tuple[str, str, str | None], ...] = field(default=())
    ground: bool = False  # only INSERT DATA / DELETE DATA blocks of named graphs


# One block of `kg.updates.quads_update`: what finkg's remote backend sends for every write.
_GROUND_HEAD = re.compile(r"(INSERT|DELETE) DATA \{ GRAPH <([^<>\"{}|^`\\\x00-\x20]*)> \{")
_GROUND_TAIL = ("} }", "} } ;")


def _ground(text: str) -> Targets | None:
    """The targets of an update made only of the blocks `quads_update` writes (a header
    line, one N-Triples statement a line, `} }`), read without a SPARQL parser: rdflib
    takes minutes over an ingest batch of 100,000 quads, pyoxigraph's N-Triples parser a
    fraction of a second. None when the text is anything else (then rdflib reads it)."""
    lines = text.split("\n")
    graphs: set[str] = set()
    inserted: set[str] = set()
    changed: set[str] = set()
    statements: list[tuple[str, str, str | None]] = []
    i = 0
    while i < len(lines):
        head = _GROUND_HEAD.fullmatch(lines[i])
        if head is None:
            return None
        end = next((k for k in range(i + 1, len(lines)) if lines[k] in _GROUND_TAIL), None)
        if end is None or (lines[end] == "} }") != (end == len(lines) - 1):
            return None
        body = "\n".join(lines[i + 1 : end]).encode() + b"\n"
        try:
            triples = list(ox.parse(body, format=ox.RdfFormat.N_TRIPLES))
        except SyntaxError:
            return None
        if len(triples) != end - i - 1:  # one statement a line, nothing else
            return None
        graph = head.group(2)
        graphs.add(graph)
        if head.group(1) == "INSERT":
            inserted.add(graph)
            statements += [
                (t.subject.value, t.predicate.value, graph)
                for t in triples
                if isinstance(t.subject, ox.NamedNode) and is_vocabulary_term(t.subject.value)
            ]
        else:
            changed.add(graph)
        i = end + 1
    if not graphs:
        return None
    return Targets(
        frozenset(graphs), frozenset(inserted - changed), statements=tuple(statements), ground=True
    )


def update_targets(text: str) -> Targets:
    """The graphs `text` (a SPARQL update request) may write (module docstring)."""
    ground = _ground(text)
    if ground is not None:
        return ground
    # rdflib's SPARQL parser takes a second to import: only an update that is not ground
    from rdflib.plugins.sparql.algebra import translateUpdate
    from rdflib.plugins.sparql.parser import parseUpdate
    from rdflib.plugins.sparql.sparql import SPARQLError

    try:
        operations = translateUpdate(parseUpdate(text)).algebra
    except (SPARQLError, ValueError, TypeError, AttributeError) as e:  # pyparsing's and rdflib's
        raise QueryError(
            f"cannot read the update to tell which graphs it writes: {e}",
            field="update",
            value=text.strip()[:80],
        ) from None
    except Exception as e:  # pyparsing's ParseException: rdflib does not re-export it
        raise QueryError(
            f"SPARQL syntax error: {e}", field="update", value=text.strip()[:80]
        ) from None
    graphs: set[str] = set()
    inserted: set[str] = set()  # by INSERT DATA
    changed: set[str] = set()  # by every other operation
    default, any_graph = False, None
    statements: list[tuple[str, str, str | None]] = []
    for op in operations:
        for target in _written(op):
            if target == "DEFAULT":
                default = True
            elif isinstance(target, URIRef):
                graphs.add(str(target))
                (inserted if op.name == "InsertData" else changed).add(str(target))
            else:
                any_graph = any_graph or str(target)
        statements += _constant_statements(op)
    return Targets(
        frozenset(graphs), frozenset(inserted - changed), default, any_graph, tuple(statements)
    )


def _written(op: CompValue) -> Iterator[object]:
    """The graphs one operation writes: URIRefs, "DEFAULT", or a reason it may be any."""
    name = op.name
    if name in ("InsertData", "DeleteData", "DeleteWhere"):
        yield from _template_graphs(op, None, op)
    elif name == "Modify":
        with_graph = _part(op, "withClause")
        for clause in (_part(op, "delete"), _part(op, "insert")):
            if clause is not None:
                yield from _template_graphs(clause, with_graph, op)
    elif name in ("Load", "Clear", "Drop", "Create"):
        target = _part(op, "graphiri")
        if target is None:  # LOAD <url> without INTO GRAPH: the default graph
            yield "DEFAULT"
        elif target in ("ALL", "NAMED"):
            yield f"{name.upper()} {target}"
        else:
            yield target
    elif name in ("Add", "Copy", "Move"):
        source, destination = op.graph
        yield destination
        if name == "Move":  # MOVE empties its source
            yield source
    else:
        yield f"an operation finkg cannot read ({name})"


def _template_graphs(clause: CompValue, with_graph: object, op: CompValue) -> Iterator[object]:
    """The graphs a template writes: its triples go to WITH's graph (or the default one),
    its GRAPH blocks to theirs."""
    if _part(clause, "triples"):
        yield with_graph if with_graph is not None else "DEFAULT"
    for graph in (_part(clause, "quads") or {}).keys():
        if isinstance(graph, Variable):
            fixed = _values_of(_part(op, "where"), graph)
            if fixed is None:
                yield f"GRAPH ?{graph} in a template, not fixed by a VALUES block"
            else:
                yield from fixed
        else:
            yield graph


def _values_of(algebra: CompValue | None, var: Variable) -> list[URIRef] | None:
    """The IRIs a VALUES block in the WHERE clause's top group binds `var` to (it joins
    with the rest of the group, so `var` takes no other value), else None."""
    if not isinstance(algebra, CompValue):
        return None
    name = algebra.name
    if name == "Join":
        return _values_of(_part(algebra, "p1"), var) or _values_of(_part(algebra, "p2"), var)
    if name in ("Filter", "ToMultiSet", "Project", "Distinct", "Reduced"):
        return _values_of(_part(algebra, "p"), var)
    if name == "values":
        rows = _part(algebra, "res") or []
        iris = [row.get(var) for row in rows]
        if rows and all(isinstance(i, URIRef) for i in iris):
            return iris
    return None


def _constant_statements(op: CompValue) -> Iterator[tuple[str, str, str | None]]:
    """(subject, predicate, graph) of the template statements whose subject is an IRI."""
    clauses: Iterable[CompValue]
    if op.name == "InsertData":
        clauses = [op]
    elif op.name == "Modify":
        clauses = [c for c in (_part(op, "insert"),) if c is not None]
    else:
        return
    with_graph = _part(op, "withClause")
    for clause in clauses:
        for s, p, _o in _part(clause, "triples") or []:
            if isinstance(s, URIRef):
                yield str(s), _text(p), str(with_graph) if with_graph is not None else None
        for graph, triples in (_part(clause, "quads") or {}).items():
            for s, p, _o in triples:
                if isinstance(s, URIRef) and not isinstance(graph, Variable):
                    yield str(s), _text(p), str(graph)


def _part(value: CompValue, key: str) -> Any:  # rdflib types its parts loosely
    """One part of an algebra node, None when absent (`CompValue.get` returns the key
    itself for a missing part)."""
    return dict.get(value, key)


def _text(term: Identifier) -> str:
    return str(term) if not isinstance(term, Variable) else f"?{term}"


def check_update(text: str, graphs: Graphs, *, maintenance: bool = False) -> Targets:
    """The update's targets, or a QueryError (exit 2) when finkg refuses it: it states
    something about a vocabulary term outside the ontology graph (always), or it writes the
    audit or ontology graph, or graphs it cannot name, without `maintenance`."""
    targets = update_targets(text)
    ontology = graphs.ontology.value
    for subject, predicate, graph in targets.statements:
        if is_vocabulary_term(subject) and graph != ontology:
            raise QueryError(
                "the update states something about a term of finkg's vocabulary (or of "
                "PROV, SKOS, RDF, RDFS, OWL, SHACL, XSD) outside the ontology graph, where "
                "those terms are defined alone",
                field="update",
                value=f"<{subject}> {predicate if predicate.startswith('?') else f'<{predicate}>'}",
                hint="state it about a term of your own namespace",
            )
    if maintenance:
        return targets
    hint = (
        "the audit trail and finkg's vocabulary are rewritten only as maintenance: pass "
        "--maintenance (recorded as a commit like every write)"
    )
    if targets.any_graph:
        raise QueryError(
            f"the update may write any graph ({targets.any_graph}), the audit and ontology "
            "graphs among them",
            field="update",
            value=text.strip()[:80],
            hint="name the graphs it writes (GRAPH <graph IRI>, or VALUES ?g { <graph IRI> }); "
            + hint,
        )
    owned = {graphs.audit.value: "audit", ontology: "ontology"}
    touched = sorted(owned[g] for g in targets.graphs if g in owned)
    if touched:
        raise QueryError(
            f"the update writes the {' and '.join(touched)} graph"
            + ("s" if len(touched) > 1 else "")
            + ", which finkg writes itself (commits, lifecycle transitions, its vocabulary)",
            field="update",
            value=graphs.prefix + touched[0],
            hint=hint,
        )
    return targets
