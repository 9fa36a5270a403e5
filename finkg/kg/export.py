"""Exporting graphs and subgraphs: Turtle, N-Triples, N-Quads, TriG, compact JSON-LD.

JSON-LD is compact in finkg's published `@context` (`jsonld.py`: `rdf:type` becomes
`type`, canonical integers and booleans are JSON-native, every other literal keeps its
lexical form) and expands back to exactly the quads exported; the context is embedded in
the output so that consumers need no network to expand it.
`to_networkx` gives a subgraph as a networkx MultiDiGraph for graph analytics.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import networkx as nx
import pyoxigraph as ox

from finkg import queries
from finkg.errors import InputError
from finkg.kg.jsonld import to_jsonld
from finkg.ontology.terms import PREFIXES

__all__ = ["FORMATS", "Exported", "export_bytes", "serialize", "to_jsonld", "to_networkx"]

FORMATS = ("turtle", "ntriples", "nquads", "trig", "jsonld")
_RDF = {
    "turtle": ox.RdfFormat.TURTLE,
    "ntriples": ox.RdfFormat.N_TRIPLES,
    "nquads": ox.RdfFormat.N_QUADS,
    "trig": ox.RdfFormat.TRIG,
}


def serialize(quads: Iterable[ox.Quad], format: str) -> bytes:
    """`quads` in one of FORMATS; graph names are kept by nquads, trig and jsonld."""
    if format not in FORMATS:
        raise InputError(
            "unknown export format",
            field="format",
            value=format,
            hint="use one of " + ", ".join(FORMATS),
        )
    quads = list(quads)
    if format == "jsonld":
        return (json.dumps(to_jsonld(quads), indent=2, ensure_ascii=False) + "\n").encode()
    fmt = _RDF[format]
    if not fmt.supports_datasets:
        items: list[ox.Quad] | list[ox.Triple] = [
            ox.Triple(q.subject, q.predicate, q.object) for q in quads
        ]
    else:
        items = quads
    return (
        ox.serialize(items, format=fmt, prefixes=PREFIXES if format in ("turtle", "trig") else None)
        or b""
    )


@dataclass(frozen=True)
class Exported:
    """What an export wrote, and what a bounded query left out (`finkg.queries.bound`)."""

    data: bytes
    triples: Any = None  # the CONSTRUCT result, when the export was one (its `cuts`)


def export_bytes(
    store: Any,
    *,
    graphs: list[str] | None = None,
    query: str | None = None,
    bindings: dict[str, object] | None = None,
    fmt: str = "turtle",
    user: str | None = None,
    bound: int | None = None,
) -> Exported:
    """Named graphs (short names; all when empty) or a CONSTRUCT query's result, serialized.

    With `user`, the export reads only that user's dataset (`Graphs.user_dataset`): the
    query runs over it and no other graph may be named, so another user's triples cannot
    reach the file. `bound` overrides a bounded query's limit (`queries.run`)."""
    dataset = store.graphs.user_dataset(user) if user is not None else None
    if query is not None:
        if graphs:
            raise InputError("give --graph or --query, not both", field="export")
        named = queries.load(query)
        if named.form not in ("construct", "describe"):
            raise InputError(
                "export takes a CONSTRUCT or DESCRIBE query", field="query", value=named.name
            )
        triples = queries.construct(
            store, named, bindings or {}, default_graphs=dataset, bound=bound
        )
        quads = (ox.Quad(t.subject, t.predicate, t.object) for t in triples)
        return Exported(serialize(quads, fmt), triples)
    chosen = [store.graphs.parse(g) for g in graphs] if graphs else None
    if dataset is not None:
        outside = [g for g in chosen or () if g not in dataset]
        if outside:
            raise InputError(
                f"user {user}'s export reads only their own graph and the market graph",
                field="graph",
                value=", ".join(store.graphs.name_of(g) or g.value for g in outside),
                hint=f"export users/{user} and market, or leave out --user",
            )
        chosen = chosen or dataset
    chosen = chosen if chosen is not None else store.named_graphs()
    return Exported(serialize((q for g in chosen for q in store.quads(g)), fmt))


def to_networkx(triples: Iterable[ox.Triple | ox.Quad]) -> nx.MultiDiGraph:
    """A MultiDiGraph with a node per IRI or blank node and an edge per triple between them;
    literal-valued triples become node attributes (lists, keyed by predicate IRI)."""
    g: nx.MultiDiGraph = nx.MultiDiGraph()
    for t in triples:
        s, p, o = _node(t.subject), t.predicate.value, t.object
        g.add_node(s)
        if isinstance(o, ox.Literal):
            g.nodes[s].setdefault(p, []).append(o.value)
        else:
            g.add_edge(s, _node(o), key=p, predicate=p)
    return g


def _node(term: ox.NamedNode | ox.BlankNode | ox.Triple) -> str:
    """The networkx node of an IRI or blank node (its IRI or label)."""
    if isinstance(term, ox.Triple):
        raise InputError("a quoted triple has no node in a networkx graph", value=str(term))
    return term.value
