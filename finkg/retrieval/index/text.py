"""A BM25 index over the `fkg:text` of evidence nodes, persisted beside the store.

Global search ranks every indexed node with bm25s (Lucene's BM25, k1 1.5, b 0.75) and the
statistics of the whole index: right for exploring a store, wrong for a decision at an
instant, since later documents move the idf and the average length. Point-in-time pools
therefore take their candidates' token lists from `tokens()` and score them with
`bm25.bm25_scores`, from the pool's own statistics (DESIGN §3). Both sides use
`bm25.tokenize`, so a token means the same thing everywhere.

The directory holds a manifest (format, k1, b, method, tokenizer id, classes, the store
generation and commit it reflects, node count) and a data folder: node IRIs and text
hashes (`nodes.json`), every node's tokens as ids into a sorted vocabulary (`vocab.json`,
`tokens.npy`, `offsets.npy`), and the bm25s matrix (`bm25/`, bm25s's own save). A refresh
tokenizes only new and changed nodes, reuses the stored tokens of the others, rebuilds the
matrix from them and saves atomically (see `persist`). With a sorted vocabulary, an index
refreshed step by step holds exactly what one built in one go would.

>>> import tempfile
>>> from pyoxigraph import Literal, NamedNode, Quad
>>> from finkg.kg.store import open_store
>>> from finkg.ontology.terms import FKG, RDF
>>> store, a = open_store(None), NamedNode("https://e.org/news/a")
>>> _ = store.write(add=[Quad(a, RDF.type, FKG.NewsArticle, store.graphs.news),
...                      Quad(a, FKG.text, Literal("Acme raises guidance"), store.graphs.news)],
...                 note="example")
>>> with tempfile.TemporaryDirectory() as folder:
...     index = TextIndex.open(folder)
...     report = index.refresh(store)
...     [(node.value, round(score, 3)) for node, score in index.search("guidance raised", 5)]
[('https://e.org/news/a', 0.23)]
>>> report.added, index.tokens([a])
(1, [['acm', 'rais', 'guidanc']])
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pyoxigraph import NamedNode

from finkg.errors import InputError
from finkg.kg.store import BaseStore
from finkg.retrieval.index import persist
from finkg.retrieval.index.bm25 import K1, TOKENIZER_ID, B, tokenize
from finkg.retrieval.index.persist import DEFAULT_CLASSES, Progress, RefreshReport

KIND = "finkg-text-index"
FORMAT = 1
METHOD = "lucene"
BATCH = 2_000  # texts tokenized between progress reports

__all__ = ["DEFAULT_CLASSES", "RefreshReport", "TextIndex"]


@dataclass
class _Data:
    """One version of the index's contents (immutable once built)."""

    iris: list[str] = field(default_factory=list)
    hashes: list[str] = field(default_factory=list)
    vocab: np.ndarray = field(default_factory=lambda: np.array([], dtype=object))
    ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    offsets: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    bm25: Any = None  # bm25s.BM25, None when empty

    def __post_init__(self) -> None:
        self.row = {iri: i for i, iri in enumerate(self.iris)}

    def doc(self, row: int) -> np.ndarray:
        return self.ids[self.offsets[row] : self.offsets[row + 1]]

    def write(self, folder: Path) -> None:
        nodes = {"iris": self.iris, "hashes": self.hashes}
        (folder / "nodes.json").write_text(json.dumps(nodes), encoding="utf-8")
        (folder / "vocab.json").write_text(json.dumps(self.vocab.tolist()), encoding="utf-8")
        np.save(folder / "tokens.npy", self.ids)
        np.save(folder / "offsets.npy", self.offsets)
        if self.bm25 is not None:
            self.bm25.save(str(folder / "bm25"), show_progress=False)

    @classmethod
    def read(cls, folder: Path) -> _Data:
        import bm25s

        try:
            nodes = json.loads((folder / "nodes.json").read_text(encoding="utf-8"))
            vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
            ids, offsets = np.load(folder / "tokens.npy"), np.load(folder / "offsets.npy")
            bm25 = None
            if nodes["iris"]:
                bm25 = bm25s.BM25.load(str(folder / "bm25"), show_progress=False, verbosity=0)
            vocab_array = np.array(vocab, dtype=object)
            return cls(nodes["iris"], nodes["hashes"], vocab_array, ids, offsets, bm25)
        except (OSError, ValueError, KeyError) as e:
            raise persist.unreadable(folder, e) from None


class TextIndex(persist.PersistedIndex):
    """BM25 over the text of chosen evidence classes; build it with `TextIndex.open`."""

    def __init__(self, directory: Path, manifest: dict[str, Any], data: _Data) -> None:
        self.directory = directory
        self._manifest = manifest
        self._data = data

    @classmethod
    def open(
        cls,
        directory: str | Path,
        *,
        classes: Iterable[NamedNode | str] = DEFAULT_CLASSES,
        k1: float = K1,
        b: float = B,
    ) -> TextIndex:
        """Load the index in `directory`, or create an empty one there.

        An index built with other parameters (k1, b, classes, tokenizer, format) is refused
        with an InputError naming the field, both values and the fix."""
        if isinstance(k1, bool) or not isinstance(k1, int | float) or not k1 > 0:
            raise InputError("k1 must be a number greater than 0", field="k1", value=k1)
        if isinstance(b, bool) or not isinstance(b, int | float) or not 0 <= b <= 1:
            raise InputError("b must be a number from 0 to 1", field="b", value=b)
        directory = Path(directory)
        asked = {
            "format": FORMAT,
            "k1": float(k1),
            "b": float(b),
            "method": METHOD,
            "tokenizer": TOKENIZER_ID,
            "classes": list(persist.class_iris(classes)),
        }
        manifest = persist.open_manifest(directory, KIND, asked)
        data = _Data.read(directory / manifest["data"]) if manifest.get("data") else _Data()
        return cls(directory, manifest, data)

    @property
    def k1(self) -> float:
        return float(self._manifest["k1"])

    @property
    def b(self) -> float:
        return float(self._manifest["b"])

    def __repr__(self) -> str:
        return f"<TextIndex {self.directory}: {len(self)} nodes, generation {self.generation}>"

    def refresh(
        self,
        store: BaseStore,
        *,
        progress: Progress | None = None,
        read: persist.StoreTexts | None = None,
    ) -> RefreshReport:
        """Bring the index up to date with the store (its texts `read` already, or read
        now): tokenize new and changed nodes, drop removed ones, rebuild the matrix, save
        atomically."""
        started = time.perf_counter()
        generation, commit, texts, hashes, d = persist.changes(
            store, self._manifest["classes"], self._data.iris, self._data.hashes, read=read
        )
        data, write = self._data, None
        if d.added or d.changed or d.removed or self._manifest["data"] is None:
            data = self._rebuild(texts, hashes, d.added + d.changed, progress)
            write = data.write
        manifest = {**self._manifest, "generation": generation, "commit": commit}
        manifest["count"] = len(data.iris)
        manifest["data"] = persist.save(self.directory, manifest, write)
        self._manifest, self._data = manifest, data
        seconds = time.perf_counter() - started
        counts = len(d.added), len(d.changed), len(d.removed), len(d.unchanged)
        return RefreshReport(*counts, seconds)

    def _rebuild(
        self,
        texts: dict[str, str],
        hashes: dict[str, str],
        todo: list[str],
        progress: Progress | None,
    ) -> _Data:
        old = self._data
        fresh: dict[str, list[str]] = {}
        for start in range(0, len(todo), BATCH):
            batch = todo[start : start + BATCH]
            fresh.update(zip(batch, tokenize([texts[iri] for iri in batch]), strict=True))
            if progress:
                progress("tokenize", start + len(batch), len(todo))
        lookup = {w: i for i, w in enumerate(old.vocab.tolist())}
        parts = []
        for iri in texts:  # sorted by IRI
            if iri in fresh:
                ids = [lookup.setdefault(w, len(lookup)) for w in fresh[iri]]
                parts.append(np.array(ids, dtype=np.int32))
            else:
                parts.append(old.doc(old.row[iri]))
        offsets = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum([len(p) for p in parts], out=offsets[1:])
        flat = np.concatenate(parts).astype(np.int32) if parts else np.zeros(0, dtype=np.int32)
        # Keep only the words still used, in sorted order, and renumber the tokens.
        words, used = np.array(list(lookup), dtype=object), np.unique(flat)
        order = np.argsort(words[used], kind="stable")
        renumber = np.zeros(len(words), dtype=np.int32)
        renumber[used[order]] = np.arange(len(used), dtype=np.int32)
        vocab, flat = words[used[order]], renumber[flat]
        if progress:
            progress("bm25", 0, 1)
        data = _Data(list(texts), [hashes[iri] for iri in texts], vocab, flat, offsets)
        data.bm25 = self._bm25(data) if data.iris else None
        if progress:
            progress("bm25", 1, 1)
        return data

    def _bm25(self, data: _Data) -> Any:
        import bm25s

        model = bm25s.BM25(k1=self.k1, b=self.b, method=METHOD)
        corpus = [data.doc(i).tolist() for i in range(len(data.iris))]
        model.index((corpus, {w: i for i, w in enumerate(data.vocab)}), show_progress=False)
        return model

    def search(
        self, query: str, k: int = 10, *, among: Iterable[NamedNode | str] | None = None
    ) -> list[tuple[NamedNode, float]]:
        """The `k` best nodes for `query` by BM25 over the whole index, best first (ties by
        IRI); `among` restricts the ranking to those nodes (ones not indexed are ignored).
        Nodes sharing no word with the query are not returned."""
        persist.check_count("k", k)
        data = self._data
        words = tokenize([query])[0]
        if data.bm25 is None or not words:
            return []
        scores = np.asarray(data.bm25.get_scores(words), dtype=np.float64)
        if among is None:
            rows = np.arange(len(scores))
        else:
            chosen = {data.row.get(persist.as_iri(n)) for n in among} - {None}
            rows = np.array(sorted(chosen), dtype=np.int64)
        best = rows[persist.top_k(scores[rows], k)]
        return [(NamedNode(data.iris[r]), float(scores[r])) for r in best if scores[r] > 0]

    def tokens(self, iris: Sequence[NamedNode | str]) -> list[list[str]]:
        """The stored token list of each node (in order), for scoring a pool with
        `bm25_scores`; a node the index lacks raises NotIndexedError (refresh it)."""
        data = self._data
        rows = persist.positions(data.row, iris, what=f"text index {self.directory}")
        return [data.vocab[data.doc(r)].tolist() for r in rows]
