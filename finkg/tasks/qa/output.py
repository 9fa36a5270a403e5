"""An answer as RDF: the `fkg:Answer` with its scores, status and whole reply
(`fkg:answerJson`, block ids rewritten to IRIs), one `fkg:Citation` per cited evidence
node, one `fkg:SubQuestion` per part with its route, and the run with the passages it
used, checked against the output shapes and written in one commit (`kg.outputs`). The run
of an answer finkg computed (`tasks.qa.arithmetic`, or from statement facts:
`tasks.qa.fact_calc`) names the calculator as its model and holds the calculation
(operation or formula, operands with their blocks or facts, result) in its parameters, as
a reader's run holds its prompt hash; it used the statement facts it cites."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Collection, Sequence

from pyoxigraph import Literal, NamedNode

from finkg.kg.ingest import common
from finkg.kg.iri import mint
from finkg.kg.outputs import RunRecord, Used, run_iri, write_failed_run, write_output
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG, PROV, RDF, RDFS
from finkg.reader.read import prompt
from finkg.reader.transport.endpoint import RequestFailed
from finkg.tasks.qa import calculator, fact_calc
from finkg.tasks.qa.types import Asked, Block, QAConfig, Staged
from finkg.tasks.records import run_cost


def write_answer(
    store: BaseStore,
    asked: Asked,
    *,
    config: QAConfig,
    retriever_paths: Collection[str],
    reranker: str,
    company: NamedNode | None,
    documents: Sequence[NamedNode],
    started: dt.datetime,
) -> NamedNode:
    """`reranker`: the reranker's model id, or "none"; `retriever_paths`: the paths the
    retriever has (the answer records those of `config.paths` it could use)."""
    base = store.graphs.base
    calc = asked.calculation
    if asked.read is not None:
        model_id = asked.read.model
    elif asked.facts is not None:
        model_id = fact_calc.MODEL_ID
    else:
        model_id = calculator.MODEL_ID if calc is not None else "memory-bank"
    parameters = {
        **config.parameters(),
        "paths": [p for p in config.paths if p in retriever_paths],
        "reranker": reranker,
        "company": company.value if company is not None else None,
        "documents": [d.value for d in documents],
        "routes": [p.route for p in asked.parts],
        "seconds": {k: round(v, 3) for k, v in asked.seconds.items()},
        # a computed answer has no prompt: the run records what was computed instead
        **({"calculation": str(calc)} if calc is not None else {}),
        **({"facts": str(asked.facts)} if asked.facts is not None else {}),
        **({"facts_note": asked.note} if asked.note else {}),
    }
    key = json.dumps(parameters | {"seconds": None}, sort_keys=True)
    output = mint("answer", asked.question, asked.as_of.isoformat(), model_id, key, base=base)
    digest = asked.read.prompt_hash if asked.read is not None else None
    run = run_iri(store, "qa", output.value)
    passages = [b for b in asked.blocks if b.kind in ("C", "F")]  # chunks and statement facts
    record = RunRecord(
        task="qa",
        model_id=model_id,
        started=started,
        ended=dt.datetime.now(dt.UTC),
        prompt_hash=digest,
        template_hash=prompt("answer").sha256 if asked.read is not None else None,
        parameters=parameters,
        tokens_in=asked.read.tokens_in if asked.read else 0,
        tokens_out=asked.read.tokens_out if asked.read else 0,
        json_valid=asked.scores["j"] == 1.0,
        invalid_citations=len(asked.read.invalid_citations) if asked.read else 0,
        used=[Used(b.node, i, b.score) for i, b in enumerate(passages, start=1)],
        cost=run_cost(asked.usage, seconds=asked.seconds.get("read", 0.0)),
    )
    by_id = {b.id: b for b in asked.blocks}
    cited = [by_id[i] for i in (asked.output.citations if asked.output else []) if i in by_id]
    for insight in asked.output.insights if asked.output else []:
        cited.extend(by_id[i] for i in insight.citations if i in by_id and by_id[i] not in cited)
    nodes = list(dict.fromkeys(n for b in cited for n in b.cites))
    g = store.graphs.outputs
    q = common.Quads(g)
    s = asked.scores
    data = asked.output.model_dump(by_alias=True) if asked.output else {}
    q.node(
        output,
        (RDF.type, FKG.Answer),
        (RDFS.label, Literal(f"answer: {asked.question[:120]}")),
        (FKG.question, Literal(asked.question)),
        (FKG.answerText, Literal(asked.summary)),
        (FKG.asOf, common.datetime(asked.as_of)),
        (FKG.about, company),
        (FKG.validationStatus, Literal(asked.status)),
        (FKG.groundedness, common.double(s["g"])),
        (FKG.criticalGroundedness, common.double(s["gc"])),
        (FKG.numericConsistency, common.double(s["n"])),
        (FKG.complianceScore, common.double(s["s_comp"])),
        (FKG.answerJson, Literal(_json_with_iris(data, by_id), datatype=RDF.JSON)),
        (PROV.wasGeneratedBy, run),
    )
    for rank, node in enumerate(nodes, start=1):
        c = NamedNode(f"{output.value}/citation/{rank}")
        q.add(output, FKG.citation, c)
        q.node(c, (RDF.type, FKG.Citation), (FKG.cites, node), (FKG.rank, common.integer(rank)))
    for i, part in enumerate(asked.parts, start=1):
        sq = NamedNode(f"{output.value}/sub/{i}")
        q.add(output, FKG.subQuestion, sq)
        q.node(
            sq,
            (RDF.type, FKG.SubQuestion),
            (FKG.question, Literal(part.question.text)),
            (FKG.route, Literal(part.route)),
            (FKG.answerText, Literal(part.answer) if part.answer is not None else None),
        )
        if part.route != "documents":
            for b in part.blocks:
                for node in b.cites:
                    q.add(sq, FKG.cites, node)
                if not b.cites:
                    q.add(sq, FKG.refersTo, b.node)
    write_output(store, record, q.items, output=output, run=run, note="qa answer")
    return output


def _json_with_iris(data: dict, by_id: dict[str, Block]) -> str:
    """The reply with block ids replaced by what they point at (IRIs outlive prompts)."""

    def iri(i: str) -> str:
        return by_id[i].node.value if i in by_id else i

    data = json.loads(json.dumps(data))
    data["citations"] = [iri(i) for i in data.get("citations", [])]
    for item in (*data.get("insights", []), *data.get("signals", [])):
        item["citations"] = [iri(i) for i in item["citations"]]
    for number in data.get("numbers", []):
        number["citation"] = iri(number["citation"])
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


def write_failed_answer(
    store: BaseStore, staged: Staged, *, model_id: str, error: RequestFailed, config: QAConfig
) -> NamedNode:
    """The run of an answer whose read failed for good: the question, the passages it had,
    what it cost and the request that failed; no answer."""
    run = run_iri(store, "qa", staged.text, staged.as_of.isoformat(), "failed", staged.started)
    passages = [b for b in staged.blocks if b.kind == "C"]
    record = RunRecord(
        task="qa",
        model_id=model_id,
        started=staged.started,
        ended=dt.datetime.now(dt.UTC),
        parameters={**config.parameters(), "question": staged.text},
        used=[Used(b.node, i, b.score) for i, b in enumerate(passages, start=1)],
        cost=run_cost(staged.usage, failed=[str(error)]),
    )
    write_failed_run(store, record, run=run, note=f"qa: read failed: {staged.text[:60]}")
    return run
