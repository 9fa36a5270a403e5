"""Outputs with their runs: checked by the output shapes, written in one transaction,
traceable down to the source document and the commit that ingested it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from finkg import queries
from finkg.kg.audit import trace
from finkg.kg.ingest import IngestOptions, ingest, loader
from finkg.kg.iri import mint
from finkg.kg.outputs import (
    OutputRejected,
    RunRecord,
    Used,
    run_iri,
    run_quads,
    write_output,
)
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG, PROV, RDF
from finkg.reader.llm import ScriptedLLM
from finkg.reader.read import prompt, read
from finkg.reader.schemas import ImpactPrediction
from finkg.shapes.validate import validate_quads
from finkg.tasks.records import impact_quads

ID = "https://w3id.org/finkg/id/"
UTC = dt.UTC


def news_line(i: int, when: str) -> str:
    return (
        json.dumps(
            {
                "symbol": "ZQAW",
                "publishedDate": when,
                "title": f"Acme item {i}",
                "site": "wire",
                "text": "Acme beat estimates.",
                "url": f"https://example.org/{i}",
            }
        )
        + "\n"
    )


@pytest.fixture
def evidence(store: BaseStore, tmp_path: Path) -> dict[str, NamedNode]:
    path = tmp_path / "n.jsonl"
    path.write_text(news_line(1, "2019-03-01 10:00:00") + news_line(2, "2019-03-05 10:00:00"))
    ingest(store, "news", loader("news"), [path], IngestOptions(graphs=store.graphs))
    rows = queries.run(
        store, "evidence_before", {"company": ID + "company/ZQAW", "before": "2020-01-01T00:00:00Z"}
    )
    by_title = {r["text"].value.split("\n")[0]: r["evidence"] for r in rows}  # type: ignore[union-attr]
    return {"N1": by_title["Acme item 1"], "N2": by_title["Acme item 2"]}  # type: ignore[dict-item]


def _prediction(ids: list[str]) -> ImpactPrediction:
    one = {"signal": "+1", "ids": ids, "reason": "beat"}
    reply = json.dumps(
        {
            "event_type": "Earnings & Guidance",
            "signals": {"1D": one, "3D": one, "5D": one},
            "main_uncertainty": "m",
        }
    )
    values = {
        "anchor_id": "A0",
        "headline": "h",
        "ticker": "ZQAW",
        "prediction_day": "d",
        "event_type": "e",
        "evidence": "N1: ...",
        "market_card": "c",
    }
    result = read(ScriptedLLM(replies=[reply]), prompt("impact"), values, ImpactPrediction)
    return result.output  # type: ignore[return-value]


def _write(
    store: BaseStore,
    ids: dict[str, NamedNode],
    cited: list[str],
    used: list[str],
    as_of: dt.datetime,
    key: str = "a",
):
    output = NamedNode(f"{ID}impact/{key}")
    run = run_iri(store, "impact", key)
    now = dt.datetime.now(UTC)
    record = RunRecord(
        task="impact",
        model_id="scripted",
        started=now,
        ended=now,
        prompt_hash="0" * 64,
        used=[Used(ids[u], i + 1, 0.5) for i, u in enumerate(used)],
    )
    quads = impact_quads(
        _prediction(cited),
        output=output,
        anchor=NamedNode(ID + "anchor/a"),
        run=run,
        as_of=as_of,
        ids=ids,
        graph=store.graphs.outputs,
    )
    return output, write_output(store, record, quads, output=output, run=run, note="impact a")


AFTER_BOTH = dt.datetime(2019, 3, 6, tzinfo=UTC)
BETWEEN = dt.datetime(2019, 3, 4, tzinfo=UTC)


def test_an_output_is_written_with_its_run_in_one_commit(store: BaseStore, evidence) -> None:
    before = store.generation()
    output, commit = _write(store, evidence, ["N1", "N2"], ["N1", "N2"], AFTER_BOTH)
    assert commit is not None and store.generation() == before + 1
    assert _write(store, evidence, ["N1"], ["N1"], AFTER_BOTH)[1] is None  # already there
    hops = {h.iri: h for h in trace(store, output.value)}
    kinds = {v for h in hops.values() for p, v in h.statements if p.endswith("#type")}
    assert {
        "https://w3id.org/finkg/ns#ImpactPrediction",
        "https://w3id.org/finkg/ns#Run",
        "https://w3id.org/finkg/ns#NewsArticle",
        "https://w3id.org/finkg/ns#SourceDocument",
        "https://w3id.org/finkg/ns#Commit",
    } <= kinds  # output → run → evidence → source → batch


@pytest.mark.parametrize(("cited", "used"), [(["N2"], ["N1"]), (["N1"], ["N2"])])
def test_evidence_from_after_the_decision_is_refused(
    store: BaseStore, evidence, cited: list[str], used: list[str]
) -> None:
    before = store.generation()
    with pytest.raises(OutputRejected, match="at or after its decision instant"):
        _write(store, evidence, cited, used, BETWEEN)
    assert store.generation() == before


def test_a_citation_that_resolves_to_nothing_is_refused(store: BaseStore, evidence) -> None:
    ids = {**evidence, "X9": NamedNode(ID + "news/invented")}
    with pytest.raises(OutputRejected, match="not stored evidence"):
        _write(store, ids, ["X9"], ["N1"], AFTER_BOTH)


def test_a_run_whose_reader_read_with_an_adapter_uses_the_adapter_node(store: BaseStore) -> None:
    sha = "5d686be1a17943e093a82ac4ef6a8ad56b7d14859cc6c4cbe1484006e3d50919"
    now = dt.datetime.now(UTC)
    run = run_iri(store, "impact", "adapted")
    record = RunRecord(
        task="impact", model_id=f"smollm2-135m@sha256:b179c9523d0e+lora:{sha}", started=now,
        ended=now, prompt_hash="0" * 64,
    )  # fmt: skip
    quads = run_quads(run, record, store.graphs.outputs, base=store.graphs.base)
    assert validate_quads(quads).conforms
    adapter = mint("adapter", sha, base=store.graphs.base)
    assert Quad(run, PROV.used, adapter, store.graphs.outputs) in quads
    assert Quad(adapter, FKG.adapterSha256, Literal(sha), store.graphs.outputs) in quads
    plain = run_quads(
        run,
        RunRecord(task="impact", model_id="smollm2-135m", started=now, ended=now),
        store.graphs.outputs,
        base=store.graphs.base,
    )
    assert not any(q.object == FKG.ReaderAdapter for q in plain)
    # an adapter node that does not name a whole SHA-256 breaks its shape
    bad = [Quad(adapter, RDF.type, FKG.ReaderAdapter, store.graphs.outputs),
           Quad(adapter, FKG.adapterSha256, Literal(sha[:12]), store.graphs.outputs)]  # fmt: skip
    report = validate_quads(bad)
    assert not report.conforms and "64 lowercase hex digits" in report.text()
