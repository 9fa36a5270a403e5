"""Token lists and embeddings computed on demand from the store, each node once per process.

The persisted indexes (`text.TextIndex`, `vectors.VectorIndex`) are the way to serve a
large store; these do the same job without a build step, for tests, the demo and small
stores. Both key everything by node IRI and never recompute a node they have seen.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pyoxigraph import NamedNode

from finkg import queries
from finkg.errors import InputError
from finkg.kg.store import BaseStore
from finkg.retrieval.index.bm25 import tokenize
from finkg.retrieval.index.embed import Embedder


def node_texts(store: BaseStore, iris: Sequence[NamedNode]) -> dict[NamedNode, str]:
    rows = queries.select(store, "texts_of", {"node": list(iris)})
    return {r.iri("node"): r.string("text") for r in rows}


class _Live:
    def __init__(self, store: BaseStore) -> None:
        self.store = store

    def _texts(self, missing: list[NamedNode]) -> list[str]:
        found = node_texts(self.store, missing)
        absent = [n.value for n in missing if n not in found]
        if absent:
            raise InputError(
                "no fkg:text for these nodes", field="node", value=absent[:3], hint="ingest them"
            )
        return [found[n] for n in missing]


class LiveTexts(_Live):
    """`tokens(iris)`: finkg's BM25 tokens of each node's fkg:text."""

    def __init__(self, store: BaseStore) -> None:
        super().__init__(store)
        self._tokens: dict[NamedNode, list[str]] = {}

    def tokens(self, iris: Sequence[NamedNode]) -> list[list[str]]:
        missing = list(dict.fromkeys(n for n in iris if n not in self._tokens))
        if missing:
            self._tokens.update(zip(missing, tokenize(self._texts(missing)), strict=True))
        return [self._tokens[n] for n in iris]


class LiveVectors(_Live):
    """`vectors(iris)`: the embedder's vector of each node's fkg:text."""

    def __init__(self, store: BaseStore, embedder: Embedder) -> None:
        super().__init__(store)
        self.embedder = embedder
        self._vectors: dict[NamedNode, np.ndarray] = {}
        self.embedded = 0  # how many texts were sent to the embedder

    def vectors(self, iris: Sequence[NamedNode]) -> np.ndarray:
        missing = list(dict.fromkeys(n for n in iris if n not in self._vectors))
        if missing:
            rows = self.embedder.embed(self._texts(missing))
            self.embedded += len(missing)
            self._vectors.update(zip(missing, rows, strict=True))
        if not iris:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.stack([self._vectors[n] for n in iris])
