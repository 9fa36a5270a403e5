"""What the backends share (`BaseStore`): commits recorded in the audit graph in the same
transaction as the data, the generation, named graphs; and the quads of a commit
(`commit_quads`), a parse into one graph (`parse_into`), finkg's own graphs among those a
store lists (`own_graphs`)."""

from __future__ import annotations

import datetime as dt
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence

import pyoxigraph as ox
from pyoxigraph import Literal, NamedNode, Quad, Triple

from finkg import queries
from finkg.errors import InputError, QueryError, StoreError
from finkg.kg.graphs import Graphs
from finkg.kg.store.protocol import Commit, DefaultGraphs
from finkg.kg.update_targets import check_update
from finkg.ontology.terms import FKG, PROV, RDF, RDFS, XSD
from finkg.queries.binding import bind
from finkg.queries.results import Solutions


class BaseStore(ABC):
    """What the backends share: commits, generation, named graphs."""

    location: str
    graphs: Graphs
    read_only: bool

    @abstractmethod
    def select(self, query: str, *, default_graphs: DefaultGraphs = None) -> Solutions: ...

    @abstractmethod
    def construct(self, query: str, *, default_graphs: DefaultGraphs = None) -> list[Triple]: ...

    @abstractmethod
    def ask(self, query: str, *, default_graphs: DefaultGraphs = None) -> bool: ...

    @abstractmethod
    def _write(self, add: list[Quad], remove: list[Quad]) -> None: ...

    @abstractmethod
    def quads(self, graph: NamedNode | None = None) -> Iterator[Quad]:
        """The quads of `graph`, or of every named graph of finkg's."""

    def update(self, update: str, *, note: str = "update", maintenance: bool = False) -> Commit:
        """Run a SPARQL update as one commit. finkg refuses (`update_targets.check_update`)
        an update that states something about its vocabulary outside the ontology graph,
        and, unless `maintenance`, one that writes the audit or ontology graph or graphs it
        cannot name; a maintenance commit's note says so."""
        self._check_writable(note)
        check_update(update, self.graphs, maintenance=maintenance)
        return self._update(update, note=f"maintenance: {note}" if maintenance else note)

    @abstractmethod
    def _update(self, update: str, *, note: str) -> Commit: ...

    def new_commit_iri(self) -> NamedNode:
        """A fresh commit IRI, for callers that link what they write to its commit."""
        return NamedNode(f"{self.graphs.base}commit/{uuid.uuid4().hex}")

    def write(
        self,
        *,
        add: Iterable[Quad] = (),
        remove: Iterable[Quad] = (),
        note: str,
        commit: NamedNode | None = None,
    ) -> Commit | None:
        """Add and remove quads in one transaction with its commit record.

        Nothing happens (and None is returned) when there is nothing to add or remove.
        """
        self._check_writable(note)
        add, remove = list(add), list(remove)
        if not add and not remove:
            return None
        for q in add:
            if not isinstance(q.graph_name, NamedNode):
                raise InputError(
                    "finkg keeps every triple in a named graph", field="graph", value=str(q)
                )
        record = self._commit(commit, note, len(add) + len(remove))
        self._write(add + commit_quads(record, self.graphs), remove)
        self._settled(record)
        return record

    def write_nquads(
        self,
        data: bytes,
        *,
        count: int,
        add: Sequence[Quad] = (),
        note: str,
        commit: NamedNode | None = None,
    ) -> Commit:
        """Add `data` (N-Quads, every quad in a named graph, as finkg's loaders stage them)
        and `add` in one transaction with its commit record; `count` is their quad count.

        Backends that can load N-Quads without building Python quads override this."""
        quads = list(ox.parse(data, format=ox.RdfFormat.N_QUADS)) + list(add)
        record = self.write(add=quads, note=note, commit=commit)
        if record is None:
            raise InputError("nothing to write", field="data", value=note)
        return record

    def held(self, quads: Sequence[Quad]) -> set[Quad]:
        """Which of `quads` the store holds (`held_quads.rq`), as asked."""
        text = queries.load("held_quads").text
        found: set[Quad] = set()
        for start in range(0, len(quads), 500):
            batch = quads[start : start + 500]
            rows = [
                (
                    Literal(str(i), datatype=XSD.integer),
                    q.subject,
                    q.predicate,
                    q.object,
                    _named_graph(q),
                )
                for i, q in enumerate(batch)
            ]
            result = self.select(bind(text, {("i", "s", "p", "o", "g"): rows}))
            answer = queries.Rows("held_quads", result.variables, result.rows)
            found |= {batch[r.integer("i")] for r in answer}
        return found

    _sole_writer = False  # whether every write goes through this object (see generation)
    _generation: int | None = None  # the generation it knows, when it is the sole writer

    def generation(self) -> int:
        """The highest commit sequence: it grows on every write (0 for a new store).

        The embedded store has one writer (Oxigraph locks the directory), so a writable one
        keeps the number it last committed instead of asking again: the query scans every
        commit, and a prediction run writes thousands. On a remote endpoint two clients
        writing at the same instant can draw the same number."""
        if self._generation is not None:
            return self._generation
        value = queries.select(self, "store_generation").one().maybe_integer("generation")
        generation = value if value is not None else 0
        if self._sole_writer:
            self._generation = generation
        return generation

    def _settled(self, record: Commit) -> None:
        """`record` was written: it is the generation now."""
        if self._sole_writer:
            self._generation = record.sequence

    def named_graphs(self) -> list[NamedNode]:
        """finkg's named graphs that hold triples, by IRI (see `own_graphs`)."""
        result = queries.select(self, "named_graphs")
        return own_graphs(result.column("graph"), self.graphs)

    def _commit(self, iri: NamedNode | None, note: str, count: int | None) -> Commit:
        """A commit numbered one above the current generation (read before the write, so a
        write that deletes the audit graph still moves the generation forward)."""
        sequence = self.generation() + 1
        self._generation = None  # until the write succeeds (`_settled`), ask the store
        return Commit(iri or self.new_commit_iri(), note, count, dt.datetime.now(dt.UTC), sequence)

    def _check_writable(self, what: str) -> None:
        if self.read_only:
            raise StoreError(
                f"store {self.location} is open read-only; refused: {what}. "
                "Pass --update (finkg query) or open it for writing."
            )

    def close(self) -> None:  # noqa: B027 (backends override when they hold resources)
        """Release the store."""

    def __enter__(self) -> BaseStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _named_graph(q: Quad) -> NamedNode:
    """A quad's graph, for binding into a query: only a named graph can be bound."""
    if not isinstance(q.graph_name, NamedNode):
        raise QueryError(
            "only IRIs, literals and triples can be bound", field="g", value=repr(q.graph_name)
        )
    return q.graph_name


def own_graphs(found: Iterable[object], graphs: Graphs) -> list[NamedNode]:
    """The graphs of `found` that are finkg's (their IRIs start with `graphs.prefix`), sorted.

    An engine shared with other work holds other graphs, and some engines keep graphs of
    their own in every store (Virtuoso's system graphs: its RDF storage metadata, the OWL
    and LDP vocabularies); finkg neither reads them into a union nor exports or clears them.
    """
    own = {g for g in found if isinstance(g, NamedNode) and g.value.startswith(graphs.prefix)}
    return sorted(own, key=lambda g: g.value)


def commit_quads(commit: Commit, graphs: Graphs) -> list[Quad]:
    """The audit-graph record of a commit."""
    g = graphs.audit
    quads = [
        Quad(commit.iri, RDF.type, FKG.Commit, g),
        Quad(commit.iri, RDFS.label, Literal(commit.note), g),
        Quad(
            commit.iri, PROV.endedAtTime, Literal(commit.at.isoformat(), datatype=XSD.dateTime), g
        ),
        Quad(commit.iri, FKG.sequence, Literal(str(commit.sequence), datatype=XSD.integer), g),
    ]
    if commit.quad_count is not None:
        count = Literal(str(commit.quad_count), datatype=XSD.integer)
        quads.append(Quad(commit.iri, FKG.quadCount, count, g))
    return quads


def parse_into(data: bytes, format: ox.RdfFormat, graph: NamedNode) -> list[Quad]:
    """The triples of `data` as quads of `graph`; a syntax error names its line."""
    try:
        return [
            Quad(q.subject, q.predicate, q.object, graph)
            for q in ox.parse(data, format=format, without_named_graphs=True)
        ]
    except SyntaxError as e:
        raise InputError(f"cannot parse {format.name} data: {e.msg}", line=e.lineno) from None
