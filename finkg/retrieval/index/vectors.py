"""Embeddings of evidence text keyed by node IRI, persisted beside the store.

Embedding is the slow step (the packaged MiniLM does 50-60 passages/s on 2 cores), and an
embedder is frozen: the same text always gets the same vector. So each node is embedded
once, at indexing, and never again unless its text changes; a refresh embeds only new and
changed nodes (by content hash), drops removed ones, and saves atomically (see `persist`).
A long first build saves a checkpoint every `checkpoint` texts, so an interrupted refresh
resumes where it stopped; a checkpoint keeps the old store generation in the manifest, so
the index reads as stale until a refresh completes.

The directory holds a manifest (format, embedder model id, dimension, classes, store
generation and commit, count) and a data folder: `vectors.npy` (float32, one L2-normalised
row per node, sorted by IRI), `nodes.json` (IRIs, text hashes) and, from
`faiss_threshold` nodes on, `hnsw.faiss`, a FAISS HNSW inner-product index over the same
rows (or an IVF index where HNSW cannot reach the recall target), and `hnsw.json`, the
search breadth its build chose for that target on queries made of the first line of
held-out passages (`lead`: a headline, a heading), shaped like the headlines and questions
the jobs search with (see `hnsw`); a refresh that only adds nodes adds them to that index
and measures its recall again (`grow`). Search is an exact numpy inner product below the
threshold (6.7 ms at 100k) and approximate above it, unless neither structure reached the
target there (then exact too); restricted to `among`, it is always exact over those rows.
Scores are cosines.

>>> import tempfile
>>> from pyoxigraph import Literal, NamedNode, Quad
>>> from finkg.kg.store import open_store
>>> from finkg.ontology.terms import FKG, RDF
>>> from finkg.retrieval.index.embed import HashEmbedder
>>> store, a = open_store(None), NamedNode("https://e.org/news/a")
>>> _ = store.write(add=[Quad(a, RDF.type, FKG.NewsArticle, store.graphs.news),
...                      Quad(a, FKG.text, Literal("Acme raises guidance"), store.graphs.news)],
...                 note="example")
>>> embedder = HashEmbedder(dim=16)
>>> with tempfile.TemporaryDirectory() as folder:
...     index = VectorIndex.open(folder, model_id=embedder.model_id, dim=16)
...     report = index.refresh(store, embedder)
...     hits = index.search(embedder.embed(["Acme raises guidance"])[0], 1)
>>> report.added, [(node.value, round(score, 3)) for node, score in hits]
(1, [('https://e.org/news/a', 1.0)])
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pyoxigraph import NamedNode

from finkg.errors import InputError
from finkg.kg.store import BaseStore
from finkg.retrieval.index import persist
from finkg.retrieval.index.embed import Embedder
from finkg.retrieval.index.grow import grow
from finkg.retrieval.index.hnsw import Calibration, Hnsw, build_hnsw
from finkg.retrieval.index.persist import DEFAULT_CLASSES, Progress, RefreshReport

KIND = "finkg-vector-index"
FORMAT = 1
FAISS_THRESHOLD = 100_000
PROBE_WORDS = 12  # an HNSW calibration query: a held-out passage's first line, this long at most
PROBE = f"first lines of held-out passages (at most {PROBE_WORDS} words)"

__all__ = ["DEFAULT_CLASSES", "RefreshReport", "VectorIndex"]


@dataclass
class _Data:
    """One version of the index's contents."""

    dim: int
    iris: list[str]
    hashes: list[str]
    matrix: np.ndarray  # one row per IRI, `dim` columns
    hnsw: Hnsw | None = None  # over `matrix`; None below the threshold

    def __post_init__(self) -> None:
        self.row = {iri: i for i, iri in enumerate(self.iris)}

    @classmethod
    def empty(cls, dim: int) -> _Data:
        return cls(dim, [], [], np.zeros((0, dim), dtype=np.float32))

    def write(self, folder: Path) -> None:
        nodes = {"iris": self.iris, "hashes": self.hashes}
        (folder / "nodes.json").write_text(json.dumps(nodes), encoding="utf-8")
        np.save(folder / "vectors.npy", self.matrix)
        if self.hnsw is not None:
            self.hnsw.write(folder)

    @classmethod
    def read(cls, folder: Path, dim: int, *, hnsw_from: int) -> _Data:
        """Read a data folder; its HNSW index only when it has `hnsw_from` rows or more."""
        try:
            nodes = json.loads((folder / "nodes.json").read_text(encoding="utf-8"))
            matrix = np.load(folder / "vectors.npy")
            graph = Hnsw.read(folder) if len(nodes["iris"]) >= hnsw_from else None
        except (OSError, ValueError, KeyError, TypeError, RuntimeError) as e:
            raise persist.unreadable(folder, e) from None
        if matrix.shape != (len(nodes["iris"]), dim):
            shape = f"vectors.npy has shape {matrix.shape}, not ({len(nodes['iris'])}, {dim})"
            raise persist.unreadable(folder, shape)
        return cls(dim, nodes["iris"], nodes["hashes"], matrix, graph)


class VectorIndex(persist.PersistedIndex):
    """Node embeddings with exact or HNSW search; build it with `VectorIndex.open`."""

    def __init__(
        self,
        directory: Path,
        manifest: dict[str, Any],
        data: _Data,
        threshold: int,
        ef: int | None,
    ) -> None:
        self.directory = directory
        self.faiss_threshold = threshold
        self.ef_search = ef
        self._manifest = manifest
        self._data = data

    @classmethod
    def open(
        cls,
        directory: str | Path,
        *,
        model_id: str,
        dim: int,
        classes: Iterable[NamedNode | str] = DEFAULT_CLASSES,
        faiss_threshold: int = FAISS_THRESHOLD,
        ef_search: int | None = None,
    ) -> VectorIndex:
        """Load the index in `directory`, or create an empty one there.

        HNSW searches with the efSearch its build chose for `hnsw.TARGET` recall (see
        `hnsw`), or with `ef_search` when it is given; an IVF index (where HNSW fell short)
        always with the nprobe its build chose.

        An index built with another embedder (model id, dimension), other classes or an
        older format is refused with an InputError naming the field, both values and the fix.
        """
        if not isinstance(model_id, str) or not model_id:
            message = "model_id must be a non-empty string"
            raise InputError(message, field="model_id", value=model_id)
        counts = {"dim": dim, "faiss_threshold": faiss_threshold}
        if ef_search is not None:
            counts["ef_search"] = ef_search
        for name, value in counts.items():
            persist.check_count(name, value)
        directory = Path(directory)
        asked = {
            "format": FORMAT,
            "model_id": model_id,
            "dim": dim,
            "classes": list(persist.class_iris(classes)),
        }
        manifest = persist.open_manifest(directory, KIND, asked)
        folder = manifest.get("data")
        data = _Data.empty(dim)
        if folder:
            data = _Data.read(directory / folder, dim, hnsw_from=faiss_threshold)
        return cls(directory, manifest, data, faiss_threshold, ef_search)

    @property
    def model_id(self) -> str:
        return str(self._manifest["model_id"])

    @property
    def dim(self) -> int:
        return int(self._manifest["dim"])

    def __repr__(self) -> str:
        return (
            f"<VectorIndex {self.directory}: {len(self)} x {self.dim} ({self.model_id}), "
            f"generation {self.generation}>"
        )

    def refresh(
        self,
        store: BaseStore,
        embedder: Embedder,
        *,
        progress: Progress | None = None,
        batch_size: int = 256,
        checkpoint: int = 20_000,
        read: persist.StoreTexts | None = None,
    ) -> RefreshReport:
        """Embed new and changed nodes (each text once), drop removed ones, save; the
        store's texts `read` already, or read now."""
        if embedder.model_id != self.model_id or embedder.dim != self.dim:
            raise InputError(
                f"this index holds {self.model_id} vectors ({self.dim} dimensions); "
                f"the embedder is {embedder.model_id} ({embedder.dim})",
                field="embedder",
                value=embedder.model_id,
                hint="refresh it with the same embedder, or use another index directory",
            )
        persist.check_count("batch_size", batch_size)
        persist.check_count("checkpoint", checkpoint, least=0)
        started = time.perf_counter()
        before = self._data  # its graph, which a checkpoint below leaves out
        generation, commit, texts, hashes, d = persist.changes(
            store, self._manifest["classes"], self._data.iris, self._data.hashes, read=read
        )
        todo, since = d.added + d.changed, 0
        done: dict[str, np.ndarray] = {}
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            done.update(zip(batch, self._embed(embedder, [texts[i] for i in batch]), strict=True))
            since += len(batch)
            if progress:
                progress("embed", len(done), len(todo))
            if checkpoint and since >= checkpoint and len(done) < len(todo):
                old = (self._manifest["generation"], self._manifest["commit"])
                self._commit(self._assemble(d.unchanged, done, hashes), *old)
                since = 0
        graph = before.hnsw
        unindexed = len(hashes) >= self.faiss_threshold and (
            graph is None  # or calibrated otherwise: on whole rows, or to the mean recall
            or graph.calibration.probe != PROBE
            or graph.calibration.lower is None
        )
        if done or d.removed or unindexed or self._manifest["data"] is None:
            data = self._assemble(d.unchanged, done, hashes)
            if len(data.iris) >= self.faiss_threshold:
                only_added = not (unindexed or d.removed or d.changed)
                grown = _grown(before, data, d.added) if only_added else None
                data.hnsw = grown or self._graph(data, embedder, texts)
            self._commit(data, generation, commit)
        else:
            self._commit(None, generation, commit)
        seconds = time.perf_counter() - started
        counts = len(d.added), len(d.changed), len(d.removed), len(d.unchanged)
        return RefreshReport(*counts, seconds)

    def _embed(self, embedder: Embedder, texts: list[str]) -> np.ndarray:
        vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
        if vectors.shape != (len(texts), self.dim):
            raise InputError(
                f"the embedder returned shape {vectors.shape} for {len(texts)} texts",
                field="embedder",
                value=embedder.model_id,
                hint=f"it must return one {self.dim}-dimensional row per text",
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)

    def _assemble(
        self, keep: list[str], done: dict[str, np.ndarray], hashes: dict[str, str]
    ) -> _Data:
        """The matrix of `keep`'s old rows and `done`'s new ones, sorted by IRI (no graph)."""
        old = self._data
        iris = sorted([*keep, *done])
        matrix = np.empty((len(iris), self.dim), dtype=np.float32)
        kept = [(i, old.row[iri]) for i, iri in enumerate(iris) if iri not in done]
        if kept:
            new_rows, old_rows = (np.array(x) for x in zip(*kept, strict=True))
            matrix[new_rows] = old.matrix[old_rows]
        for i, iri in enumerate(iris):
            if iri in done:
                matrix[i] = done[iri]
        return _Data(self.dim, iris, [hashes[iri] for iri in iris], matrix)

    def _graph(self, data: _Data, embedder: Embedder, texts: Mapping[str, str]) -> Hnsw:
        """`data`'s HNSW graph, calibrated on the first lines of its held-out passages."""

        def probe(rows: np.ndarray) -> np.ndarray:
            return self._embed(embedder, [lead(texts[data.iris[r]]) for r in rows])

        return build_hnsw(data.matrix, probe=probe, probe_name=PROBE)

    def _commit(self, data: _Data | None, generation: int | None, commit: str | None) -> None:
        data = data or self._data
        manifest = {**self._manifest, "generation": generation, "commit": commit}
        manifest["count"] = len(data.iris)
        write = data.write if data is not self._data else None
        manifest["data"] = persist.save(self.directory, manifest, write)
        self._manifest, self._data = manifest, data

    def vectors(self, iris: Sequence[NamedNode | str]) -> np.ndarray:
        """The stored vector of each node, in order (a float32 array, one row per node);
        a node the index lacks raises NotIndexedError (refresh it)."""
        rows = persist.positions(self._data.row, iris, what=f"vector index {self.directory}")
        return self._data.matrix[rows]

    def search(
        self, vector: np.ndarray, k: int = 10, *, among: Iterable[NamedNode | str] | None = None
    ) -> list[tuple[NamedNode, float]]:
        """The `k` nodes most similar to `vector` as (node, cosine), best first; `among`
        restricts the search to those nodes (ones not indexed are ignored)."""
        persist.check_count("k", k)
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != self.dim:
            message = f"the query vector must have {self.dim} dimensions"
            raise InputError(message, field="vector", value=query.shape[0])
        norm = float(np.linalg.norm(query))
        data = self._data
        if norm == 0 or not data.iris:
            return []
        query = query / norm
        if among is None and len(data.iris) >= self.faiss_threshold:
            if data.hnsw is None:  # the threshold was lowered since the last refresh
                data.hnsw = build_hnsw(data.matrix)
            if not data.hnsw.exact:  # else no efSearch reached the target: search exactly
                found, rows = data.hnsw.search(query, k, ef=self.ef_search)
                return [
                    (NamedNode(data.iris[r]), float(s))
                    for s, r in zip(found, rows, strict=True)
                    if r >= 0
                ]
        if among is None:  # the whole matrix: no copy of it per query
            scores = data.matrix @ query
            return [(NamedNode(data.iris[i]), float(scores[i])) for i in persist.top_k(scores, k)]
        chosen = {data.row.get(persist.as_iri(n)) for n in among} - {None}
        rows = np.array(sorted(chosen), dtype=np.int64)
        scores = data.matrix[rows] @ query
        best = persist.top_k(scores, k)
        return [(NamedNode(data.iris[rows[i]]), float(scores[i])) for i in best]

    @property
    def calibration(self) -> Calibration | None:
        """What the HNSW build measured and chose; None below the threshold."""
        return self._data.hnsw.calibration if self._data.hnsw else None


def _grown(old: _Data, data: _Data, added: list[str]) -> Hnsw | None:
    """`old`'s index with the rows of `data` for the `added` IRIs (`grow`), or None: build
    one anew."""
    if old.hnsw is None or old.hnsw.order is None:
        return None
    order = np.array([data.row[old.iris[r]] for r in old.hnsw.order], dtype=np.int64)
    rows = np.array(sorted(data.row[iri] for iri in added), dtype=np.int64)
    return grow(old.hnsw, data.matrix, order, rows)


def lead(text: str) -> str:
    r"""A passage's first non-empty line, cut at `PROBE_WORDS` words: a news item's
    headline, a filing section's heading; a query shaped like those the jobs send.

    >>> lead("Acme raises guidance\n\nAcme Corp said on Monday that ...")
    'Acme raises guidance'
    >>> lead("  \nItem 7. Management's Discussion and Analysis")
    "Item 7. Management's Discussion and Analysis"
    >>> lead("one two three four five six seven eight nine ten eleven twelve thirteen\nmore")
    'one two three four five six seven eight nine ten eleven twelve'
    """
    first = next((line for line in text.splitlines() if line.strip()), "")
    return " ".join(first.split()[:PROBE_WORDS])
