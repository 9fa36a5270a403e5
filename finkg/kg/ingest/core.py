"""The one batch writer every loader shares.

A loader reads source files and yields, per record, either an `Item` (the quads of one
record, keyed by the node whose presence means "already ingested") or a `Reject` (file,
line, field, reason). `ingest()` then:

1. checks everything before writing anything: every record parses (loader), and every
   chunk of items conforms to finkg's shapes (pyshacl); the quads are staged in a temporary
   N-Quads file so the sources are read once;
2. stops with the first reject, naming file, line and field, and writes nothing, unless
   `skip_bad` is set: then rejects go to a JSONL rejects file with their reasons;
3. writes the staged items in batches, each batch one transaction with its `fkg:Commit`
   (source documents link to it by `prov:wasGeneratedBy`); items whose key node is already in
   the store are skipped, so an interrupted or repeated ingest adds nothing twice.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

import pyoxigraph as ox
from pyoxigraph import NamedNode, Quad

from finkg import queries
from finkg.errors import InputError
from finkg.kg.graphs import Graphs
from finkg.kg.iri import readable_keys
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG, PROV, RDF
from finkg.queries.binding import bind
from finkg.shapes.validate import validate_quads

CHECK_CHUNK = 2_000  # items per check: small enough to overlap loading and checking
WRITE_BATCH = 5_000  # items per commit at most
WRITE_QUADS = 100_000  # quads per commit at most (whole items; a bigger item goes alone)


@dataclass(frozen=True)
class Item:
    """The quads of one source record; `key` present in the store means it is ingested."""

    key: NamedNode
    quads: list[Quad]
    source: str
    line: int | None = None


@dataclass(frozen=True)
class Reject:
    """A record that cannot be ingested, and why."""

    source: str
    line: int | None
    reason: str
    field: str | None = None
    value: str | None = None

    def error(self) -> InputError:
        return InputError(
            self.reason, source=self.source, line=self.line, field=self.field, value=self.value
        )

    @classmethod
    def of(cls, error: InputError, *, source: str, line: int | None) -> Reject:
        value = None if error.value is None else str(error.value)[:500]
        return cls(error.source or source, error.line or line, _reason(error), error.field, value)


def _reason(error: InputError) -> str:
    return error.message + (f"; {error.hint}" if error.hint else "")


@dataclass(frozen=True, kw_only=True)
class IngestOptions:
    """What loaders need to know besides the files."""

    graphs: Graphs
    tz: ZoneInfo | None = None  # the declared source zone; None: the format's documented default
    graph: NamedNode | None = None  # an explicit target graph, where a loader allows one
    # ten-digit CIK -> ticker of the companies already in the store (filled by `ingest`)
    companies_by_cik: Mapping[str, str] = field(default_factory=dict)
    # tickers of the companies with price bars in the store (filled by `ingest` for filings)
    priced_tickers: frozenset[str] = frozenset()

    @property
    def base(self) -> str:
        return self.graphs.base


Loader = Callable[[Sequence[Path], IngestOptions], Iterable["Item | Reject"]]


@dataclass
class IngestReport:
    kind: str
    files: int
    records: int = 0
    written: int = 0
    skipped_existing: int = 0
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
    if not options.companies_by_cik:
        rows = queries.run(store, "companies_by_cik")
        known = {r["cik"].value: r["ticker"].value for r in rows}  # type: ignore[union-attr]
        options = dataclasses.replace(options, companies_by_cik=known)
    if kind == "filings" and not options.priced_tickers:  # only filings look tickers up
        companies = queries.run(store, "priced_companies").column("company")  # type: ignore[union-attr]
        keys = [readable_keys("company", c, base=options.base) for c in companies]
        tickers = frozenset(k[0] for k in keys if k)
        options = dataclasses.replace(options, priced_tickers=tickers)
    with tempfile.TemporaryDirectory(prefix="finkg-ingest-") as tmp:
        staged = Path(tmp) / "staged.nq"
        counts: list[int] = []  # quads per staged item, in staging order
        seen: set[NamedNode] = set()  # keys staged by this ingest
        with staged.open("wb") as out, ThreadPoolExecutor(max_workers=1) as checker:

            def stage(checked: list[Item], chunk_size: int) -> None:
                fresh = [i for i in checked if i.key not in seen]
                report.skipped_existing += len(checked) - len(fresh)  # repeated in the input
                seen.update(i.key for i in fresh)
                ox.serialize([q for i in fresh for q in i.quads], out, format=ox.RdfFormat.N_QUADS)
                counts.extend(len(i.quads) for i in fresh)
                report.records += chunk_size
                tick("checked", chunk_size)

            # Oxigraph releases the GIL while it queries: chunk k is checked (store lookups and
            # shapes) in a worker while the loader reads chunk k+1.
            pending: tuple[Future[list[Item]], int] | None = None
            for chunk in _chunks(loader(paths, options), CHECK_CHUNK):
                items = _accept(chunk, report, skip_bad)
                future = checker.submit(_vet, store, items, report, skip_bad)
                if pending is not None:
                    stage(pending[0].result(), pending[1])
                pending = (future, len(chunk))
            if pending is not None:
                stage(pending[0].result(), pending[1])
        if report.rejects and rejects_file is not None:
            write_rejects(rejects_file, report.rejects)
            report.rejects_file = str(rejects_file)
        _write(store, kind, paths, staged, counts, report, tick)
    return report


def _vet(store: BaseStore, items: list[Item], report: IngestReport, skip_bad: bool) -> list[Item]:
    """The items of one chunk that are not in the store yet and conform to the shapes."""
    present = existing(store, [i.key for i in items])
    new = list({i.key: i for i in items if i.key not in present}.values())
    report.skipped_existing += len(items) - len(new)  # in the store, or repeated in the chunk
    return _check_shapes(new, report, skip_bad)


def _chunks(items: Iterable[Item | Reject], size: int) -> Iterator[list[Item | Reject]]:
    chunk: list[Item | Reject] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _accept(chunk: list[Item | Reject], report: IngestReport, skip_bad: bool) -> list[Item]:
    items = []
    for entry in chunk:
        if isinstance(entry, Reject):
            if not skip_bad:
                raise entry.error()
            report.rejects.append(entry)
        else:
            items.append(entry)
    return items


def _check_shapes(items: list[Item], report: IngestReport, skip_bad: bool) -> list[Item]:
    """Drop (or refuse) the items whose nodes break a shape."""
    result = validate_quads(q for item in items for q in item.quads)
    if result.conforms:
        return items
    owner = {q.subject.value: item for item in items for q in item.quads}
    bad: dict[int, Reject] = {}
    for v in result.violations:
        item = owner.get(v.focus)
        if item is None:
            continue
        reject = Reject(item.source, item.line, f"{v.message} ({v.focus})", v.path, v.value)
        if not skip_bad:
            raise reject.error()
        bad.setdefault(id(item), reject)
    report.rejects.extend(bad.values())
    return [item for item in items if id(item) not in bad]


def write_rejects(path: Path, rejects: list[Reject]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for r in rejects:
            f.write(json.dumps(r.__dict__, ensure_ascii=False) + "\n")


def _write(
    store: BaseStore,
    kind: str,
    paths: Sequence[Path],
    staged: Path,
    counts: list[int],
    report: IngestReport,
    tick: Callable[[str, int], None],
) -> None:
    """Write the staged items in commits of at most WRITE_BATCH items and WRITE_QUADS quads
    (a remote endpoint limits request sizes; a bulk write must stay one SST ingestion)."""
    quads = iter(ox.parse(path=str(staged), format=ox.RdfFormat.N_QUADS))
    note = f"ingest {kind}: " + ", ".join(p.name for p in paths[:5])
    note += f" and {len(paths) - 5} more" if len(paths) > 5 else ""
    for batch in _batches(counts):
        commit = store.new_commit_iri()
        add = list(itertools.islice(quads, sum(batch)))
        add += _link_sources(add, commit)
        store.write(add=add, note=note, commit=commit)
        report.commits.append(commit.value)
        report.quads += len(add)
        report.written += len(batch)
        tick("written", len(batch))


def _batches(counts: list[int]) -> Iterator[list[int]]:
    """Consecutive runs of item sizes within the commit limits."""
    batch: list[int] = []
    size = 0
    for n in counts:
        if batch and (len(batch) >= WRITE_BATCH or size + n > WRITE_QUADS):
            yield batch
            batch, size = [], 0
        batch.append(n)
        size += n
    if batch:
        yield batch


def _link_sources(quads: list[Quad], commit: NamedNode) -> list[Quad]:
    """Source documents of this batch point at the commit that wrote them."""
    return [
        Quad(q.subject, PROV.wasGeneratedBy, commit, q.graph_name)
        for q in quads
        if q.predicate == RDF.type and q.object == FKG.SourceDocument
    ]


def existing(store: BaseStore, nodes: list[NamedNode]) -> set[NamedNode]:
    """Which of `nodes` the store already holds (as typed subjects)."""
    found: set[NamedNode] = set()
    text = queries.load("existing_nodes").text
    for start in range(0, len(nodes), 1000):
        rows = store.select(bind(text, {"node": nodes[start : start + 1000]}))
        found |= {n for n in rows.column("node") if isinstance(n, NamedNode)}
    return found
