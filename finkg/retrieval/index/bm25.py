"""BM25 as two pure functions: finkg's tokenizer, and scores over a given set of documents.

`bm25_scores(query, docs)` takes its statistics (document frequencies, average length)
from `docs` alone. Scoring a point-in-time pool therefore uses nothing from documents
outside it, later ones included (DESIGN §3: BM25 statistics are part of the time rule).
The formula is Lucene's, as in bm25s: idf = ln(1 + (N - df + 0.5) / (df + 0.5)) and
tf / (tf + k1·(1 - b + b·|d| / avgdl)).

>>> docs = tokenize(["Apple raises guidance", "Apple cuts jobs", "Oil prices fall"])
>>> docs[0]
['appl', 'rais', 'guidanc']
>>> [round(float(s), 3) for s in bm25_scores(tokenize(["raised guidance"])[0], docs)]
[0.785, 0.0, 0.0]
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import cache
from typing import Protocol

import numpy as np

K1 = 1.5
B = 0.75
# Names `tokenize` as it is now; persisted indexes record it and refuse another. Bump it on
# any change to the pattern, the stop words or the stemmer.
TOKENIZER_ID = "finkg-words-en-snowball/1"
_WORD = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*%?")


class _Stemmer(Protocol):
    """PyStemmer's `Stemmer.Stemmer` (a C extension without stubs)."""

    def stemWords(self, words: Sequence[str]) -> list[str]: ...


@cache
def _stemmer() -> _Stemmer:
    import Stemmer

    return Stemmer.Stemmer("english")


@cache
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """Lower-cased words and numbers (`4.5%`, `1,200` kept whole), English stop words
    dropped, Snowball-stemmed."""
    stop, stem = _stopwords(), _stemmer().stemWords
    return [stem([w for w in _WORD.findall(t.lower()) if w not in stop]) for t in texts]


def bm25_scores(
    query: Sequence[str], docs: Sequence[Sequence[str]], *, k1: float = K1, b: float = B
) -> np.ndarray:
    """The BM25 score of each of `docs` for `query` (token lists), from `docs`' own statistics."""
    n = len(docs)
    scores = np.zeros(n, dtype=np.float64)
    if n == 0 or not query:
        return scores
    lengths = np.array([len(d) for d in docs], dtype=np.float64)
    avgdl = lengths.mean() or 1.0
    norm = k1 * (1 - b + b * lengths / avgdl)
    terms = set(query)
    counts = [Counter(t for t in d if t in terms) for d in docs]
    for term, weight in Counter(query).items():
        tf = np.array([c[term] for c in counts], dtype=np.float64)
        df = int((tf > 0).sum())
        if df == 0:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        scores += weight * idf * tf / (tf + norm)
    return scores


class PoolBM25:
    """`bm25_scores` for many queries over one pool: the pool's term counts are built once
    as a sparse matrix, each query then costs one column read per query term. Scores are
    exactly `bm25_scores(query, docs)`.

    >>> pool = PoolBM25(tokenize(["Apple raises guidance", "Apple cuts jobs", "Oil prices fall"]))
    >>> [round(float(s), 3) for s in pool.scores(tokenize(["raised guidance"])[0])]
    [0.785, 0.0, 0.0]
    """

    def __init__(self, docs: Sequence[Sequence[str]], *, k1: float = K1, b: float = B) -> None:
        from scipy.sparse import csc_matrix

        self.n = len(docs)
        self.vocab: dict[str, int] = {}
        rows, cols = [], []
        for i, doc in enumerate(docs):
            for token in doc:
                rows.append(i)
                cols.append(self.vocab.setdefault(token, len(self.vocab)))
        data = np.ones(len(rows), dtype=np.float64)
        self.tf = csc_matrix((data, (rows, cols)), shape=(self.n, len(self.vocab)))
        self.tf.sum_duplicates()
        lengths = np.array([len(d) for d in docs], dtype=np.float64)
        avgdl = (lengths.mean() if self.n else 0.0) or 1.0
        self.norm = k1 * (1 - b + b * lengths / avgdl)

    def scores(self, query: Sequence[str]) -> np.ndarray:
        scores = np.zeros(self.n, dtype=np.float64)
        for term, weight in Counter(query).items():
            j = self.vocab.get(term)
            if j is None:
                continue
            start, end = self.tf.indptr[j], self.tf.indptr[j + 1]
            rows, tf = self.tf.indices[start:end], self.tf.data[start:end]
            idf = math.log(1 + (self.n - len(rows) + 0.5) / (len(rows) + 0.5))
            scores[rows] += weight * idf * tf / (tf + self.norm[rows])
        return scores
