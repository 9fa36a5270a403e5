"""The embedded backend: pyoxigraph in memory or on disk."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import pyoxigraph as ox
from pyoxigraph import BlankNode, DefaultGraph, NamedNode, Quad, Triple

from finkg.errors import MissingStoreError, QueryError, StoreError
from finkg.kg.graphs import Graphs
from finkg.kg.store.base import BaseStore, commit_quads, own_graphs, parse_into
from finkg.kg.store.protocol import Commit, DefaultGraphs
from finkg.kg.updates import quads_update
from finkg.queries.results import Solutions

BULK_MAX = 500_000  # quads; half of Oxigraph's bulk batch, so a write is one SST ingestion
# quads; below this a transaction is faster than a bulk load, which pays about 12 ms for its
# SST files however few quads they hold (on disk, 2 cores: 20 quads 0.2 ms against 11.9 ms,
# 500 quads 6.8 ms against 14.9 ms, 2,000 quads 39 ms against 28 ms). A job's commits (a
# run's outputs, one anchor's decision) are mostly this small.
BULK_MIN = 1_000


class EmbeddedStore(BaseStore):
    """An Oxigraph store in this process (`path=None`: in memory)."""

    def __init__(self, path: Path | None, *, graphs: Graphs, read_only: bool = False) -> None:
        self.graphs = graphs
        self.read_only = read_only
        self.location = str(path) if path is not None else ":memory:"
        self._sole_writer = not read_only  # Oxigraph locks the directory to one writer
        try:
            if path is None:
                self._store = ox.Store()
            elif read_only:
                if not path.is_dir():
                    raise MissingStoreError(
                        "no store directory here",
                        field="--store",
                        value=str(path),
                        hint=f"create one with `finkg init --store {path}` (or `finkg demo`), "
                        "or name an existing store with --store or $FINKG_STORE",
                    )
                self._store = ox.Store.read_only(str(path))
            else:
                path.mkdir(parents=True, exist_ok=True)
                self._store = ox.Store(str(path))
        except OSError as e:
            hint = ""
            if "lock" in str(e).lower():
                hint = (
                    " Another process holds it (a running `finkg serve`?): stop it, open the"
                    " store read-only, or query the server's URL instead."
                )
            raise StoreError(f"cannot open store at {path}: {e}.{hint}") from None

    @classmethod
    def of_quads(cls, quads: Iterable[Quad], *, graphs: Graphs) -> EmbeddedStore:
        """A read-only in-memory store holding `quads` and nothing else: a view of another
        store's data (`finkg.agent.view`), so no commit is recorded for them."""
        view = cls(None, graphs=graphs, read_only=True)
        try:
            view._store.extend(quads)
        except OSError as e:
            raise StoreError(f"could not hold the view in memory: {e}") from None
        return view

    def _query(
        self, query: str, default_graphs: DefaultGraphs
    ) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        try:
            if default_graphs is None:
                return self._store.query(query)
            if default_graphs == "union":
                return self._store.query(query, use_default_graph_as_union=True)
            if isinstance(default_graphs, str):
                raise QueryError(
                    "a dataset is 'union' or a list of graphs",
                    field="default_graphs",
                    value=default_graphs,
                )
            # The listed graphs are the only ones the query can read, through GRAPH too.
            default: list[NamedNode | BlankNode | DefaultGraph] = [*default_graphs]
            named: list[NamedNode | BlankNode] = [*default_graphs]
            return self._store.query(query, default_graph=default, named_graphs=named)
        except SyntaxError as e:
            raise QueryError(f"SPARQL syntax error: {e}", field="query") from None
        except OSError as e:
            raise StoreError(f"query failed on {self.location}: {e}") from None

    def select(self, query: str, *, default_graphs: DefaultGraphs = None) -> Solutions:
        result = self._query(query, default_graphs)
        if not isinstance(result, ox.QuerySolutions):
            raise QueryError("expected a SELECT query", field="query", value=query[:80])
        variables = tuple(v.value for v in result.variables)
        # a solution iterates its values in the order of `variables` (None where unbound):
        # 7 ms of a 2,000-row pool query's 78 against reading each by name
        return Solutions(variables, [tuple(s) for s in result])

    def construct(self, query: str, *, default_graphs: DefaultGraphs = None) -> list[Triple]:
        result = self._query(query, default_graphs)
        if not isinstance(result, ox.QueryTriples):
            raise QueryError("expected a CONSTRUCT or DESCRIBE query", field="query")
        return list(result)

    def ask(self, query: str, *, default_graphs: DefaultGraphs = None) -> bool:
        result = self._query(query, default_graphs)
        if not isinstance(result, ox.QueryBoolean):
            raise QueryError("expected an ASK query", field="query", value=query[:80])
        return bool(result)

    def _update(self, update: str, *, note: str) -> Commit:
        record = self._commit(None, note, None)
        text = (
            update.rstrip().rstrip(";")
            + " ;\n"
            + quads_update(add=commit_quads(record, self.graphs))
        )
        try:
            self._store.update(text)
        except SyntaxError as e:
            raise QueryError(f"SPARQL syntax error: {e}", field="update") from None
        except OSError as e:
            raise StoreError(f"update failed on {self.location}: {e}") from None
        self._settled(record)
        return record

    def _write(self, add: list[Quad], remove: list[Quad]) -> None:
        try:
            if remove:
                self._store.update(quads_update(add=add, remove=remove))
            elif self.location != ":memory:" and BULK_MIN <= len(add) <= BULK_MAX:
                # Oxigraph's bulk loader turns up to 1M quads into one set of SST files that
                # RocksDB ingests in a single atomic call: 2-3x faster than a transaction for
                # large writes and still whole-or-nothing (tests/test_crash.py kills writes to
                # show it); a small write is one transaction, whole-or-nothing too.
                self._store.bulk_extend(add)
            else:
                self._store.extend(add)
        except OSError as e:
            raise StoreError(f"write failed on {self.location}: {e}") from None

    def write_nquads(
        self,
        data: bytes,
        *,
        count: int,
        add: Sequence[Quad] = (),
        note: str,
        commit: NamedNode | None = None,
    ) -> Commit:
        """Bulk-load the N-Quads bytes as they are (Oxigraph parses them without making Python
        quads: about 20 % faster than parsing here and `bulk_extend`), within BULK_MAX quads."""
        if self.location == ":memory:" or count > BULK_MAX:
            return super().write_nquads(data, count=count, add=add, note=note, commit=commit)
        self._check_writable(note)
        record = self._commit(commit, note, count)
        tail = ox.serialize([*add, *commit_quads(record, self.graphs)], format=ox.RdfFormat.N_QUADS)
        assert tail is not None  # serialize returns the bytes when given no output
        try:
            # one bulk load below Oxigraph's batch size is one atomic SST ingestion, like
            # bulk_extend (tests/test_crash.py kills ingests to show it)
            self._store.bulk_load(data + tail, format=ox.RdfFormat.N_QUADS)
        except SyntaxError as e:
            raise StoreError(f"staged N-Quads did not parse on {self.location}: {e}") from None
        except OSError as e:
            raise StoreError(f"write failed on {self.location}: {e}") from None
        self._settled(record)
        return record

    def load(
        self, data: bytes, *, format: ox.RdfFormat, graph: NamedNode, note: str
    ) -> Commit | None:
        """Parse `data` (triples) into `graph` and write it as one commit."""
        return self.write(add=parse_into(data, format, graph), note=note)

    def held(self, quads: Sequence[Quad]) -> set[Quad]:
        """As `held_quads.rq`, by one point lookup per quad: for the 11k keys of a news
        ingest on the 30M-quad event store, VALUES queries took 2.4 s."""
        return {q for q in quads if q in self._store}

    def quads(self, graph: NamedNode | None = None) -> Iterator[Quad]:
        return iter(self._store.quads_for_pattern(None, None, None, graph))

    def named_graphs(self) -> list[NamedNode]:
        return own_graphs(self._store.named_graphs(), self.graphs)

    def flush(self) -> None:
        if self.location != ":memory:" and not self.read_only:
            self._store.flush()

    def close(self) -> None:
        self.flush()
        del self._store
