"""`finkg demo`: the synthetic world through finkg's real path, end to end.

Writes the world's files, loads them with the same loaders real data goes through, checks
the store against the shapes, counts it, asks one point-in-time question (the evidence an
after-close news anchor may use) and exports that anchor's one-hop subgraph as JSON-LD.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict
from pyoxigraph import NamedNode, Triple

from finkg import queries
from finkg.config import Settings
from finkg.demo.world import WorldManifest, WorldSpec, build_world
from finkg.errors import InputError
from finkg.kg.calendar import get_calendar
from finkg.kg.export import to_jsonld
from finkg.kg.ingest import KINDS, IngestOptions, ingest, loader
from finkg.kg.ingest.documents import ingest_documents
from finkg.kg.iri import mint
from finkg.kg.setup import init_store
from finkg.kg.stats import StoreStats, store_stats
from finkg.kg.store import BaseStore, open_store
from finkg.ontology.terms import DCTERMS
from finkg.queries.results import python_value
from finkg.shapes.validate import validate_store

DEMO_NOTE = "demo world"
# (loader kind, files relative to the world folder), in load order
SOURCES = (
    ("companies", ["companies.csv"]),
    ("filings", ["edgar/submissions/*.json", "edgar/documents/*.txt"]),
    ("prices", ["prices/*.csv"]),
    ("news", ["news/news.jsonl"]),
    ("fartrans", ["fartrans/*.csv"]),
    ("documents", ["documents/*.txt"]),  # through the lifecycle, not the batch writer
)


class IngestLine(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str
    files: int
    records: int
    written: int
    skipped_existing: int
    rejected: int


class EvidenceRow(BaseModel):
    model_config = ConfigDict(extra="forbid")
    evidence: str
    kind: str  # its class: NewsArticle, FilingPassage, IndicatorWindow, ...
    family: str
    available_at: str
    text: str  # its first line, whole (a news item's headline, a window's one-line JSON)


class DemoReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    files_dir: str
    store: str
    synthetic_notice: str
    ingests: list[IngestLine]
    skipped_kinds: list[str]
    conforms: bool
    violations: int
    checked_triples: int
    stats: StoreStats
    anchor: str
    anchor_title: str
    published: str
    decision_time: str
    evidence: list[EvidenceRow]
    evidence_total: int
    subgraph_path: str
    subgraph_triples: int
    try_next: list[str]  # commands that run on what was built, for a newcomer to try


def run_demo(
    *,
    store_location: str,
    files_dir: Path,
    settings: Settings,
    spec: WorldSpec | None = None,
    progress: Callable[[str], None] | None = None,
) -> DemoReport:
    say = progress or (lambda _msg: None)
    say(f"writing the synthetic world to {files_dir}")
    manifest = build_world(files_dir, spec or WorldSpec(), overwrite=True)
    store = _fresh_store(store_location, settings)
    with store:
        init_store(store)
        ingests, skipped = _ingest_all(store, files_dir, settings, say)
        say("checking the store against finkg's shapes")
        report = validate_store(
            store,
            progress=lambda stage, done, total: say(f"{stage}: {done} of {total}"),
            workers=settings.threads,
        )
        say("counting")
        stats = store_stats(store)
        anchor = _after_close_anchor(manifest)
        evidence, used = _point_in_time(store, anchor, settings)
        try_next = _try_next(manifest, anchor, store_location, settings)
        subgraph_path = files_dir.parent / "anchor-subgraph.jsonld"
        triples, title = _export_subgraph(store, anchor, used, subgraph_path)
    return DemoReport(
        files_dir=str(files_dir),
        store=store_location,
        synthetic_notice=manifest.notice,
        ingests=ingests,
        skipped_kinds=skipped,
        conforms=report.conforms,
        violations=len(report.violations),
        checked_triples=report.triples,
        stats=stats,
        anchor=anchor["iri"],
        anchor_title=title,
        published=anchor["published"],
        decision_time=anchor["decision_time"],
        evidence=_one_of_each_kind(evidence),
        evidence_total=len(used),
        subgraph_path=str(subgraph_path),
        subgraph_triples=triples,
        try_next=try_next,
    )


def _fresh_store(location: str, settings: Settings) -> BaseStore:
    """The demo store, emptied if it is a previous demo; refused if it holds other data."""
    if location.startswith(("http://", "https://")):
        store = open_store(location, settings=settings)
        if store.generation() > 0:
            raise InputError("the demo needs an empty endpoint", field="--store", value=location)
        return store
    path = Path(location)
    if path.exists() and any(path.iterdir()):
        with open_store(path, settings=settings) as old:
            is_demo = old.generation() == 0 or len(queries.select(old, "demo_marker")) > 0
        if not is_demo:
            raise InputError(
                "this store holds data that did not come from the demo; the demo rebuilds "
                "its store from scratch",
                field="--store",
                value=location,
                hint="pass --store with another directory (or remove this one yourself)",
            )
        shutil.rmtree(path)
    return open_store(path, settings=settings)


def _ingest_all(
    store: BaseStore, root: Path, settings: Settings, say: Callable[[str], None]
) -> tuple[list[IngestLine], list[str]]:
    lines, skipped = [], []
    options = IngestOptions(graphs=store.graphs)
    for kind, patterns in SOURCES:
        paths = sorted(p for pattern in patterns for p in root.glob(pattern))
        if kind == "documents":
            say(f"documents: {len(paths)} file(s) through the lifecycle")
            docs = ingest_documents(store, paths)
            lines.append(
                IngestLine(
                    kind=kind,
                    files=len(paths),
                    records=docs.files,
                    written=docs.ready,
                    skipped_existing=docs.already_ready,
                    rejected=len(docs.rejects),
                )
            )
            continue
        if kind not in KINDS:
            skipped.append(kind)
            continue
        say(f"ingesting {kind}: {len(paths)} file(s)")
        report = ingest(store, f"{kind} ({DEMO_NOTE})", loader(kind), paths, options)
        lines.append(
            IngestLine(
                kind=kind,
                files=len(paths),
                records=report.records,
                written=report.written,
                skipped_existing=report.skipped_existing,
                rejected=len(report.rejects),
            )
        )
    return lines, skipped


def _after_close_anchor(manifest: WorldManifest) -> dict[str, str]:
    """The latest original news item published after the close on a session day (so the
    most evidence is available before it)."""
    calendar = get_calendar()
    ny = calendar.tz
    for item in sorted(manifest.news, key=lambda n: n.published, reverse=True):
        if item.duplicate_of:
            continue
        published = dt.datetime.fromisoformat(item.published).replace(tzinfo=ny)
        day = published.date()
        if calendar.is_session(day) and published > calendar.session_close(day):
            times = calendar.anchor_times(published)
            return {
                "url": item.url,
                "ticker": item.ticker,
                "published": published.isoformat(),
                "decision_time": times.decision_time.isoformat(),
            }
    raise InputError("the demo world has no after-close news item", field="world")


def _point_in_time(
    store: BaseStore, anchor: dict[str, str], settings: Settings
) -> tuple[list[EvidenceRow], list[str]]:
    """Evidence about the anchor's company available strictly before its decision time."""
    company = mint("company", anchor["ticker"], base=settings.base_iri)
    anchor["iri"] = mint("news", anchor["ticker"], anchor["url"], base=settings.base_iri).value
    rows = queries.select(
        store, "evidence_before", {"company": company, "before": anchor["decision_time"]}
    )
    evidence = [
        EvidenceRow(
            evidence=r.iri("evidence").value,
            kind=r.iri("class").value.rsplit("#", 1)[1],
            family=r.iri("family").value.rsplit("#", 1)[1],
            available_at=str(python_value(r.term("availableAt"))),
            text=_first_line(str(python_value(r.term("text")))),
        )
        for r in rows
    ]
    return evidence, [e.evidence for e in evidence]


def _first_line(text: str) -> str:
    return next((" ".join(line.split()) for line in text.splitlines() if line.strip()), "")


def _one_of_each_kind(evidence: list[EvidenceRow]) -> list[EvidenceRow]:
    """The newest evidence of each kind (`evidence` is newest first): the five newest were
    five indicator windows of one session, rows a person could not tell apart."""
    seen: dict[str, EvidenceRow] = {}
    for row in evidence:
        seen.setdefault(row.kind, row)
    return list(seen.values())


def _try_next(
    manifest: WorldManifest, anchor: dict[str, str], location: str, settings: Settings
) -> list[str]:
    """Commands that run on what the demo built (the README's tour explains each)."""
    store = "" if location == settings.store_location else f" --store {location}"
    company = mint("company", anchor["ticker"], base=settings.base_iri).value
    lines = [
        f"finkg stats{store}",
        f"finkg query evidence_before --bind company={company} "
        f"--bind before={anchor['decision_time']}{store}",
        f"finkg audit {anchor['iri']}{store}",
    ]
    documents = {d.path: d for d in manifest.documents}
    for pair in manifest.qa[:1]:
        tickers = documents[pair.document].tickers if pair.document in documents else ()
        about = f" --company {tickers[0]}" if tickers else ""
        lines.append(f'finkg ask "{pair.question}"{about}{store}')
    if manifest.users:
        day = anchor["decision_time"][:10]
        lines.append(f"finkg recommend --user {manifest.users[0].customer_id} --date {day}{store}")
    return lines


def _export_subgraph(
    store: BaseStore, anchor: dict[str, str], used: list[str], path: Path
) -> tuple[int, str]:
    """The one-hop subgraph of the anchor and the five newest eligible evidence nodes,
    written as JSON-LD in finkg's context; returns its size and the anchor's title."""
    triples = queries.construct(
        store,
        "one_hop",
        {"node": [anchor["iri"], *used[:5]]},
        default_graphs=[store.graphs.news, store.graphs.filings, store.graphs.market],
    )
    path.write_text(json.dumps(to_jsonld(triples), indent=2, ensure_ascii=False) + "\n")
    title = next(
        (
            t.object.value
            for t in triples
            if isinstance(t.subject, NamedNode)
            and t.subject.value == anchor["iri"]
            and t.predicate == DCTERMS.title
            and not isinstance(t.object, Triple)
        ),
        "",
    )
    return len(triples), title
