"""Reranking retrieved passages, and bundling them with their neighbours (paper 002 §4.2-4.3).

- `LLMReranker`: no cross-encoder ships inside a PyPI package, so relevance is read from a
  frozen LLM as paper 002's eq. 3: the model is asked whether the passage helps answer the
  question, and the score is sigmoid(z_yes - z_no) from the log-probabilities of the two
  options "yes" and "no" as whole replies (`LLM.score`: one prompt evaluation, the two
  options after it), never from generated text. The prompts of one question's passages
  open alike (the instructions and the question come first), so they are scored together
  (`reader.read.score_many`): a local reader evaluates the opening once and every passage
  and option in one batch. `last_tokens` and `last_seconds` say what the last call cost.
- `rerank(reranker, query, items)`: the items sorted by that score (ties keep the order
  they came in). Any object with `scores(query, texts)` can stand in, such as the trained
  cross-encoder of the QA job.
- `bundle(...)`: each retrieved passage grows into a run of adjacent passages of the same
  source document (up to k each way) while the next one's embedding has cosine above
  tau with the passage, so a discussion spread over several passages is read whole.
  Neighbours must be available before the decision instant too.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from pyoxigraph import NamedNode

from finkg import queries
from finkg.errors import InputError
from finkg.kg.store import BaseStore
from finkg.reader.llm import LLM, Message
from finkg.reader.read import OutputCache, prompt, score_many
from finkg.retrieval.index.live import node_texts
from finkg.retrieval.pools import VectorSource

OPTIONS = ("yes", "no")


class Reranker(Protocol):
    model_id: str

    def scores(self, query: str, texts: Sequence[str]) -> np.ndarray: ...


class LLMReranker:
    """P(relevant | query, passage) = sigmoid(z_yes - z_no) from a frozen reader."""

    def __init__(
        self, llm: LLM, *, max_chars: int = 2000, cache: OutputCache | None = None
    ) -> None:
        if max_chars < 100:
            raise InputError("must be at least 100", field="max_chars", value=max_chars)
        self.llm = llm
        self.max_chars = max_chars
        self.cache = cache
        self.template = prompt("relevance")
        self.model_id = f"llm-yes-no:{llm.model_id}"
        self.last_tokens = 0
        self.last_seconds = 0.0

    def _messages(self, query: str, text: str) -> list[Message]:
        return self.template.render({"query": query, "chunk": text[: self.max_chars]})

    def log_odds(self, query: str, text: str) -> float:
        lp = self.llm.score(self._messages(query, text), list(OPTIONS))
        return lp["yes"] - lp["no"]

    def scores(self, query: str, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0)
        requests = [(self._messages(query, t), list(OPTIONS)) for t in texts]
        found = score_many(self.llm, requests, cache=self.cache)
        self.last_tokens = sum(f.tokens_in for f in found)
        counter = getattr(self.llm, "count_tokens", None)
        if callable(counter):  # the opening once, each passage's own tail after it
            self.last_tokens = sum(int(counter(m)) for m, _ in requests)
        self.last_seconds = sum(f.seconds for f in found)
        odds = [f.logprobs["yes"] - f.logprobs["no"] for f in found]
        return np.array([1 / (1 + math.exp(-z)) for z in odds])


@dataclass(frozen=True)
class Reranked:
    node: NamedNode
    score: float
    before: int  # its rank (0-based) before reranking


def rerank(
    reranker: Reranker, query: str, items: Sequence[tuple[NamedNode, str]]
) -> list[Reranked]:
    """`items` (node, text) best first by the reranker's score."""
    scores = reranker.scores(query, [t for _, t in items]) if items else np.zeros(0)
    ranked = [
        Reranked(n, float(s), i) for i, ((n, _), s) in enumerate(zip(items, scores, strict=True))
    ]
    return sorted(ranked, key=lambda r: (-r.score, r.before))


@dataclass(frozen=True)
class Bundle:
    seed: NamedNode
    members: tuple[NamedNode, ...]  # in document order, the seed among them
    text: str


def bundle(
    store: BaseStore,
    seeds: Sequence[NamedNode],
    *,
    vectors: VectorSource,
    k: int = 2,
    threshold: float = 0.6,
    before: dt.datetime | None = None,
) -> list[Bundle]:
    """Each seed with its contiguous similar neighbours (see the module docstring)."""
    if k < 0:
        raise InputError("k must be 0 or more", field="k", value=k)
    if not -1 <= threshold <= 1:
        raise InputError("a cosine threshold is in [-1, 1]", field="threshold", value=threshold)
    if not seeds:
        return []
    values: dict[str, object] = {"chunk": list(seeds), "k": k}
    if before is not None:
        values["before"] = before
    rows = queries.select(store, "chunk_neighbours", values) if k else []
    around: dict[NamedNode, dict[int, NamedNode]] = {s: {} for s in seeds}
    for r in rows:
        around[r.iri("chunk")][r.integer("offset")] = r.iri("neighbour")
    needed = list(dict.fromkeys([*seeds, *(n for m in around.values() for n in m.values())]))
    vecs = dict(zip(needed, vectors.vectors(needed), strict=True))
    texts = node_texts(store, needed)
    spans = {
        r.iri("node"): (r.integer("start"), r.integer("end"))
        for r in queries.select(store, "char_spans", {"node": needed})
    }
    out = []
    for seed in seeds:
        members = [seed]
        for step in (-1, 1):
            offset = step
            while abs(offset) <= k and (n := around[seed].get(offset)) is not None:
                if float(vecs[seed] @ vecs[n]) <= threshold:
                    break
                members.insert(0, n) if step < 0 else members.append(n)
                offset += step
        out.append(Bundle(seed, tuple(members), _joined(members, texts, spans)))
    return out


def _joined(
    members: list[NamedNode], texts: dict[NamedNode, str], spans: dict[NamedNode, tuple[int, int]]
) -> str:
    """The members' texts in order; where chunks overlap in the source, the overlap once
    (fkg:text is the source's [charStart, charEnd) slice)."""
    parts = [texts[members[0]]]
    for prev, cur in itertools.pairwise(members):
        overlap = 0
        if prev in spans and cur in spans:
            overlap = max(0, spans[prev][1] - spans[cur][0])
        parts.append(texts[cur][overlap:] if overlap else "\n\n" + texts[cur])
    return "".join(parts)
