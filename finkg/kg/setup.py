"""Creating a store: the ontology graph, kept equal to the installed `finkg.ttl`."""

from __future__ import annotations

import pyoxigraph as ox

from finkg.kg.store import BaseStore, Commit, parse_into
from finkg.ontology import ontology_path


def init_store(store: BaseStore) -> Commit | None:
    """Load (or refresh) the ontology graph; a no-op when it is already current."""
    graph = store.graphs.ontology
    wanted = set(parse_into(ontology_path().read_bytes(), ox.RdfFormat.TURTLE, graph))
    present = set(store.quads(graph))
    return store.write(
        add=wanted - present, remove=present - wanted, note="init: ontology graph from finkg.ttl"
    )
