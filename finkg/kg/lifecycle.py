"""The document lifecycle of paper 003: Uploaded → Normalized → Analyzed → Indexed → Ready,
or Error, one atomic, audited transition at a time.

Each transition is one store write: the document's `fkg:lifecycleState` moves, the stage's
artifacts are added, and a `fkg:Transition` (document, from, to, start, end, outcome) goes to
the audit graph, all in the same transaction. So a crash leaves the document in the last state
it reached with exactly that state's artifacts, and `process` resumes from there; a stage that
fails records an Error transition with its reason, and the next run resumes from the state the
document was in when it failed. Stage artifacts have stable IRIs, so nothing is duplicated.

What each stage adds:

- Uploaded: the document (also its own `fkg:SourceDocument`: hash, source, media type),
  its title, publication time and the companies it is about;
- Normalized: `fkg:normalizedText`, the extracted text after `chunking.normalize`, and for
  a paged document (a PDF) where each page starts in it (`fkg:pageStarts`);
- Analyzed: `fkg:DocumentChunk` evidence: text, character and token offsets, the chunk size
  and overlap used, tickers mentioned, analyst topics, event type; and the statement facts
  of its primary statements (`kg/facts`), each derived from the chunk that holds its row;
- Indexed: nothing new: the chunks are committed, and finkg's indexes build from the store
  (they notice the new generation);
- Ready: nothing new: the document can be cited.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from pyoxigraph import Literal, NamedNode, Quad

from finkg import queries
from finkg.errors import FinkgError, InputError
from finkg.kg import chunking, enrich
from finkg.kg.facts.rdf import Span, fact_quads
from finkg.kg.facts.read import read_facts
from finkg.kg.ingest import common
from finkg.kg.iri import mint
from finkg.kg.store import BaseStore
from finkg.ontology.terms import DCTERMS, FKG, PROV, RDF, RDFS

STATES = ("Uploaded", "Normalized", "Analyzed", "Indexed", "Ready")
CONCEPT = {name: getattr(FKG, name) for name in (*STATES, "Error")}
NAME = {v.value: k for k, v in CONCEPT.items()}


@dataclass(frozen=True, kw_only=True)
class Upload:
    """A document to process: its bytes, where it came from, and what we know of it."""

    data: bytes
    source: str  # a URL or file URI
    media_type: str
    title: str
    published: dt.datetime
    time_quality: str
    time_rule: str
    tickers: tuple[str, ...] = ()

    @property
    def digest(self) -> str:
        return common.content_hash(self.data).removeprefix("sha256:")


@dataclass(frozen=True, kw_only=True)
class Settings:
    """How a document is analyzed: its chunks' size and overlap in tokens (192/32: what
    `finkg ask`'s retrieval was chosen on, and what fits the embedder's 256-token window;
    paper 003's 768/128 is `--chunk-size 768 --chunk-overlap 128`), and whether its
    statement facts are read."""

    chunk_size: int = 192
    chunk_overlap: int = 32
    facts: bool = True


@dataclass(frozen=True)
class Extracted:
    """An extractor's text, with its pages where the document has them (a PDF)."""

    text: str
    pages: tuple[str, ...] = ()


@dataclass
class Outcome:
    document: NamedNode
    state: str
    transitions: list[str] = field(default_factory=list)
    chunks: int = 0
    facts: int = 0
    error: str | None = None


Extractor = Callable[[Upload], "str | Extracted"]


def process(
    store: BaseStore,
    upload: Upload,
    extract: Extractor,
    *,
    settings: Settings | None = None,
    companies: Mapping[str, str] | None = None,
    check: Callable[[list[Quad]], None] | None = None,
) -> Outcome:
    """Take a document from wherever it is in its lifecycle to Ready (or Error).

    `check` sees each stage's artifacts (with the state they reach) before they are
    written and raises to refuse them: the documents loader checks them against finkg's
    shapes; a test or a fault-injection run can fail any stage, Indexed and Ready included."""
    settings = settings or Settings()
    doc = mint("document", upload.digest, base=store.graphs.base)
    state, resume_from = current_state(store, doc)
    outcome = Outcome(doc, state or "new")
    stages: list[tuple[str, Callable[[], list[Quad]]]] = [
        ("Uploaded", lambda: _uploaded(store, doc, upload)),
        ("Normalized", lambda: _normalized(store, doc, upload, extract)),
        ("Analyzed", lambda: _analyzed(store, doc, upload, settings, companies or {})),
        ("Indexed", list),
        ("Ready", list),
    ]
    done = STATES.index(resume_from) + 1 if resume_from else 0
    for name, stage in stages[done:]:
        started = dt.datetime.now(dt.UTC)
        try:
            artifacts = stage()
            if check is not None:
                state_quad = Quad(doc, FKG.lifecycleState, CONCEPT[name], store.graphs.documents)
                check([*artifacts, state_quad])
        except FinkgError as e:
            _transition(store, doc, upload, state, "Error", started, [], reason=str(e))
            outcome.state, outcome.error = "Error", str(e)
            outcome.transitions.append("Error")
            return outcome
        _transition(store, doc, upload, state, name, started, artifacts)
        outcome.transitions.append(name)
        outcome.chunks += sum(1 for q in artifacts if q.object == FKG.DocumentChunk)
        outcome.facts += sum(1 for q in artifacts if q.object == FKG.StatementFact)
        state = name
    outcome.state = state or "new"
    return outcome


def current_state(store: BaseStore, doc: NamedNode) -> tuple[str | None, str | None]:
    """(the state the document is in, the last good state to resume after) — None if new."""
    rows = queries.select(store, "document_state", {"document": doc})
    if not rows:
        return None, None
    row = next(iter(rows))
    state = NAME[row.iri("state").value]
    if state != "Error":
        return state, state
    previous = row.maybe_iri("resumeFrom")
    return state, NAME[previous.value] if previous is not None else None


def _transition(
    store: BaseStore,
    doc: NamedNode,
    upload: Upload,
    old: str | None,
    new: str,
    started: dt.datetime,
    artifacts: list[Quad],
    *,
    reason: str | None = None,
) -> None:
    g, audit = store.graphs.documents, store.graphs.audit
    t = NamedNode(f"{store.graphs.base}transition/{uuid.uuid4().hex}")
    ended = dt.datetime.now(dt.UTC)
    record = [
        Quad(t, RDF.type, FKG.Transition, audit),
        Quad(t, FKG.document, doc, audit),
        Quad(t, FKG.toState, CONCEPT[new], audit),
        Quad(t, PROV.startedAtTime, common.datetime(started), audit),
        Quad(t, PROV.endedAtTime, common.datetime(ended), audit),
        Quad(t, RDFS.label, Literal(f"{new}: {upload.title}"[:200]), audit),
    ]
    if old is not None:
        record.append(Quad(t, FKG.fromState, CONCEPT[old], audit))
    if reason is not None:
        record.append(Quad(t, FKG.reason, Literal(reason), audit))
    remove = [Quad(doc, FKG.lifecycleState, CONCEPT[old], g)] if old is not None else []
    store.write(
        add=[*artifacts, Quad(doc, FKG.lifecycleState, CONCEPT[new], g), *record],
        remove=remove,
        note=f"document {upload.digest[:12]}: {new}",
    )


def _uploaded(store: BaseStore, doc: NamedNode, upload: Upload) -> list[Quad]:
    q = common.Quads(store.graphs.documents)
    q.source_document(doc, data=upload.data, source=upload.source, media_type=upload.media_type)
    q.node(
        doc,
        (RDF.type, FKG.Document),
        (DCTERMS.title, Literal(upload.title)),
        (FKG.availableAt, common.datetime(upload.published)),
        (FKG.timeQuality, Literal(upload.time_quality)),
        (FKG.timeRule, Literal(upload.time_rule)),
        *((FKG.about, mint("company", t, base=store.graphs.base)) for t in upload.tickers),
    )
    return q.items


def _normalized(store: BaseStore, doc: NamedNode, upload: Upload, extract: Extractor) -> list[Quad]:
    extracted = extract(upload)
    if isinstance(extracted, str):
        extracted = Extracted(extracted)
    text = chunking.normalize(extracted.text)
    if not text:
        raise InputError("no text after extraction", source=upload.source, field="text")
    g = store.graphs.documents
    out = [Quad(doc, FKG.normalizedText, Literal(text), g)]
    if extracted.pages:
        starts = " ".join(str(s) for s in page_starts(text, extracted.pages))
        out.append(Quad(doc, FKG.pageStarts, Literal(starts), g))
    return out


def page_starts(text: str, pages: Sequence[str]) -> list[int]:
    """Where each page starts in `text` (the pages joined, then normalized): each page's
    opening (its first 200 characters, else its first line: pages open alike, "Table of
    Contents") looked for after where the page before began; a page that is empty, or
    whose opening is not found, starts where the one before did (an empty page, where the
    next one does: nothing lies on it).

    >>> page_starts("Contents\\nA\\n\\nContents\\nB", ["Contents\\nA", "", "Contents\\nB"])
    [0, 12, 12]
    """
    out: list[int] = []
    empty: list[int] = []
    cursor, found = 0, False  # where the last page with text began, and whether it was found
    for page in pages:
        body = chunking.normalize(page)
        if not body:
            empty.append(len(out))
            out.append(cursor)
            continue
        after = cursor + 1 if found else cursor
        at = text.find(body[:200], after)
        if at < 0:  # its opening changed in the joining: its first line, nearby
            first = next((line for line in body.split("\n") if line), "")
            at = text.find(first, after, after + 2 * len(body) + len(first))
        if at >= 0:
            cursor, found = at, True
        out.append(cursor)
    for i in reversed(empty):  # an empty page holds nothing: it starts where the next one does
        out[i] = out[i + 1] if i + 1 < len(out) else len(text)
    return out


def _analyzed(
    store: BaseStore,
    doc: NamedNode,
    upload: Upload,
    settings: Settings,
    companies: Mapping[str, str],
) -> list[Quad]:
    rows = queries.select(store, "document_text", {"document": doc})
    row = next(iter(rows))
    text = row.string("text")
    base = store.graphs.base
    q = common.Quads(store.graphs.documents)
    spans: list[Span] = []
    # restated (a no-op for the store) so that the chunks can be checked on their own
    q.source_document(doc, data=upload.data, source=upload.source, media_type=upload.media_type)
    for c in chunking.chunk(text, size=settings.chunk_size, overlap=settings.chunk_overlap):
        node = mint("chunk", upload.digest, str(c.index), base=base)
        token_start = chunking.tokens(text[: c.start])
        mentioned = enrich.tickers(c.text, companies)
        about = sorted(set(upload.tickers) | set(mentioned))
        q.node(
            node,
            (RDF.type, FKG.DocumentChunk),
            (FKG.text, Literal(c.text)),
            (FKG.availableAt, common.datetime(upload.published)),
            (FKG.timeQuality, Literal(upload.time_quality)),
            (FKG.timeRule, Literal(upload.time_rule)),
            (FKG.sourceFamily, FKG.DocumentFamily),
            (PROV.wasDerivedFrom, doc),
            (FKG.passageIndex, common.integer(c.index)),
            (FKG.charStart, common.integer(c.start)),
            (FKG.charEnd, common.integer(c.end)),
            (FKG.tokenStart, common.integer(token_start)),
            (FKG.tokenEnd, common.integer(token_start + c.tokens)),
            (FKG.chunkSize, common.integer(settings.chunk_size)),
            (FKG.chunkOverlap, common.integer(settings.chunk_overlap)),
            (FKG.eventType, enrich.EVENT_CONCEPTS[enrich.event_type(c.text)]),
            *((FKG.topic, Literal(t)) for t in enrich.topics(c.text)),
            *((FKG.mentions, mint("company", t, base=base)) for t in mentioned),
            *((FKG.about, mint("company", t, base=base)) for t in about),
        )
        spans.append(Span(node, c.start, c.end))
    if not settings.facts:
        return q.items
    page_starts = row.maybe_string("pageStarts")
    pages = [int(x) for x in page_starts.split()] if page_starts else []
    facts = fact_quads(
        read_facts(text),
        key=upload.digest,
        spans=spans,
        page_starts=pages,
        available_at=common.datetime(upload.published),
        about=[mint("company", t, base=base) for t in upload.tickers],
        graph=store.graphs.documents,
        base=base,
    )
    return q.items + facts


__all__ = [
    "STATES",
    "Extracted",
    "Outcome",
    "Settings",
    "Upload",
    "current_state",
    "page_starts",
    "process",
]
