"""BM25 scores over a given document set, and the embedders."""

from __future__ import annotations

import bm25s
import numpy as np
import pytest

from finkg.retrieval.index.bm25 import bm25_scores, tokenize
from finkg.retrieval.index.embed import HashEmbedder
from tests.readers import THREADS

DOCS = [
    "Apple raises full-year guidance after record services revenue",
    "Apple cuts jobs in Europe",
    "Oil prices fall as OPEC guidance weakens",
    "Apple Apple Apple guidance guidance",
    "Revenue of $58.3 billion, up 4.5% from a year earlier",
]


def test_scores_equal_bm25s_lucene_on_the_same_tokens() -> None:
    corpus = tokenize(DOCS)
    retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    retriever.index(corpus, show_progress=False)
    for query in ("apple guidance", "revenue growth 4.5%", "oil"):
        tokens = tokenize([query])
        ids, theirs = retriever.retrieve(tokens, k=len(DOCS), show_progress=False)
        ours = bm25_scores(tokens[0], corpus)
        assert ours[ids[0]] == pytest.approx(theirs[0], abs=1e-5), query
        assert ours.max() > 0


def test_statistics_come_from_the_given_documents_only() -> None:
    pool = tokenize(DOCS[:3])
    before = bm25_scores(tokenize(["apple guidance"])[0], pool)
    # a later document, outside the pool, changes nothing about the pool's scores
    assert (bm25_scores(tokenize(["apple guidance"])[0], pool) == before).all()
    # and inside the pool it changes the idf of "apple", as it should
    grown = bm25_scores(tokenize(["apple guidance"])[0], [*pool, *tokenize(DOCS[3:4])])
    assert grown[0] != before[0]


def test_numbers_and_percentages_stay_whole_tokens() -> None:
    assert tokenize(["Revenue of $58.3 billion, up 4.5% on 1,200 stores"])[0] == [
        "revenu",
        "58.3",
        "billion",
        "up",
        "4.5%",
        "1,200",
        "store",
    ]


def test_empty_query_or_pool_scores_zero() -> None:
    assert bm25_scores([], tokenize(DOCS)).tolist() == [0.0] * len(DOCS)
    assert bm25_scores(["appl"], []).shape == (0,)


def test_hash_embedder_is_deterministic_normalised_and_word_aware() -> None:
    e = HashEmbedder(dim=64)
    a, b, c = e.embed(["rates rise again", "rates rise sharply", "the cat sat"])
    assert np.allclose(e.embed(["rates rise again"])[0], a)
    assert np.linalg.norm(a) == pytest.approx(1.0)
    assert a @ b > a @ c


@pytest.mark.model
def test_packaged_minilm_loads_offline_and_ranks_paraphrases_first() -> None:
    from finkg.retrieval.index.embed import MiniLM, packaged_model_dir

    assert (packaged_model_dir() / "model.safetensors").is_file()
    e = MiniLM(threads=THREADS)
    q, para, other = e.embed(
        ["Apple raises its outlook", "Apple lifts full-year guidance", "Oil prices fall"]
    )
    assert q.shape == (384,) and q @ para > q @ other + 0.2
    assert e.model_id.startswith("all-MiniLM-L6-v2@sha256:53aa51172d14")


def test_pool_bm25_scores_exactly_as_bm25_scores() -> None:
    import random

    from finkg.retrieval.index.bm25 import PoolBM25

    rng = random.Random(1)
    words = [f"w{i}" for i in range(40)]
    docs = [[rng.choice(words) for _ in range(rng.randint(0, 30))] for _ in range(150)]
    pool = PoolBM25(docs)
    for _ in range(25):
        query = [rng.choice([*words, "absent"]) for _ in range(rng.randint(1, 6))]
        assert np.allclose(pool.scores(query), bm25_scores(query, docs))
