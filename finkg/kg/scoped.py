"""A store seen through a dataset: every read restricted to some named graphs.

`ScopedStore(store, allowed)` answers `select`, `construct` and `ask` with the query
dataset set to the allowed graphs (the store enforces it, through GRAPH patterns and over
a query's own FROM clauses too), lists only those graphs and reads their quads alone; a
caller asking for other graphs gets the allowed ones among them. Writes are refused. Any
library function that reads a store can be handed one, so a server for agents (`finkg
mcp`) keeps the users' personal graphs out of every tool without each tool knowing.

>>> from pyoxigraph import Literal, NamedNode, Quad
>>> from finkg.kg.store import open_store
>>> s = open_store(None)
>>> a, p = NamedNode("https://e.org/a"), NamedNode("https://e.org/p")
>>> _ = s.write(add=[Quad(a, p, Literal("news"), s.graphs.news),
...                 Quad(a, p, Literal("private"), s.graphs.user("c-1"))], note="example")
>>> scoped = ScopedStore(s, [s.graphs.news])
>>> [r["o"].value for r in scoped.select("SELECT ?o WHERE { GRAPH ?g { ?s ?p ?o } }")]
['news']
>>> [r["o"].value for r in scoped.select(
...     "SELECT ?o FROM <https://w3id.org/finkg/id/graph/users/c-1> WHERE { ?s ?p ?o }")]
['news']
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pyoxigraph import NamedNode, Quad, Triple

from finkg.errors import InputError
from finkg.kg.graphs import Graphs
from finkg.kg.store import BaseStore, Commit, DefaultGraphs
from finkg.queries.results import Solutions


class ScopedStore(BaseStore):
    """Reads of `store` restricted to `allowed` (module docstring)."""

    def __init__(self, store: BaseStore, allowed: Sequence[NamedNode]) -> None:
        self.inner = store
        self.allowed = list(allowed)
        self.graphs: Graphs = store.graphs
        self.location = store.location
        self.read_only = True

    def _dataset(self, default_graphs: DefaultGraphs) -> list[NamedNode]:
        if default_graphs is None or isinstance(default_graphs, str):
            return self.allowed  # the store's default graph, or the union: the allowed ones
        chosen = [g for g in default_graphs if g in self.allowed]
        return chosen or [NamedNode(self.graphs.prefix + "empty")]  # none allowed: nothing

    def select(self, query: str, *, default_graphs: DefaultGraphs = None) -> Solutions:
        return self.inner.select(query, default_graphs=self._dataset(default_graphs))

    def construct(self, query: str, *, default_graphs: DefaultGraphs = None) -> list[Triple]:
        return self.inner.construct(query, default_graphs=self._dataset(default_graphs))

    def ask(self, query: str, *, default_graphs: DefaultGraphs = None) -> bool:
        return self.inner.ask(query, default_graphs=self._dataset(default_graphs))

    def quads(self, graph: NamedNode | None = None) -> Iterator[Quad]:
        for g in self.allowed if graph is None else [graph]:
            if g in self.allowed:
                yield from self.inner.quads(g)

    def named_graphs(self) -> list[NamedNode]:
        return list(self.allowed)

    def generation(self) -> int:
        return self.inner.generation()

    def update(self, update: str, *, note: str = "update", maintenance: bool = False) -> Commit:
        raise InputError("this store is read-only here", field="update")

    def _update(self, update: str, *, note: str) -> Commit:
        raise InputError("this store is read-only here", field="update")

    def _write(self, add: list[Quad], remove: list[Quad]) -> None:
        raise InputError("this store is read-only here", field="write")

    def close(self) -> None:
        self.inner.close()


def without_users(store: BaseStore, user: str | None = None) -> ScopedStore:
    """`store` with the users' personal graphs left out, but `user`'s own (the graphs as
    they are now: one added later is in the next call's scope)."""
    prefix = store.graphs.prefix + "users/"
    own = store.graphs.user(user).value if user else None
    return ScopedStore(
        store,
        [g for g in store.named_graphs() if not g.value.startswith(prefix) or g.value == own],
    )


__all__ = ["ScopedStore", "without_users"]
