"""A valid recommendation written as RDF with its run (model, prompt hashes, every stage,
every used entity) to the outputs graph, checked by the output shapes."""

from __future__ import annotations

import datetime as dt

from pyoxigraph import NamedNode, Triple

from finkg.kg.iri import mint
from finkg.kg.outputs import RunRecord, Used, run_iri, write_failed_run, write_output
from finkg.kg.store import BaseStore
from finkg.ontology.terms import FKG
from finkg.reader.llm import LLM
from finkg.reader.transport.endpoint import RequestFailed
from finkg.reader.transport.usage import Usage
from finkg.tasks.recommend.types import RecommendConfig, RecommendResult
from finkg.tasks.records import recommendation_quads, run_cost


def write_recommendation(
    store: BaseStore,
    llm: LLM,
    out: RecommendResult,
    customer: NamedNode,
    config: RecommendConfig,
    started: dt.datetime,
) -> tuple[NamedNode, bool]:
    assert out.output is not None
    r = out.read
    base = store.graphs.base
    key = (config.variant, out.user, out.as_of.isoformat(), llm.model_id)
    rec = mint("recommendation", *key, base=base)
    run = run_iri(store, "recommend", *key, r.prompt_hash)
    evidence = {
        t.subject.value
        for s in out.stages
        for t in s.triples
        if t.predicate == FKG.availableAt and not isinstance(t.subject, Triple)
    }
    used: list[NamedNode] = []
    for s in out.stages:
        picked = s.selection.selected if s.selection else [n["id"] for n in s.nodes]
        used += [NamedNode(i) for i in picked if NamedNode(i) not in used]
    invalid = sum(s.selection.invalid_count for s in out.stages if s.selection) + len(
        r.invalid_citations
    )
    record = RunRecord(
        task="recommend",
        model_id=llm.model_id,
        started=started,
        ended=dt.datetime.now(dt.UTC),
        prompt_hash=r.prompt_hash,
        template_hash=r.prompt_sha256,
        parameters={
            **config.parameters(),
            "user": out.user,
            "stages": [s.summary() for s in out.stages],
            "truncated_nodes": out.truncated,
            "prompt_tokens": out.prompt_tokens,
        },
        tokens_in=out.prompt_tokens,
        tokens_out=sum(x.tokens_out for x in out.reads),
        json_valid=r.json_valid,
        invalid_citations=invalid,
        used=[Used(n, rank) for rank, n in enumerate(used, start=1)],
        cost=run_cost(out.usage, seconds=sum(x.seconds for x in out.reads)),
    )
    quads = recommendation_quads(
        out.output,
        output=rec,
        customer=customer,
        run=run,
        as_of=out.as_of,
        evidence=evidence,
        graph=store.graphs.outputs,
    )
    commit = write_output(
        store, record, quads, output=rec, run=run, note=f"recommend {config.variant}"
    )
    return rec, commit is not None


def write_failed_recommendation(
    store: BaseStore,
    llm: LLM,
    user: str,
    as_of: dt.datetime,
    config: RecommendConfig,
    started: dt.datetime,
    error: RequestFailed,
) -> NamedNode:
    """The run of a recommendation whose read failed for good: what it cost and the request
    that failed; no recommendation."""
    key = (config.variant, user, as_of.isoformat(), llm.model_id)
    run = run_iri(store, "recommend", *key, "failed", started)
    record = RunRecord(
        task="recommend",
        model_id=llm.model_id,
        started=started,
        ended=dt.datetime.now(dt.UTC),
        parameters={**config.parameters(), "user": user},
        cost=run_cost(error.usage or Usage(), failed=[str(error)]),
    )
    write_failed_run(store, record, run=run, note=f"recommend {config.variant}: read failed")
    return run
