"""The retrieval levers of issue 28 on a small filing (statement path, line-item parts,
weighted fusion, labelled blocks), `--rerank auto`'s gate, and a numeric question answered
by finkg's calculator with cited, checked operands, written and audited like any answer."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from pyoxigraph import NamedNode

from finkg.config import Settings
from finkg.kg.ingest.documents import ingest_documents
from finkg.kg.lifecycle import Settings as ChunkSettings
from finkg.kg.setup import init_store
from finkg.kg.store import open_store
from finkg.reader.llm import ScriptedLLM
from finkg.retrieval.index.embed import HashEmbedder
from finkg.retrieval.index.indexes import open_indexes
from finkg.retrieval.passages import PassageRetriever
from finkg.retrieval.plan.query_plan import plan
from finkg.tasks.qa.ask import QA, QAConfig

LATE = dt.datetime(2100, 1, 1, tzinfo=dt.UTC)
FKG = "https://w3id.org/finkg/ns#"

FILING = """ACME Corp annual report 2022

Our business makes widgets and sells them to customers around the world. Demand for
widgets grew and we opened two plants. Our people are our strength.

Consolidated Statements of Income
Years ended December 31
(In millions) | 2022 | 2021
Net sales | 1,200 | 1,000
Cost of sales | (700) | (650)
Operating income | 300 | 200
Net income | 210 | 150
The accompanying notes are an integral part of these statements.

Consolidated Balance Sheets
At December 31
(In millions) | 2022 | 2021
Total current assets | 900 | 800
Total assets | 2,500 | 2,300
Total current liabilities | 600 | 700
See notes to consolidated financial statements.

Risk factors: competition for widgets is intense, and prices may fall in any year.
"""


@pytest.fixture(scope="module")
def filing(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("levers")
    path = root / "acme_2022.txt"
    path.write_text(FILING)
    (root / "acme_2022.txt.meta.json").write_text(json.dumps({"title": "ACME_2022_10K"}))
    settings = Settings(home=root / "home")
    store = open_store(root / "store", settings=settings)
    init_store(store)
    report = ingest_documents(store, [path], settings=ChunkSettings(chunk_size=40, chunk_overlap=8))
    assert report.ready == 1
    text, vectors, _ = open_indexes(
        store, settings, embedder=HashEmbedder(), directory=root / "indexes"
    )
    retriever = PassageRetriever(store, text=text, vectors=vectors, embedder=HashEmbedder())
    yield store, retriever
    store.close()


def _chunk_text(store, node: NamedNode) -> str:
    rows = store.select(f"SELECT ?t WHERE {{ GRAPH ?g {{ <{node.value}> <{FKG}text> ?t }} }}")
    return next(iter(rows))["t"].value  # type: ignore[index, union-attr]


def test_the_statement_path_ranks_only_the_statement_a_question_names(filing) -> None:
    _store, retriever = filing
    pool = retriever.candidates(before=LATE)
    question = "Using the balance sheet, what were FY2022 total current liabilities?"
    ranks = retriever.ranks(question, pool, ["statement"], reading=plan(question))["statement"]
    ranked = [p for p, r in zip(pool, ranks, strict=True) if r < float("inf")]
    assert ranked and all(retriever.section(p).kind == "balance" for p in ranked)
    # without a plan the planned paths are left out, not guessed
    assert retriever.ranks(question, pool, ["sparse", "statement"]).keys() == {"sparse"}


def test_parts_find_each_line_item_of_a_ratio(filing) -> None:
    store, retriever = filing
    pool = retriever.candidates(before=LATE)
    question = "What is ACME's FY2022 current ratio?"
    reading = plan(question)
    assert [p.text for p in reading.parts] == [
        "total current assets 2022",
        "total current liabilities 2022",
    ]
    ranks = retriever.ranks(question, pool, ["parts"], reading=reading)["parts"]
    best = pool[int(ranks.argmin())]
    assert "Total current" in _chunk_text(store, best.node)


def test_fusion_weights_scale_each_path(filing) -> None:
    _, retriever = filing
    pool = retriever.candidates(before=LATE)
    ranks = retriever.ranks("net sales", pool, ["sparse", "dense"])
    plain = retriever.fuse(pool, ranks)
    weighted = retriever.fuse(pool, ranks, {"dense": 0.0})
    assert weighted[0].score == pytest.approx(1 / (60 + weighted[0].ranks["sparse"]))
    assert {h.node for h in plain} == {h.node for h in weighted}


def test_a_numeric_question_is_computed_by_finkg_with_cited_operands(filing) -> None:
    store, retriever = filing

    def no_reply(messages):
        raise AssertionError("finkg computes this answer: no reply is generated")

    qa = QA(store, retriever, ScriptedLLM(respond=no_reply), config=QAConfig(bundle_k=0))
    asked = qa.ask("What was the percentage change in net sales from 2021 to 2022?", as_of=LATE)
    calc = asked.calculation
    assert calc is not None and calc.formatted() == "20%"
    assert [o.written for o in calc.operands] == ["1,000", "1,200"]
    assert asked.summary.startswith("20% (percent change of Net sales")
    assert asked.scores["n"] == 1.0 and asked.scores["gc"] == 1.0
    # grounded, but read from table cells rather than verified against statement facts:
    # High is for what finkg verified (issue 44)
    assert asked.status == "Medium"
    cited = {c.citation for c in asked.output.numbers}
    block = next(b for b in asked.blocks if b.id in cited)
    assert "Consolidated Statements of Income" in block.text  # the block carries its label
    rows = store.select(
        f"SELECT ?c WHERE {{ GRAPH ?g {{ <{asked.iri.value}> <{FKG}citation>/<{FKG}cites> ?c }} }}"
    )
    cites = [r["c"] for r in rows]  # type: ignore[index]
    assert cites and all(  # every citation resolves to a chunk with its document and offsets
        store.ask(
            f"ASK {{ GRAPH ?g {{ <{c.value}> <http://www.w3.org/ns/prov#wasDerivedFrom> ?d ; "
            f"<{FKG}charStart> ?s ; <{FKG}charEnd> ?e }} }}"
        )
        for c in cites
    )
    (run,) = store.select(  # the run names the calculator and holds the calculation
        f"SELECT ?m ?p WHERE {{ GRAPH ?g {{ <{asked.iri.value}> "
        f"<http://www.w3.org/ns/prov#wasGeneratedBy> ?r . ?r <{FKG}modelId> ?m ; "
        f"<{FKG}parameters> ?p }} }}"
    )
    assert run["m"].value == "finkg-calculator"  # type: ignore[index, union-attr]
    assert json.loads(run["p"].value)["calculation"] == str(calc)  # type: ignore[index, union-attr]


def test_auto_uses_a_cross_encoder_only_with_a_held_out_gain(tmp_path) -> None:
    from finkg.tasks.qa.rerank_train import default_model_dir
    from finkg.tasks.qa.setup import auto_reranker_decision

    settings = Settings(home=tmp_path)
    assert auto_reranker_decision(settings)["use"] is False
    folder = default_model_dir(settings, 1)
    folder.mkdir(parents=True)
    held = {"bm25": {"mrr": 0.60}, "minilm_cosine": {"mrr": 0.55}, "stage1": {"mrr": 0.52}}
    (folder / "manifest.json").write_text(json.dumps({"held_out": held}))
    decision = auto_reranker_decision(settings)
    assert decision["use"] is False and "0.520 is not above" in decision["reason"]
    held["stage1"]["mrr"] = 0.65
    (folder / "manifest.json").write_text(json.dumps({"held_out": held}))
    assert auto_reranker_decision(settings) | {"reason": ""} == {
        "use": True,
        "stage": 1,
        "gain": 0.05,
        "reason": "",
    }
