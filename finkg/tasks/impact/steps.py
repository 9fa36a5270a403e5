"""One anchor's prediction in three steps, so that a run can read many anchors at once.

`predict.predict` is `finish(prepare(...), read_prepared(...))`. Preparing (the pool, the
memory's ranking, the prompt's values, the heads) reads the store and nothing else; reading
asks the reader and touches no store; finishing writes the prediction and its run in one
commit. The prequential runner prepares the anchors of one decision session in time order,
reads them together on a remote reader's concurrency (`reader.concurrent`), and finishes them
in time order: what it writes is what a run reading one anchor at a time writes.

A read whose request fails for good (`transport.RequestFailed`, after its retries) leaves a
run that names the request and what was spent on it, and no prediction (`record_failure`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass

from pyoxigraph import NamedNode, Quad

from finkg.errors import InputError
from finkg.kg.iri import mint
from finkg.kg.outputs import RunRecord, Used, run_iri, write_failed_run, write_output
from finkg.kg.store import BaseStore
from finkg.ontology.terms import PROV
from finkg.reader.llm import LLM, messages_hash
from finkg.reader.read import OutputCache, ReadResult, prompt, read
from finkg.reader.schemas import ImpactCompact, ImpactPrediction
from finkg.reader.transport.endpoint import RequestFailed
from finkg.reader.transport.usage import Usage, metered
from finkg.retrieval.memory.source import MemoryTimeline, SourceMemory, memory_node_quads
from finkg.retrieval.pools import TextSource, VectorSource
from finkg.tasks.head_records import Head
from finkg.tasks.impact.anchors import Anchor
from finkg.tasks.impact.inputs import (
    REPLIES,
    SCORED,
    AnchorInputs,
    ImpactConfig,
    ImpactResult,
    Retrieved,
    anchor_inputs,
    retrieve,
    shown_card,
)
from finkg.tasks.impact.prompting import prompt_values
from finkg.tasks.impact.scoring import (
    FEATURES,
    SCORED_TEMPLATE,
    Scored,
    as_prediction,
    cited_ids,
    finite,
    score_anchor,
    scored_templates_sha256,
)
from finkg.tasks.records import impact_quads, run_cost


@dataclass(frozen=True)
class Prepared:
    """One anchor and variant up to the read: what the reader is asked, and what the output
    will record. Preparing reads the store only; the read (`read_prepared`) needs only the
    reader, so the anchors of one decision session can be read together (`prequential`)."""

    anchor: Anchor
    memory: SourceMemory | None
    config: ImpactConfig
    inputs: AnchorInputs
    retrieved: Retrieved
    values: dict[str, object]
    ids: dict[str, NamedNode]
    heads: Mapping[int, Head]
    started: dt.datetime
    cite: Head | None = None  # the citation head (`scoring.fit_citation`); None: raw argmax

    @property
    def variant(self) -> str:
        return self.memory.name if self.memory else "static"

    def cache_key(self) -> str:
        """What the read asks, exactly: two prepared reads with the same key read alike."""
        return messages_hash(
            [{"role": "user", "content": repr(sorted(self.values.items()))}],
            {
                "reply": self.config.reply,
                "ids": sorted(self.ids),
                "horizons": list(self.config.memory.horizons),
                "max": self.config.max_tokens,
            },
        )


@dataclass(frozen=True)
class Read:
    """What the reader answered for a prepared anchor, and what it cost."""

    result: ReadResult
    scored: Scored | None
    usage: Usage


def prepare(
    store: BaseStore,
    anchor: Anchor,
    *,
    texts: TextSource,
    vectors: VectorSource,
    memory: SourceMemory | None,
    config: ImpactConfig,
    timeline: MemoryTimeline | None = None,
    inputs: AnchorInputs | None = None,
    heads: Mapping[int, Head] | None = None,
    cite: Head | None = None,
) -> Prepared:
    """The retrieval and the prompt's values of one anchor (no read, no write)."""
    started = dt.datetime.now(dt.UTC)
    heads = heads or {}
    named = {f"head {h}D": head for h, head in heads.items()}
    if cite is not None:
        named["citation head"] = cite
    for name, head in named.items():
        if head.state.as_of > anchor.decision_time:
            raise InputError(
                "a decision head fitted after the decision would see its future",
                field=name,
                value=head.state.as_of.isoformat(),
            )
    if inputs is None:
        inputs = anchor_inputs(store, anchor, texts=texts, vectors=vectors, config=config)
    retrieved = retrieve(
        store, anchor, pool=inputs.pool, memory=memory, config=config, timeline=timeline
    )
    card = shown_card(inputs, config)
    values, ids = prompt_values(store, anchor, retrieved.context, config.snippet_chars, card)
    return Prepared(anchor, memory, config, inputs, retrieved, values, ids, heads, started, cite)


def read_prepared(llm: LLM, p: Prepared, *, cache: OutputCache | None = None) -> Read:
    """The reader's answer for `p`: scored options or a generated reply (the reader only).
    A request that fails for good raises `RequestFailed` carrying what the read had spent."""
    with metered() as usage:
        try:
            result, scored = _ask(llm, p, cache)
        except RequestFailed as e:
            e.usage = usage
            raise
    return Read(result, scored, usage)


def _ask(llm: LLM, p: Prepared, cache: OutputCache | None) -> tuple[ReadResult, Scored | None]:
    config = p.config
    if config.reply == SCORED:
        scored = score_anchor(
            llm,
            p.values,
            ids=sorted(p.ids),
            horizons=config.memory.horizons,
            features=p.inputs.features,
            heads={h: head.state for h, head in p.heads.items()},
            cache=cache,
        )
        cited = cited_ids(scored, p.cite.state if p.cite is not None else None)
        result = ReadResult(
            as_prediction(scored, cited, p.anchor.event_label),
            True,
            1,
            SCORED_TEMPLATE,
            scored_templates_sha256(),
            scored.prompt_hash,
            llm.model_id,
            tokens_in=scored.tokens_in,
            seconds=scored.seconds,
            cached=scored.cached,
            cited=cited,
        )
        return result, scored
    template, contract = REPLIES[config.reply]
    result = read(
        llm,
        prompt(template),
        p.values,
        contract,
        allowed_ids=set(p.ids),
        cache=cache,
        max_tokens=config.max_tokens,
    )
    if isinstance(result.output, ImpactCompact):
        result.output = result.output.expanded(p.anchor.event_label)
    return result, None


def finish(store: BaseStore, llm: LLM, p: Prepared, answered: Read) -> ImpactResult:
    """Write `p`'s prediction from the reader's answer with its run, in one commit."""
    anchor, memory, config, heads = p.anchor, p.memory, p.config, p.heads
    result, scored, cost = answered.result, answered.scored, answered.usage
    if result.output is None:
        return ImpactResult(anchor, p.retrieved, result, None, p.ids)
    prediction = result.output
    assert isinstance(prediction, ImpactPrediction)  # `_ask` expands a compact reply
    if scored is not None:
        prompt_hash, tokens_in, tokens_out = scored.prompt_hash, scored.tokens_in, 0
    else:
        prompt_hash, tokens_in, tokens_out = result.prompt_hash, result.tokens_in, result.tokens_out
    if cost.requests:  # an endpoint's own count of what it was sent and wrote
        tokens_in, tokens_out = cost.tokens_in, cost.tokens_out
    variant = p.variant
    base = store.graphs.base
    output = mint("impact", variant, anchor.news.value, llm.model_id, base=base)
    run = run_iri(store, "impact", variant, anchor.news.value, prompt_hash)
    parameters = config.parameters(memory)
    if scored is not None:
        parameters |= {
            "features": dict(zip(FEATURES, finite(p.inputs.features), strict=True)),
            "logprobs": {f"{h}D": s.logprobs for h, s in scored.scores.items()},
            "citation": scored.citation.logprobs if scored.citation else None,
            "heads": {f"{h}D": heads[h].state.sha256 for h in heads},
            "cite_head": p.cite.state.sha256 if p.cite is not None else None,
        }
    record = RunRecord(
        task="impact",
        model_id=llm.model_id,
        started=p.started,
        ended=dt.datetime.now(dt.UTC),
        prompt_hash=prompt_hash,
        template_hash=result.prompt_sha256,
        parameters=parameters,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        json_valid=result.json_valid,
        invalid_citations=len(result.invalid_citations),
        used=[
            Used(r.candidate.evidence, rank, r.mean)
            for rank, r in enumerate(p.retrieved.context, start=1)
        ],
        cost=run_cost(cost, seconds=scored.seconds if scored is not None else result.seconds),
    )
    graph = store.graphs.outputs
    quads = [
        *anchor.quads(graph),
        *impact_quads(
            prediction,
            output=output,
            anchor=anchor.iri,
            run=run,
            as_of=anchor.decision_time,
            ids=p.ids,
            graph=graph,
            probabilities=(
                {h: s.probabilities() for h, s in scored.scores.items()} if scored else None
            ),
            decided_by={h: head.iri for h, head in heads.items()} if scored else None,
        ),
    ]
    if memory is not None:
        quads.append(Quad(run, PROV.used, memory.iri, graph))
        quads += memory_node_quads(memory, store.graphs.memory)
    if scored is not None:
        quads += [Quad(run, PROV.used, head.iri, graph) for head in heads.values()]
        if p.cite is not None:
            quads.append(Quad(run, PROV.used, p.cite.iri, graph))
    write_output(store, record, quads, output=output, run=run, note=f"impact {variant}")
    return ImpactResult(anchor, p.retrieved, result, output, p.ids, scored)


def record_failure(
    store: BaseStore, llm: LLM, p: Prepared, error: RequestFailed, cost: Usage
) -> NamedNode:
    """Write the run of a read whose request failed for good: what it asked, what it cost,
    the request that failed; no prediction (nothing of one is written)."""
    run = run_iri(store, "impact", p.variant, p.anchor.news.value, "failed", p.started)
    record = RunRecord(
        task="impact",
        model_id=llm.model_id,
        started=p.started,
        ended=dt.datetime.now(dt.UTC),
        parameters=p.config.parameters(p.memory),
        used=[
            Used(r.candidate.evidence, rank, r.mean)
            for rank, r in enumerate(p.retrieved.context, start=1)
        ],
        cost=run_cost(cost, failed=[str(error)]),
    )
    write_failed_run(store, record, run=run, note=f"impact {p.variant}: read failed")
    return run
