"""Multi-path retrieval of filing passages and document chunks for a question (papers 002
§4.2, 003 §3.1 stage 5).

The eligible passages come from one SPARQL query (`passage_candidates.rq`): filing passages
and document chunks available strictly before the answer's instant, optionally about one
company and from some source documents. Three retrievers then rank that set, each from its
own statistics, so nothing outside the eligible set moves a score:

- sparse: BM25 over the passages' indexed tokens;
- dense: cosine of the question's embedding with the passages' stored vectors;
- metadata: BM25 over each passage's metadata text: its document's title, the section
  heading it falls under, and its analyst topics. Paper 002 matches section summaries an
  LLM wrote at curation time; writing one per section with the local reader would take
  hours per filing on two cores, so finkg's metadata is extractive (the heading is the
  section's own name), and says so.

With a query plan (`query_plan.plan`: the question without its answering instructions,
the filing words for the metrics it names, the statements, years and line items it needs),
the sparse path scores the core question and those words, the dense path embeds the core
question, and two more paths read the plan:

- statement: the passages inside a financial statement the question names or implies
  (`kg.statements`: the statement a passage lies in, found from its document's text),
  ranked by their sparse score, those whose statement covers a year the question names
  first; the other passages are unranked on this path;
- parts: one sub-query per line item the question's metric needs, each ranked by its own
  sparse and dense paths (RRF); a passage's rank is its best rank over the sub-queries, so
  that each line item's best passage is near the top (paper 002 §4.1's decomposition).

The top `depth` (100) of each path are fused by reciprocal rank, sum of w / (60 + rank) over
the paths that ranked a passage (paper 003; weights w, 1 unless chosen): a passage only
one path found still counts.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from pyoxigraph import NamedNode
from scipy.stats import rankdata

from finkg import queries
from finkg.errors import InputError
from finkg.kg.chunking import section_heading_at, section_headings
from finkg.kg.statements import Section, section_at, statement_sections, table_sections
from finkg.kg.store import BaseStore
from finkg.retrieval.index.bm25 import K1, B, PoolBM25, tokenize
from finkg.retrieval.index.embed import Embedder
from finkg.retrieval.plan.query_plan import QueryPlan, plan
from finkg.retrieval.pools import TextSource, VectorSource
from finkg.retrieval.rank.fuse import RRF_K

PATHS = ("sparse", "dense", "metadata", "statement", "parts")
PLANNED = ("statement", "parts")  # the paths that read a query plan


@dataclass(frozen=True)
class Passage:
    node: NamedNode
    document: NamedNode
    title: str
    index: int | None
    start: int | None
    available: dt.datetime
    topics: tuple[str, ...] = ()
    end: int | None = None


@dataclass(frozen=True)
class Hit:
    passage: Passage
    score: float  # fused: sum of 1 / (k + rank)
    ranks: dict[str, float] = field(
        default_factory=dict
    )  # 1-based rank on each path that had it (ties share their mean rank)

    @property
    def node(self) -> NamedNode:
        return self.passage.node


class PassageRetriever:
    """Sparse, dense and metadata retrieval over the passages a question may use."""

    def __init__(
        self,
        store: BaseStore,
        *,
        text: TextSource,
        vectors: VectorSource | None,
        embedder: Embedder | None,
        depth: int = 100,
        k: int = RRF_K,
        k1: float = K1,
        b: float = B,
    ) -> None:
        if depth < 1:
            raise InputError(
                "depth is how many passages each path keeps: 1 or more", field="depth", value=depth
            )
        if (vectors is None) != (embedder is None):
            raise InputError(
                "the dense path needs both a vector index and the embedder that built it"
            )
        self.store, self.text, self.vectors, self.embedder = store, text, vectors, embedder
        if not (k1 > 0 and 0 <= b <= 1):
            raise InputError("BM25 needs k1 > 0 and b in [0, 1]", field="k1, b", value=(k1, b))
        self.depth, self.k, self.k1, self.b = depth, k, k1, b
        self._headings: dict[NamedNode, list[tuple[int, str]]] = {}
        self._sections: dict[NamedNode, list[Section]] = {}
        self._tables: dict[NamedNode, list[Section]] = {}
        self._metadata: dict[NamedNode, list[str]] = {}
        self._pools: dict[tuple, PoolBM25 | np.ndarray] = {}
        self._queries: dict[str, np.ndarray] = {}

    @property
    def paths(self) -> tuple[str, ...]:
        if self.vectors is None:
            return tuple(p for p in PATHS if p != "dense")
        return PATHS

    def candidates(
        self,
        *,
        before: dt.datetime,
        company: NamedNode | None = None,
        documents: Sequence[NamedNode] = (),
    ) -> list[Passage]:
        """The passages available strictly before `before`, in a stable order."""
        values: dict[str, object] = {
            "before": before,
            "evidenceGraph": [self.store.graphs.filings, self.store.graphs.documents],
        }
        if company is not None:
            values["company"] = company
        if documents:
            values["document"] = list(documents)
        rows = queries.select(self.store, "passage_candidates", values)
        out = []
        for r in rows:
            topics = r.maybe_string("topics") or ""
            out.append(
                Passage(
                    node=r.iri("passage"),
                    document=r.iri("document"),
                    title=r.maybe_string("title") or "",
                    index=r.maybe_integer("index"),
                    start=r.maybe_integer("start"),
                    end=r.maybe_integer("end"),
                    available=r.datetime("availableAt"),
                    topics=tuple(sorted(t for t in topics.split("|") if t)),
                )
            )
        return sorted(out, key=lambda p: (p.document.value, p.index or 0, p.node.value))

    def search(
        self,
        query: str,
        *,
        before: dt.datetime,
        company: NamedNode | None = None,
        documents: Sequence[NamedNode] = (),
        paths: Sequence[str] | None = None,
        weights: Mapping[str, float] | None = None,
        planned: bool = False,
    ) -> list[Hit]:
        """The eligible passages that some path ranked in its top `depth`, best first
        (`planned`: the query read by `query_plan.plan` first)."""
        pool = self.candidates(before=before, company=company, documents=documents)
        reading = plan(query) if planned else None
        return self.fuse(pool, self.ranks(query, pool, paths, reading=reading), weights)

    def ranks(
        self,
        query: str,
        pool: Sequence[Passage],
        paths: Sequence[str] | None = None,
        *,
        reading: QueryPlan | None = None,
    ) -> dict[str, np.ndarray]:
        """Each path's 1-based ranks of the pool. Tied passages share the mean of their ranks:
        breaking ties by pool order would favour a document's first chunks (a metadata path
        scores every chunk of one section alike). A lexical path leaves passages sharing no
        keyword with the query unranked (infinite rank); so do the planned paths for the
        passages they do not choose. Without a plan (`reading`), the planned paths are
        left out."""
        paths = tuple(paths or self.paths)
        for p in paths:
            if p not in self.paths:
                raise InputError(
                    f"unknown or unavailable retrieval path (available: {', '.join(self.paths)})",
                    field="paths",
                    value=p,
                )
        sparse_text = reading.sparse_text if reading is not None else query
        dense_text = reading.core if reading is not None else query
        out = {}
        for path in paths:
            if path in PLANNED:
                if reading is not None:
                    out[path] = self._planned(path, reading, pool)
                continue
            text = dense_text if path == "dense" else sparse_text
            scores = self.scores(path, text, pool)
            ranks = rankdata(-scores, method="average")
            if path != "dense":
                ranks[scores <= 0] = np.inf
            out[path] = ranks
        return out

    def fuse(
        self,
        pool: Sequence[Passage],
        ranks: dict[str, np.ndarray],
        weights: Mapping[str, float] | None = None,
    ) -> list[Hit]:
        """Reciprocal rank fusion of the paths' top `depth`, best first; each path's terms
        weighted by `weights` (1 for a path it does not name)."""
        w = dict(weights or {})
        hits = []
        for i, passage in enumerate(pool):
            on = {p: float(r[i]) for p, r in ranks.items() if r[i] <= self.depth}
            if on:
                score = sum(w.get(p, 1.0) / (self.k + r) for p, r in on.items())
                hits.append(Hit(passage, score, on))
        return sorted(hits, key=lambda h: (-h.score, min(h.ranks.values()), h.node.value))

    def _planned(self, path: str, reading: QueryPlan, pool: Sequence[Passage]) -> np.ndarray:
        ranks = np.full(len(pool), np.inf)
        if path == "statement":
            wanted = set(reading.statements) | {s for p in reading.parts for s in p.statements}
            labels = [self.section(p) for p in pool]
            inside = np.array([s is not None and s.kind in wanted for s in labels], dtype=bool)
            if not inside.any():
                return ranks
            years = set(reading.years)
            dated = np.array([s is not None and bool(years & set(s.years)) for s in labels])
            scores = self.scores("sparse", reading.sparse_text, pool) + dated * 1e3
            ranks[inside] = rankdata(-scores[inside], method="average")
            return ranks
        best = ranks
        for part in reading.parts:
            fused = np.zeros(len(pool))
            for sub in ("sparse", "dense") if self.vectors is not None else ("sparse",):
                r = rankdata(-self.scores(sub, part.text, pool), method="average")
                fused += 1.0 / (self.k + r)
            best = np.minimum(best, rankdata(-fused, method="average"))
        return best

    def section(self, passage: Passage, *, tables: bool = False) -> Section | None:
        """The financial statement the passage lies in (`kg.statements`), if any; with
        `tables`, else the table it lies in (whose caption and header label it)."""
        if passage.start is None:
            return None
        if passage.document not in self._sections:
            text = self._document_text(passage.document)
            self._sections[passage.document] = statement_sections(text)
            self._tables[passage.document] = table_sections(text)
        end = passage.end if passage.end is not None else passage.start + 1
        found = section_at(self._sections[passage.document], passage.start, end)
        if found is None and tables:
            found = section_at(self._tables[passage.document], passage.start, end)
        return found

    def scores(self, path: str, query: str, pool: Sequence[Passage]) -> np.ndarray:
        """One path's scores of the pool. A pool's term matrix and vectors are kept for the
        next query over the same pool (a benchmark asks many questions of one corpus)."""
        if not pool:
            return np.zeros(0)
        key = (path, self.k1, self.b, len(pool), hash(tuple(p.node.value for p in pool)))
        if key not in self._pools:
            if len(self._pools) >= 8:
                self._pools.pop(next(iter(self._pools)))
            nodes = [p.node for p in pool]
            if path == "sparse":
                self._pools[key] = PoolBM25(self.text.tokens(nodes), k1=self.k1, b=self.b)
            elif path == "metadata":
                docs = [self._metadata_tokens(p) for p in pool]
                self._pools[key] = PoolBM25(docs, k1=self.k1, b=self.b)
            else:
                assert self.vectors is not None
                self._pools[key] = self.vectors.vectors(nodes)
        cached = self._pools[key]
        if path == "dense":
            assert self.embedder is not None
            return np.asarray(cached) @ self._query_vector(query)
        assert isinstance(cached, PoolBM25)  # what the sparse and metadata paths keep
        return cached.scores(tokenize([query])[0])

    def _query_vector(self, query: str) -> np.ndarray:
        if query not in self._queries:
            if len(self._queries) >= 256:
                self._queries.pop(next(iter(self._queries)))
            assert self.embedder is not None
            self._queries[query] = self.embedder.embed([query])[0]
        return self._queries[query]

    def metadata(self, passage: Passage) -> str:
        """The passage's metadata text: document title, section heading, analyst topics."""
        heading = ""
        if passage.start is not None:
            heading = section_heading_at(self._document_headings(passage.document), passage.start)
        return " ".join(x for x in (passage.title, heading, *passage.topics) if x)

    def _metadata_tokens(self, passage: Passage) -> list[str]:
        if passage.node not in self._metadata:
            self._metadata[passage.node] = tokenize([self.metadata(passage)])[0]
        return self._metadata[passage.node]

    def _document_headings(self, document: NamedNode) -> list[tuple[int, str]]:
        if document not in self._headings:
            self._headings[document] = section_headings(self._document_text(document))
        return self._headings[document]

    def _document_text(self, document: NamedNode) -> str:
        rows = queries.select(self.store, "document_text", {"document": document})
        return next((r.string("text") for r in rows), "")
