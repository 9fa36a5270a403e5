"""`benchmarks/scale.py`'s index measurements: BM25 and vector indexes built from empty over
every passage of a store, their query times, and HNSW's recall@20 against exact search
(with the efSearch finkg's build chose on the first lines of passages it held out: the
queries here are headlines).

The vectors come from `WordHashEmbedder`, not MiniLM: at 50-60 passages/s on 2 cores MiniLM
would spend hours on a 50× store, and the embedding is the same per-passage cost at every
size (`retrieval.md` measures it). What this measures is finkg's index machinery: reading the
passages from the store, hashing their text, the matrix, FAISS's HNSW graph, saving, and
search. The embedder is a bag of words (one fixed Gaussian vector per word, seeded by the
word's SHA-256) plus a fifth of a vector seeded by the whole text, L2-normalised: the same
vectors as `finkg.retrieval.index.embed.HashEmbedder`, computed as a sparse count matrix
times the vocabulary's vectors instead of a Python sum per word.

>>> import numpy as np
>>> from finkg.retrieval.index.embed import HashEmbedder
>>> texts = ["Acme raises guidance", "Acme cuts guidance, again"]
>>> bool(np.allclose(WordHashEmbedder(dim=16).embed(texts), HashEmbedder(dim=16).embed(texts)))
True
"""

from __future__ import annotations

import dataclasses
import re
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import sparse

from finkg.kg.store import BaseStore
from finkg.retrieval.index.embed import HashEmbedder, seeded_vector
from finkg.retrieval.index.text import TextIndex
from finkg.retrieval.index.vectors import FAISS_THRESHOLD, VectorIndex

K = 20
DIM = 384  # MiniLM's, so the matrix and the HNSW graph cost what they would with it


class WordHashEmbedder(HashEmbedder):
    """`HashEmbedder`'s vectors (its seeding), each word's vector computed once."""

    def __init__(self, *, dim: int = DIM) -> None:
        super().__init__(dim=dim)
        self._vocab: dict[str, int] = {}
        self._rows: list[np.ndarray] = []

    def _word(self, word: str) -> int:
        column = self._vocab.get(word)
        if column is None:
            column = self._vocab[word] = len(self._rows)
            self._rows.append(seeded_vector("w:" + word, self.dim))
        return column

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows, cols = [], []
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                rows.append(i)
                cols.append(self._word(word))
        counts = sparse.csr_matrix(
            (np.ones(len(rows)), (rows, cols)), shape=(len(texts), len(self._rows))
        )
        bag = counts @ np.array(self._rows).reshape(len(self._rows), self.dim)
        own = np.array([seeded_vector("t:" + t, self.dim) for t in texts]).reshape(
            len(texts), self.dim
        )
        out = 0.2 * own + bag
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


@dataclass
class IndexFigures:
    passages: int
    bm25_build_s: float
    vector_build_s: float
    bm25_p50_ms: float
    exact_p50_ms: float
    hnsw_p50_ms: float | None  # None below FAISS_THRESHOLD (finkg searches exactly there)
    recall_at_20: float | None  # HNSW's top 20 against exact search's, by node
    recall_at_20_scores: float | None  # counting a hit whose cosine ties exact's 20th
    queries: int
    # what the HNSW build chose (`finkg.retrieval.index.hnsw.Calibration`, as a dict); None
    # below FAISS_THRESHOLD, and in runs before finkg chose efSearch (it was 128, fixed)
    calibration: dict | None = None


def _p50_ms(seconds: list[float]) -> float:
    return 1000 * statistics.median(seconds)


def measure(store: BaseStore, queries: Sequence[str], *, dim: int = DIM) -> IndexFigures:
    """Build both indexes from empty over `store` and search them with `queries`."""
    embedder = WordHashEmbedder(dim=dim)
    with tempfile.TemporaryDirectory(prefix="finkg-scale-index-") as folder:
        started = time.perf_counter()
        text = TextIndex.open(Path(folder) / "text")
        text.refresh(store)
        bm25_build = time.perf_counter() - started
        started = time.perf_counter()
        vectors = VectorIndex.open(Path(folder) / "vectors", model_id=embedder.model_id, dim=dim)
        vectors.refresh(store, embedder)
        vector_build = time.perf_counter() - started
        bm25 = []
        for q in queries:
            started = time.perf_counter()
            text.search(q, K)
            bm25.append(time.perf_counter() - started)
        asked = embedder.embed(list(queries))
        exact_index = VectorIndex.open(
            Path(folder) / "vectors", model_id=embedder.model_id, dim=dim, faiss_threshold=2**62
        )
        exact, exact_hits = [], []
        for v in asked:
            started = time.perf_counter()
            exact_hits.append(exact_index.search(v, K))
            exact.append(time.perf_counter() - started)
        hnsw_p50 = recall = recall_scores = None
        if len(vectors) >= FAISS_THRESHOLD:
            hnsw, hits, by_score = [], [], []
            for v, truth in zip(asked, exact_hits, strict=True):
                started = time.perf_counter()
                found = vectors.search(v, K)
                hnsw.append(time.perf_counter() - started)
                hits.append(len({n for n, _ in found} & {n for n, _ in truth}) / K)
                floor = truth[-1][1] - 1e-6
                by_score.append(min(K, sum(score >= floor for _, score in found)) / K)
            hnsw_p50 = _p50_ms(hnsw)
            recall, recall_scores = statistics.fmean(hits), statistics.fmean(by_score)
        chosen = vectors.calibration
        return IndexFigures(
            passages=len(vectors),
            bm25_build_s=bm25_build,
            vector_build_s=vector_build,
            bm25_p50_ms=_p50_ms(bm25),
            exact_p50_ms=_p50_ms(exact),
            hnsw_p50_ms=hnsw_p50,
            recall_at_20=recall,
            recall_at_20_scores=recall_scores,
            queries=len(queries),
            calibration=None if chosen is None else dataclasses.asdict(chosen),
        )
