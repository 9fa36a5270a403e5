"""What a store holds: triples per named graph, instances per class, its generation."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from finkg import queries
from finkg.kg.store import BaseStore


class GraphCount(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    graph: str
    name: str | None
    triples: int


class ClassCount(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    graph: str
    name: str | None
    class_iri: str
    instances: int


class StoreStats(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    location: str
    generation: int
    triples: int
    graphs: list[GraphCount]
    classes: list[ClassCount]


def _own_rows(store: BaseStore, name: str) -> list[queries.Row]:
    rows = queries.select(store, name)
    return [r for r in rows if r.iri("graph").value.startswith(store.graphs.prefix)]


def store_stats(store: BaseStore) -> StoreStats:
    """finkg's graphs only (an engine shared with other work, or Virtuoso with its system
    graphs, holds others)."""
    graph_rows = _own_rows(store, "graph_counts")
    class_rows = _own_rows(store, "class_counts")
    graphs = [
        GraphCount(
            graph=row.iri("graph").value,
            name=store.graphs.name_of(row.iri("graph")),
            triples=row.integer("triples"),
        )
        for row in graph_rows
    ]
    classes = [
        ClassCount(
            graph=row.iri("graph").value,
            name=store.graphs.name_of(row.iri("graph")),
            class_iri=row.string("class"),
            instances=row.integer("instances"),
        )
        for row in class_rows
    ]
    return StoreStats(
        location=store.location,
        generation=store.generation(),
        triples=sum(g.triples for g in graphs),
        graphs=graphs,
        classes=classes,
    )
