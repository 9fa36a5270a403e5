"""Creating a store: the ontology graph, kept equal to the installed `finkg.ttl` and
`line_items.ttl`."""

from __future__ import annotations

import pyoxigraph as ox

from finkg.kg.store import BaseStore, Commit, parse_into
from finkg.ontology import ontology_files


def init_store(store: BaseStore) -> Commit | None:
    """Load (or refresh) the ontology graph; a no-op when it is already current."""
    graph = store.graphs.ontology
    wanted = {
        q
        for path in ontology_files()
        for q in parse_into(path.read_bytes(), ox.RdfFormat.TURTLE, graph)
    }
    present = set(store.quads(graph))
    return store.write(
        add=wanted - present,
        remove=present - wanted,
        note="init: ontology graph from finkg.ttl and line_items.ttl",
    )
