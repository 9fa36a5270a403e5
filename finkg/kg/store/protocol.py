"""The store protocol: what every backend offers (`Store`), the record of one write
(`Commit`) and the datasets a query can name (`DefaultGraphs`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import pyoxigraph as ox
from pyoxigraph import NamedNode, Quad, Triple

from finkg.kg.graphs import Graphs
from finkg.queries.results import DefaultGraphs, Solutions


@dataclass(frozen=True)
class Commit:
    """One write: its IRI in the audit graph, what wrote it, how many quads, when."""

    iri: NamedNode
    note: str
    quad_count: int | None  # None for SPARQL updates, whose effect is not counted
    at: dt.datetime
    sequence: int  # the store generation this commit makes


@runtime_checkable
class Store(Protocol):
    """What every backend offers."""

    location: str
    graphs: Graphs
    read_only: bool

    def select(self, query: str, *, default_graphs: DefaultGraphs = None) -> Solutions: ...
    def construct(self, query: str, *, default_graphs: DefaultGraphs = None) -> list[Triple]: ...
    def ask(self, query: str, *, default_graphs: DefaultGraphs = None) -> bool: ...
    def update(self, update: str, *, note: str = "update", maintenance: bool = False) -> Commit: ...
    def write(
        self,
        *,
        add: Iterable[Quad] = (),
        remove: Iterable[Quad] = (),
        note: str,
        commit: NamedNode | None = None,
    ) -> Commit | None: ...
    def write_nquads(
        self,
        data: bytes,
        *,
        count: int,
        add: Sequence[Quad] = (),
        note: str,
        commit: NamedNode | None = None,
    ) -> Commit: ...
    def load(
        self, data: bytes, *, format: ox.RdfFormat, graph: NamedNode, note: str
    ) -> Commit | None: ...
    def held(self, quads: Sequence[Quad]) -> set[Quad]: ...
    def quads(self, graph: NamedNode | None = None) -> Iterator[Quad]: ...
    def named_graphs(self) -> list[NamedNode]: ...
    def generation(self) -> int: ...
    def new_commit_iri(self) -> NamedNode: ...
    def close(self) -> None: ...


__all__ = ["Commit", "DefaultGraphs", "Store"]
