"""SPARQL Update text for adding and removing quads: ground `DELETE DATA` and `INSERT DATA`
operations, one request (so one transaction).

Every term is written by pyoxigraph's N-Triples serializer, never by formatting strings,
so a value cannot end its literal and start an operation of its own. The quads go in
operations of at most `OPERATION_TRIPLES` triples, grouped by graph: Virtuoso 7's SPARQL
parser runs out of stack near 5,000 triples in one DATA block, and it compiles a VALUES
join (what this module sent before) to SQL that stops at a few thousand rows and rejects
`INSERT { GRAPH ?g ... }` bound from VALUES outright. DATA operations run alike on every
engine finkg is tested on and are the fastest form on both (5,000 triples in 0.2 s on
Virtuoso against 2.4 s for 2,000 as a VALUES join).

>>> from pyoxigraph import Literal, NamedNode, Quad
>>> g, s, p = (NamedNode(f"https://e.org/{x}") for x in "gsp")
>>> print(quads_update(add=[Quad(s, p, Literal('say "hi" } ;'), g)]))
INSERT DATA { GRAPH <https://e.org/g> {
<https://e.org/s> <https://e.org/p> "say \\"hi\\" } ;" .
} }
"""

from __future__ import annotations

from collections.abc import Iterable

import pyoxigraph as ox
from pyoxigraph import BlankNode, Quad, Triple

from finkg.errors import InputError

OPERATION_TRIPLES = 1000


def _check(quads: Iterable[Quad]) -> list[Quad]:
    checked = []
    for q in quads:
        if isinstance(q.subject, BlankNode) or isinstance(q.object, BlankNode):
            raise InputError(
                "blank nodes cannot be written through SPARQL Update",
                field="quad",
                value=str(q),
                hint="give the node an IRI (finkg skolemizes blank nodes when it reads RDF files)",
            )
        if not isinstance(q.graph_name, ox.NamedNode):
            raise InputError(
                "finkg keeps every triple in a named graph", field="graph", value=str(q)
            )
        checked.append(q)
    return checked


def _operations(keyword: str, quads: list[Quad]) -> list[str]:
    by_graph: dict[ox.NamedNode, list[Triple]] = {}
    for q in quads:
        assert isinstance(q.graph_name, ox.NamedNode)  # `_check` refused the others
        by_graph.setdefault(q.graph_name, []).append(Triple(q.subject, q.predicate, q.object))
    ops = []
    for graph, triples in by_graph.items():
        for start in range(0, len(triples), OPERATION_TRIPLES):
            chunk = triples[start : start + OPERATION_TRIPLES]
            data = ox.serialize(chunk, format=ox.RdfFormat.N_TRIPLES)
            assert data is not None  # serialize returns the bytes when given no output
            body = data.decode("utf-8")
            ops.append(f"{keyword} {{ GRAPH {graph} {{\n{body}}} }}")
    return ops


def quads_update(*, add: Iterable[Quad] = (), remove: Iterable[Quad] = ()) -> str:
    """One update request that removes `remove` then adds `add`."""
    ops = _operations("DELETE DATA", _check(remove)) + _operations("INSERT DATA", _check(add))
    return " ;\n".join(ops)
