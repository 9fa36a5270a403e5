"""Provenance traces: from any node down to source documents and the commits that wrote them."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from pyoxigraph import NamedNode

from finkg import queries
from finkg.errors import InputError
from finkg.queries import QueryRunner
from finkg.queries.binding import to_term
from finkg.queries.results import python_value

# The links the trace follows, in the order a reader would walk them.
_LINKS = (
    "http://www.w3.org/ns/prov#wasGeneratedBy",
    "https://w3id.org/finkg/ns#signal",
    "https://w3id.org/finkg/ns#citation",
    "https://w3id.org/finkg/ns#subQuestion",
    "https://w3id.org/finkg/ns#cites",
    "http://www.w3.org/ns/prov#qualifiedUsage",
    "http://www.w3.org/ns/prov#entity",
    "http://www.w3.org/ns/prov#used",
    "https://w3id.org/finkg/ns#anchor",
    "https://w3id.org/finkg/ns#newsItem",
    "https://w3id.org/finkg/ns#fromPrediction",
    "https://w3id.org/finkg/ns#fromOutcome",
    "https://w3id.org/finkg/ns#cell",
    "https://w3id.org/finkg/ns#document",
    "http://www.w3.org/ns/prov#wasDerivedFrom",
)
_DOCUMENT = "https://w3id.org/finkg/ns#document"


@dataclass
class Hop:
    iri: str
    depth: int
    statements: list[tuple[str, str]] = field(default_factory=list)


def trace(store: QueryRunner, iri: str) -> list[Hop]:
    """The node and everything it leads to, depth-first along provenance links."""
    node = to_term(iri, "iri", name="IRI")
    result = queries.select(store, "provenance", {"node": node})
    statements: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for row in result:
        stated = (row.iri("p").value, str(python_value(row.term("o"))))
        statements[row.iri("hop").value].append(stated)
    if not statements:
        raise InputError("no statements about this node in the store", field="IRI", value=iri)
    hops: list[Hop] = []
    seen: set[str] = set()
    transitions: dict[str, list[str]] = defaultdict(list)
    for hop, said in sorted(statements.items()):
        for p, o in said:
            if p == _DOCUMENT:
                transitions[o].append(hop)

    def walk(current: str, depth: int) -> None:
        if current in seen or current not in statements:
            return
        seen.add(current)
        hops.append(Hop(current, depth, sorted(statements[current])))
        for link in _LINKS:
            for p, o in sorted(statements[current]):
                if p == link:
                    walk(o, depth + 1)
        for transition in transitions.get(current, []):  # the document's lifecycle transitions
            walk(transition, depth + 1)

    walk(node.value if isinstance(node, NamedNode) else iri, 0)
    return hops
