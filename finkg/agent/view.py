"""A store as of an instant: the whole dataset a point-in-time reader may see.

`as_of_view(store, at, graphs)` copies the evidence graphs among `graphs` into a read-only
in-memory store, leaving out every quad whose subject or object is a node not yet
knowable at `at`:

- a node whose `fkg:availableAt` is at or after `at` (`available_from.rq`): the rule
  `one_hop_before.rq` applies to one node's neighbourhood, applied to the whole dataset
  (DESIGN §3);
- a source record with no time of its own whose earliest evidence was available at or
  after `at` (`sources_from.rq`): the item a later article was read from, with its URL.

Other nodes without `fkg:availableAt` (companies, assets, customers) are timeless and
kept. finkg's own records are left out whole: the `audit` graph (commits and lifecycle
transitions, stamped when finkg stored something, not when the world knew it), `outputs`
(what its jobs concluded, and outcomes realized later) and `memory` (state learned from
outcomes); query them without as_of. Any SPARQL over the view, with aggregates, property
paths, OPTIONAL and negation, then sees nothing that was not yet available, and its answer
is the same whatever was stored after `at` (the future-invariance test,
tests/test_agent.py).

A correction and the version it revises are both kept when both were available by `at`
(`prov:wasRevisionOf` links them); `evidence_before` shows the newer alone.

The copy costs two queries and one pass over the graphs, and the view's memory: on the demo
store (925k evidence quads) 8-10 s a view on 2 cores, most of it reading the quads out
(`sources_from.rq` takes 2.5 s of it; a dump and bulk load was no faster). `Views` keeps the
last few, so the calls after the first at the same instant cost a query, and a store over
`max_quads` is refused with a hint rather than copied.
"""

from __future__ import annotations

import datetime as dt
from collections import OrderedDict
from collections.abc import Iterator, Sequence

from pyoxigraph import NamedNode, Quad

from finkg import queries
from finkg.errors import InputError
from finkg.kg.store import BaseStore
from finkg.kg.store.embedded import EmbeddedStore

MAX_QUADS = 5_000_000


def as_of_view(
    store: BaseStore, at: dt.datetime, graphs: Sequence[NamedNode], *, max_quads: int = MAX_QUADS
) -> EmbeddedStore:
    """The quads of `graphs` a reader as of `at` may see (module docstring)."""
    if at.tzinfo is None:
        raise InputError("as_of needs a zone", field="as_of", value=at.isoformat())
    graphs = evidence_graphs(store, graphs)
    future: set[object] = set()
    for name in ("available_from", "sources_from"):
        future.update(queries.select(store, name, {"at": at}, default_graphs=graphs).column("node"))

    def kept() -> Iterator[Quad]:
        seen = 0
        for graph in graphs:
            for quad in store.quads(graph):
                seen += 1
                if seen > max_quads:
                    raise InputError(
                        f"the store holds over {max_quads:,} quads in the graphs this reader "
                        "may see, too many to copy as of an instant",
                        field="as_of",
                        value=at.isoformat(),
                        hint="query without as_of, using the packaged point-in-time queries "
                        "(evidence_before, one_hop_before, statement_facts take an instant), "
                        "or raise finkg mcp --view-limit",
                    )
                if quad.subject not in future and quad.object not in future:
                    yield quad

    return EmbeddedStore.of_quads(kept(), graphs=store.graphs)


def evidence_graphs(store: BaseStore, graphs: Sequence[NamedNode]) -> list[NamedNode]:
    """`graphs` but finkg's own records (audit, outputs, memory): what an as-of view holds."""
    records = {store.graphs.audit, store.graphs.outputs, store.graphs.memory}
    return [g for g in graphs if g not in records]


class Views:
    """The last `keep` views, by instant and graphs (a view is rebuilt when the store's
    generation moved on since it was copied)."""

    def __init__(self, keep: int = 2, *, max_quads: int = MAX_QUADS) -> None:
        self.keep, self.max_quads = keep, max_quads
        self._views: OrderedDict[tuple, EmbeddedStore] = OrderedDict()

    def of(self, store: BaseStore, at: dt.datetime, graphs: Sequence[NamedNode]) -> EmbeddedStore:
        key = (at.timestamp(), tuple(g.value for g in graphs), store.generation())
        view = self._views.pop(key, None)
        if view is None:
            view = as_of_view(store, at, graphs, max_quads=self.max_quads)
        self._views[key] = view
        while len(self._views) > self.keep:
            self._views.popitem(last=False)
        return view


__all__ = ["MAX_QUADS", "Views", "as_of_view", "evidence_graphs"]
