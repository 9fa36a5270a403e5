"""The retrievers of movement forecasting, behind one interface (paper 001 Table 3).

`scores(query, pool, rows)` gives one score per pool row (higher is better); `top_k` keeps
the best `k`, ties broken by IRI (the pool's row order). Every score of a row depends on the
query and that row alone (BM25: and on the eligible rows, its statistics), never on
windows outside the rows given, so a pool with later windows added ranks the same.

| name | what |
|---|---|
| `none` | no retrieval: the reader sees the query alone |
| `random` | a uniform score per (query, window) from a hash of both |
| `dtw` | minus the DTW distance of the z-normalised query closes and window values |
| `bm25` | BM25 of the query's JSON over the windows' (statistics from the eligible rows) |
| `minilm` | cosine of the packaged all-MiniLM-L6-v2 embeddings |
| `finseer` | cosine of the bi-encoder trained by `finkg train-retriever` (paper 001 §3.3) |

DTW runs dtaidistance's C implementation over all rows at once; BM25 uses finkg's
tokenizer and `bm25.bm25_scores`. Dense retrievers embed each window once: vectors are
cached per model under the cache directory, keyed by the SHA-256 of the window's text
(windows are immutable).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from finkg.errors import InputError
from finkg.retrieval.index.bm25 import bm25_scores, tokenize
from finkg.retrieval.index.embed import Embedder
from finkg.retrieval.sequences import Progress, Query, WindowPool, znorm

RETRIEVERS = ("none", "random", "dtw", "bm25", "minilm", "finseer")
_EMBED_BATCH = 256


class SequenceRetriever(Protocol):
    name: str
    model_id: str

    def scores(self, query: Query, pool: WindowPool, rows: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class Hit:
    row: int
    iri: str
    score: float


def top_k(
    retriever: SequenceRetriever, query: Query, pool: WindowPool, rows: np.ndarray, k: int
) -> list[Hit]:
    """The `k` best rows, best first; ties go to the smaller IRI."""
    if k < 0:
        raise InputError("k must be 0 or more", field="k", value=k)
    if retriever.name == "none" or k == 0 or len(rows) == 0:
        return []
    rows = np.asarray(rows, dtype=np.int64)
    scores = np.asarray(retriever.scores(query, pool, rows), dtype=np.float64)
    order = np.lexsort((rows, -scores))[:k]
    return [Hit(int(rows[i]), pool.iris[rows[i]], float(scores[i])) for i in order]


class NoRetrieval:
    name = "none"
    model_id = "none"

    def scores(self, query: Query, pool: WindowPool, rows: np.ndarray) -> np.ndarray:
        return np.zeros(len(rows))


class RandomRetrieval:
    """A score in [0, 1) per (query, window), from a hash of both: deterministic."""

    name = "random"

    def __init__(self, *, seed: int = 0) -> None:
        self.seed = seed
        self.model_id = f"random-{seed}"

    def scores(self, query: Query, pool: WindowPool, rows: np.ndarray) -> np.ndarray:
        digest = hashlib.sha256(f"{self.seed}/{query.key}".encode()).digest()
        x = pool.iri_hash[rows] ^ np.uint64(int.from_bytes(digest[:8], "big"))
        with np.errstate(over="ignore"):  # splitmix64's finaliser, modulo 2**64
            x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            x = x ^ (x >> np.uint64(31))
        return (x >> np.uint64(11)).astype(np.float64) / 2.0**53


class DTWRetrieval:
    """Minus the DTW distance of z-normalised series (dtaidistance, C, vectorised)."""

    name = "dtw"
    model_id = "dtaidistance-dtw-znorm"

    def scores(self, query: Query, pool: WindowPool, rows: np.ndarray) -> np.ndarray:
        from dtaidistance import dtw

        q = znorm(np.array(query.closes, dtype=np.float64))
        series = np.vstack([q, pool.shape[rows]]).astype(np.double)
        distances = dtw.distance_matrix_fast(
            series, block=((0, 1), (1, len(rows) + 1)), compact=True
        )
        return -np.asarray(distances, dtype=np.float64)


class BM25Retrieval:
    """BM25 over the serialized windows, statistics from the eligible rows alone."""

    name = "bm25"
    model_id = "bm25-lucene-k1.5-b0.75"

    def scores(self, query: Query, pool: WindowPool, rows: np.ndarray) -> np.ndarray:
        tokens = pool.tokens
        return bm25_scores(tokenize([query.text])[0], [tokens[r] for r in rows])


class DenseRetrieval:
    """Cosine similarity of embeddings; window vectors cached on disk per model."""

    def __init__(
        self,
        embedder: Embedder,
        *,
        name: str = "minilm",
        cache: EmbeddingCache | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.embedder = embedder
        self.name = name
        self.model_id = embedder.model_id
        self.cache = cache
        self.progress = progress

    def matrix(self, pool: WindowPool) -> np.ndarray:
        """Every pool row's vector (computed or read once per pool)."""
        if self.model_id not in pool.vectors:
            if self.cache is not None:
                m = self.cache.vectors(self.embedder, pool.texts, progress=self.progress)
            else:
                m = self.embedder.embed(pool.texts)
            pool.vectors[self.model_id] = np.asarray(m, dtype=np.float32)
        return pool.vectors[self.model_id]

    def scores(self, query: Query, pool: WindowPool, rows: np.ndarray) -> np.ndarray:
        q = self.embedder.embed([query.text])[0]
        return self.matrix(pool)[rows] @ q


class EmbeddingCache:
    """Window vectors of one embedder in `folder`: `keys.json` (text SHA-256) + `vectors.npy`."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _folder(self, model_id: str) -> Path:
        safe = hashlib.sha256(model_id.encode("utf-8")).hexdigest()[:16]
        return self.root / safe

    def vectors(
        self, embedder: Embedder, texts: Sequence[str], *, progress: Progress | None = None
    ) -> np.ndarray:
        folder = self._folder(embedder.model_id)
        keys: list[str] = []
        matrix = np.zeros((0, embedder.dim), dtype=np.float32)
        if (folder / "keys.json").exists():
            meta = json.loads((folder / "keys.json").read_text(encoding="utf-8"))
            if meta.get("model_id") == embedder.model_id:
                keys = meta["keys"]
                matrix = np.load(folder / "vectors.npy")
        index = {k: i for i, k in enumerate(keys)}
        wanted = [hashlib.sha256(t.encode("utf-8")).hexdigest()[:32] for t in texts]
        missing = sorted({(w, t) for w, t in zip(wanted, texts, strict=True) if w not in index})
        new = []
        for start in range(0, len(missing), _EMBED_BATCH):
            batch = missing[start : start + _EMBED_BATCH]
            new.append(embedder.embed([t for _, t in batch]))
            if progress:
                progress(
                    f"embed windows ({embedder.model_id[:24]})", start + len(batch), len(missing)
                )
        if missing:
            for w, _ in missing:
                index[w] = len(keys)
                keys.append(w)
            matrix = np.vstack([matrix, *new]).astype(np.float32)
            self._save(folder, embedder.model_id, keys, matrix)
        return matrix[[index[w] for w in wanted]] if wanted else matrix[:0]

    @staticmethod
    def _save(folder: Path, model_id: str, keys: list[str], matrix: np.ndarray) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, suffix=".npy", delete=False) as f:
            np.save(f, matrix)
        os.replace(f.name, folder / "vectors.npy")
        meta = json.dumps({"model_id": model_id, "keys": keys})
        tmp = folder / "keys.json.tmp"
        tmp.write_text(meta, encoding="utf-8")
        os.replace(tmp, folder / "keys.json")


def open_retriever(
    name: str,
    *,
    embedder: Embedder | None = None,
    finseer: Embedder | None = None,
    cache: EmbeddingCache | None = None,
    progress: Progress | None = None,
) -> SequenceRetriever:
    """The retriever `name` (one of RETRIEVERS); dense ones need their embedder."""
    plain = {"none": NoRetrieval, "random": RandomRetrieval, "dtw": DTWRetrieval}
    if check_retriever(name) in plain:
        return plain[name]()
    if name == "bm25":
        return BM25Retrieval()
    model = embedder if name == "minilm" else finseer  # the dense ones
    if model is None:
        raise InputError(
            f"the {name} retriever needs its model",
            field="--retriever",
            value=name,
            hint="train one with finkg train-retriever" if name == "finseer" else None,
        )
    return DenseRetrieval(model, name=name, cache=cache, progress=progress)


def check_retriever(name: str) -> str:
    """`name` if it is one of RETRIEVERS, else an InputError naming them."""
    if name not in RETRIEVERS:
        raise InputError(
            "unknown retriever",
            field="--retriever",
            value=name,
            hint="one of " + ", ".join(RETRIEVERS),
        )
    return name
