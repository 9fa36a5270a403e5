"""Paper 002's high-frequency memory bank, as point-in-time RDF in the memory graph.

The paper keeps a table of expert-verified answers: one row per canonical question ("What
was the total revenue?"), one column per period, and answers a recurring question from it
without deep retrieval (§3.2, §4.4). Here each cell is a `fkg:BankEntry` in the memory graph:
the canonical question, the period (`FY2020`, `2020Q3`), the answer, the company it is
`fkg:about`, when the answer became knowable (`fkg:availableAt`, zoned) and the evidence it
`prov:wasDerivedFrom`. IRIs come from (company, question, period, availableAt), so adding an
entry twice adds nothing, and a restated answer is a new entry with a later instant: a
look-up as of t reads only entries available strictly before t and takes the latest.

`add_entries` checks entries against the shapes (which also refuse an entry dated before its
evidence) and writes them in one commit; `entries` reads them as of an instant; `match`
finds the entry a question asks for; `lookup` does both.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

import numpy as np
from pyoxigraph import Literal, NamedNode, Quad

from finkg import queries
from finkg.errors import FinkgError, InputError, TimestampError
from finkg.kg.ingest import common
from finkg.kg.iri import mint
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG, PROV, RDF, RDFS
from finkg.queries.binding import to_term
from finkg.retrieval.index.bm25 import bm25_scores, tokenize
from finkg.retrieval.index.embed import Embedder
from finkg.retrieval.plan.questions import check_label, names_company, normalize, parse_period
from finkg.shapes.validate import Report, validate_quads


class BankEntryRejected(FinkgError):
    """Memory-bank entries broke finkg's shapes and were not written."""

    exit_code = 1

    def __init__(self, report: Report) -> None:
        self.report = report
        super().__init__("memory-bank entries not written: " + report.text(limit=5))


@dataclass(frozen=True, kw_only=True)
class BankEntry:
    """One cell of the memory bank; `names` (the company's label and ticker) is filled in
    by `entries` so that matching can take them out of questions."""

    company: str
    question: str
    period: str
    answer: str
    available_at: dt.datetime
    evidence: tuple[str, ...]
    names: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "evidence", tuple(sorted(set(self.evidence))))
        to_term(self.company, "iri", name="company")
        for i, evidence in enumerate(self.evidence):
            to_term(evidence, "iri", name=f"evidence[{i}]")
        check_label(self.period)
        for name in ("question", "answer"):
            if not getattr(self, name).strip():
                raise InputError(f"a bank entry needs a non-empty {name}", field=name, value="")
        if self.available_at.tzinfo is None or self.available_at.utcoffset() is None:
            raise TimestampError(
                "a bank entry's available_at has no zone",
                field="available_at",
                value=self.available_at.isoformat(),
                hint="give when the answer became knowable as a zone-aware datetime",
            )
        if not self.evidence:
            raise InputError(
                "a bank entry rests on at least one evidence node",
                field="evidence",
                value=(),
                hint="give the IRIs of the passages its answer comes from",
            )

    def key(self) -> tuple[str, str, str, str]:
        instant = self.available_at.astimezone(dt.UTC).isoformat()
        return (self.company, self.question, self.period, instant)

    def iri(self, base: str) -> NamedNode:
        return mint("bank", *self.key(), base=base)

    def quads(self, graph: NamedNode, base: str) -> list[Quad]:
        node = self.iri(base)
        q = common.Quads(graph).node(
            node,
            (RDF.type, FKG.BankEntry),
            (RDFS.label, Literal(f"{self.question} ({self.period})")),
            (FKG.question, Literal(self.question)),
            (FKG.period, Literal(self.period)),
            (FKG.answerText, Literal(self.answer)),
            (FKG.about, NamedNode(self.company)),
            (FKG.availableAt, common.datetime(self.available_at)),
        )
        for evidence in self.evidence:
            q.add(node, PROV.wasDerivedFrom, NamedNode(evidence))
        return q.items


def entries(
    store: BaseStore, *, company: str | NamedNode | None = None, before: dt.datetime | None = None
) -> list[BankEntry]:
    """The stored entries (of `company`), only those available strictly before `before`."""
    values: dict[str, object] = {}
    if company is not None:
        values["company"] = company if isinstance(company, NamedNode) else NamedNode(company)
    if before is not None:
        values["before"] = before
    grouped: dict[str, tuple[queries.Row, set[str], set[str]]] = {}
    for row in queries.select(store, "bank_entries", values):
        _, evidence, names = grouped.setdefault(row.string("entry"), (row, set(), set()))
        evidence.add(row.string("evidence"))
        names.update(n for k in ("label", "ticker") if (n := row.maybe_string(k)) is not None)
    found = [
        BankEntry(
            company=first.string("company"),
            question=first.string("question"),
            period=first.string("period"),
            answer=first.string("answer"),
            available_at=dt.datetime.fromisoformat(first.string("availableAt")),
            evidence=tuple(sorted(evidence)),
            names=tuple(sorted(names)),
        )
        for first, evidence, names in grouped.values()
    ]
    return sorted(found, key=BankEntry.key)


def add_entries(store: BaseStore, new: Iterable[BankEntry]) -> int:
    """Check and write `new` entries in one commit; returns how many were not stored yet.

    An entry whose IRI is stored with another answer or evidence is refused, as is one whose
    evidence is not stored evidence or became available after the entry.
    """
    base, graph = store.graphs.base, store.graphs.memory
    batch = {e.iri(base).value: e for e in new}
    stored = {e.iri(base).value: e for e in entries(store)} if batch else {}
    for iri, entry in batch.items():
        old = stored.get(iri)
        if old is not None and (old.answer, old.evidence) != (entry.answer, entry.evidence):
            raise InputError(
                "conflicts with the stored entry of the same company, question, period and instant",
                field="answer",
                value=entry.answer,
                hint=f"stored: {old.answer!r}; a restatement needs a later available_at",
            )
    todo = [e for iri, e in batch.items() if iri not in stored]
    if not todo:
        return 0
    quads = [q for e in todo for q in e.quads(graph, base)]
    _check(store, quads, sorted({ev for e in todo for ev in e.evidence}))
    store.write(add=quads, note=f"memory bank: {len(todo)} entries")
    return len(todo)


def _check(store: BaseStore, quads: Sequence[Quad], evidence: list[str]) -> None:
    context = queries.construct(
        store, "evidence_context", {"node": [NamedNode(e) for e in evidence]}
    )
    known = {
        t.subject.value
        for t in context
        if t.predicate == FKG.availableAt and isinstance(t.subject, NamedNode)
    }
    missing = [e for e in evidence if e not in known]
    if missing:
        raise InputError(
            "a bank entry's evidence is not stored evidence (no fkg:availableAt)",
            field="evidence",
            value=missing[:5],
            hint="ingest the passages first, and cite them by IRI",
        )
    report = validate_quads([*quads, *(Quad(t.subject, t.predicate, t.object) for t in context)])
    if not report.conforms:
        raise BankEntryRejected(report)


# -- look-up: paper 002 §4.4, three matchers in parallel, eq. (6) --------------------------

MATCHERS = ("subsequence", "bm25", "semantic")
# Defaults, each on a score in [0, 1] (see `Matcher`). A bank hit is answered without deep
# retrieval or grounding, so a wrong hit costs more than a miss, which only falls through to
# the full pipeline. benchmarks/bank_thresholds.py asks a twelve-question bank with MiniLM:
# near-misses (a modifier that changes the quantity: "total revenue by segment", "net
# income margin", "gross margin for products") reached subsequence 0.73, BM25 0.73 and
# cosine 0.914, while true paraphrases spread over cosines 0.15-0.95, so no threshold
# separates the two. Each default sits above every near-miss: all verbatim questions and 3
# of 18 paraphrases are found, no near-miss is. Callers who can afford misses lower them.
TAU_SEQ = 0.8  # one contiguous run covers 80 % of the longer normalized question
TAU_BM25 = 0.8  # four fifths of the weighted keywords shared, both ways
TAU_SEM = 0.92  # MiniLM cosine of the normalized questions


@dataclass(frozen=True)
class Match:
    """The entry a question asked for, which matcher(s) fired, and all three scores."""

    entry: BankEntry
    period: str
    fired: tuple[str, ...]
    scores: dict[str, float]
    normalized_query: str


class Matcher:
    """The three matchers of paper 002 §4.4 over normalized text, OR-ed as in its eq. (6):

    - subsequence: the longest contiguous common run of characters (difflib's longest
      match) over the longer of the two lengths, so extra or missing words lower it;
    - bm25: finkg's BM25 over the canonical questions plus the query, normalized as
      bm25(q, c) / max(bm25(q, q), bm25(c, c)): 1 for the same keywords, lower for keywords
      missing on either side (a bounded score, where raw BM25 depends on the bank's size);
    - semantic: the cosine of the embeddings of the normalized texts.

    A canonical question matches if any score is above its threshold; among matches the
    one with more matchers fired, then the higher sum of scores, wins.
    """

    def __init__(
        self,
        embedder: Embedder,
        *,
        tau_seq: float = TAU_SEQ,
        tau_bm25: float = TAU_BM25,
        tau_sem: float = TAU_SEM,
    ) -> None:
        for name, value in (("tau_seq", tau_seq), ("tau_bm25", tau_bm25), ("tau_sem", tau_sem)):
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
                raise InputError(
                    "a threshold is a score in (0, 1]; 1 turns that matcher off",
                    field=name,
                    value=value,
                )
        self.embedder = embedder
        self.taus = {"subsequence": tau_seq, "bm25": tau_bm25, "semantic": tau_sem}
        self._vectors: dict[str, np.ndarray] = {}

    def _embed(self, questions: Sequence[str]) -> list[np.ndarray]:
        """Embeddings of canonical questions, each computed once per Matcher."""
        todo = sorted({t for t in questions if t not in self._vectors})
        if todo:
            self._vectors.update(zip(todo, self.embedder.embed(todo), strict=True))
        return [self._vectors[t] for t in questions]

    def scores(self, query: str, questions: Sequence[str]) -> list[dict[str, float]]:
        """The three scores of normalized `query` against each normalized question."""
        tokens = tokenize([*questions, query])
        q_tokens = tokens[-1]
        on_query = bm25_scores(q_tokens, tokens)
        vectors = [*self._embed(questions), self.embedder.embed([query])[0]]
        out = []
        for i, question in enumerate(questions):
            longest = SequenceMatcher(None, query, question, autojunk=False).find_longest_match()
            self_score = bm25_scores(tokens[i], tokens)[i]
            top = max(on_query[-1], self_score)
            out.append(
                {
                    "subsequence": longest.size / max(len(query), len(question), 1),
                    "bm25": float(on_query[i] / top) if top > 0 else 0.0,
                    "semantic": float(vectors[-1] @ vectors[i]),
                }
            )
        return out

    def match(
        self, query: str, bank: Sequence[BankEntry], *, period: str | None = None
    ) -> Match | None:
        """The entry `query` asks for, or None (no or several periods named, no entry for
        the period, an ambiguous company, or no canonical question close enough)."""
        asked = check_label(period) if period is not None else parse_period(query)
        pool = [e for e in bank if e.period == asked]
        if asked is None or not pool:
            return None
        named = {e.company for e in pool if names_company(query, e.names)}
        companies = named or {e.company for e in pool}
        if len(companies) != 1:
            return None
        latest: dict[str, BankEntry] = {}
        for e in sorted((e for e in pool if e.company in companies), key=BankEntry.key):
            latest[e.question] = e  # a restatement, available later, replaces the answer
        names = {n for e in pool for n in e.names}
        text = normalize(query, names=names)
        if not text:
            return None
        questions = sorted(latest)
        best: tuple[tuple[int, float], Match] | None = None
        for question, scores in zip(
            questions,
            self.scores(text, [normalize(q, names=names) for q in questions]),
            strict=True,
        ):
            fired = tuple(m for m in MATCHERS if scores[m] > self.taus[m])
            if not fired:
                continue
            rank = (len(fired), sum(scores.values()))
            if best is None or rank > best[0]:
                best = (rank, Match(latest[question], asked, fired, scores, text))
        return None if best is None else best[1]


def match(
    query: str,
    bank: Sequence[BankEntry],
    *,
    embedder: Embedder,
    period: str | None = None,
    tau_seq: float = TAU_SEQ,
    tau_bm25: float = TAU_BM25,
    tau_sem: float = TAU_SEM,
) -> Match | None:
    """`Matcher(embedder, ...).match(query, bank)`; keep a Matcher to reuse its embeddings."""
    matcher = Matcher(embedder, tau_seq=tau_seq, tau_bm25=tau_bm25, tau_sem=tau_sem)
    return matcher.match(query, bank, period=period)


def lookup(
    store: BaseStore,
    query: str,
    *,
    matcher: Matcher,
    before: dt.datetime | None,
    company: str | NamedNode | None = None,
) -> Match | None:
    """The entry answering `query` from what was knowable strictly before `before`."""
    return matcher.match(query, entries(store, company=company, before=before))
