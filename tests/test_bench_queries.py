"""The QA benchmarks' own SPARQL (`benchmarks/queries/*.rq`, run by
`benchmarks/bench_queries.py`) over a store that holds one document taken to Ready: each
query parses with finkg's header rules and answers what its header says."""

from __future__ import annotations

import json

import pytest
from pyoxigraph import NamedNode

from benchmarks import bench_queries
from finkg import queries
from finkg.kg import lifecycle
from finkg.kg.ingest.documents import ingest_documents
from finkg.kg.setup import init_store
from finkg.kg.store import open_store

TEXT = "\n\n".join(
    f"Note {i}. Revenue grew in fiscal {2010 + i} as the company sold more widgets "
    "in every region it serves, and costs rose less than sales." * 3
    for i in range(12)
)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("doc")
    path = folder / "widgets-10k.txt"
    path.write_text(TEXT)
    (folder / "widgets-10k.txt.meta.json").write_text(json.dumps({"title": "WIDGETS_2020_10K"}))
    s = open_store(None)
    init_store(s)
    report = ingest_documents(
        s, [path], settings=lifecycle.Settings(chunk_size=64, chunk_overlap=8)
    )
    assert not report.rejects
    return s


def test_every_benchmark_query_parses():
    files = sorted(bench_queries.FOLDER.glob("*.rq"))
    assert len(files) >= 10
    for path in files:
        assert queries.load(path).name == path.stem


def test_documents_and_chunks(store):
    docs = bench_queries.documents(store)
    assert list(docs) == ["WIDGETS_2020_10K"]
    spans = list(bench_queries.run(store, "chunk_spans"))
    assert len(spans) == bench_queries.chunk_count(store) > 1
    assert {r["d"] for r in spans} == {docs["WIDGETS_2020_10K"]}
    for r in spans:
        assert 0 <= int(r["s"].value) < int(r["e"].value)
    texts = list(bench_queries.run(store, "chunk_texts"))
    assert len(texts) == len(spans)
    assert [r["c"].value for r in texts] == sorted(r["c"].value for r in texts)
    assert [
        [int(r["size"].value), int(r["overlap"].value)]
        for r in bench_queries.run(store, "chunk_settings")
    ] == [[64, 8]]


def test_lifecycle_and_citation_checks(store):
    assert len(list(bench_queries.run(store, "ready_transitions"))) == 1
    chunk = next(iter(bench_queries.run(store, "chunk_spans")))["c"]
    assert bench_queries.run(store, "cited_resolves", {"chunk": chunk}) is True
    missing = NamedNode("https://w3id.org/finkg/id/chunk/not-there")
    assert bench_queries.run(store, "cited_resolves", {"chunk": missing}) is False
    # an IRI that is no answer has no JSON, citations or artifacts
    assert list(bench_queries.run(store, "answer_json", {"answer": missing})) == []
    assert list(bench_queries.run(store, "answer_cited", {"answer": missing})) == []
    assert list(bench_queries.run(store, "answer_artifacts", {"answer": missing})) == []
