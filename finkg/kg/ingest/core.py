"""The one batch writer every loader shares.

A loader reads source files and yields, per record, either an `Item` (the quads of one
record, keyed by the node whose presence means "already ingested"), a `TextItem` (the same
written as N-Quads text, where building Quad objects would cost the loader its speed
target) or a `Reject` (file, line, field, reason). `ingest()` then:

1. checks every record: it parses (loader); no earlier record of this ingest had its key
   with other content (the same content again is skipped); its key node is not in the
   store yet; it names no time after the moment of ingestion; its quads are in finkg's
   data graphs and conform to finkg's shapes (a Python screen, `shapes/screen.py`, passes
   the chunks that surely do; the shapes compiled to SPARQL, `shapes/validate.py`, decide
   and report on the rest); worker threads check chunks while the loader reads on
   (`vetting.py`);
2. without `skip_bad`, stops at the first reject, naming file, line and field, and writes
   nothing: checked items wait in a temporary N-Quads file until every chunk has passed.
   With `skip_bad`, rejects go to a JSONL rejects file with their reasons and the checked
   items are written while later chunks are checked (nothing can stop the ingest any more);
3. writes the items in batches, each batch one transaction with its `fkg:Commit` (source
   documents link to it by `prov:wasGeneratedBy`); items whose key node is already in the
   store are skipped when they are the same record, so an interrupted or repeated ingest
   adds nothing twice, and written as revisions when their content differs (a corrected
   news item, a restated bar: `revisions.py`; the report counts them).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import gc
import json
import tempfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo

from pyoxigraph import NamedNode, Quad

from finkg import queries
from finkg.errors import InputError
from finkg.kg.graphs import Graphs
from finkg.kg.ingest.priced import PricedTickers
from finkg.kg.ingest.records import Item, Record, Reject, TextItem, nquads
from finkg.kg.ingest.vetting import Vetted, vet
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG, PROV, RDF

CHECK_CHUNK = 1_000  # items per check: small enough to overlap loading and checking
CHECKERS = 2  # threads checking chunks
WRITE_BATCH = 2_000  # items per commit at most (short writes keep the loader from waiting)
WRITE_QUADS = 100_000  # quads per commit at most (whole items; a bigger item goes alone)

__all__ = [
    "IngestOptions",
    "IngestReport",
    "Item",
    "Loader",
    "Record",
    "Reject",
    "TextItem",
    "ingest",
]


@dataclass(frozen=True, kw_only=True)
class IngestOptions:
    """What loaders need to know besides the files."""

    graphs: Graphs
    tz: ZoneInfo | None = None  # the declared source zone; None: the format's documented default
    graph: NamedNode | None = None  # an explicit target graph, where a loader allows one
    # the moment of ingestion: nothing available after it is written (filled by `ingest`)
    now: dt.datetime | None = None
    # ten-digit CIK -> ticker of the companies already in the store (filled by `ingest`)
    companies_by_cik: Mapping[str, str] = field(default_factory=dict)
    # tickers of the companies with price bars in the store (filled by `ingest` for filings)
    priced_tickers: AbstractSet[str] = frozenset()

    @property
    def base(self) -> str:
        return self.graphs.base

    @property
    def moment(self) -> dt.datetime:
        """The moment of ingestion (`now`, else the present)."""
        return self.now or dt.datetime.now(dt.UTC)


Loader = Callable[[Sequence[Path], IngestOptions], Iterable["Record | Reject"]]


@dataclass
class IngestReport:
    kind: str
    files: int
    records: int = 0
    written: int = 0
    skipped_existing: int = 0
    revisions: int = 0  # records stored before with other content, written as revisions
    # of those skipped: records with no time of their own (a company, an asset, a profile)
    # whose content differs from the stored record's, which is kept
    kept_stored: int = 0
    quads: int = 0
    commits: list[str] = field(default_factory=list)
    rejects: list[Reject] = field(default_factory=list)
    rejects_file: str | None = None


def ingest(
    store: BaseStore,
    kind: str,
    loader: Loader,
    paths: Sequence[Path],
    options: IngestOptions,
    *,
    skip_bad: bool = False,
    rejects_file: Path | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> IngestReport:
    """Check, stage and write what `loader` reads from `paths` (see the module docstring)."""
    report = IngestReport(kind=kind, files=len(paths))
    tick = progress or (lambda _stage, _n: None)
    if options.graph in (options.graphs.audit, options.graphs.ontology):
        raise InputError(
            "the audit and ontology graphs are written by finkg alone",
            field="--graph",
            value=options.graph.value,
            hint="name a data graph (news, filings, documents, market, users/<id>, ...)",
        )
    if options.now is None:
        options = dataclasses.replace(options, now=dt.datetime.now(dt.UTC))
    if not options.companies_by_cik:
        rows = queries.select(store, "companies_by_cik")
        known = {r.string("cik"): r.string("ticker") for r in rows}
        options = dataclasses.replace(options, companies_by_cik=known)
    if kind == "filings" and not options.priced_tickers:  # only filings look tickers up
        options = dataclasses.replace(options, priced_tickers=PricedTickers(store))
    note = f"ingest {kind}: " + ", ".join(p.name for p in paths[:5])
    note += f" and {len(paths) - 5} more" if len(paths) > 5 else ""
    with (
        _collecting_rarely(),
        tempfile.TemporaryDirectory(prefix="finkg-ingest-") as tmp,
        _Writer(store, note, report, tick, Path(tmp) / "staged.nq", stream=skip_bad) as writer,
    ):
        with ThreadPoolExecutor(max_workers=CHECKERS) as checker:

            def stage(checked: Vetted, chunk_size: int) -> None:
                report.skipped_existing += checked.skipped
                report.revisions += checked.revisions
                report.kept_stored += checked.kept
                report.rejects.extend(checked.rejects)
                for item in checked.items:  # keys are unique: `Firsts` saw to repeats
                    if isinstance(item, TextItem):
                        data, count, sources = item.nquads, item.count, item.sources
                    else:
                        data = nquads(item.quads)
                        count, sources = len(item.quads), _sources(item, data)
                    writer.add(data, Staged(count, len(data), sources))
                report.records += chunk_size
                tick("checked", chunk_size)

            # Chunks are checked (store lookups and shapes) by worker threads while the loader
            # reads the next ones, and (with skip_bad) checked batches are written while later
            # ones are checked. The shape screen is Python and takes turns with the loader;
            # Oxigraph's SPARQL checks and bulk loads run outside the GIL, beside them.
            # Results are staged in input order, with at most CHECKERS + 1 chunks in flight.
            pending: deque[tuple[Future[Vetted], int]] = deque()
            firsts = Firsts()
            for chunk in _chunks(loader(paths, options), CHECK_CHUNK):
                items = _accept(chunk, report, skip_bad, firsts)
                work = checker.submit(vet, store, items, skip_bad, now=options.now)
                pending.append((work, len(chunk)))
                while len(pending) > CHECKERS:
                    future, size = pending.popleft()
                    stage(future.result(), size)
            while pending:
                future, size = pending.popleft()
                stage(future.result(), size)
        if report.rejects and rejects_file is not None:
            write_rejects(rejects_file, report.rejects)
            report.rejects_file = str(rejects_file)
    return report


GC_EVERY = 100_000  # allocations between the cyclic collector's young passes while ingesting


@contextmanager
def _collecting_rarely() -> Iterator[None]:
    """Run Python's cycle collector every GC_EVERY allocations instead of every 700 while
    ingesting. An ingest allocates millions of short-lived objects and (nearly) no cycles,
    so reference counting frees them; on the default schedule the collector took 0.2 s of
    a 2.3 s news ingest walking the items in flight, and 0.7 s once the shape screen's
    tables were among them."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], GC_EVERY), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


@dataclass(frozen=True)
class Staged:
    """One staged item: its quads and N-Quads bytes in the staged file, and the subjects
    (with their graphs) of the source documents among its quads."""

    quads: int
    size: int
    sources: tuple[tuple[NamedNode, NamedNode], ...] = ()


_SOURCE_DOCUMENT = f"<{FKG.SourceDocument.value}>".encode()


def _sources(item: Item, data: bytes) -> tuple[tuple[NamedNode, NamedNode], ...]:
    if _SOURCE_DOCUMENT not in data:  # a byte search spares a scan of most items' quads
        return ()
    return tuple(
        (s, g)
        for q in item.quads
        if q.predicate == RDF.type and q.object == FKG.SourceDocument
        if isinstance(s := q.subject, NamedNode) and isinstance(g := q.graph_name, NamedNode)
    )


def _chunks(items: Iterable[Record | Reject], size: int) -> Iterator[list[Record | Reject]]:
    chunk: list[Record | Reject] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _accept(
    chunk: list[Record | Reject], report: IngestReport, skip_bad: bool, firsts: Firsts
) -> list[Record]:
    """The records of a chunk, in input order; rejects stop the ingest (or are set aside),
    and so does a record whose key an earlier record of this ingest had with other content
    (the same content again is a harmless repeat, skipped)."""
    items = []
    for entry in chunk:
        if isinstance(entry, Record):
            clash = firsts.clash(entry)
            if clash is False:
                report.skipped_existing += 1
                continue
            entry = clash or entry
        if isinstance(entry, Reject):
            if not skip_bad:
                raise entry.error()
            report.rejects.append(entry)
        else:
            items.append(entry)
    return items


class Firsts:
    """The first record of each key in one ingest: where it was read and a fingerprint of
    its quads (Python's hash: one process, one ingest), to tell a repeat from a conflict."""

    def __init__(self) -> None:
        self.seen: dict[NamedNode, tuple[int, str, int | None]] = {}
        self.sources: dict[str, str] = {}  # one string per file, however many records

    def clash(self, record: Record) -> Reject | Literal[False] | None:
        """None: a new key; False: a repeat of an earlier record; a Reject: the same key
        with other content, naming both records."""
        mark = hash(record.nquads) if isinstance(record, TextItem) else hash(tuple(record.quads))
        first = self.seen.get(record.key)
        if first is None:
            source = self.sources.setdefault(record.source, record.source)
            self.seen[record.key] = (mark, source, record.line)
            return None
        if first[0] == mark:
            return False
        where = Path(first[1]).name + (f" line {first[2]}" if first[2] is not None else "")
        return Reject(
            record.source,
            record.line,
            f"the same key as {where}, with other content: keep one of the two",
            "key",
            record.key.value,
        )


def write_rejects(path: Path, rejects: list[Reject]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", errors="backslashreplace") as f:  # a lone surrogate
        for r in rejects:
            f.write(json.dumps(r.__dict__, ensure_ascii=False) + "\n")


class _Writer:
    """Groups staged items into commits of at most WRITE_BATCH items and WRITE_QUADS quads
    (a remote endpoint limits request sizes; a bulk write must stay one SST ingestion) and
    writes them in staging order.

    Without `stream`, batches wait in the staged file until every chunk is checked (a bad
    record then stops the ingest before anything is written) and are written on exit. With
    `stream` (skip_bad: bad records are set aside, never fatal) each full batch is written
    by a thread while later chunks are checked; one batch waits at most.
    """

    def __init__(
        self,
        store: BaseStore,
        note: str,
        report: IngestReport,
        tick: Callable[[str, int], None],
        staged: Path,
        *,
        stream: bool,
    ) -> None:
        self.store, self.note, self.report, self.tick = store, note, report, tick
        self.staged = staged
        self.parts: list[bytes] = []
        self.batch: list[Staged] = []
        self.quads = 0
        self.waiting: list[tuple[int, list[Staged]]] = []  # batches in the staged file
        self.thread = ThreadPoolExecutor(max_workers=1) if stream else None
        self.running: tuple[Future[NamedNode], list[Staged], int] | None = None
        self.file = None if stream else staged.open("wb")

    def add(self, data: bytes, item: Staged) -> None:
        if self.batch and (len(self.batch) >= WRITE_BATCH or self.quads + item.quads > WRITE_QUADS):
            self._close_batch()
        self.parts.append(data)
        self.batch.append(item)
        self.quads += item.quads

    def _close_batch(self) -> None:
        data, batch = b"".join(self.parts), self.batch
        self.parts, self.batch, self.quads = [], [], 0
        if self.file is not None:  # not streaming: held until every chunk is checked
            self.file.write(data)
            self.waiting.append((len(data), batch))
            return
        assert self.thread is not None
        self._finish()
        count = _count(batch)
        self.running = (self.thread.submit(self._commit, data, batch), batch, count)

    def _finish(self) -> None:
        """Wait for the batch being written (its errors surface here) and count it."""
        if self.running is not None:
            future, batch, count = self.running
            self.running = None
            self._done(future.result(), batch, count)

    def _commit(self, data: bytes, batch: list[Staged]) -> NamedNode:
        commit = self.store.new_commit_iri()
        # source documents of this batch point at the commit that wrote them
        links = [Quad(doc, PROV.wasGeneratedBy, commit, g) for s in batch for doc, g in s.sources]
        self.store.write_nquads(data, count=_count(batch), add=links, note=self.note, commit=commit)
        return commit

    def _done(self, commit: NamedNode, batch: list[Staged], count: int) -> None:
        self.report.commits.append(commit.value)
        self.report.quads += count
        self.report.written += len(batch)
        self.tick("written", len(batch))

    def __enter__(self) -> _Writer:
        return self

    def __exit__(self, error: type[BaseException] | None, *_: object) -> None:
        try:
            if error is None and self.batch:
                self._close_batch()
            if self.thread is not None:
                if error is None:
                    self._finish()
                self.thread.shutdown(wait=True)
            elif self.file is not None:
                self.file.close()
                if error is None:
                    with self.staged.open("rb") as f:
                        for size, batch in self.waiting:
                            self._done(self._commit(f.read(size), batch), batch, _count(batch))
        finally:
            if self.file is not None and not self.file.closed:
                self.file.close()


def _count(batch: list[Staged]) -> int:
    """Quads a batch writes: its items' and one link per source document."""
    return sum(s.quads + len(s.sources) for s in batch)
