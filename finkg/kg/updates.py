"""SPARQL Update text for adding and removing quads, from the `.rq` templates.

The quads travel as VALUES rows written by pyoxigraph's serializer (see
`finkg.queries.binding`); the result is one update request, so one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable

from pyoxigraph import BlankNode, Quad

from finkg import queries
from finkg.errors import InputError
from finkg.queries.binding import bind

_ROW = ("g", "s", "p", "o")


def _rows(quads: Iterable[Quad]) -> list[tuple]:
    rows = []
    for q in quads:
        if isinstance(q.subject, BlankNode) or isinstance(q.object, BlankNode):
            raise InputError(
                "blank nodes cannot be written through SPARQL Update",
                field="quad",
                value=str(q),
                hint="give the node an IRI (finkg skolemizes blank nodes when it reads RDF files)",
            )
        rows.append((q.graph_name, q.subject, q.predicate, q.object))
    return rows


def quads_update(*, add: Iterable[Quad] = (), remove: Iterable[Quad] = ()) -> str:
    """One update request that removes `remove` then adds `add`."""
    parts = []
    remove_rows, add_rows = _rows(remove), _rows(add)
    if remove_rows:
        parts.append(bind(queries.load("delete_quads").text, {_ROW: remove_rows}))
    if add_rows:
        parts.append(bind(queries.load("insert_quads").text, {_ROW: add_rows}))
    return " ;\n".join(parts)
